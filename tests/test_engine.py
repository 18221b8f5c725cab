import time

import pytest

from hookgate.engine.gate import BlockLimit, Gate, Observer
from hookgate.engine.loop import Engine
from hookgate.errors import GateError
from hookgate.model.events import PostToolUse, PreToolUse, Stop, SubagentStop
from hookgate.model.verdicts import Allow, Ask, Block, Context, Modify, Retry


def pre(tool="Write", agent_id=None, **tool_input):
    return PreToolUse(session_id="s", tool_name=tool, tool_input=tool_input, agent_id=agent_id)


def gate(id, check, **kw):
    kw.setdefault("events", ("PreToolUse",))
    return Gate(id=id, check=check, **kw)


def test_gates_run_by_priority_then_id(ctx):
    order = []
    gates = [gate(name, lambda e, c, n=name: order.append(n), priority=p) for name, p in
             [("b", 50), ("a", 50), ("z", 10), ("c", 100)]]
    Engine(gates).evaluate(pre(), ctx)
    assert order == ["z", "a", "b", "c"]


def test_matcher_selects_gates(ctx):
    seen = []
    engine = Engine([gate("w", lambda e, c: seen.append(e.tool_name), matcher="Write|Edit")])
    for tool in ("Write", "Bash", "Edit", "WriteFile"):
        engine.evaluate(pre(tool), ctx)
    assert seen == ["Write", "Edit"]


@pytest.mark.parametrize("fail_mode, kind", [("open", "allow"), ("closed", "block")])
def test_an_exception_becomes_the_declared_fail_mode(ctx, fail_mode, kind):
    def broken(event, c):
        raise RuntimeError("disk on fire")

    decision = Engine([gate("g", broken, may_block=True, fail_mode=fail_mode)]).evaluate(pre(), ctx)
    assert decision.verdict.kind == kind and decision.failed == ("g",)
    assert ctx.records[0] == {"event": "gate_error", "gate": "g", "error": "RuntimeError: disk on fire", "fail_mode": fail_mode}
    assert ctx.warnings == [f"hookgate: gate g failed (RuntimeError: disk on fire); failing {fail_mode}"]
    if kind == "block":
        assert "disk on fire" in decision.verdict.reason


@pytest.mark.parametrize("fail_mode, kind", [("open", "allow"), ("closed", "block")])
def test_a_gate_whose_module_cannot_be_imported_takes_its_fail_mode_on_every_call(ctx, fail_mode, kind):
    """The engine imports a declared gate's function once, on the first event it applies to; one
    that cannot be imported is not a crash of the decision but that gate's failure, each time."""
    from hookgate.engine.lazy import Lazy

    engine = Engine([gate("g", Lazy("hookgate.no_such_module:check"), may_block=True, fail_mode=fail_mode),
                     gate("h", Lazy("hookgate.pipeline.stages:stage_reminder"))])
    for _ in range(2):
        decision = engine.evaluate(pre(file_path="a.md"), ctx)
        assert decision.verdict.kind == kind and decision.failed == ("g",)
        assert [gate_id for gate_id, _, _ in decision.ran] == ["g", "h"]
    errors = [r["error"] for r in ctx.records if r["event"] == "gate_error"]
    assert errors == ["ModuleNotFoundError: No module named 'hookgate.no_such_module'"] * 2


@pytest.mark.parametrize("fail_mode, kind", [("open", "allow"), ("closed", "block")])
def test_a_timeout_becomes_the_declared_fail_mode(ctx, fail_mode, kind):
    started = time.monotonic()
    engine = Engine([gate("slow", lambda e, c: time.sleep(5), timeout=0.2, may_block=True, fail_mode=fail_mode)])
    decision = engine.evaluate(pre(), ctx)
    assert time.monotonic() - started < 2
    assert decision.verdict.kind == kind
    assert "timed out after 0.2s" in ctx.records[0]["error"]


def test_timeout_also_holds_off_the_main_thread(ctx):
    import threading

    result = {}
    engine = Engine([gate("slow", lambda e, c: time.sleep(5), timeout=0.2, may_block=True, fail_mode="closed")])
    worker = threading.Thread(target=lambda: result.setdefault("d", engine.evaluate(pre(), ctx)))
    worker.start()
    worker.join(3)
    assert result["d"].verdict.kind == "block"


