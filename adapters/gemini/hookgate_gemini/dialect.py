"""Gemini CLI 0.61 hook protocol <-> canonical events and verdicts.

Decoding. Gemini CLI's events have their own names, and its payloads Claude's shape:

    BeforeAgent -> UserPromptSubmit   AfterAgent -> Stop (prompt_response: the last message)
    BeforeTool -> PreToolUse          AfterTool -> PostToolUse (a failed command too)
    PreCompress -> PreCompact         SessionStart, SessionEnd, Notification: the same names

and its tools are named as its model calls them; each becomes the canonical tool with Gemini's own
keys kept beside the canonical ones, paths made absolute against the cwd (the model may give them
relative):

    write_file {file_path, content}            Write
    replace {file_path, old_string, new_string} Edit (allow_multiple -> replace_all)
    run_shell_command {command, ...}          Bash (is_background -> run_in_background)
    read_file / read_many_files                Read / Gemini's own name
    glob, grep_search, list_directory          Glob, Grep, LS
    web_fetch, google_web_search, write_todos  WebFetch, WebSearch, TodoWrite
    invoke_agent {agent_name, prompt}          Agent {description, prompt, subagent_type = agent_name}

Gemini CLI gives a tool call no id either, so BeforeTool and AfterTool of one call are paired by
one derived from the session, the tool and its input as the model gave them (`tool_use_id`; the
effect check needs it): two identical calls running side by side share it.

Gemini CLI 0.61 gives a subagent's own tool calls no identity: they arrive as the session's, so a
subagent is seen only where it is dispatched (invoke_agent) and where it hands in its result.

Rendering. A hook that exits 1 (what a crashed program exits with) or times out counts as a
warning and the action goes ahead (any other non-zero exit blocks, whatever the docs say), and
text on stdout that is not JSON becomes an allow, so:

- A refusal is exit 2 with the reason on stderr: it blocks a tool (the reason reaches the model as
  the tool's error), aborts a prompt, hides a tool's result, or makes AfterAgent retry the turn
  with the reason as the next prompt (a held stop).
- Modify is `hookSpecificOutput.tool_input` in the tool's Gemini keys (Gemini merges it over the
  model's arguments). Ask degrades to a refusal that tells the model to ask the user: no Gemini
  hook can ask.
- Context is `hookSpecificOutput.additionalContext` where Gemini passes it on (SessionStart,
  BeforeAgent, AfterTool); Gemini drops it on BeforeTool, where it is shown to the user instead
  (systemMessage).
- PreCompress, SessionEnd and Notification are advisory: only systemMessage is shown.
"""

from __future__ import annotations

import os
from typing import Any, Mapping

import msgspec

from hookgate.digest import sha256_hex
from hookgate.errors import PayloadError
from hookgate.hookcall import Answer, refusal_reason
from hookgate.model.codec import decode_object, event_from_builtins
from hookgate.model.events import Event
from hookgate.model.verdicts import Modify, Verdict

runtime = "gemini"
_encoder = msgspec.json.Encoder()
_sorted = msgspec.json.Encoder(order="sorted")  # a call's id must not depend on key order

# Gemini CLI's hook event -> the canonical event it delivers
EVENTS: dict[str, str] = {
    "SessionStart": "SessionStart", "SessionEnd": "SessionEnd", "BeforeAgent": "UserPromptSubmit",
    "AfterAgent": "Stop", "BeforeTool": "PreToolUse", "AfterTool": "PostToolUse", "PreCompress": "PreCompact",
    "Notification": "Notification",
}
# Gemini tool -> (canonical tool, {canonical key: Gemini key} where they differ)
TOOLS: dict[str, tuple[str, dict[str, str]]] = {
    "write_file": ("Write", {}),
    "replace": ("Edit", {"replace_all": "allow_multiple"}),
    "run_shell_command": ("Bash", {"run_in_background": "is_background"}),
    "read_file": ("Read", {}),
    "glob": ("Glob", {}),
    "grep_search": ("Grep", {}),
    "search_file_content": ("Grep", {}),  # the legacy name of grep_search
    "list_directory": ("LS", {"path": "dir_path"}),
    "web_fetch": ("WebFetch", {}),
    "google_web_search": ("WebSearch", {}),
    "write_todos": ("TodoWrite", {}),
    "invoke_agent": ("Agent", {"subagent_type": "agent_name"}),
}
_PATH_KEYS = ("file_path", "dir_path")

# canonical events on which Gemini honours exit 2
_REFUSABLE = frozenset({"PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop"})
# canonical events whose hookSpecificOutput.additionalContext reaches the model
_CONTEXT = frozenset({"SessionStart", "UserPromptSubmit", "PostToolUse"})


def decode(raw: bytes) -> list[Event]:
    payload = decode_object(raw)
    name = payload.get("hook_event_name")
    if not isinstance(name, str):
        raise PayloadError("invalid payload: no hook_event_name", raw)
    fields = canonical_fields(payload)
    return [msgspec.structs.replace(event_from_builtins({**payload, **fields, "hook_event_name": EVENTS.get(name, name)}),
                                    runtime=runtime)]


