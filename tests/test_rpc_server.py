"""`hookgate serve --stdio` as a real process: methods, errors, concurrency, a stdout that carries
nothing but frames, and shutdown."""

from __future__ import annotations

import fcntl
import json
import time
from pathlib import Path

import pytest

from hookgate.rpc import protocol
from rpc_support import Core, pre_bash, pre_write, root  # noqa: F401 (a fixture)


@pytest.fixture
def core(root: Path):
    core = Core(root, "--no-reload")
    yield core
    core.close()


def test_initialize_reports_the_server_and_fail_modes_per_event(core: Core, root: Path):
    result = core.initialize()
    assert result["protocol"] == 1
    assert result["server"]["name"] == "hookgate" and result["server"]["pid"] == core.proc.pid
    assert result["project"] == str(root)
    events = result["capabilities"]["events"]
    # the write rules fail closed; nothing gates UserPromptSubmit, so it fails open
    assert events["PreToolUse"]["fail_mode"] == "closed"
    assert any(g["id"] == "check_file_permissions" for g in events["PreToolUse"]["gates"])
    assert events["UserPromptSubmit"]["fail_mode"] == "open"
    assert events["PreToolUse"]["timeout_ms"] > events["UserPromptSubmit"]["timeout_ms"]


def test_evaluate_answers_with_the_tagged_verdict_and_records_metrics(core: Core, root: Path):
    core.initialize()
    blocked = core.evaluate(pre_write(root, "src/player.gd"))
    assert blocked["kind"] == "block"
    assert "Build role cannot write game code directly (player.gd)" in blocked["reason"]
    allowed = core.evaluate(pre_write(root, "notes.txt"))
    assert allowed["kind"] == "allow"
    assert core.request("ping")["result"] is None  # answered once the records of every call before it are written
    records = (root / ".hookgate" / "sessions" / "s1" / "metrics.jsonl").read_text().splitlines()
    events = [json.loads(line)["event"] for line in records]
    assert events.count("file_write") == 2 and "hook_block" in events
    assert all(json.loads(line)["runtime"] == "opencode" for line in records)


def test_the_answer_does_not_wait_for_the_records_and_the_next_one_does(core: Core, root: Path):
    """A decision's records are written after its answer, before the next frame is read: shown
    by holding the session log's lock, which the core's append then waits for."""
    core.initialize()
    core.evaluate(pre_write(root, "notes.txt"))
    core.request("ping")  # a later answer: the first call's records are written
    log = root / ".hookgate" / "sessions" / "s1" / "metrics.jsonl"
    with open(log, "ab") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        blocked = core.answer(core.send("evaluate", {"event": pre_write(root, "src/player.gd")}), timeout=10)
        assert blocked["result"]["kind"] == "block"  # answered while its records wait for the lock
        later = core.send("ping")
        time.sleep(0.3)
        assert not core.answered(later)  # the loop is still writing the block's records
        assert "hook_block" not in log.read_text()
    assert core.answer(later)["result"] is None
    assert "hook_block" in log.read_text()


def test_the_client_is_offered_the_cpu_between_the_answer_and_the_records(root: Path, monkeypatch: pytest.MonkeyPatch):
    """Between a decision's answer and its records the core yields its CPU: a scheduler that puts
    the plugin beside the core would otherwise keep the woken plugin waiting for the records
    (in-process: the order of the three, on a core that judges with the real policy)."""
    import io

    from hookgate.hookcall import load_policy
    from hookgate.rpc import server as rpc_server
    from hookgate.rpc.reload import PolicyHolder
    from hookgate.rpc.transport import StdioTransport

    steps: list[str] = []
    log = root / ".hookgate" / "sessions" / "s1" / "metrics.jsonl"

    class Transport(StdioTransport):
        def write_frame(self, frame: bytes) -> None:
            steps.append("answer")
            super().write_frame(frame)

    def offer() -> None:
        steps.append("offer, " + ("records written" if log.exists() else "no records yet"))

    monkeypatch.setattr(rpc_server, "_offer_cpu", offer)
    monkeypatch.chdir(root)
    server = rpc_server.Server(Transport(io.BytesIO(), io.BytesIO()), PolicyHolder(lambda: load_policy(None), print), log=print)
    server._answer(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}).encode())
    assert steps == ["answer"]  # nothing to write after it: no offer
    for id_, name in ((2, "src/player.gd"), (3, "notes.txt")):
        server._answer(json.dumps({"jsonrpc": "2.0", "id": id_, "method": "evaluate",
                                   "params": {"event": pre_write(root, name)}}).encode())
    assert steps == ["answer", "answer", "offer, no records yet", "answer", "offer, records written"]
    events = [json.loads(line)["event"] for line in log.read_text().splitlines()]
    assert "hook_block" in events and events.count("file_write") == 2


