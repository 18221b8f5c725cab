"""One hook call of a stdin runtime (Claude Code, Codex): payload in, native answer out.

This is the edge: it reads the project's files, runs the engine, appends the records the gates
noted, and hands the verdict to the runtime's dialect. Whatever goes wrong here, the runtime gets
a well-formed answer that follows the fail mode of the gates involved, never a traceback.
"""

from __future__ import annotations

import os
import time
from functools import partial
from pathlib import Path
from typing import Any, Callable, Mapping, Protocol, Sequence

import msgspec

from .config.load import open_project, preset_config
from .config.schema import Config
from .engine.context import Context
from .engine.loop import Decision, Engine
from .errors import ConfigError, PayloadError
from .model.events import Event
from .model.verdicts import Ask, Modify, Refusal, Retry, Verdict, combine
from .engine_builder import build_engine
from .recording import decision_records, what_it_saw
from .store.pin import governing_root
from .store.project import Project
from .store.session import SessionStore, stamp


# When no policy can be loaded at all, the gates' own fail modes are unknowable; the gating
# events then fail closed, as A3S does for its gating events.
GATING_EVENTS = frozenset({"PreToolUse", "PermissionRequest"})


class Answer(msgspec.Struct, frozen=True):
    stdout: bytes = b""
    stderr: str = ""
    exit_code: int = 0


def refusal_reason(event_name: str, verdict: Verdict, runtime_title: str) -> str | None:
    """The reason `verdict` refuses the event with on a runtime whose hooks cannot ask the user
    (Codex, Gemini CLI): a refusal's reason (a retry says when), or an ask on PreToolUse turned
    into a refusal that tells the model to ask; None when it does not refuse."""
    if verdict.refuses and isinstance(verdict, Refusal):
        reason = verdict.reason or "refused by hookgate policy (the gate gave no reason)"
        if isinstance(verdict, Retry):
            reason = f"{reason} (temporary: retry in {verdict.delay_ms / 1000:g}s)"
        return reason
    if event_name == "PreToolUse" and isinstance(verdict, Ask):
        return (f"{verdict.reason or 'this call needs the user to confirm it'} (needs the user's "
                f"confirmation, which a {runtime_title} hook cannot ask for: ask the user in the conversation)")
    return None


class Dialect(Protocol):
    runtime: str

    def decode(self, raw: bytes) -> Sequence[Event]: ...

    def render(self, event_name: str, verdict: Verdict) -> Answer: ...


class Policy(msgspec.Struct):
    project: Project
    config: Config
    engine: Engine
    error: str | None = None  # the config could not be loaded; the preset's gates stand in


def load_policy(cwd: str | None, env: Mapping[str, str] = os.environ, root: Path | None = None) -> Policy:
    """The policy of `root` (a session's governing root, see store/pin.py), else of the project
    found from `cwd`."""
    root = root if root is not None else Project.find(cwd, env).root
    try:
        project, config = open_project(root)
        engine = build_engine(config, project)
        error = None
    except ConfigError as exc:
        # the layout is still the project's own (a GodotMaker project stays one); the preset's
        # gates stand in for the config that cannot be read
        project = Project.open(root)
        config = preset_config(state=project.layout.dir)
        engine = build_engine(config, project)
        error = f"invalid config: {exc}"
    return Policy(project=project, config=config, engine=engine, error=error)


AFTER_EVENTS = frozenset({"PostToolUse", "PostToolUseFailure"})  # a call's after-events
# Called after each decided call with (events, decisions, verdict, seconds it took): the
# long-running cores export decisions from here (hookgate.otel); the cold hook path has none.
DECISION_LISTENERS: list[Callable[[Sequence[Event], list[Decision], Verdict, float], Any]] = []


def judge(policy: Policy, events: Sequence[Event]) -> tuple[Verdict, list[Decision], Context, Callable[[], None]]:
    """Evaluate the events of one call (a Codex patch is one event per file) as one decision.
    The call's records are neither made nor written here: the last item does both, when the caller
    chooses (`decide`: at once; the OpenCode core: once the answer is sent), from what the decision
    saw as it was made."""
    started = time.perf_counter()
    if events[0].name in AFTER_EVENTS and not policy.error and getattr(events[0], "tool_use_id", None):
        policy = _as_begun(policy, events[0])
    session = policy.project.session(events[0].session_id)
    ctx = Context(project=policy.project, session=session, config=policy.config)
    if policy.error:
        decisions = [policy.engine.fail(events[0].name, policy.error, ctx)]
    else:
        decisions = [policy.engine.evaluate(event, ctx) for event in events]
    saw = what_it_saw(ctx)
    verdict = combine(d.verdict for d in decisions)
    if isinstance(verdict, Refusal) and verdict.refuses and policy.config.explain.hint:
        verdict = msgspec.structs.replace(verdict, message=_with_hint(verdict.message, events[0]))
    for listener in DECISION_LISTENERS:
        try:
            listener(events, decisions, verdict, time.perf_counter() - started)
        except Exception:  # an exporter can never change or fail a decision
            pass
    return verdict, decisions, ctx, partial(_write_records, ctx, session, events[: len(decisions)], decisions, saw)


def _as_begun(policy: Policy, event: Event) -> Policy:
    """The policy an after-event is decided by: that of the config its call began under, where the
    call changed a file the config is read from (effect/begun.py)."""
    from .effect.begun import config_begun

    config = config_begun(event, policy.project, policy.config)
    if config is None:
        return policy
    return Policy(project=policy.project, config=config, engine=build_engine(config, policy.project))