def canonical_fields(payload: dict[str, Any]) -> dict[str, Any]:
    """What a Gemini payload says under the canonical event's field names."""
    name = payload["hook_event_name"]
    if name == "AfterAgent":
        message = payload.get("prompt_response")
        return {"last_assistant_message": message if isinstance(message, str) else None}
    if name not in ("BeforeTool", "AfterTool"):
        return {}
    tool = payload.get("tool_name")
    if not isinstance(tool, str) or not tool:
        raise PayloadError(f"invalid {name} payload: no tool_name")
    given = payload.get("tool_input")
    given = given if isinstance(given, dict) else {} if given is None else {"input": given}
    cwd = payload.get("cwd")
    canonical, tool_input = canonical_call(tool, given, cwd if isinstance(cwd, str) else "")
    return {"tool_name": canonical, "tool_input": tool_input, "tool_use_id": call_id(payload, tool, given)}


def call_id(payload: dict[str, Any], tool: str, given: dict[str, Any]) -> str:
    """The id that pairs a call's BeforeTool and AfterTool (both carry the input as it was given)."""
    session = payload.get("session_id")
    text = _sorted.encode([session if isinstance(session, str) else "", tool, given])
    return "gemini-" + sha256_hex(text)[:20]


def call_id_after(raw: bytes, updated_input: dict[str, Any]) -> str | None:
    """The id this BeforeTool's AfterTool will carry once a hook rewrote its input: Gemini CLI
    merges the rewrite over the model's arguments and sends the merged input with the AfterTool,
    so the id derived from it is another one (the effect check's reading must follow it)."""
    try:
        payload = decode_object(raw)
    except PayloadError:
        return None
    tool, given = payload.get("tool_name"), payload.get("tool_input")
    if not isinstance(tool, str) or not isinstance(given, dict):
        return None
    return call_id(payload, tool, {**given, **gemini_input(updated_input)})


def canonical_call(tool: str, given: dict[str, Any], cwd: str) -> tuple[str, dict[str, Any]]:
    if tool not in TOOLS:
        return tool, given
    canonical, renamed = TOOLS[tool]
    tool_input = dict(given)
    for key in _PATH_KEYS:
        if isinstance(tool_input.get(key), str) and tool_input[key]:
            tool_input[key] = _absolute(tool_input[key], cwd)
    for ours, theirs in renamed.items():
        if theirs in tool_input:
            tool_input[ours] = tool_input[theirs]
    if canonical == "LS" and "path" not in tool_input:
        tool_input["path"] = cwd
    if canonical == "Agent":
        given_prompt = tool_input.get("prompt")
        prompt = given_prompt if isinstance(given_prompt, str) else ""
        tool_input["prompt"] = prompt
        tool_input["description"] = prompt.strip().split("\n", 1)[0] if prompt.strip() else ""
    return canonical, tool_input


def _absolute(path: str, cwd: str) -> str:
    # joined, not normalised: the path rules judge both the named and the resolved reading
    return os.path.join(cwd, path) if cwd else path


def gemini_input(updated: dict[str, Any]) -> dict[str, Any]:
    """A canonical tool input back in Gemini's keys: its tool merges this over the model's
    arguments, and a key its schema does not know would fail the call."""
    native = dict(updated)
    if "subagent_type" in native:  # invoke_agent: its description is hookgate's, from the prompt
        native["agent_name"] = native.pop("subagent_type")
        native.pop("description", None)
    if "dir_path" in native:  # list_directory
        native.pop("path", None)
    if "replace_all" in native:
        native["allow_multiple"] = native.pop("replace_all")
    if "run_in_background" in native:
        native["is_background"] = native.pop("run_in_background")
    return native


def render(event_name: str, verdict: Verdict) -> Answer:
    refusal = _refusal(event_name, verdict)
    if refusal is not None and event_name in _REFUSABLE:
        return Answer(stderr=_feedback(refusal, verdict), exit_code=2)
    out: dict[str, Any] = {}
    specific: dict[str, Any] = {}
    if event_name == "PreToolUse" and isinstance(verdict, Modify):
        specific["tool_input"] = gemini_input(verdict.updated_input)
    if verdict.context and event_name in _CONTEXT:
        specific["additionalContext"] = verdict.context
    if specific:
        out["hookSpecificOutput"] = {"hookEventName": _gemini_name(event_name), **specific}
    message = verdict.message or (verdict.context if event_name == "PreToolUse" else "")
    if message:
        out["systemMessage"] = message
    return Answer(stdout=_encoder.encode(out) if out else b"")


def _gemini_name(event_name: str) -> str:
    return next((theirs for theirs, ours in EVENTS.items() if ours == event_name), event_name)


def _refusal(event_name: str, verdict: Verdict) -> str | None:
    """The reason this verdict refuses the event with, on Gemini CLI; None when it does not."""
    return refusal_reason(event_name, verdict, "Gemini CLI")


def _feedback(reason: str, verdict: Verdict) -> str:
    """The exit-2 text: Gemini passes stderr alone on, so the verdict's context and message go with it."""
    lines: list[str] = []
    for text in (reason, verdict.context, verdict.message):
        if text and text not in lines:
            lines.append(text)
    return "\n".join(lines)


def project_dir(env: Mapping[str, str]) -> str | None:
    """The session's project as Gemini CLI names it for its hooks (a `cd` in a shell command does
    not move it; store/pin.py starts from it)."""
    return env.get("GEMINI_PROJECT_DIR") or None
