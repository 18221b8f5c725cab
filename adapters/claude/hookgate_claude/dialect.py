"""Claude Code 2.1.x hook protocol <-> canonical events and verdicts.

Claude's payloads are the canonical form already, so decoding only renames legacy tools. Every
answer is exit 0 with JSON on stdout: per event, the one field Claude honours for that verdict
(a `hookSpecificOutput` always carries `hookEventName`, or Claude silently ignores it).
"""

from __future__ import annotations

from typing import Any

import msgspec

from hookgate.hookcall import Answer
from hookgate.model.codec import decode_event
from hookgate.model.events import Event, ToolEvent
from hookgate.model.tools import canonical_tool
from hookgate.model.verdicts import Ask, Block, Modify, Refusal, Retry, Verdict

runtime = "claude"
_encoder = msgspec.json.Encoder()

# events whose `decision: "block"` Claude honours (top level, with `reason`)
_DECISION_BLOCK = frozenset({"UserPromptSubmit", "PostToolUse", "PostToolUseFailure", "Stop", "SubagentStop", "PreCompact"})
# events whose hookSpecificOutput.additionalContext reaches the model without other effect
_CONTEXT = frozenset({"PreToolUse", "PostToolUse", "PostToolUseFailure", "UserPromptSubmit", "SessionStart", "SubagentStart", "Notification"})


def decode(raw: bytes) -> list[Event]:
    event = decode_event(raw)
    if isinstance(event, ToolEvent) and canonical_tool(tool := event.tool_name) != tool:
        event = msgspec.structs.replace(event, tool_name=canonical_tool(tool))
    return [event]


def render(event_name: str, verdict: Verdict) -> Answer:
    out: dict[str, Any] = {}
    specific: dict[str, Any] = {}
    if event_name == "PreToolUse":
        _pre_tool_use(verdict, specific)
    elif event_name == "PermissionRequest":
        _permission_request(verdict, specific)
    elif event_name in _DECISION_BLOCK and verdict.refuses:
        out["decision"] = "block"
        out["reason"] = _reason(verdict)
    if verdict.context and event_name in _CONTEXT:
        specific["additionalContext"] = verdict.context
    if specific:
        out["hookSpecificOutput"] = {"hookEventName": event_name, **specific}
    if verdict.message:
        out["systemMessage"] = verdict.message
    return Answer(stdout=_encoder.encode(out) if out else b"")


def _pre_tool_use(verdict: Verdict, specific: dict[str, Any]) -> None:
    if isinstance(verdict, (Block, Retry)):
        specific["permissionDecision"] = "deny"
        specific["permissionDecisionReason"] = _reason(verdict)
    elif isinstance(verdict, Ask):
        specific["permissionDecision"] = "ask"
        specific["permissionDecisionReason"] = verdict.reason
    elif isinstance(verdict, Modify):
        # Claude applies updatedInput together with a decision; "allow" still honours deny/ask rules
        specific["permissionDecision"] = "allow"
        specific["updatedInput"] = verdict.updated_input


def _permission_request(verdict: Verdict, specific: dict[str, Any]) -> None:
    if verdict.refuses:
        specific["decision"] = {"behavior": "deny", "message": _reason(verdict)}
    elif isinstance(verdict, Modify):
        specific["decision"] = {"behavior": "allow", "updatedInput": verdict.updated_input}
    # allow / ask / context: no decision, Claude shows its normal dialog


def _reason(verdict: Verdict) -> str:
    match verdict:
        case Retry(reason=reason, delay_ms=delay_ms):
            return f"{reason} (temporary: retry in {delay_ms / 1000:g}s)"
        case Refusal(reason=reason):
            return reason
    return ""

