"""The call loop: which gates run for an event, in what order, and what their failures, blocks
and bounds become. Pure and synchronous: all reading and writing goes through the Context."""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Callable, Iterable, Mapping, TypeVar

import msgspec

from ..model.events import Event, PermissionRequest, PreToolUse
from ..model.verdicts import ALLOW, Allow, Ask, Block, Context as ContextVerdict, Modify, Refusal, Retry, Verdict, combine
from .context import Context
from .deadline import Bounded, EventScope
from .gate import Gate, Observer
from .lazy import Lazy
from .matcher import Matcher, compile_matcher

# Events whose answer reaches the model; a warning raised on any other event (a released Stop,
# a released SubagentStop) is held and delivered on the main agent's next one of these.
CONTEXT_REACHES_MODEL = frozenset(
    {"PreToolUse", "PostToolUse", "PostToolUseFailure", "UserPromptSubmit", "SessionStart"}
)
# Outputs that stop or interrupt the agent; only gates declared may_block may produce them.
BLOCKING_KINDS = (Block, Retry, Ask)
MAX_MATCHED = 512  # (event, tool) pairs an engine remembers the applying gates of
T = TypeVar("T", Gate, Observer)
Applying = tuple[tuple[T, Callable[..., Any]], ...]  # the gates (or observers) of an event, with their functions


class Decision(msgspec.Struct, frozen=True, kw_only=True):
    verdict: Verdict
    blocked_by: tuple[str, ...] = ()
    forced: tuple[str, ...] = ()  # gates whose block the bound released: outcome `unverified`
    failed: tuple[str, ...] = ()
    # every gate that ran, in order: (gate id, the kind it answered, its reason); what explain
    # and the recorded events show. A monitored gate's own answer is kept here, not what it became.
    ran: tuple[tuple[str, str, str | None], ...] = ()
    monitored: tuple[str, ...] = ()  # monitor-mode gates that would have refused: recorded `would_block`


