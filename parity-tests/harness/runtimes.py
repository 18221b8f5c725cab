"""Starting the real, pinned runtimes against the fake model, in a throwaway home and project."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from .fakemodel import FakeModel

RUNTIMES_DIR = Path(__file__).resolve().parents[1] / "runtimes"
BIN = RUNTIMES_DIR / "node_modules" / ".bin"
HOOKGATE = Path(sys.executable).with_name("hookgate")


def binary(name: str) -> str:
    path = BIN / name
    if not path.exists():
        pytest.fail(f"the pinned {name} binary is missing at {path}: run `make runtimes` (npm ci in {RUNTIMES_DIR})")
    return str(path)


def hookgate(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(HOOKGATE), *args], cwd=cwd, capture_output=True, text=True, check=True)


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        return json.loads(self.stdout)


def base_env(home: Path) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "TMPDIR": os.environ.get("TMPDIR", "/tmp"),
        "HOOKGATE_WARM_IDLE": os.environ.get("HOOKGATE_WARM_IDLE", "10"),  # the test's warm core leaves soon
    }


def new_project(root: Path) -> tuple[Path, Path]:
    """A git-initialised work dir and an empty home beside it."""
    work, home = root / "work", root / "home"
    work.mkdir(parents=True)
    home.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    return work, home


def run_claude(work: Path, home: Path, fake: FakeModel, prompt: str, timeout: float = 150) -> Run:
    env = {
        **base_env(home),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "ANTHROPIC_BASE_URL": fake.url,
        "ANTHROPIC_API_KEY": "sk-ant-fake-key",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "DISABLE_BUG_COMMAND": "1",
        "IS_SANDBOX": "1",  # lets bypassPermissions run as root
    }
    cmd = [binary("claude"), "-p", prompt, "--output-format", "json", "--model", "claude-sonnet-4-5",
           "--permission-mode", "bypassPermissions"]
    done = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True, timeout=timeout)
    return Run(done.returncode, done.stdout, done.stderr)


def metrics(work: Path, session_id: str | None = None) -> list[dict[str, Any]]:
    """The records hookgate wrote: one session's, or the lifetime log."""
    state = work / ".hookgate"
    path = state / "sessions" / session_id / "metrics.jsonl" if session_id else state / "metrics.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def copy_agents(work: Path, agents: dict[str, str]) -> None:
    """Custom Claude subagents (`.claude/agents/<name>.md`)."""
    folder = work / ".claude" / "agents"
    folder.mkdir(parents=True, exist_ok=True)
    for name, body in agents.items():
        (folder / f"{name}.md").write_text(body)
