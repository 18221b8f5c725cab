"""Helpers shared by the unit tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

HOOKGATE = str(Path(sys.executable).with_name("hookgate"))


class MemorySession:
    """The SessionState protocol in memory, for unit tests of the engine."""

    def __init__(self) -> None:
        self.state: dict[str, Any] = {}
        self.notices: list[str] = []

    def read(self) -> dict[str, Any]:
        return self.state

    def update(self, change: Callable[[dict[str, Any]], Any]) -> Any:
        return change(self.state)

    def count(self, key: str) -> int:
        return self.state.get("counters", {}).get(key, 0)

    def bump(self, key: str) -> int:
        counters = self.state.setdefault("counters", {})
        counters[key] = counters.get(key, 0) + 1
        return counters[key]

    def spend(self, key: str, budget: int) -> bool:
        counters = self.state.setdefault("counters", {})
        used = counters.get(key, 0)
        if used >= budget:
            return False
        counters[key] = used + 1
        return True

    def push_notice(self, text: str) -> None:
        self.notices.append(text)

    def pop_notices(self) -> list[str]:
        notices, self.notices = self.notices, []
        return notices


def handler_argv(handler: dict[str, Any]) -> list[str]:
    """What a command hook handler starts, as Claude Code starts it: exec form (`command` and
    `args`) as it is, shell form (`command` alone) through a shell."""
    args = handler.get("args")
    return [handler["command"], *args] if isinstance(args, list) else ["sh", "-c", handler["command"]]


def run_hook(runtime: str, payload: Any, cwd: Path, *extra: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    """`hookgate hook <runtime>` as the runtime runs it: a process, the payload on stdin."""
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    # the project's warm core, which the first call starts, leaves soon after the test (hookgate.warm)
    full_env = {"HOOKGATE_WARM_IDLE": "10", **os.environ, **(env or {})}
    full_env.pop("HOOKGATE_PROJECT_DIR", None)
    full_env.pop("CLAUDE_PROJECT_DIR", None)
    return subprocess.run([HOOKGATE, "hook", runtime, *extra], input=data, cwd=cwd, capture_output=True,
                          env=full_env, timeout=60)


def hold_lock(path: Path, seconds: float) -> subprocess.Popen[bytes]:
    """Another process holding an exclusive flock on `path` for `seconds`, as a hook process
    does with a session's state; returned once it holds it."""
    holder = subprocess.Popen([sys.executable, "-c", "import fcntl, sys, time\n"
                               "f = open(sys.argv[1], 'a'); fcntl.flock(f, fcntl.LOCK_EX)\n"
                               "print(flush=True); time.sleep(float(sys.argv[2]))", str(path), str(seconds)],
                              stdout=subprocess.PIPE)
    assert holder.stdout is not None and holder.stdout.readline() == b"\n"
    return holder


def decider(root: Path) -> Callable[[str], str | None]:
    """decide(path): the deny reason of a main-agent Write of `path` (None: allowed), made by one
    policy loaded once and held across decisions, as a long-running core holds it."""
    import msgspec

    from hookgate.engine.context import Context
    from hookgate.hookcall import load_policy
    from hookgate_claude import dialect

    policy = load_policy(str(root), {"HOOKGATE_PROJECT_DIR": str(root)})
    session = policy.project.session("s")

    def decide(path: str) -> str | None:
        (event,) = dialect.decode(msgspec.json.encode({
            "session_id": "s", "cwd": str(root), "hook_event_name": "PreToolUse", "tool_name": "Write",
            "tool_input": {"file_path": path, "content": "x"}}))
        verdict = policy.engine.evaluate(event, Context(project=policy.project, session=session,
                                                        config=policy.config)).verdict
        return getattr(verdict, "reason", None) if verdict.refuses else None

    return decide