class Engine:
    def __init__(self, gates: Iterable[Gate], observers: Iterable[Observer] = (),
                 stop_block_caps: Mapping[str, int] | None = None) -> None:
        """`stop_block_caps`: runtime -> the consecutive Stop blocks after which that runtime ends
        a turn by itself (the runtimes' own numbers, handed in by whoever builds the engine)."""
        self.gates = tuple(sorted(gates, key=lambda g: (g.priority, g.id)))
        ids = [g.id for g in self.gates]
        if len(ids) != len(set(ids)):
            raise ValueError(f"duplicate gate ids: {sorted({i for i in ids if ids.count(i) > 1})}")
        for gate in self.gates:
            gate.check_stop_bound(stop_block_caps or {})
        self._by_event: dict[str, list[tuple[Gate, Matcher]]] = defaultdict(list)
        for gate in self.gates:
            for name in gate.events:
                self._by_event[name].append((gate, gate.compiled_matcher()))
        self._observers: dict[str, list[tuple[Observer, Matcher]]] = defaultdict(list)
        for observer in observers:
            for name in observer.events:
                self._observers[name].append((observer, compile_matcher(observer.matcher)))
        # (event name, matched value) -> the gates and the observers that apply, each with its
        # function (a Lazy one imported now, once): matchers are pure functions of the value, and
        # an engine's gates never change
        self._matched: dict[tuple[str, str | None], tuple[Applying[Gate], Applying[Observer]]] = {}

    def gates_for(self, event: Event) -> tuple[Gate, ...]:
        return tuple(gate for gate, _ in self._applying(event)[0])

    def _applying(self, event: Event) -> tuple[Applying[Gate], Applying[Observer]]:
        key = (event.name, event.match_value)
        found = self._matched.get(key)
        if found is None:
            value = key[1]
            found = (tuple((gate, _function(gate.check)) for gate, matches in self._by_event.get(event.name, ())
                           if matches(value)),
                     tuple((observer, _function(observer.observe))
                           for observer, matches in self._observers.get(event.name, ()) if matches(value)))
            if len(self._matched) >= MAX_MATCHED:
                self._matched.clear()
            self._matched[key] = found
        return found

    def evaluate(self, event: Event, ctx: Context) -> Decision:
        verdicts: list[Verdict] = []
        if event.name in CONTEXT_REACHES_MODEL and not event.in_subagent:
            notices = ctx.session.pop_notices()
            if notices:
                verdicts.append(ContextVerdict(context="\n".join(notices)))
        with EventScope() as bounded:  # one timer for all the event's gates, each still bounded by its own
            return self._decide(event, ctx, verdicts, bounded)

    def _decide(self, event: Event, ctx: Context, verdicts: list[Verdict], bounded: Bounded) -> Decision:
        blocked: list[str] = []
        forced: list[str] = []
        failed: list[str] = []
        ran: list[tuple[str, str, str | None]] = []
        monitored: list[str] = []
        gates, observers = self._applying(event)
        for gate, check in gates:
            try:
                verdict = bounded(check, gate.timeout, event, ctx)
            except Exception as exc:  # a gate's failure is turned into its declared outcome, never raised
                verdict = _failed(gate, exc, ctx, failed)
            else:
                if verdict is not None:
                    verdict = _declared(gate, verdict, ctx, failed)
            if verdict is None or verdict is ALLOW:  # most gates' answer: nothing to bound, record or fold in
                ran.append((gate.id, "allow", None))
                continue
            ran.append((gate.id, verdict.kind, getattr(verdict, "reason", None)))
            if gate.mode == "monitor" and not isinstance(verdict, (Allow, ContextVerdict)):
                verdict = _monitored(gate, verdict, ctx, monitored)
            if isinstance(verdict, Refusal) and verdict.refuses and gate.block_limit is not None:
                verdict = self._bound(gate, verdict, event, ctx, forced)
            if isinstance(verdict, Refusal) and verdict.refuses:
                blocked.append(gate.id)
                ctx.record("hook_block", gate=gate.id, kind=verdict.kind, reason=verdict.reason)
            if isinstance(verdict, Modify) and isinstance(event, PreToolUse):
                event = msgspec.structs.replace(event, tool_input=verdict.updated_input)
            verdicts.append(verdict)
        decision = Decision(
            verdict=combine(verdicts), blocked_by=tuple(blocked), forced=tuple(forced), failed=tuple(failed),
            ran=tuple(ran), monitored=tuple(monitored),
        )
        if isinstance(event, PermissionRequest) and isinstance(decision.verdict, Modify):
            decision = self._judge_rewrite(event, decision, ctx, bounded)
        for observer, observe in observers:
            try:
                bounded(observe, 5.0, event, decision, ctx)
            except Exception as exc:  # observers only record; their failure must not change anything
                ctx.record("gate_error", gate=observer.id, error=f"{type(exc).__name__}: {exc}", fail_mode="open")
                ctx.warn(f"hookgate: observer {observer.id} failed ({type(exc).__name__}: {exc})")
        return decision

    def _judge_rewrite(self, event: PermissionRequest, decision: Decision, ctx: Context, bounded: Bounded) -> Decision:
        """A permission answered with a rewrite runs the rewritten call without a PreToolUse of its
        own (Claude Code takes updatedInput as it is), so the PreToolUse gates judge it here: a
        policy's rewrite cannot carry a call past the rules the original had to pass."""
        assert isinstance(decision.verdict, Modify)
        rewritten = decision.verdict.updated_input
        judged = self._decide(PreToolUse(**{**msgspec.structs.asdict(event), "tool_input": rewritten}), ctx, [], bounded)
        if not judged.verdict.refuses and not isinstance(judged.verdict, Modify):
            judged = msgspec.structs.replace(judged, verdict=decision.verdict)
        return Decision(verdict=judged.verdict, blocked_by=decision.blocked_by + judged.blocked_by,
                        forced=decision.forced + judged.forced, failed=decision.failed + judged.failed,
                        ran=decision.ran + judged.ran, monitored=decision.monitored + judged.monitored)

    def fail(self, event_name: str, error: str, ctx: Context) -> Decision:
        """The call could not be decided (an unreadable payload or config, an internal error). The
        gates that would have run decide: if any of them fails closed, the action is blocked;
        otherwise it goes ahead."""
        ctx.record("hook_error", gate=None, hook_event=event_name or None, error=error)
        gates = {g.id: g for g, _ in self._by_event.get(event_name, ()) if g.fail_mode == "closed"}
        watched = sorted(gid for gid, g in gates.items() if g.mode == "monitor")
        for gid in watched:  # monitor mode: a fail-closed gate is open, and says what it would have done
            ctx.record("would_block", gate=gid, kind="block", reason=error)
            del gates[gid]
        # a bounded gate keeps its bound here too, or a runtime that keeps sending an unreadable
        # Stop would be held forever
        closed = sorted(gid for gid, g in gates.items()
                        if g.block_limit is None or ctx.session.spend(f"blocks/{gid}/unreadable", g.block_limit.limit))
        if gates and not closed:
            warning = f"hookgate: {error}; letting this {event_name} through UNVERIFIED: its gates' block limits are spent"
            ctx.record("hook_force_allow", gate=None, outcome_kind="unverified", reason=error)
            ctx.warn(warning)
            return Decision(verdict=ContextVerdict(context=warning, message=warning), forced=tuple(sorted(gates)))
        if closed:
            ctx.warn(f"hookgate: {error}; blocking, since {', '.join(closed)} fail closed")
            reason = f"hookgate could not decide this call ({error}); {', '.join(closed)} fail closed"
            return Decision(verdict=Block(reason=reason), blocked_by=tuple(closed), failed=tuple(closed))
        ctx.warn(f"hookgate: {error}; allowing (no gate on {event_name or 'this event'} fails closed)")
        return Decision(verdict=ALLOW)

    def _bound(self, gate: Gate, verdict: Refusal, event: Event, ctx: Context, forced: list[str]) -> Verdict:
        limit = gate.block_limit
        assert limit is not None
        scope = (event.agent_id or "main") if limit.per == "agent" else "session"
        reason = verdict.reason
        # check and count in one locked step, so concurrent hook processes cannot both slip past
        if ctx.session.spend(f"blocks/{gate.id}/{scope}", limit.limit):
            return verdict
        forced.append(gate.id)
        warning = (
            f"hookgate: {gate.id} has blocked {limit.limit} times (the limit per {limit.per}); "
            f"letting this through UNVERIFIED. The unresolved problem was: {reason}"
        )
        ctx.record("hook_force_allow", gate=gate.id, outcome_kind="unverified", count=limit.limit, reason=reason)
        ctx.warn(warning)
        if event.name not in CONTEXT_REACHES_MODEL:
            ctx.session.push_notice(warning)
        return ContextVerdict(context=warning, message=warning)


