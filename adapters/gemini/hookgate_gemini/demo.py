"""The demo's acts as Gemini CLI makes them: write_file, replace, read_file, run_shell_command and
invoke_agent calls in its BeforeTool payloads. A subagent's own calls carry no identity on Gemini
CLI 0.61 (they arrive as the lead's), so the acts of a subagent are not played here: n/a."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hookgate.demo.runtimes import run_stdin, session_for
from hookgate.demo.session import Act, Outcome

_TOOLS = {"Write": "write_file", "Edit": "replace", "Read": "read_file", "Bash": "run_shell_command"}


def payload(act: Act, root: Path) -> dict[str, Any]:
    return {"session_id": session_for(root), "transcript_path": str(root / ".gemini-demo.jsonl"), "cwd": str(root),
            "hook_event_name": "BeforeTool", "timestamp": "2026-01-01T00:00:00.000Z", **_tool(act)}


def _tool(act: Act) -> dict[str, Any]:
    data = dict(act.input)
    if act.tool == "Agent":
        return {"tool_name": "invoke_agent",
                "tool_input": {"agent_name": data["subagent_type"], "prompt": f"{data['description']}\n\n{data['prompt']}"}}
    if act.tool == "Edit":
        data.setdefault("instruction", "as the demo asks")
    return {"tool_name": _TOOLS.get(act.tool, act.tool), "tool_input": data}


# the acts of a subagent cannot be said in this runtime's payloads
SUBAGENT_IDENTITY = False
NO_IDENTITY = "Gemini CLI gives a subagent's own tool calls no identity: they arrive as the lead's"


def play(acts: tuple[Act, ...], root: Path, hookgate: list[str]) -> list[Outcome]:
    played = iter(run_stdin("gemini", payload, tuple(act for act in acts if not act.agent), root, hookgate))
    return [Outcome("n/a", NO_IDENTITY) if act.agent else next(played) for act in acts]