def test_evaluate_before_initialize_is_refused(core: Core, root: Path):
    answer = core.request("evaluate", {"event": pre_write(root, "a.txt")})
    assert answer["error"]["code"] == protocol.SERVER_NOT_INITIALIZED


def test_a_bad_line_gets_its_error_and_the_loop_goes_on(core: Core, root: Path):
    core.initialize()
    core.send_raw(b"this is not json\n")
    core.send_raw(b'{"jsonrpc":"2.0","id":"x","method":"evaluate","params":[1,2]}\n')
    core.send_raw(b'{"jsonrpc":"2.0","id":"y","method":"evaluate","params":{"event":{"tool_name":"Write"}}}\n')
    core.send_raw(b'{"jsonrpc":"2.0","id":"z","method":"frobnicate"}\n')
    core.send_raw(b'{"jsonrpc":"2.0","method":"frobnicate"}\n')  # a notification: no answer, even an error
    assert core.answer("x")["error"]["code"] == protocol.INVALID_PARAMS
    assert "hook_event_name" in core.answer("y")["error"]["message"]
    assert core.answer("z")["error"]["code"] == protocol.METHOD_NOT_FOUND
    parse_error = json.loads(core.raw_lines[1])  # answers come in order here: each is immediate
    assert parse_error["id"] is None and parse_error["error"]["code"] == protocol.PARSE_ERROR
    assert core.evaluate(pre_write(root, "src/a.gd"))["kind"] == "block"  # still serving
    assert core.proc.poll() is None


def test_an_event_with_unreadable_fields_gets_its_gates_fail_mode(core: Core, root: Path):
    core.initialize()
    verdict = core.evaluate({"hook_event_name": "PreToolUse", "session_id": "s1", "tool_name": 42})
    assert verdict["kind"] == "block"
    assert "check_file_permissions" in verdict["reason"] and "fail closed" in verdict["reason"]
    # an unknown event is served (no gate runs on it), never an error
    assert core.evaluate({"hook_event_name": "SomethingNew", "session_id": "s1"})["kind"] == "allow"


def test_a_batch_is_answered_as_one_array(core: Core, root: Path):
    core.initialize()
    batch = [
        {"jsonrpc": "2.0", "id": 10, "method": "evaluate", "params": {"event": pre_write(root, "a.gd")}},
        {"jsonrpc": "2.0", "method": "evaluate", "params": {"event": pre_write(root, "b.txt")}},
        {"jsonrpc": "2.0", "id": 11, "method": "nope"},
    ]
    core.send_raw(json.dumps(batch).encode() + b"\n")
    assert core.answer(10)["result"]["kind"] == "block"
    assert core.answer(11)["error"]["code"] == protocol.METHOD_NOT_FOUND
    arrays = [json.loads(line) for line in core.raw_lines if line.startswith(b"[")]
    assert len(arrays) == 1 and {a["id"] for a in arrays[0]} == {10, 11}


