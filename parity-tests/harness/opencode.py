"""Starting the real, pinned OpenCode against the fake model (Chat Completions), offline.

OpenCode installs `@opencode-ai/plugin` into every config dir it loads (the user's and a project's
`.opencode/`) at start-up; with the registry slow or away that costs a minute. `preinstall` gives
each such dir the pinned package from parity-tests/runtimes, in the shape OpenCode's own check
accepts (node_modules present, the dependency in package-lock.json), so runs never wait on it.
"""

from __future__ import annotations

import json
import subprocess
import threading
from pathlib import Path
from typing import Any, Callable

from .fakemodel import FakeModel
from .runtimes import RUNTIMES_DIR, Run, base_env, binary

PLUGIN_PACKAGE = "@opencode-ai/plugin"


def plugin_version() -> str:
    return json.loads((RUNTIMES_DIR / "package.json").read_text())["dependencies"][PLUGIN_PACKAGE]


def preinstall(config_dir: Path) -> None:
    """The pinned `@opencode-ai/plugin` in `config_dir`, linked from parity-tests/runtimes."""
    version = plugin_version()
    modules = config_dir / "node_modules"
    modules.mkdir(parents=True, exist_ok=True)
    for entry in (RUNTIMES_DIR / "node_modules").iterdir():
        link = modules / entry.name
        if entry.name.startswith(".") or link.exists():
            continue
        link.symlink_to(entry, target_is_directory=entry.is_dir())
    dependencies = {PLUGIN_PACKAGE: version}
    (config_dir / "package.json").write_text(json.dumps({"dependencies": dependencies}))
    (config_dir / "package-lock.json").write_text(json.dumps(
        {"lockfileVersion": 3, "requires": True, "packages": {"": {"dependencies": dependencies}}}))


def configure(work: Path, home: Path, fake: FakeModel) -> None:
    """opencode.json pointing at the fake model; the plugin package pre-installed where OpenCode
    wants it (the user's config dir, and the project's .opencode/ once it exists)."""
    config = {
        "$schema": "https://opencode.ai/config.json",
        "provider": {"fake": {
            "npm": "@ai-sdk/openai-compatible",
            "name": "Fake local model",
            "options": {"baseURL": f"{fake.url}/v1", "apiKey": "sk-fake"},
            "models": {"fake-model": {"name": "Fake Model", "tool_call": True,
                                      "limit": {"context": 128000, "output": 8192}}},
        }},
        "model": "fake/fake-model",
        "small_model": "fake/fake-model",
        "autoupdate": False,
        "share": "disabled",
        "permission": {"edit": "allow", "bash": "allow", "webfetch": "allow"},
    }
    (work / "opencode.json").write_text(json.dumps(config, indent=2))
    preinstall(home / ".config" / "opencode")
    if (work / ".opencode").is_dir():
        preinstall(work / ".opencode")


def env(home: Path) -> dict[str, str]:
    return {
        **base_env(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "OPENCODE_DISABLE_AUTOUPDATE": "1",
        "OPENCODE_DISABLE_MODELS_FETCH": "1",
        "OPENCODE_DISABLE_SHARE": "1",
        "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
    }


def run_opencode(work: Path, home: Path, prompt: str, timeout: float = 240,
                 during: Callable[[subprocess.Popen[str]], Any] | None = None) -> Run:
    """`opencode run PROMPT` in `work`; `during(process)` runs on a thread meanwhile."""
    cmd = [binary("opencode"), "run", "--print-logs", "--log-level", "INFO", prompt]
    process = subprocess.Popen(cmd, cwd=work, env=env(home), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    helper = threading.Thread(target=during, args=(process,), daemon=True) if during else None
    if helper:
        helper.start()
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        stdout, stderr = process.communicate()
        raise AssertionError(f"opencode did not finish in {timeout}s; stderr tail:\n{stderr[-4000:]}") from None
    if helper:
        helper.join(timeout=30)
    return Run(process.returncode, stdout, stderr)


def descendants(pid: int) -> list[int]:
    """Every process below `pid` (from /proc, children of every thread)."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            children = (task / "children").read_text().split()
        except OSError:
            continue
        for child in map(int, children):
            found += [child, *descendants(child)]
    return found


def core_pids(opencode_pid: int) -> list[int]:
    """The hookgate cores this OpenCode process runs."""
    pids = []
    for pid in descendants(opencode_pid):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"serve" in argv and b"--stdio" in argv:
            pids.append(pid)
    return pids


def hookgate_log(stderr: str) -> list[str]:
    """The plugin's and the core's lines in OpenCode's log (`--print-logs`)."""
    return [line for line in stderr.splitlines() if 'message="hookgate' in line]
