"""What a registered hook's handler returns, and the denial its caller receives (seed 003).

    None, {"action": "continue"}                   go on with the next hook
    {"action": "continue", "modified": {...}}       go on with a rewritten input (see below)
    {"action": "skip"}                              run no later hook; the call goes ahead
    {"action": "block", "reason": "..."}            refuse the call
    {"action": "retry", "reason": "...", "delay_ms": 1000}
                                                    refuse the call as temporary; it is not rescheduled
    {"decision": "allow" | "deny", "reason": ...}   permission_request only: answer the permission dialog

`modified` on pre_tool_use and permission_request is the new tool input, given directly or wrapped
as {"updatedInput": ...}, {"updated_input": ...}, {"args": ...} or
{"hookSpecificOutput": {"updatedInput": ...}}; on pre_prompt it may hold `additionalContext` (or
`additional_context`) for the model, and `prompt`, which no supported runtime lets a hook replace.
`delayMs` is accepted for `delay_ms`. block(), retry(), skip() and modify() build these dicts.

A refusal reaches its caller in two forms: the model reads the reason (with the retry delay as
guidance, rendered by each runtime's dialect), and a program reads `hook_denied(verdict)`:

    {"type": "hook_denied", "reason": "...", "retryable": true, "retry_after_ms": 1000}
    {"type": "hook_denied", "reason": "...", "retryable": false, "retry_after_ms": null}   (block)

`verdict_json()` is the verdict's JSON for programs (the RPC answer): the verdict with that
structure as its `denied` member whenever it refuses.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from ..model.verdicts import Refusal, Retry, Verdict

WRAPPERS = ("updatedInput", "updated_input", "args", "modified")


class Result(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    action: Literal["continue", "skip", "block", "retry"] = "continue"
    reason: str | None = None
    delay_ms: int = 1000
    modified: dict[str, Any] | None = None
    decision: Literal["allow", "deny"] | None = None


CONTINUE = Result()


def parse(value: Any) -> Result:
    """A handler's return value as a Result; ValueError when it is none of the shapes above."""
    if value is None:
        return CONTINUE
    if isinstance(value, Result):
        return value
    if not isinstance(value, dict):
        raise ValueError(f"returned {type(value).__name__}; expected None or a dict with an `action`")
    data = dict(value)
    if "delayMs" in data:
        data["delay_ms"] = data.pop("delayMs")
    try:
        return msgspec.convert(data, Result)
    except msgspec.ValidationError as exc:
        raise ValueError(f"returned an invalid result: {exc}") from None


def updated_input(modified: dict[str, Any]) -> Any:
    """The new tool input inside `modified`, in any of the shapes the module doc lists."""
    specific = modified.get("hookSpecificOutput")
    if isinstance(specific, dict) and "updatedInput" in specific:
        return specific["updatedInput"]
    if len(modified) == 1 and next(iter(modified)) in WRAPPERS:
        return next(iter(modified.values()))
    return modified


def block(reason: str = "Blocked by hook") -> dict[str, Any]:
    return {"action": "block", "reason": reason}


def retry(reason: str, delay_ms: int = 1000) -> dict[str, Any]:
    return {"action": "retry", "reason": reason, "delay_ms": delay_ms}


def skip() -> dict[str, Any]:
    return {"action": "skip"}


def modify(new_input: dict[str, Any]) -> dict[str, Any]:
    return {"action": "continue", "modified": {"updatedInput": new_input}}


class HookDenied(msgspec.Struct, frozen=True, kw_only=True, tag="hook_denied", tag_field="type"):
    reason: str
    retryable: bool
    retry_after_ms: int | None


def hook_denied(verdict: Verdict) -> HookDenied | None:
    """The structured denial for a refusing verdict (block, retry); None for any other."""
    if not verdict.refuses or not isinstance(verdict, Refusal):
        return None
    if isinstance(verdict, Retry):
        return HookDenied(reason=verdict.reason, retryable=True, retry_after_ms=verdict.delay_ms)
    return HookDenied(reason=verdict.reason, retryable=False, retry_after_ms=None)


def verdict_json(verdict: Verdict) -> bytes:
    fields = msgspec.to_builtins(verdict)
    denied = hook_denied(verdict)
    if denied is not None:
        fields["denied"] = msgspec.to_builtins(denied)
    return msgspec.json.encode(fields)