def decide(policy: Policy, events: Sequence[Event]) -> tuple[Verdict, list[Decision], Context]:
    """`judge`, with the call's records written before it returns (the stdin path: its process
    leaves once it has answered)."""
    verdict, decisions, ctx, write = judge(policy, events)
    write()
    return verdict, decisions, ctx


def _write_records(ctx: Context, session: SessionStore, events: Sequence[Event], decisions: list[Decision],
                   saw: tuple[str | None, int]) -> None:
    flush(ctx, session, events[0], decision_records(ctx, events, decisions, saw))


def _with_hint(message: str | None, event: Event) -> str:
    """The user-facing line that says how to see why ([explain] hint = false: none)."""
    use_id = getattr(event, "tool_use_id", None)
    which = f"--tool-use-id {use_id}" if use_id else "--last-block"
    hint = f"hookgate: run `hookgate explain {event.session_id} {which}` to see why"
    return "\n".join(filter(None, [message, hint]))


def flush(ctx: Context, session: SessionStore, event: Event, decided: Sequence[dict[str, Any]] = ()) -> None:
    """Append the records the gates noted (the engine only notes them; this edge writes), and the
    call's decided events to the session's decisions.jsonl."""
    common = dict(session_id=event.session_id, runtime=event.runtime, agent_id=event.agent_id or "main",
                  agent_type=event.agent_type, hook_event=event.name)
    if ctx.records:
        session.append(stamp(ctx.records, **common))
    if decided:
        session.append_decisions(stamp(decided, **common))


def handle(dialect: Dialect, raw: bytes, env: Mapping[str, str] = os.environ, event_hint: str = "") -> Answer:
    """The whole stdin hook call. Never raises."""
    events: list[Event] = []
    try:
        try:
            events = list(dialect.decode(raw))
            error = None if events else "the payload held no event"
        except PayloadError as exc:
            error = str(exc)
        policy = load_policy(events[0].cwd if events else None, env, _root(dialect, events, env))
        if error is not None:
            return _failed(dialect, policy, event_hint, error)
        verdict, _, ctx = decide(policy, events)
        if isinstance(verdict, Modify):
            _follow_rewrite(dialect, raw, events[0], verdict, policy)
        answer = dialect.render(events[0].name, verdict)
        warnings = "\n".join(ctx.warnings)
        if warnings:
            answer = msgspec.structs.replace(answer, stderr="\n".join(filter(None, [warnings, answer.stderr])))
        return answer
    except Exception as exc:  # a bug in hookgate itself: still answer, per the fail mode
        return _crashed(dialect, events, event_hint, exc, env)


def _follow_rewrite(dialect: Dialect, raw: bytes, event: Event, verdict: Modify, policy: Policy) -> None:
    """A runtime that derives a call's id from its input (Gemini CLI) names the after-event of a
    rewritten call by the rewritten input: the effect check's reading of the call follows it, or
    its after-event would find none and the call's effect would go unchecked."""
    after_id = getattr(dialect, "call_id_after", None)
    before_id = getattr(event, "tool_use_id", None)
    if after_id is None or before_id is None or event.name != "PreToolUse":
        return
    renamed = after_id(raw, verdict.updated_input)
    if renamed and renamed != before_id:
        from .effect import follow_rewrite

        follow_rewrite(event, renamed, policy.project.root)


def _root(dialect: Dialect, events: Sequence[Event], env: Mapping[str, str]) -> Path | None:
    """The root that governs this call's session; None when the payload held no event."""
    if not events:
        return None
    # a runtime that names its project for its hooks says so in its dialect (Claude Code's env)
    project_dir = getattr(dialect, "project_dir", None)
    return governing_root(events[0].cwd or None, env, dialect.runtime, events[0].session_id,
                          project_dir(env) if project_dir else None)


def _failed(dialect: Dialect, policy: Policy, event_name: str, error: str) -> Answer:
    session = policy.project.session("no-session")
    ctx = Context(project=policy.project, session=session, config=policy.config)
    decision = policy.engine.fail(event_name, error, ctx)
    if ctx.records:
        session.append(stamp(ctx.records, session_id="", runtime=dialect.runtime))
    return _fail_answer(decision.verdict, ctx.warnings)


def _crashed(dialect: Dialect, events: list[Event], event_hint: str, exc: Exception, env: Mapping[str, str]) -> Answer:
    name = events[0].name if events else event_hint
    error = f"internal error: {type(exc).__name__}: {exc}"
    try:
        policy = load_policy(events[0].cwd if events else None, env, _root(dialect, events, env))
        return _failed(dialect, policy, name, error)
    except Exception:
        return last_resort(name, error)


def last_resort(event_name: str, error: str) -> Answer:
    """No policy could be loaded: block the gating events, let the rest through."""
    if event_name in GATING_EVENTS:
        return Answer(stderr=f"hookgate: {error}; blocking {event_name} until it is repaired (see `hookgate doctor`)",
                      exit_code=2)
    return Answer(stderr=f"hookgate: {error}; allowing", exit_code=0)


def _fail_answer(verdict: Verdict, warnings: list[str]) -> Answer:
    """A payload hookgate could not read gets the answer every runtime understands for its event:
    exit 2 with the reason on stderr blocks, exit 0 lets it through."""
    if isinstance(verdict, Refusal) and verdict.refuses:
        return Answer(stderr=verdict.reason, exit_code=2)
    return Answer(stderr="\n".join(warnings), exit_code=0)
