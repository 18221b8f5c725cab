"""Playing the demo's acts through each runtime's adapter, as that runtime would call it:
Claude Code and Codex by piping their own payloads into `hookgate hook <runtime>`, one process per
call; OpenCode by replaying its hook calls through the opencode-hookgate plugin under Node, which
keeps one `hookgate serve` core running."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any, Callable

from .session import Act, Outcome

SESSION = "demo-session"
TRUNCATED = b'{"hook_event_name": "PreToolUse", "tool_na'


def claude_payload(act: Act, root: Path) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "session_id": SESSION, "cwd": str(root), "hook_event_name": "PreToolUse", "permission_mode": "default",
        "tool_name": act.tool, "tool_input": _absolute(act.input, root), "tool_use_id": "toolu_demo",
    }
    if act.agent:
        payload.update(agent_id=act.agent[0], agent_type=act.agent[1])
    return payload


def codex_payload(act: Act, root: Path) -> dict[str, Any]:
    """Codex edits files with apply_patch, runs Bash, views images and spawns agents; every child
    it spawns reports agent_type "default"."""
    tool, tool_input = _codex_tool(act)
    payload: dict[str, Any] = {
        "session_id": SESSION, "turn_id": "turn-demo", "cwd": str(root), "hook_event_name": "PreToolUse",
        "model": "gpt-5.5", "permission_mode": "default", "tool_name": tool, "tool_input": tool_input,
        "tool_use_id": "call_demo",
    }
    if act.agent:
        payload.update(agent_id=act.agent[0], agent_type="default")
    return payload


def _codex_tool(act: Act) -> tuple[str, dict[str, Any]]:
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


def run_stdin(runtime: str, make_payload: Callable[[Act, Path], dict[str, Any]], acts: tuple[Act, ...],
              root: Path, hookgate: list[str]) -> list[Outcome]:
    outcomes = []
    for act in acts:
        raw = TRUNCATED if act.stdin_only else json.dumps(make_payload(act, root)).encode()
        done = subprocess.run([*hookgate, "hook", runtime, "--event", "PreToolUse"], input=raw, cwd=root,
                              capture_output=True, timeout=60)
        outcomes.append(_read_stdin_answer(done))
    return outcomes


def _read_stdin_answer(done: subprocess.CompletedProcess[bytes]) -> Outcome:
    if done.returncode == 2:
        return Outcome("block", done.stderr.decode().strip())
    if not done.stdout.strip():
        return Outcome("allow")
    answer = json.loads(done.stdout)
    specific = answer.get("hookSpecificOutput", {})
    if specific.get("permissionDecision") == "deny" or answer.get("decision") == "block":
        return Outcome("block", specific.get("permissionDecisionReason") or answer.get("reason", ""), answer)
    return Outcome("allow", "", answer)


# -- OpenCode ------------------------------------------------------------------------------------

OPENCODE_TOOLS = {"Write": "write", "Edit": "edit", "Read": "read", "Bash": "bash", "Agent": "task"}
ROOT_SESSION, CHILD_SESSION = "ses_demo_lead", "ses_demo_worker"


def opencode_calls(acts: tuple[Act, ...], root: Path) -> list[dict[str, Any]]:
    """OpenCode's own hook calls: a root session, a child session for the worker (OpenCode tells
    plugins nothing about agents in tool calls; the plugin learns them from session events)."""
    calls: list[dict[str, Any]] = [_session_created(ROOT_SESSION, None, "Demo build", root)]
    child_started = False
    for number, act in enumerate(acts):
        if act.stdin_only:
            continue
        if act.agent and not child_started:
            calls.append(_session_created(CHILD_SESSION, ROOT_SESSION, f"implement the player (@{act.agent[1]} subagent)", root))
            child_started = True
        calls.append({"hook": "tool.execute.before",
                      "input": {"tool": OPENCODE_TOOLS[act.tool], "sessionID": CHILD_SESSION if act.agent else ROOT_SESSION,
                                "callID": f"call_{number}"},
                      "output": {"args": _opencode_args(act, root)}})
    return calls


def _session_created(session: str, parent: str | None, title: str, root: Path) -> dict[str, Any]:
    info: dict[str, Any] = {"id": session, "title": title, "directory": str(root)}
    if parent:
        info["parentID"] = parent
    return {"hook": "event", "input": {"event": {"type": "session.created", "properties": {"sessionID": session, "info": info}}}}


def _opencode_args(act: Act, root: Path) -> dict[str, Any]:
    renames = {"file_path": "filePath", "old_string": "oldString", "new_string": "newString", "subagent_type": "subagent_type"}
    return {renames.get(k, k): v for k, v in _absolute(act.input, root).items()}


def run_opencode(acts: tuple[Act, ...], root: Path, hookgate: list[str], replay: Path) -> list[Outcome]:
    node = shutil.which("node")
    if node is None:
        return [Outcome("n/a", "Node.js is not installed: the OpenCode plugin runs under Node or Bun") for _ in acts]
    request = {"directory": str(root), "command": [*hookgate, "serve", "--stdio"], "calls": opencode_calls(acts, root)}
    done = subprocess.run([node, str(replay)], input=json.dumps(request), capture_output=True, text=True, cwd=root,
                          timeout=120)
    if done.returncode != 0:
        raise RuntimeError(f"the OpenCode replay failed: {done.stderr.strip()}")
    answers = iter(json.loads(line) for line in done.stdout.splitlines() if line.strip())
    outcomes = []
    for act in acts:
        if act.stdin_only:
            outcomes.append(Outcome("n/a", "OpenCode calls the plugin in-process: no payload to cut short"))
            continue
        answer = next(a for a in answers if a["hook"] == "tool.execute.before")
        outcomes.append(Outcome("allow") if answer["ok"] else Outcome("block", answer["error"]))
    return outcomes


def _absolute(data: dict[str, Any], root: Path) -> dict[str, Any]:
    """Runtimes hand hooks absolute paths for file tools."""
    if "file_path" in data and not data["file_path"].startswith("/"):
        return {**data, "file_path": str(root / data["file_path"])}
    return dict(data)
