"""The demo's acts as Codex makes them: it edits files with apply_patch, runs Bash, views images
and spawns agents; every child it spawns reports agent_type "default"."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hookgate.demo.runtimes import run_stdin, session_for
from hookgate.demo.session import Act, Outcome


def payload(act: Act, root: Path) -> dict[str, Any]:
    tool, tool_input = _tool(act)
    data: dict[str, Any] = {
        "session_id": session_for(root), "turn_id": "turn-demo", "cwd": str(root), "hook_event_name": "PreToolUse",
        "model": "gpt-5.5", "permission_mode": "default", "tool_name": tool, "tool_input": tool_input,
        "tool_use_id": "call_demo",
    }
    if act.agent:
        data.update(agent_id=act.agent[0], agent_type="default")
    return data


def _tool(act: Act) -> tuple[str, dict[str, Any]]:
    data = act.input
    if act.tool == "Write":
        body = "".join(f"+{line}\n" for line in data["content"].splitlines())
        return "apply_patch", {"command": f"*** Begin Patch\n*** Add File: {data['file_path']}\n{body}*** End Patch\n"}
    if act.tool == "Edit":
        hunk = f"@@\n-{data['old_string']}\n+{data['new_string'].rstrip()}\n" if data["old_string"] else \
            f"@@\n+{data['new_string'].rstrip()}\n"
        return "apply_patch", {"command": f"*** Begin Patch\n*** Update File: {data['file_path']}\n{hunk}*** End Patch\n"}
    if act.tool == "Read":
        return "view_image", {"path": data["file_path"]}
    if act.tool == "Agent":
        return "spawn_agent", {"message": f"{data['description']}\n\n{data['prompt']}"}
    return act.tool, dict(data)


def play(acts: tuple[Act, ...], root: Path, hookgate: list[str]) -> list[Outcome]:
    return run_stdin("codex", payload, acts, root, hookgate)
