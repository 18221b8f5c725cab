"""One hook call of a stdin runtime (Claude Code, Codex): payload in, native answer out.

This is the edge: it reads the project's files, runs the engine, appends the records the gates
noted, and hands the verdict to the runtime's dialect. Whatever goes wrong here, the runtime gets
a well-formed answer that follows the fail mode of the gates involved, never a traceback.
"""

from __future__ import annotations

import os
from typing import Mapping, Protocol, Sequence

import msgspec

from .config.load import open_project, preset_config
from .config.schema import Config
from .engine.context import Context
from .engine.loop import Decision, Engine
from .errors import ConfigError, PayloadError
from .model.events import Event
from .model.verdicts import Verdict, combine
from .policy import build_engine
from .store.project import Project
from .store.session import stamp


# When no policy can be loaded at all, the gates' own fail modes are unknowable; the gating
# events then fail closed, as A3S does for its gating events.
GATING_EVENTS = frozenset({"PreToolUse", "PermissionRequest"})


class Answer(msgspec.Struct, frozen=True):
    stdout: bytes = b""
    stderr: str = ""
    exit_code: int = 0


class Dialect(Protocol):
    runtime: str

    def decode(self, raw: bytes) -> Sequence[Event]: ...

    def render(self, event_name: str, verdict: Verdict) -> Answer: ...


class Policy(msgspec.Struct):
    project: Project
    config: Config
    engine: Engine
    error: str | None = None  # the config could not be loaded; the preset's gates stand in


def load_policy(cwd: str | None, env: Mapping[str, str] = os.environ) -> Policy:
    root = Project.find(cwd, env).root
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



def decide(policy: Policy, events: Sequence[Event]) -> tuple[Verdict, list[Decision], Context]:
    """Evaluate the events of one call (a Codex patch is one event per file) as one decision."""
    session = policy.project.session(events[0].session_id)
    ctx = Context(project=policy.project, session=session, config=policy.config)
    if policy.error:
        decisions = [policy.engine.fail(events[0].name, policy.error, ctx)]
    else:
        decisions = [policy.engine.evaluate(event, ctx) for event in events]
    flush(ctx, events[0])
    return combine(d.verdict for d in decisions), decisions, ctx


def flush(ctx: Context, event: Event) -> None:
    if ctx.records:
        ctx.session.append(stamp(
            ctx.records, session_id=event.session_id, runtime=event.runtime,
            agent_id=event.agent_id or "main", agent_type=event.agent_type, hook_event=event.name,
        ))


def handle(dialect: Dialect, raw: bytes, env: Mapping[str, str] = os.environ, event_hint: str = "") -> Answer:
    """The whole stdin hook call. Never raises."""
    events: list[Event] = []
    try:
        try:
            events = list(dialect.decode(raw))
            error = None if events else "the payload held no event"
        except PayloadError as exc:
            error = str(exc)
        policy = load_policy(events[0].cwd if events else None, env)
        if error is not None:
            return _failed(dialect, policy, event_hint, error)
        verdict, _, ctx = decide(policy, events)
        answer = dialect.render(events[0].name, verdict)
        warnings = "\n".join(ctx.warnings)
        if warnings:
            answer = msgspec.structs.replace(answer, stderr="\n".join(filter(None, [warnings, answer.stderr])))
        return answer
    except Exception as exc:  # a bug in hookgate itself: still answer, per the fail mode
        return _crashed(dialect, events, event_hint, exc, env)


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
        policy = load_policy(events[0].cwd if events else None, env)
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
    if verdict.refuses:
        return Answer(stderr=verdict.reason, exit_code=2)  # type: ignore[attr-defined]
    return Answer(stderr="\n".join(warnings), exit_code=0)
