"""The runtimes' own plugin channels, as a user takes them: the checkout as a marketplace (Claude
Code, Codex) or the npm package by name (OpenCode), with hookgate found on PATH, or not at all."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from .runtimes import HOOKGATE

CHECKOUT = Path(__file__).resolve().parents[2]


def path_with_hookgate(bin_dir: Path) -> str:
    """A PATH on which `hookgate` is this checkout's (a link in `bin_dir`), before anything else."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    link = bin_dir / "hookgate"
    if not link.exists():
        link.symlink_to(HOOKGATE)
    return os.pathsep.join([str(bin_dir), path_without_hookgate()])


def path_without_hookgate() -> str:
    """The test's PATH minus every folder that holds a `hookgate`."""
    kept = [d for d in os.environ.get("PATH", "/usr/bin:/bin").split(os.pathsep)
            if d and not os.access(os.path.join(d, "hookgate"), os.X_OK)]
    return os.pathsep.join(kept)


def use_path(monkeypatch: pytest.MonkeyPatch, path: str) -> None:
    """The PATH every runtime the test starts (and every hook it runs) sees."""
    monkeypatch.setenv("PATH", path)
