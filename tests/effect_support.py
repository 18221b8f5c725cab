"""Driving the effect check the way a runtime does: the PreToolUse hook through the runtime's
real stdin dialect (hookgate.hookcall.handle, what `hookgate hook claude|codex` runs), the command
in a real bash subprocess, then the PostToolUse (or PostToolUseFailure) hook. Files are compared
by their bytes and mode, read from disk."""

from __future__ import annotations

import itertools
import json
import os
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hookgate.hookcall import handle
from hookgate_claude import dialect as claude
from hookgate_codex import dialect as codex

DIALECTS = {"claude": claude, "codex": codex}
_ids = itertools.count()


@dataclass
class Outcome:
    pre_blocked: bool
    pre_reason: str
    exit_code: int | None  # the command's, None when it did not run
    post_blocked: bool
    post_reason: str
    post_raw: Any


def state(root: Path) -> dict[str, tuple[bytes, int] | str]:
    """Every file under root (hookgate's own store and logs left out): bytes and mode."""
    out: dict[str, tuple[bytes, int] | str] = {}
    for folder, dirs, files in os.walk(root):
        rel_folder = os.path.relpath(folder, root)
        if rel_folder.startswith(".hookgate") and any(part in rel_folder for part in ("sessions", "effect")):
            continue
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in files:
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, root)
            if rel in (".hookgate/metrics.jsonl", ".hookgate/role_owner.json"):  # hookgate writes these itself
                continue
            st = os.lstat(path)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = "link:" + os.readlink(path)
            else:
                out[rel] = (Path(path).read_bytes(), stat.S_IMODE(st.st_mode))
    return out


class Project:
    def __init__(self, root: Path, runtime: str = "claude", session: str = "s1") -> None:
        self.root = root
        self.runtime = runtime
        self.session = session
        (root / ".hookgate").mkdir(parents=True, exist_ok=True)

    def role(self, role: str | None) -> "Project":
        path = self.root / ".hookgate" / "current_role"
        if role is None:
            path.unlink(missing_ok=True)
        else:
            path.write_text(role + "\n")
        return self

    def write(self, rel: str, text: str = "x\n", mode: int | None = None) -> Path:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        if mode is not None:
            path.chmod(mode)
        return path

    def config(self, text: str) -> None:
        (self.root / ".hookgate" / "config.toml").write_text(text)

    def hook(self, payload: dict[str, Any], env: dict[str, str] | None = None) -> tuple[bool, str, Any]:
        full = {"session_id": self.session, "cwd": str(self.root), **payload}
        environment = {"HOOKGATE_PROJECT_DIR": str(self.root), "HOOKGATE_WARM": "off", **(env or {})}
        answer = handle(DIALECTS[self.runtime], json.dumps(full).encode(), environment)
        return read(self.runtime, payload["hook_event_name"], answer)

    def tool_payload(self, event: str, tool: str, tool_input: dict[str, Any], call: str,
                     agent: tuple[str, str] | None = None, **extra: Any) -> dict[str, Any]:
        payload = {"hook_event_name": event, "tool_name": tool, "tool_input": tool_input, "tool_use_id": call, **extra}
        if agent:
            payload["agent_id"], payload["agent_type"] = agent
        return payload

    def bash(self, command: str, agent: tuple[str, str] | None = None, env: dict[str, str] | None = None,
             call: str | None = None) -> Outcome:
        """One Bash call: PreToolUse, the command in real bash (when allowed), its after-event."""
        call = call or f"toolu_{next(_ids)}"
        tool_input = {"command": command}
        blocked, reason, _ = self.hook(self.tool_payload("PreToolUse", "Bash", tool_input, call, agent), env)
        if blocked:
            return Outcome(True, reason, None, False, "", None)
        done = subprocess.run(["bash", "-c", command], cwd=self.root, capture_output=True, text=True, timeout=60,
                              env={**os.environ, **(env or {})})
        return Outcome(False, reason, done.returncode, *self.after(call, tool_input, done, agent, env))

    def after(self, call: str, tool_input: dict[str, Any], done: subprocess.CompletedProcess, agent=None, env=None,
              tool: str = "Bash") -> tuple[bool, str, Any]:
        failed = done.returncode != 0
        if self.runtime == "claude" and failed:
            payload = self.tool_payload("PostToolUseFailure", tool, tool_input, call, agent,
                                        error=f"Exit code {done.returncode}\n{done.stderr}")
        else:
            payload = self.tool_payload("PostToolUse", tool, tool_input, call, agent,
                                        tool_response=done.stdout + done.stderr)
        return self.hook(payload, env)

    def metrics(self) -> list[dict[str, Any]]:
        lines = []
        for path in (self.root / ".hookgate" / "sessions").glob("*/metrics.jsonl"):
            lines += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        return lines


def read(runtime: str, event: str, answer) -> tuple[bool, str, Any]:
    """(blocked, reason, raw) as the runtime reads the hook's answer."""
    if runtime == "codex":
        if answer.exit_code == 2:
            return True, answer.stderr, None
        assert answer.exit_code == 0, answer.stderr
        out = json.loads(answer.stdout) if answer.stdout else {}
        return False, "", out
    assert answer.exit_code == 0, answer.stderr
    out = json.loads(answer.stdout) if answer.stdout else {}
    specific = out.get("hookSpecificOutput", {})
    if specific.get("permissionDecision") == "deny":
        return True, specific.get("permissionDecisionReason", ""), out
    if out.get("decision") == "block":
        return True, out.get("reason", ""), out
    return False, "", out
