"""The demo's acts as OpenCode makes them: its hook calls replayed through the opencode-hookgate
plugin under Node, which keeps one `hookgate serve` core running."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

from hookgate.demo.runtimes import absolute
from hookgate.demo.session import Act, Outcome

from .install import plugin_dir

TOOLS = {"Write": "write", "Edit": "edit", "Read": "read", "Bash": "bash", "Agent": "task"}
ROOT_SESSION, CHILD_SESSION = "ses_demo_lead", "ses_demo_worker"


def calls(acts: tuple[Act, ...], root: Path) -> list[dict[str, Any]]:
    """OpenCode's own hook calls: a root session, a child session for the worker (OpenCode tells
    plugins nothing about agents in tool calls; the plugin learns them from session events)."""
    found: list[dict[str, Any]] = [_session_created(ROOT_SESSION, None, "Demo build", root)]
    child_started = False
    for number, act in enumerate(acts):
        if act.stdin_only:
            continue
        if act.agent and not child_started:
            found.append(_session_created(CHILD_SESSION, ROOT_SESSION, f"implement the player (@{act.agent[1]} subagent)", root))
            child_started = True
        found.append({"hook": "tool.execute.before",
                      "input": {"tool": TOOLS[act.tool], "sessionID": CHILD_SESSION if act.agent else ROOT_SESSION,
                                "callID": f"call_{number}"},
                      "output": {"args": _args(act, root)}})
    return found


def _session_created(session: str, parent: str | None, title: str, root: Path) -> dict[str, Any]:
    info: dict[str, Any] = {"id": session, "title": title, "directory": str(root)}
    if parent:
        info["parentID"] = parent
    return {"hook": "event", "input": {"event": {"type": "session.created", "properties": {"sessionID": session, "info": info}}}}


def _args(act: Act, root: Path) -> dict[str, Any]:
    renames = {"file_path": "filePath", "old_string": "oldString", "new_string": "newString"}
    return {renames.get(k, k): v for k, v in absolute(act.input, root).items()}


def play(acts: tuple[Act, ...], root: Path, hookgate: list[str]) -> list[Outcome]:
    node = shutil.which("node")
    if node is None:
        return [Outcome("n/a", "Node.js is not installed: the OpenCode plugin runs under Node or Bun") for _ in acts]
    request = {"directory": str(root), "command": [*hookgate, "serve", "--stdio"], "calls": calls(acts, root)}
    done = subprocess.run([node, str(plugin_dir() / "lib" / "replay.js")], input=json.dumps(request),
                          capture_output=True, text=True, cwd=root, timeout=120)
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
