"""Codex's hook trust, computed the way Codex 0.171 computes it.

Codex runs a non-managed hook only when the user config holds, for that handler,

    [hooks.state."<hooks file>:<event label>:<group index>:<handler index>"]
    trusted_hash = "sha256:<hex>"

where the hash is SHA-256 over the compact, key-sorted JSON of the handler's normalised identity:
the event label, the group's matcher (absent for events that ignore matchers) and the handler with
its timeout filled in (600 s by default, clamped to 1..3 s for SessionEnd and Interrupt) and
`async` spelled out. Anything else, or any later edit of the handler, and Codex skips the hook
without a word. Project hooks (`<project>/.codex/hooks.json`) also need the project itself trusted
(`[projects."<dir>"] trust_level = "trusted"`). The parity tests check these against the real
binary's own `hooks/list` answer.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, Iterator, Mapping

from hookgate.formats import hooksjson

EVENT_LABELS = {
    "PreToolUse": "pre_tool_use", "PermissionRequest": "permission_request", "PostToolUse": "post_tool_use",
    "PreCompact": "pre_compact", "PostCompact": "post_compact", "SessionStart": "session_start",
    "SessionEnd": "session_end", "UserPromptSubmit": "user_prompt_submit", "SubagentStart": "subagent_start",
    "SubagentStop": "subagent_stop", "Stop": "stop", "Interrupt": "interrupt",
}
# events whose matcher Codex drops (it would match nothing there)
UNMATCHED_EVENTS = frozenset({"UserPromptSubmit", "Stop", "Interrupt"})
# events whose handler timeout Codex clamps, to this range of seconds
CLAMPED_TIMEOUTS = {"SessionEnd": (1, 3), "Interrupt": (1, 3)}
DEFAULT_TIMEOUT = 600


def codex_home(env: Mapping[str, str] = os.environ) -> Path:
    return Path(env["CODEX_HOME"]) if env.get("CODEX_HOME") else Path(env.get("HOME") or Path.home()) / ".codex"


def user_config(env: Mapping[str, str] = os.environ) -> Path:
    """The one config layer Codex reads hook trust and project trust from."""
    return codex_home(env) / "config.toml"


def hook_key(hooks_file: Path, event: str, group: int, handler: int) -> str:
    return f"{hooks_file}:{EVENT_LABELS[event]}:{group}:{handler}"


def timeout_of(event: str, handler: Mapping[str, Any]) -> int:
    timeout = handler.get("timeout")
    timeout = max(1, timeout) if isinstance(timeout, int) and not isinstance(timeout, bool) else DEFAULT_TIMEOUT
    low, high = CLAMPED_TIMEOUTS.get(event, (1, timeout))
    return min(max(timeout, low), high)


def hook_hash(event: str, group: Mapping[str, Any], handler: Mapping[str, Any]) -> str:
    normalised: dict[str, Any] = {
        "type": "command", "command": handler.get("command"),
        "timeout": timeout_of(event, handler), "async": bool(handler.get("async", False)),
    }
    if handler.get("statusMessage") is not None:
        normalised["statusMessage"] = handler["statusMessage"]
    identity: dict[str, Any] = {"event_name": EVENT_LABELS[event], "hooks": [normalised]}
    if event not in UNMATCHED_EVENTS and group.get("matcher") is not None:
        identity["matcher"] = group["matcher"]
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def command_handlers(hooks: Mapping[str, Any]) -> Iterator[tuple[str, int, int, dict[str, Any], dict[str, Any]]]:
    """(event, group index, handler index, group, handler) of every command handler Codex would
    index in a hooks.json `hooks` object (the indices are positions, as in Codex's trust keys)."""
    for entry in hooksjson.entries(hooks):
        if entry[0] in EVENT_LABELS and entry[4].get("type") == "command":
            yield entry


def project_trust(user: Mapping[str, Any], project: Path) -> str | None:
    """The trust level Codex gives the `.codex/` folder of `project` ("trusted", "untrusted" or
    None = never decided): its own entry, else that of the git checkout it belongs to."""
    projects = user.get("projects")
    if not isinstance(projects, dict):
        return None
    checkout = next((d for d in (project, *project.parents) if (d / ".git").exists()), None)
    for folder in (project, checkout):
        for key in {str(folder), os.path.realpath(folder)} if folder else ():
            entry = projects.get(key)
            level = entry.get("trust_level") if isinstance(entry, dict) else None
            if isinstance(level, str):
                return level
    return None
