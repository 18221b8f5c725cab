"""Codex CLI 0.171 hook protocol <-> canonical events and verdicts.

Decoding. Codex's payloads have Claude's shape; what differs is how tools are named:

    Bash {command}                  Bash, unchanged
    apply_patch {command: patch}    one Write / Edit / MultiEdit / Delete per file of the patch, each
                                    with the whole `patch` (the engine judges them as one call, so one
                                    forbidden file blocks the whole patch)
    spawn_agent {message|items,..}  Agent {description, prompt, subagent_type} plus Codex's own keys:
                                    description = the message's first line, which carries the role
                                    prefix ("worker: ..."); subagent_type = the `agent_type` the child
                                    will report, Codex's "default" when none is given, so the dispatch
                                    pairs with the child's SubagentStart as it does on Claude Code
    view_image {path}               Read {file_path} plus `path`
    multi_agent_v1wait_agent, ...   the tool namespace Codex glues on is removed

Rendering. Codex fails open on anything it cannot parse, so every answer is one it accepts:

- A refusal is exit 2 with the reason on stderr, never JSON: Codex honours that on every event that
  can refuse, it needs no `reason` field to be right, and output of the user's login shell on stdout
  (Codex runs hooks through `$SHELL -lc`) cannot turn it into a "failed" hook that lets the action run.
- PreToolUse never gets `ask`, a bare `allow`, `continue`, `stopReason` or `suppressOutput`, which
  Codex rejects and then runs the tool. Ask degrades to a refusal that tells the model to ask the user
  (hookgate's documented fallback: never a silent allow). Modify is `allow` + `updatedInput` in the
  tool's Codex shape; a rewrite Codex cannot carry (one file of a patch) is refused instead.
- PermissionRequest: deny, or no decision (Codex's own approval prompt, which is how ask is honoured).
"""

from __future__ import annotations

import os
import re
from typing import Any

import msgspec

from hookgate.errors import PayloadError
from hookgate.hookcall import Answer, refusal_reason
from hookgate.model.codec import decode_object, event_from_builtins
from hookgate.model.events import TOOL_EVENTS, Event
from hookgate.model.verdicts import Modify, Verdict

from hookgate.formats.apply_patch import PatchError, is_patch_file_input, tool_calls

runtime = "codex"
_encoder = msgspec.json.Encoder()

# Codex glues a tool's namespace onto its name in hook payloads ("multi_agent_v1wait_agent");
# the MultiAgentV2 namespace is dotted ("collaboration.spawn_agent").
_NAMESPACE = re.compile(r"^(?:multi_agent_v\d+[._]?|collaboration[._])(?=[a-z])")
# the agent_type Codex gives a child spawned without one (0.171's spawn_agent has no role field)
DEFAULT_AGENT_TYPE = "default"
_AGENT_KEYS = ("description", "prompt", "subagent_type")

# events on which Codex honours exit 2 (block, deny, feedback, or a continuation prompt)
_REFUSABLE = frozenset({"PreToolUse", "PermissionRequest", "PostToolUse", "UserPromptSubmit", "Stop", "SubagentStop"})
# events whose hookSpecificOutput.additionalContext Codex accepts
_CONTEXT = frozenset({"PreToolUse", "PostToolUse", "UserPromptSubmit", "SessionStart", "SubagentStart"})
# events whose only way to refuse is to halt: `continue: false` stops before compacting
_HALT = frozenset({"PreCompact"})
# events whose output Codex ignores, or does not define
_SILENT = frozenset({"SessionEnd"})
_KNOWN = frozenset({*_REFUSABLE, *_CONTEXT, *_HALT, *_SILENT, "PostCompact", "Interrupt"})


def decode(raw: bytes) -> list[Event]:
    payload = decode_object(raw)
    event_name = payload.get("hook_event_name")
    if not isinstance(event_name, str) or event_name not in TOOL_EVENTS:  # a non-string name is refused below
        events = [event_from_builtins(payload)]
    else:
        events = [event_from_builtins({**payload, "tool_name": name, "tool_input": tool_input})
                  for name, tool_input in canonical_calls(payload)]
    return [msgspec.structs.replace(event, runtime=runtime) for event in events]


def canonical_tool_name(name: str) -> str:
    return _NAMESPACE.sub("", name)


