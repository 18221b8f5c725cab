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

RUNTIMES_DIR = Path(__file__).resolve().parents[1] / "runtimes"
MODULES = RUNTIMES_DIR / "node_modules"
HOOKGATE = Path(sys.executable).with_name("hookgate")


def pinned(name: str, version: str | None = None) -> str | None:
    """The pinned binary `name` of a runtime: its newest, or an older `version`, installed as the npm
    alias `<name>-<version>` (the key of its capability table); None if it is not installed. Found
    through the package's own `bin`, never node_modules/.bin, where two versions of one runtime race
    for the same name."""
    dependencies = json.loads((RUNTIMES_DIR / "package.json").read_text())["dependencies"]
    alias = f"{name}-{version}"
    if version is not None and alias in dependencies:
        packages = [alias]
    else:  # the newest: a dependency that is not an alias and has this binary
        packages = [dep for dep, spec in dependencies.items() if not spec.startswith("npm:")]
    for package in packages:
        manifest = MODULES / package / "package.json"
        bins = json.loads(manifest.read_text()).get("bin", {}) if manifest.exists() else {}
        if isinstance(bins, dict) and name in bins and (MODULES / package / bins[name]).exists():
            return str(MODULES / package / bins[name])
    return None


def binary(name: str, version: str | None = None) -> str:
    """`pinned`, or the test fails saying how to install it."""
    found = pinned(name, version)
    if found is None:
        pytest.fail(f"the pinned {name} {version or '(newest)'} is missing from {MODULES}: run `make runtimes` "
                    f"(npm install in {RUNTIMES_DIR})")
    return found


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


def metrics(work: Path, session_id: str | None = None) -> list[dict[str, Any]]:
    """The records hookgate wrote: one session's, or the lifetime log."""
    state = work / ".hookgate"
    path = state / "sessions" / session_id / "metrics.jsonl" if session_id else state / "metrics.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
