"""The runtimes' own plugin channels, as a user takes them: the checkout as a marketplace (Claude
Code, Codex) or the npm package by name (OpenCode), with hookgate found on PATH, or not at all."""

from __future__ import annotations

import json
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


# The runtime binaries themselves: no plugin needs them, and they are the costliest to lose.
_NOT_FOR_PLUGINS = ("@anthropic-ai", "@openai", "opencode-ai", "opencode-linux-x64", "opencode-linux-x64-baseline")


def preinstall_opencode(config_dir: Path) -> None:
    """The pinned `@opencode-ai/plugin` (and what it needs) in an OpenCode config dir, as
    drivers.opencode.preinstall gives it, but linked package by package: a scope folder is a real
    folder of links, so an npm or OpenCode install that later runs there replaces or prunes the
    links, never the shared packages behind them."""
    from drivers.opencode import PLUGIN_PACKAGE, plugin_version
    from .runtimes import RUNTIMES_DIR

    modules = config_dir / "node_modules"
    modules.mkdir(parents=True, exist_ok=True)
    for entry in sorted((RUNTIMES_DIR / "node_modules").iterdir()):
        if entry.name.startswith(".") or entry.name in _NOT_FOR_PLUGINS:
            continue
        packages = sorted(p for p in entry.iterdir() if not p.name.startswith(".")) if entry.name.startswith("@") \
            else [entry]
        for package in packages:
            link = modules / package.relative_to(RUNTIMES_DIR / "node_modules")
            link.parent.mkdir(parents=True, exist_ok=True)
            if not link.exists():
                link.symlink_to(package, target_is_directory=True)
    dependencies = {PLUGIN_PACKAGE: plugin_version()}
    (config_dir / "package.json").write_text(json.dumps({"dependencies": dependencies}))
    (config_dir / "package-lock.json").write_text(json.dumps(
        {"lockfileVersion": 3, "requires": True, "packages": {"": {"dependencies": dependencies}}}))
