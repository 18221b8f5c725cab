"""check_completion (seed 000): the last gate before a worker-dispatching role (build, fixgap)
ends its turn. If workers were dispatched this session, a verifier and a reviewer must have run
too. The counts come from the session state (`agents.role_counts`), so the check costs the same
however long the session's log grows. Bounded by the engine: 5 blocks per session, then the stop
goes through as `unverified` and the model is told why.

Claude Code runs subagents in the background: the lead's turn ends while they work and resumes
when they finish. A stop with subagents still running is therefore not the end of the round; it
is let through (recorded as deferred) and judged at the stop after they finished."""

from __future__ import annotations

from ..engine.context import Context
from ..model.events import Event
from ..model.verdicts import Block, Verdict
from .agents import role_counts


def check_completion(event: Event, ctx: Context) -> Verdict | None:
    if event.in_subagent:
        return None
    pipeline = ctx.config.pipeline
    role = ctx.current_role()
    if role not in pipeline.worker_dispatch_roles or not pipeline.completion.dispatched:
        return None
    running = [t for t in getattr(event, "background_tasks", [])
               if isinstance(t, dict) and t.get("type") == "subagent" and t.get("status") == "running"]
    if running:
        ctx.record("gate_check", gate="check_completion", result="deferred", running=len(running))
        return None
    counts = role_counts(ctx)
    dispatched_role = pipeline.completion.dispatched
    dispatched = counts.get(dispatched_role, 0)
    if not dispatched:
        return None
    missing = [needed for needed in pipeline.completion.requires if not counts.get(needed)]
    if not missing:
        return None
    lines = [
        f"Dispatched {dispatched} {dispatched_role}(s) but 0 {needed}s. {needed.capitalize()} is mandatory in "
        f"{role}: dispatch a {needed} (subagent_type: '{needed}') for the {dispatched_role}s' deliverables."
        for needed in missing
    ]
    return Block(reason=f"Cannot finish {role} yet:\n" + "\n".join(f"  - {line}" for line in lines))