def canonical_calls(payload: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The canonical (tool_name, tool_input) pairs one Codex tool call stands for."""
    name = payload.get("tool_name")
    if not isinstance(name, str) or not name:
        raise PayloadError("invalid payload: no tool_name")
    name = canonical_tool_name(name)
    tool_input = payload.get("tool_input")
    if not isinstance(tool_input, dict):
        tool_input = {} if tool_input is None else {"input": tool_input}
    cwd = payload.get("cwd")
    cwd = cwd if isinstance(cwd, str) else ""
    if name == "apply_patch":
        return _patch_calls(tool_input, cwd)
    if name == "spawn_agent":
        return [("Agent", _agent_input(tool_input))]
    if name == "view_image" and isinstance(tool_input.get("path"), str):
        return [("Read", {**tool_input, "file_path": _absolute(tool_input["path"], cwd)})]
    return [(name, tool_input)]


def _patch_calls(tool_input: dict[str, Any], cwd: str) -> list[tuple[str, dict[str, Any]]]:
    patch = tool_input.get("command")
    if not isinstance(patch, str):
        raise PayloadError("invalid apply_patch call: `command` holds no patch text")
    try:
        return tool_calls(patch, cwd)
    except PatchError as exc:
        raise PayloadError(f"invalid apply_patch call: {exc}") from None


def _agent_input(tool_input: dict[str, Any]) -> dict[str, Any]:
    prompt = tool_input.get("message")
    if not isinstance(prompt, str):
        items = tool_input.get("items")
        items = items if isinstance(items, list) else []
        prompt = "\n".join(i["text"] for i in items if isinstance(i, dict) and isinstance(i.get("text"), str))
    agent_type = tool_input.get("agent_type")
    description = prompt.strip().split("\n", 1)[0] if prompt.strip() else ""
    return {**tool_input, "description": description, "prompt": prompt,
            "subagent_type": agent_type if isinstance(agent_type, str) and agent_type else DEFAULT_AGENT_TYPE}


def _absolute(path: str, cwd: str) -> str:
    # joined, not normalised: the path rules judge both the named and the resolved reading
    return os.path.join(cwd, path) if cwd else path


def codex_input(updated: dict[str, Any]) -> dict[str, Any] | None:
    """A canonical tool input back in the shape Codex's tool takes, or None when Codex cannot
    carry it (a rewrite of one file of a patch: Codex only takes the whole patch)."""
    if is_patch_file_input(updated):
        return None
    if all(key in updated for key in _AGENT_KEYS):  # spawn_agent
        native = {k: v for k, v in updated.items() if k not in _AGENT_KEYS}
        if updated["prompt"] != _agent_input(native)["prompt"]:
            native.pop("items", None)
            native["message"] = updated["prompt"]
        return native
    if "path" in updated and "file_path" in updated:  # view_image
        native = {k: v for k, v in updated.items() if k != "file_path"}
        native["path"] = updated["file_path"]
        return native
    return updated  # Bash {command} and every other tool take their input as it is


def render(event_name: str, verdict: Verdict) -> Answer:
    if event_name not in _KNOWN or event_name in _SILENT:
        return Answer()
    refusal = _refusal(event_name, verdict)
    if refusal is not None:
        if event_name in _HALT:
            return _json({"continue": False, "stopReason": refusal})
        if event_name in _REFUSABLE:
            return Answer(stderr=_feedback(refusal, verdict), exit_code=2)
    out: dict[str, Any] = {}
    specific: dict[str, Any] = {}
    if event_name == "PreToolUse" and isinstance(verdict, Modify):
        specific["permissionDecision"] = "allow"
        specific["updatedInput"] = codex_input(verdict.updated_input)
    if verdict.context and event_name in _CONTEXT:
        specific["additionalContext"] = verdict.context
    if specific:
        out["hookSpecificOutput"] = {"hookEventName": event_name, **specific}
    if verdict.message:
        out["systemMessage"] = verdict.message
    return _json(out)


def _refusal(event_name: str, verdict: Verdict) -> str | None:
    """The reason this verdict refuses the event with, on Codex; None when it does not."""
    reason = refusal_reason(event_name, verdict, "Codex")
    if reason is not None:
        return reason
    if event_name == "PreToolUse" and isinstance(verdict, Modify) and codex_input(verdict.updated_input) is None:
        return ("hookgate would rewrite this call, and Codex cannot carry a rewrite of one file of a patch; "
                "it is refused instead. Make the change the policy asks for and patch again.")
    return None


def _feedback(reason: str, verdict: Verdict) -> str:
    """The exit-2 text: Codex shows stderr alone, so what the verdict tells the model and the user
    goes with the reason."""
    lines: list[str] = []
    for text in (reason, verdict.context, verdict.message):
        if text and text not in lines:
            lines.append(text)
    return "\n".join(lines)


def _json(out: dict[str, Any]) -> Answer:
    return Answer(stdout=_encoder.encode(out) if out else b"")
