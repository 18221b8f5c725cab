"""The demo's acts as Claude Code makes them: its own payloads piped into `hookgate hook claude`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hookgate.demo.runtimes import absolute, run_stdin, session_for
from hookgate.demo.session import Act, Outcome


def payload(act: Act, root: Path) -> dict[str, Any]:
    data: dict[str, Any] = {
        "session_id": session_for(root), "cwd": str(root), "hook_event_name": "PreToolUse", "permission_mode": "default",
        "tool_name": act.tool, "tool_input": absolute(act.input, root), "tool_use_id": "toolu_demo",
    }
    if act.agent:
        data.update(agent_id=act.agent[0], agent_type=act.agent[1])
    return data


def play(acts: tuple[Act, ...], root: Path, hookgate: list[str]) -> list[Outcome]:
    return run_stdin("claude", payload, acts, root, hookgate)