def test_one_timer_per_event_still_bounds_every_gate_by_its_own_timeout(ctx):
    """The event's one timer is armed for the first gate's deadline: a later gate gets its whole
    timeout (not what is left of the first one's), and a later, shorter one is still cut short."""
    import signal

    def nap(seconds):
        return lambda e, c: time.sleep(seconds)

    engine = Engine([
        gate("a-slow-but-in-time", nap(0.3), timeout=0.5, priority=1),
        gate("b-in-time-from-its-own-start", nap(0.35), timeout=0.5, priority=2),  # 0.65 s after the event began
        gate("c-patient", nap(0.05), timeout=60, priority=3),
        gate("d-overruns", nap(5), timeout=0.2, priority=4, may_block=True, fail_mode="closed"),
        gate("e-after-it", nap(0.25), timeout=0.3, priority=5),
    ])
    before = signal.getsignal(signal.SIGALRM)
    started = time.monotonic()
    decision = engine.evaluate(pre(), ctx)
    assert time.monotonic() - started < 3  # the 5 s nap was cut short
    assert decision.failed == ("d-overruns",) and decision.verdict.kind == "block"
    assert [r["gate"] for r in ctx.records if r["event"] == "gate_error"] == ["d-overruns"]
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)  # nothing left armed for the caller
    assert signal.getsignal(signal.SIGALRM) is before  # and the caller's handler is back


@pytest.fixture
def kept_timer(monkeypatch):
    """deadline.keep_timer for one test: the process's handler and kept alarm are put back after."""
    import signal

    from hookgate.engine import deadline

    before = signal.getsignal(signal.SIGALRM)
    monkeypatch.setattr(deadline, "_kept", None)
    assert deadline.keep_timer()
    yield deadline._kept[2]
    # the kept timer stays armed past a test's last event (up to its last gate's deadline): disarmed
    # first, or it fires under the handler put back (the default one ends the process)
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGALRM, before)


def test_a_kept_timer_bounds_every_gate_and_its_firing_between_events_is_harmless(ctx, kept_timer):
    """The RPC core and a warm fork keep the gates' handler installed, and the timer armed from one
    event to the next (no timer call per event): a gate past its timeout is still cut, event
    after event; the timer left armed fires no later than the last gate's deadline, and fired
    between events it raises nothing and a sleep it interrupts sleeps on."""
    import signal

    engine = Engine([gate("d-overruns", lambda e, c: time.sleep(5), timeout=0.2, priority=1, may_block=True,
                          fail_mode="closed"),
                     gate("e-after-it", lambda e, c: time.sleep(0.25), timeout=0.3, priority=2)])
    for _ in range(2):
        started = time.monotonic()
        decision = engine.evaluate(pre(), ctx)
        assert time.monotonic() - started < 2
        assert decision.failed == ("d-overruns",)
        assert signal.getitimer(signal.ITIMER_REAL)[0] <= 0.3  # armed, if at all, within the last gate's timeout
        assert signal.getsignal(signal.SIGALRM) is kept_timer
        started = time.monotonic()
        time.sleep(0.5)  # the timer fires during it, with no gate running
        assert time.monotonic() - started >= 0.5 and signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    fast = Engine([gate("quick", lambda e, c: None, timeout=5.0, priority=1)])
    fast.evaluate(pre(), ctx)
    armed = signal.getitimer(signal.ITIMER_REAL)[0]
    assert 0 < armed <= 5.0
    fast.evaluate(pre(), ctx)
    assert signal.getitimer(signal.ITIMER_REAL)[0] <= armed, "the next event left the earlier timer as it was"
    assert engine.evaluate(pre(), ctx).failed == ("d-overruns",), "and a gate's own deadline still cuts it"


def test_a_handler_installed_over_the_kept_one_is_noticed_and_left_in_place(ctx, kept_timer):
    import signal

    def theirs(signum, frame):
        raise AssertionError("the gates' alarm reached the program's own handler")

    signal.signal(signal.SIGALRM, theirs)
    engine = Engine([gate("slow", lambda e, c: time.sleep(5), timeout=0.2, may_block=True, fail_mode="closed")])
    started = time.monotonic()
    assert engine.evaluate(pre(), ctx).verdict.kind == "block"
    assert time.monotonic() - started < 2
    assert signal.getsignal(signal.SIGALRM) is theirs


