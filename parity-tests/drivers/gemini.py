"""Gemini CLI 0.61.0: the scenario moves as runs of the pinned binary against the fake model.

The runtime: `gemini -p` in headless mode, its Gemini API pointed at the fake model
(GOOGLE_GEMINI_BASE_URL), an API-key login that never leaves 127.0.0.1, `--yolo` so every tool
runs without a prompt (hooks still run under it), and the project folder trusted in the user's
trustedFolders.json: Gemini CLI ignores an untrusted project's .gemini/settings.json, hooks and all.
Subagents are the user's agent files (~/.gemini/agents/<role>.md), dispatched by `invoke_agent`;
a project's own agents would first need the user's acknowledgement, which headless mode cannot give.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

from harness.fakemodel import FakeModel
from harness.runtimes import HOOKGATE, Run, base_env, binary

runtime = "gemini"
MODEL = "gemini-2.5-flash"


# -- the runtime ---------------------------------------------------------------------------------------

def gemini_home(home: Path) -> Path:
    return home / ".gemini"


def configure(work: Path, home: Path, settings: dict[str, Any] | None = None) -> Path:
    """The user's settings.json (an API-key login, no telemetry or update checks, plus `settings`)
    and the project folder trusted. Returns the settings file (`hookgate install --user` merges
    into it)."""
    folder = gemini_home(home)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "trustedFolders.json").write_text(json.dumps({str(work): "TRUST_FOLDER"}))
    path = folder / "settings.json"
    path.write_text(json.dumps({
        "security": {"auth": {"selectedType": "gemini-api-key"}}, "general": {"enableAutoUpdate": False},
        "privacy": {"usageStatisticsEnabled": False}, "telemetry": {"enabled": False}, **(settings or {}),
    }, indent=2))
    return path


def env(home: Path, fake: FakeModel | None = None) -> dict[str, str]:
    found = {**base_env(home), "GEMINI_API_KEY": "fake-key", "GEMINI_CLI_HOME": str(home)}
    if fake is not None:
        found["GOOGLE_GEMINI_BASE_URL"] = fake.url
    return found


def hookgate(*args: str, cwd: Path, home: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    """`hookgate ...` seeing the same home as the Gemini runs."""
    return subprocess.run([str(HOOKGATE), *args], cwd=cwd, env=env(home), capture_output=True, text=True,
                          check=check)


def start(work: Path, home: Path, fake: FakeModel, prompt: str, *args: str) -> subprocess.Popen[str]:
    """One headless `gemini -p` run of the pinned binary, every tool approved."""
    return subprocess.Popen([binary("gemini"), "-p", prompt, "-m", MODEL, "--yolo", "-o", "json", *args],
                            cwd=work, env=env(home, fake), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)


def collect(process: subprocess.Popen[str], timeout: float = 180) -> Run:
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise
    return Run(process.returncode, out, err)


def run_gemini(work: Path, home: Path, fake: FakeModel, prompt: str, timeout: float = 180) -> Run:
    return collect(start(work, home, fake, prompt), timeout)


def add_agents(home: Path, agents: dict[str, str]) -> None:
    """The user's own subagents (~/.gemini/agents/<name>.md)."""
    folder = gemini_home(home) / "agents"
    folder.mkdir(parents=True, exist_ok=True)
    for name, body in agents.items():
        (folder / f"{name}.md").write_text(body)


def agent_file(role: str) -> str:
    return f"---\nname: {role}\ndescription: the pipeline's {role}\nkind: local\n---\nYou are the {role}.\n"


def user_hooks(home: Path, hooks: dict[str, list[dict[str, Any]]]) -> None:
    """Hand-written hooks in the user's settings.json, beside what is there."""
    path = gemini_home(home) / "settings.json"
    settings = json.loads(path.read_text())
    settings["hooks"] = hooks
    path.write_text(json.dumps(settings, indent=2))


def one_hook(event: str, command: str, timeout_ms: int = 60_000) -> dict[str, list[dict[str, Any]]]:
    return {event: [{"matcher": "*", "hooks": [{"type": "command", "command": command, "name": f"probe-{event}",
                                                 "timeout": timeout_ms}]}]}