def _failed(gate: Gate, exc: Exception, ctx: Context, failed: list[str]) -> Verdict:
    """What a gate that raised answers: its fail mode, recorded and said on stderr."""
    failed.append(gate.id)
    error = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    ctx.record("gate_error", gate=gate.id, error=error, fail_mode=gate.fail_mode)
    ctx.warn(f"hookgate: gate {gate.id} failed ({error}); failing {gate.fail_mode}")
    if gate.fail_mode == "closed":
        return Block(reason=f"hookgate gate {gate.id} failed ({error}) and fails closed")
    return ALLOW


def _declared(gate: Gate, verdict: object, ctx: Context, failed: list[str]) -> Verdict:
    """A gate's answer as its declaration lets it stand: something not a Verdict is its failure,
    and a block from a gate not declared may_block is refused."""
    if not isinstance(verdict, Verdict):
        return _failed(gate, TypeError(f"returned {type(verdict).__name__}, not a Verdict"), ctx, failed)
    if isinstance(verdict, BLOCKING_KINDS) and not gate.may_block:
        ctx.record("gate_violation", gate=gate.id, kind=verdict.kind)
        ctx.warn(f"hookgate: gate {gate.id} is not declared may_block; its {verdict.kind} was refused")
        return Allow(message=verdict.message, context=verdict.context)
    return verdict


def _monitored(gate: Gate, verdict: Verdict, ctx: Context, monitored: list[str]) -> Verdict:
    """Monitor mode: the gate's refusal (or rewrite) is recorded, and the call goes ahead as asked;
    what it tells the model or the user still reaches them."""
    if isinstance(verdict, Refusal):
        monitored.append(gate.id)
        ctx.record("would_block", gate=gate.id, kind=verdict.kind, reason=verdict.reason)
    else:
        ctx.record("would_modify", gate=gate.id, kind=verdict.kind)
    context = verdict.context
    return ContextVerdict(context=context, message=verdict.message) if context else Allow(message=verdict.message)


def _function(check: Callable[..., Any]) -> Callable[..., Any]:
    """A gate's function itself: a Lazy one imported (on the first event it applies to). One that
    cannot be imported stays the Lazy, whose every call raises the import's error where the
    gate's failure is turned into its fail mode."""
    if not isinstance(check, Lazy):
        return check
    try:
        return check.resolve()
    except Exception:
        return check
