"""What every plug's `demo` face shares: playing the acts through a stdin runtime's hook command,
one process per call, and reading its answer. Each plug's demo module (hookgate_<runtime>.demo)
says the acts in its runtime's own words and exposes `play(acts, root, hookgate) -> [Outcome]`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any, Callable

from ..store.pin import project_key
from .session import Act, Outcome

TRUNCATED = b'{"hook_event_name": "PreToolUse", "tool_na'


def session_for(root: Path) -> str:
    """The demo session's id in the project at `root`: one per project, as a runtime gives every
    session its own. A session stays governed by the root its first call came from
    (store/pin.py), and a kept demo project outlives its run: with one id for every run, the next
    demo was judged by the rules and state of the kept one."""
    return f"demo-{project_key(root)}"


def run_stdin(runtime: str, make_payload: Callable[[Act, Path], dict[str, Any]], acts: tuple[Act, ...],
              root: Path, hookgate: list[str]) -> list[Outcome]:
    outcomes = []
    for act in acts:
        raw = TRUNCATED if act.stdin_only else json.dumps(make_payload(act, root)).encode()
        done = subprocess.run([*hookgate, "hook", runtime, "--event", "PreToolUse"], input=raw, cwd=root,
                              capture_output=True, timeout=60)
        outcomes.append(read_stdin_answer(done))
    return outcomes


def read_stdin_answer(done: subprocess.CompletedProcess[bytes]) -> Outcome:
    """Exit 2 with a reason on stderr, or a JSON answer that denies (the hooks-document runtimes'
    shared answer forms); anything else lets the call run."""
    if done.returncode == 2:
        return Outcome("block", done.stderr.decode().strip())
    if not done.stdout.strip():
        return Outcome("allow")
    answer = json.loads(done.stdout)
    specific = answer.get("hookSpecificOutput", {})
    if specific.get("permissionDecision") == "deny" or answer.get("decision") in ("block", "deny"):
        return Outcome("block", specific.get("permissionDecisionReason") or answer.get("reason", ""), answer)
    return Outcome("allow", "", answer)


def absolute(data: dict[str, Any], root: Path) -> dict[str, Any]:
    """Runtimes hand hooks absolute paths for file tools."""
    if "file_path" in data and not data["file_path"].startswith("/"):
        return {**data, "file_path": str(root / data["file_path"])}
    return dict(data)
