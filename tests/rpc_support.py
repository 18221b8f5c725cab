"""A JSON-RPC client for tests: `hookgate serve --stdio` as a real process, frames on its pipes."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from support import HOOKGATE

# Gates the tests add to the policy (as a gate source, the way every source plugs in): one that
# prints to stdout, one that sleeps, one that crashes. Loaded only when a test asks for them.
EXTRA_GATES = textwrap.dedent('''
    import os, sys, time
    from hookgate.engine.gate import Gate
    from hookgate.model.verdicts import Block, Context

    def noisy(event, ctx):
        if event.tool_input.get("command") == "print":
            print("a stray print from a gate")
            sys.stdout.flush()
            os.system("echo a child process writing to its stdout")
            return Context(context="printed")

    def slow(event, ctx):
        delay = event.tool_input.get("sleep")
        if delay:
            time.sleep(float(delay))
            return Context(context=f"slept {delay}")

    def crashing(event, ctx):
        if event.tool_input.get("command") == "crash":
            raise RuntimeError("boom")

    GATES = (
        Gate(id="test_noisy", events=("PreToolUse",), matcher="Bash", check=noisy),
        Gate(id="test_slow", events=("PreToolUse",), matcher="Bash", check=slow, timeout=10),
        Gate(id="test_crashing", events=("PreToolUse",), matcher="Bash", check=crashing, may_block=True,
             fail_mode="closed"),
    )
    def gates(config, project): return GATES
    def observers(config, project): return ()
''')

LAUNCH_WITH_EXTRA_GATES = (
    "import hookgate.engine_builder as p; p.GATE_SOURCES += ('hookgate_test_gates',); "
    "import sys; from hookgate.cli import main; sys.exit(main(sys.argv[1:]))"
)


class Core:
    """One running core. `request()` waits for the answer to its own id; notifications are kept."""

    def __init__(self, cwd: Path, *args: str, extra_gates: bool = False, env: dict[str, str] | None = None) -> None:
        full_env = {**os.environ, **(env or {})}
        full_env.pop("HOOKGATE_PROJECT_DIR", None)
        if extra_gates:
            gates_dir = cwd / ".test-gates"
            gates_dir.mkdir(exist_ok=True)
            (gates_dir / "hookgate_test_gates.py").write_text(EXTRA_GATES)
            full_env["PYTHONPATH"] = str(gates_dir)
            argv = [sys.executable, "-c", LAUNCH_WITH_EXTRA_GATES, "serve", "--stdio", *args]
        else:
            argv = [HOOKGATE, "serve", "--stdio", *args]
        self.proc = subprocess.Popen(argv, cwd=cwd, env=full_env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        self.raw_lines: list[bytes] = []
        self.notifications: "queue.Queue[dict[str, Any]]" = queue.Queue()
        self._answers: dict[Any, dict[str, Any]] = {}
        self._cond = threading.Condition()
        self._next_id = 0
        self.stderr_lines: list[str] = []
        threading.Thread(target=self._read_stdout, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.raw_lines.append(line)
            message = json.loads(line)  # a line that is not JSON fails the reader, and the test with it
            for item in message if isinstance(message, list) else [message]:
                if "id" in item:
                    with self._cond:
                        self._answers[item["id"]] = item
                        self._cond.notify_all()
                else:
                    self.notifications.put(item)

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr_lines.append(line.decode(errors="replace"))

    def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, method: str, params: Any = None, request_id: Any = None) -> Any:
        if request_id is None:
            self._next_id += 1
            request_id = self._next_id
        message = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send_raw(json.dumps(message).encode() + b"\n")
        return request_id

    def answer(self, request_id: Any, timeout: float = 20) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        with self._cond:
            while request_id not in self._answers:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"no answer to {request_id!r}; stderr: {''.join(self.stderr_lines)[-2000:]}")
                self._cond.wait(left)
            return self._answers[request_id]

    def answered(self, request_id: Any) -> bool:
        with self._cond:
            return request_id in self._answers

    def request(self, method: str, params: Any = None) -> dict[str, Any]:
        return self.answer(self.send(method, params))

    def initialize(self) -> dict[str, Any]:
        answer = self.request("initialize", {"runtime": "opencode", "versions": {"test": "1"}})
        assert "result" in answer, answer
        return answer["result"]

    def evaluate(self, event: dict[str, Any]) -> dict[str, Any]:
        answer = self.request("evaluate", {"event": event})
        assert "result" in answer, answer
        return answer["result"]

    def notification(self, method: str, timeout: float = 20) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no {method} notification; stderr: {''.join(self.stderr_lines)[-2000:]}")
            try:
                note = self.notifications.get(timeout=left)
            except queue.Empty:
                continue
            if note.get("method") == method:
                return note["params"]

    def close(self) -> int:
        if self.proc.poll() is None:
            try:
                self.proc.stdin.close()  # type: ignore[union-attr]
            except OSError:
                pass
            try:
                return self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        return self.proc.wait(timeout=10)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A project in the build role, for a core to judge."""
    (tmp_path / ".hookgate").mkdir()
    (tmp_path / ".hookgate" / "current_role").write_text("build\n")
    return tmp_path


def pre_write(root: Path, name: str, session: str = "s1", **extra: Any) -> dict[str, Any]:
    return {"hook_event_name": "PreToolUse", "session_id": session, "cwd": str(root), "runtime": "opencode",
            "tool_name": "Write", "tool_input": {"file_path": str(root / name), "content": "x"}, **extra}


def pre_bash(root: Path, session: str = "s1", **tool_input: Any) -> dict[str, Any]:
    return {"hook_event_name": "PreToolUse", "session_id": session, "cwd": str(root), "runtime": "opencode",
            "tool_name": "Bash", "tool_input": tool_input}