def test_many_requests_in_flight_are_all_answered(core: Core, root: Path):
    core.initialize()
    frames = b"".join(
        json.dumps({"jsonrpc": "2.0", "id": f"m{i}", "method": "evaluate",
                    "params": {"event": pre_write(root, f"f{i}.{'gd' if i % 2 else 'txt'}", session=f"s{i % 5}")}}).encode() + b"\n"
        for i in range(200)
    )
    core.send_raw(frames)
    kinds = {i: core.answer(f"m{i}")["result"]["kind"] for i in range(200)}
    assert all(kinds[i] == ("block" if i % 2 else "allow") for i in range(200))
    core.request("ping")
    total = sum(len((root / ".hookgate" / "sessions" / f"s{s}" / "metrics.jsonl").read_text().splitlines()) for s in range(5))
    assert total == 200 + 100  # a file_write each, a hook_block for each .gd


def test_decisions_are_answered_in_arrival_order(root: Path):
    core = Core(root, "--no-reload", extra_gates=True)
    try:
        core.initialize()
        slow = core.send("evaluate", {"event": pre_bash(root, session="a", command="x", sleep="1")})
        same_session = core.send("evaluate", {"event": {**pre_bash(root, session="a", command="y"), "agent_id": "sub1"}})
        other_session = core.send("evaluate", {"event": pre_bash(root, session="b", command="z")})
        assert core.answer(other_session)["result"]["kind"] == "allow"
        assert core.answer(slow)["result"]["context"] == "slept 1"
        assert core.answer(same_session)["result"]["kind"] == "allow"
        order = [json.loads(line)["id"] for line in core.raw_lines[1:]]
        assert order == [slow, same_session, other_session]
    finally:
        core.close()


def test_stdout_carries_only_frames_even_when_a_gate_prints(root: Path):
    core = Core(root, "--no-reload", extra_gates=True)
    try:
        core.initialize()
        verdict = core.evaluate(pre_bash(root, command="print"))
        assert verdict["context"] == "printed"
        crashed = core.evaluate(pre_bash(root, command="crash"))
        assert crashed["kind"] == "block" and "test_crashing failed (RuntimeError: boom)" in crashed["reason"]
        assert core.request("shutdown") == {"jsonrpc": "2.0", "id": 4, "result": None}
        assert core.proc.wait(timeout=10) == 0
        for line in core.raw_lines:  # every line is a JSON-RPC frame
            assert json.loads(line)["jsonrpc"] == "2.0"
        stderr = "".join(core.stderr_lines)
        assert "a stray print from a gate" in stderr
        assert "a child process writing to its stdout" in stderr
        assert "gate test_crashing failed" in stderr
    finally:
        core.close()


def test_shutdown_is_answered_after_every_earlier_request_then_the_server_exits(root: Path):
    core = Core(root, "--no-reload", extra_gates=True)
    try:
        core.initialize()
        slow = core.send("evaluate", {"event": pre_bash(root, command="x", sleep="1")})
        down = core.send("shutdown")
        late = core.send("evaluate", {"event": pre_bash(root, command="y")})
        assert core.answer(slow)["result"]["context"] == "slept 1"
        assert core.answer(down)["result"] is None
        assert core.proc.wait(timeout=10) == 0
        assert not core.answered(late)  # never read: the client sees the core exit instead
        order = [json.loads(line)["id"] for line in core.raw_lines[1:]]
        assert order == [slow, down]
    finally:
        core.close()


def test_a_batch_after_shutdown_is_refused(core: Core):
    core.initialize()
    batch = [{"jsonrpc": "2.0", "id": "a", "method": "shutdown"},
             {"jsonrpc": "2.0", "id": "b", "method": "initialize"}]
    core.send_raw(json.dumps(batch).encode() + b"\n")
    assert core.answer("a")["result"] is None
    assert core.answer("b")["error"]["code"] == protocol.SHUTTING_DOWN
    assert core.proc.wait(timeout=10) == 0


def test_end_of_input_ends_the_server_cleanly(core: Core):
    core.initialize()
    started = time.monotonic()
    assert core.close() == 0
    assert time.monotonic() - started < 10


def test_an_unsupported_protocol_version_is_refused(core: Core):
    answer = core.request("initialize", {"protocol": 99})
    assert answer["error"]["code"] == protocol.INVALID_PARAMS and "protocol 99" in answer["error"]["message"]
