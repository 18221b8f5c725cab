"""check_file_permissions (seed 000): who may write what while a pipeline role is active.

No active role: the write is only recorded, so ordinary conversations in the project work.
Main agent: the active role's rules. Subagents: the rules every subagent obeys (project memory),
then those of its type. Rules are data (`[pipeline]` of the config)."""

from __future__ import annotations

from ..config.schema import Pipeline, RuleSet
from ..engine.context import Context
from ..model.events import Event, ToolEvent
from ..model.tools import changed_path
from ..model.verdicts import Block, Verdict
from .agents import agent_type_of
from .paths import event_readings, file_name
from .rules import denial

_METRIC = {"Write": "file_write", "Delete": "file_delete"}


def check_file_permissions(event: Event, ctx: Context) -> Verdict | None:
    path = changed_path(event)
    if path is None:
        return None
    name = file_name(path)
    tool = getattr(event, "tool_name", "")
    ctx.record(_METRIC.get(tool, "file_edit"), file=name, path=path,
               is_subagent=event.in_subagent)
    role = ctx.current_role()
    if role is None:
        return None
    # a patch's move (Codex "*** Move to:") also removes its source
    source = (event.tool_input if isinstance(event, ToolEvent) else {}).get("moved_from")
    for changed in [path] + ([source] if isinstance(source, str) and source else []):
        reason = write_denial(changed, event, role, ctx)
        if reason:
            return Block(reason=reason.format(file=file_name(changed), role=role))
    return None


def write_denial(path: str, event: Event, role: str, ctx: Context) -> str | None:
    """Why `path` may not be written by this event's agent under `role`, or None. Shared with the
    shell-write and patch checks, so every way of writing a file meets the same rules."""
    pipeline = ctx.config.pipeline
    subagent = event.in_subagent
    rule_sets = rule_sets_for(pipeline, role, subagent, agent_type_of(event, ctx) if subagent else None)
    for rel in event_readings(path, event, ctx):
        reason = _protected(rel, ctx)  # hookgate's own files, whatever the role or agent, before any role's rules
        if reason:
            return reason
        for rule_set in rule_sets:
            reason = denial(rule_set.rules, rel, pipeline.paths, otherwise=rule_set.otherwise)
            if reason:
                return reason
    return None


def protect_denial(path: str, event: Event, ctx: Context) -> str | None:
    """Why `path` is one of hookgate's own files no agent may change while a role is active (the
    self-protection rules alone: for a write outside the project, which no role's rules judge)."""
    for rel in event_readings(path, event, ctx):
        reason = _protected(rel, ctx)
        if reason:
            return reason
    return None


def _protected(rel: str, ctx: Context) -> str | None:
    pipeline = ctx.config.pipeline
    if not pipeline.protect.enabled:
        return None
    return denial(pipeline.protect.rules, rel, pipeline.paths, ctx.project.root_text)


def rule_sets_for(pipeline: Pipeline, role: str, in_subagent: bool, agent_type: str | None) -> list[RuleSet]:
    """The rule sets that judge one agent's writes under `role`, in order (the first denial wins)."""
    if not in_subagent:
        main = pipeline.roles.get(role) or pipeline.roles.get("*")
        return [main] if main else []
    types = pipeline.subagents.types
    own = types.get(agent_type or "") or types.get("*")
    return [RuleSet(rules=pipeline.subagents.always)] + ([own] if own else [])