def test_a_fork_does_not_take_its_parents_timer_for_armed(ctx, kept_timer):
    """A fork inherits the handler and the kept alarm's notes, not the timer: a gate in the fork
    is still cut at its own deadline, though the parent's timer was armed to fire before it."""
    import os

    from hookgate.engine import deadline

    engine = Engine([gate("slow", lambda e, c: time.sleep(5), timeout=0.3, may_block=True, fail_mode="closed")])
    with deadline.EventScope() as bounded:
        bounded(lambda: None, 0.1)  # the timer is armed (for 0.1 s from now) in here
        deadline._kept[1].armed = deadline.waits.clock() + 0.1  # and noted as armed, as within a gate
        pid = os.fork()
        if pid == 0:  # the fork: an event of its own, its gate past its timeout
            started = time.monotonic()
            engine.evaluate(pre(), ctx)
            os._exit(0 if time.monotonic() - started < 2 else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_a_gate_running_another_under_a_deadline_keeps_both_bounds(ctx):
    from hookgate.engine.deadline import GateTimeout, call_with_deadline

    def outer(event, c):
        call_with_deadline(time.sleep, 10.0, 0.05)  # an inner call with a longer timeout of its own
        with pytest.raises(GateTimeout):
            call_with_deadline(time.sleep, 0.2, 5)  # a shorter inner one is cut at its own
        time.sleep(5)  # the outer gate's deadline still holds after the inner calls

    started = time.monotonic()
    decision = Engine([gate("outer", outer, timeout=0.6, may_block=True, fail_mode="closed")]).evaluate(pre(), ctx)
    assert time.monotonic() - started < 3
    assert decision.failed == ("outer",)


def test_a_gate_not_declared_a_blocker_cannot_block(ctx):
    for refusal in (Block(reason="no", context="ctx"), Retry(reason="later"), Ask(reason="sure?")):
        ctx.records.clear()
        decision = Engine([gate("polite", lambda e, c, v=refusal: v)]).evaluate(pre(), ctx)
        assert not decision.verdict.refuses and decision.verdict.kind in ("allow", "context")
        assert ctx.records == [{"event": "gate_violation", "gate": "polite", "kind": refusal.kind}]


def test_a_wrong_return_type_is_a_gate_failure(ctx):
    decision = Engine([gate("g", lambda e, c: "block", may_block=True, fail_mode="closed")]).evaluate(pre(), ctx)
    assert decision.verdict.kind == "block" and "TypeError" in decision.verdict.reason


def test_bounded_blocking_per_agent_then_force_allow_recorded_unverified(ctx):
    engine = Engine([gate("strict", lambda e, c: Block(reason="fix it"), may_block=True,
                          block_limit=BlockLimit(per="agent", limit=2))])
    decisions = [engine.evaluate(pre(agent_id="a1"), ctx) for _ in range(4)]
    # the budget is the agent's: once spent, every later block of it is released (and explained)
    assert [d.verdict.kind for d in decisions] == ["block", "block", "context", "context"]
    released = decisions[2]
    assert released.forced == ("strict",) and "UNVERIFIED" in released.verdict.context
    assert released.verdict.message == released.verdict.context  # the user is told too
    # another agent has its own budget
    assert engine.evaluate(pre(agent_id="a2"), ctx).verdict.kind == "block"
    forced = [r for r in ctx.records if r["event"] == "hook_force_allow"]
    assert forced and all(r["outcome_kind"] == "unverified" for r in forced)


def test_bounded_blocking_per_session_holds_the_notice_for_a_stop(ctx):
    engine = Engine([Gate(id="done", events=("Stop",), check=lambda e, c: Block(reason="verify first"),
                          may_block=True, block_limit=BlockLimit(per="session", limit=1))])
    assert engine.evaluate(Stop(session_id="s"), ctx).verdict.kind == "block"
    released = engine.evaluate(Stop(session_id="s"), ctx)
    assert released.forced == ("done",)
    # a Stop's answer never reaches the model, so the warning waits for its next turn
    follow_up = Engine([]).evaluate(PostToolUse(session_id="s", tool_name="Bash"), ctx)
    assert "verify first" in follow_up.verdict.context
    assert Engine([]).evaluate(PostToolUse(session_id="s", tool_name="Bash"), ctx).verdict == Allow()


def test_notices_are_not_handed_to_a_subagent(ctx):
    ctx.session.push_notice("for the lead")
    sub = PostToolUse(session_id="s", tool_name="Bash", agent_id="a1")
    assert Engine([]).evaluate(sub, ctx).verdict == Allow()
    assert Engine([]).evaluate(PostToolUse(session_id="s", tool_name="Bash"), ctx).verdict.context == "for the lead"


def test_later_gates_see_earlier_rewrites(ctx):
    seen = []
    engine = Engine([
        gate("a", lambda e, c: Modify(updated_input={**e.tool_input, "content": "safe"}), priority=1),
        gate("b", lambda e, c: seen.append(e.tool_input["content"]), priority=2),
    ])
    decision = engine.evaluate(pre(content="raw", file_path="x"), ctx)
    assert seen == ["safe"] and decision.verdict == Modify(updated_input={"content": "safe", "file_path": "x"})


def test_observers_see_the_final_decision_and_cannot_change_it(ctx):
    seen = []

    def observe(event, decision, c):
        seen.append((decision.verdict.kind, decision.forced))
        raise RuntimeError("observer bug")

    engine = Engine(
        [Gate(id="report", events=("SubagentStop",), check=lambda e, c: Block(reason="bad report"), may_block=True,
              block_limit=BlockLimit(per="agent", limit=1))],
        [Observer(id="log", events=("SubagentStop",), observe=observe)],
    )
    stop = SubagentStop(session_id="s", agent_id="a1", agent_type="worker")
    assert engine.evaluate(stop, ctx).verdict.kind == "block"
    assert engine.evaluate(stop, ctx).verdict.kind == "context"
    assert seen == [("block", ()), ("context", ("report",))]
    assert any(r["event"] == "gate_error" and r["gate"] == "log" for r in ctx.records)


def test_fail_blocks_only_when_a_gate_of_that_event_fails_closed(ctx):
    engine = Engine([gate("closed", lambda e, c: None, may_block=True, fail_mode="closed"),
                     Gate(id="open", events=("Stop",), check=lambda e, c: None)])
    assert engine.fail("PreToolUse", "bad json", ctx).verdict.kind == "block"
    assert engine.fail("Stop", "bad json", ctx).verdict == Allow()
    assert engine.fail("", "bad json", ctx).verdict == Allow()


def test_an_unreadable_payload_keeps_the_bound_of_a_closed_gate(ctx):
    engine = Engine([Gate(id="done", events=("Stop",), check=lambda e, c: None, may_block=True, fail_mode="closed",
                          block_limit=BlockLimit(per="session", limit=2))])
    kinds = [engine.fail("Stop", "truncated", ctx).verdict.kind for _ in range(3)]
    assert kinds == ["block", "block", "context"]
    assert any(r["event"] == "hook_force_allow" and r["outcome_kind"] == "unverified" for r in ctx.records)


@pytest.mark.parametrize("kw, message", [
    ({"fail_mode": "closed"}, "must be may_block"),
    ({"events": ("PreToolUze",)}, "unknown or missing events"),
    ({"matcher": "(bad"}, "invalid matcher"),
    ({"block_limit": BlockLimit(per="agent", limit=2)}, "block_limit without may_block"),
    ({"id": "Bad Id"}, "id must be"),
])
def test_wrong_declarations_are_caught_at_registration(kw, message):
    kw = {"id": "g", "events": ("PreToolUse",), **kw}
    with pytest.raises(GateError, match=message):
        Gate(check=lambda e, c: None, **kw)


def test_a_stop_bound_at_a_runtimes_own_cap_is_caught_when_the_engine_is_built():
    """The cap is the runtime's number (its plug's limits), handed to the engine by its builder."""
    bounded = Gate(id="g", events=("Stop",), check=lambda e, c: None, may_block=True,
                   block_limit=BlockLimit(per="session", limit=8))
    with pytest.raises(GateError, match="below Claude Code's own cap"):
        Engine([bounded], stop_block_caps={"Claude Code": 8})
    assert Engine([bounded], stop_block_caps={"Claude Code": 9}).gates == (bounded,)


def test_the_shipped_engine_is_handed_claude_codes_stop_cap():
    from hookgate.runtimes import stop_block_caps

    assert stop_block_caps() == {"Claude Code": 8}


def test_duplicate_gate_ids_are_refused():
    with pytest.raises(ValueError, match="duplicate"):
        Engine([gate("same", lambda e, c: None), gate("same", lambda e, c: None)])


def test_context_verdict_is_kept(ctx):
    decision = Engine([gate("hint", lambda e, c: Context(context="remember the tests"))]).evaluate(pre(), ctx)
    assert decision.verdict == Context(context="remember the tests")


def _waits_for(lock, then=lambda: None):
    def check(event, ctx):
        from hookgate.store import locked

        with locked.exclusive(lock):
            then()

    return check


def test_a_wait_for_another_process_lock_is_not_the_gates_time(ctx, tmp_path):
    """A gate whose deadline passes while another process holds the lock it needs still does its
    work (a logging gate's record was lost so under contention); its own work stays bounded."""
    from support import hold_lock

    lock = tmp_path / "state.lock"
    holder = hold_lock(lock, 0.8)
    started = time.monotonic()
    decision = Engine([gate("patient", _waits_for(lock), timeout=0.3, may_block=True, fail_mode="closed")]).evaluate(pre(), ctx)
    assert time.monotonic() - started >= 0.5  # it did wait
    assert (decision.verdict.kind, ctx.records) == ("allow", [])
    holder.wait()

    holder = hold_lock(lock, 0.8)
    started = time.monotonic()
    slow = gate("slow-after-the-wait", _waits_for(lock, lambda: time.sleep(5)), timeout=0.3, may_block=True, fail_mode="closed")
    decision = Engine([slow]).evaluate(pre(), ctx)
    assert decision.verdict.kind == "block" and "timed out after 0.3s" in ctx.records[0]["error"]
    assert time.monotonic() - started < 3
    holder.wait()


def test_a_wait_in_one_gate_does_not_lengthen_the_next_gates_deadline(ctx, tmp_path):
    """Deadlines are measured on a clock that stands still while a gate waits for a lock: a later
    gate's deadline is its own start on that clock plus its timeout, so the wait of a gate before
    it gives it no more time (a deadline taken on the plain monotonic clock, against the waits'
    clock in the alarm's handler, gave the next gate the whole wait on top of its timeout)."""
    from support import hold_lock

    lock = tmp_path / "state.lock"
    holder = hold_lock(lock, 1.5)
    began: list[float] = []

    def overruns(event, c):
        began.append(time.monotonic())
        time.sleep(5)

    engine = Engine([gate("a-waits", _waits_for(lock), timeout=0.3, priority=1),
                     gate("b-overruns", overruns, timeout=0.3, priority=2, may_block=True, fail_mode="closed")])
    decision = engine.evaluate(pre(), ctx)
    ended = time.monotonic()
    holder.wait()
    assert decision.failed == ("b-overruns",) and decision.verdict.kind == "block"
    assert ended - began[0] < 1.0  # cut at its own 0.3 s, not at 0.3 s plus the 1.5 s wait before it


def test_a_wait_for_a_lock_that_is_never_let_go_ends(ctx, tmp_path, monkeypatch):
    from hookgate import waits
    from support import hold_lock

    monkeypatch.setattr(waits, "MAX_WAIT", 0.6)
    holder = hold_lock(tmp_path / "state.lock", 30)
    try:
        started = time.monotonic()
        stuck = gate("stuck", _waits_for(tmp_path / "state.lock"), timeout=0.2, may_block=True, fail_mode="closed")
        decision = Engine([stuck]).evaluate(pre(), ctx)
        assert time.monotonic() - started < 3
        assert decision.verdict.kind == "block" and "waited for a lock after 0.6s" in ctx.records[0]["error"]
    finally:
        holder.kill()
        holder.wait()
