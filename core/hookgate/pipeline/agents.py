"""Who a subagent is (seed 000 log_subagent): its role is detected once, when it starts, and kept
in the session state under its agent_id, so every later gate (the write rules, the report gate,
the completion gate) can look it up when a payload does not say.

Detection order (seed 000): the runtime's `agent_type` when it names a known role; else the
prefix of the description it was dispatched with; else "unknown". SubagentStart payloads carry
no description, so the Agent dispatch notes its description beforehand (`note_dispatch`) and the
start takes the oldest noted dispatch of its type.

Session state kept here, under "pipeline" (all updates are one locked read-modify-write):

    agents      agent_id -> {"type", "role"}
    dispatches  descriptions of dispatches not yet started, oldest first (bounded)
    roles       role -> how many subagents of that role ran this session
"""

from __future__ import annotations

from typing import Any

from ..config.schema import Pipeline
from ..engine.context import Context
from ..engine.loop import Decision
from ..model.events import Event, ToolEvent

UNKNOWN = "unknown"
# dispatches that never start (denied later by the runtime, cancelled) must not pile up
MAX_PENDING_DISPATCHES = 16


def role_from_type_or_text(agent_type: str | None, text: str | None, pipeline: Pipeline) -> str:
    if agent_type and agent_type in pipeline.known_subagent_roles:
        return agent_type
    lowered = (text or "").strip().lower()
    for role, prefixes in pipeline.role_prefixes.items():
        if any(lowered.startswith(prefix.lower()) for prefix in prefixes):
            return role
    return UNKNOWN


def _pipeline_state(state: dict[str, Any]) -> dict[str, Any]:
    pipeline: dict[str, Any] = state.setdefault("pipeline", {})
    return pipeline


def known_agent(ctx: Context, agent_id: str | None) -> dict[str, Any]:
    """What was recorded when this subagent started ({} when nothing was)."""
    if not agent_id:
        return {}
    agent: dict[str, Any] = ctx.session.read().get("pipeline", {}).get("agents", {}).get(agent_id, {})
    return agent


def agent_type_of(event: Event, ctx: Context) -> str | None:
    """The runtime's agent type for this event's agent: the payload's, else the one recorded at
    its start (a payload may lack it; the start event always carries it)."""
    if event.agent_type or not event.in_subagent:
        return event.agent_type
    return known_agent(ctx, event.agent_id).get("type")


def dispatched_role(event: Event, ctx: Context) -> str | None:
    """The role this subagent was dispatched as, or None: the payload's agent_type when it is a
    known role, else the role recorded at its start. Reports cannot change it."""
    known = ctx.config.pipeline.known_subagent_roles
    if event.agent_type in known:
        return event.agent_type
    role = known_agent(ctx, event.agent_id).get("role")
    return role if role in known else None


def role_counts(ctx: Context) -> dict[str, int]:
    return dict(ctx.session.read().get("pipeline", {}).get("roles", {}))


def assign_role(ctx: Context, agent_id: str, role: str, agent_type: str | None = None) -> bool:
    """Give a subagent a role if it has none yet, counting it once. True when this call counted it
    (a later report may name the role of an agent that started unknown)."""

    def change(state: dict[str, Any]) -> bool:
        pipeline = _pipeline_state(state)
        agent = pipeline.setdefault("agents", {}).setdefault(agent_id, {"type": agent_type, "role": UNKNOWN})
        if agent.get("role") not in (None, UNKNOWN) or role == UNKNOWN:
            return False
        agent["role"] = role
        roles = pipeline.setdefault("roles", {})
        roles[role] = int(roles.get(role, 0)) + 1
        return True

    return ctx.session.update(change)


# -- the Agent dispatch and the start -------------------------------------------------------

def dispatch_text(tool_input: dict[str, Any]) -> str:
    """What a dispatch says about the subagent: its description (Claude, OpenCode), else the
    opening of its prompt (Codex's spawn_agent has only a message)."""
    for field in ("description", "prompt", "message"):
        value = tool_input.get(field)
        if isinstance(value, str) and value.strip():
            return value.strip()[:200]
    return ""


def note_dispatch(event: Event, decision: Decision, ctx: Context) -> None:
    if decision.verdict.refuses:
        return  # no subagent will start from a refused dispatch
    tool_input = event.tool_input if isinstance(event, ToolEvent) else {}
    subagent_type = tool_input.get("subagent_type") or tool_input.get("agent_type")
    entry = {"type": subagent_type if isinstance(subagent_type, str) else None, "text": dispatch_text(tool_input)}

    def change(state: dict[str, Any]) -> None:
        pending = _pipeline_state(state).setdefault("dispatches", [])
        pending.append(entry)
        del pending[:-MAX_PENDING_DISPATCHES]

    ctx.session.update(change)


def log_subagent_start(event: Event, ctx: Context) -> None:
    pipeline = ctx.config.pipeline
    agent_id = event.agent_id or ""

    def change(state: dict[str, Any]) -> tuple[str, str]:
        ours = _pipeline_state(state)
        text = _take_dispatch(ours.setdefault("dispatches", []), event.agent_type)
        role = role_from_type_or_text(event.agent_type, text, pipeline)
        ours.setdefault("agents", {})[agent_id] = {"type": event.agent_type, "role": role}
        if role != UNKNOWN:
            roles = ours.setdefault("roles", {})
            roles[role] = int(roles.get(role, 0)) + 1
        return role, text

    role, text = ctx.session.update(change)
    ctx.record("subagent_start", agent_id=agent_id, agent_type=event.agent_type, role=role, description=text or None)


def _take_dispatch(pending: list[dict[str, Any]], agent_type: str | None) -> str:
    """The oldest noted dispatch this start belongs to: one of the same type, else one that named
    no type. Parallel dispatches of one type can pair up in either order; their texts then differ
    but their type, which is what the runtime vouches for, is the same."""
    for i, entry in enumerate(pending):
        if entry.get("type") in (agent_type, None):
            return pending.pop(i).get("text") or ""
    return ""
