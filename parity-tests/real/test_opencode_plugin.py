"""OpenCode loading `opencode-hookgate` by name (`"plugin": ["opencode-hookgate"]` in
opencode.json) on the real, pinned binary, with the package installed from this checkout and the
npm registry out of reach (OpenCode's own installer and npm both point at a dead port).

OpenCode 1.18.33 resolves a plugin named without a path in its package cache, one folder per
spec: `$XDG_CACHE_HOME/opencode/packages/<name>@latest/node_modules/<name>`, installing it there
from the registry when it is missing. A package already in that folder is used as it is; one in
the config dir's node_modules is not looked at."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

import drivers.opencode
from harness.channels import CHECKOUT, path_with_hookgate, path_without_hookgate, preinstall_opencode, use_path
from harness.fakemodel import Call, FakeModel, Say
from drivers.opencode import configure, run_opencode
from harness.runtimes import hookgate, metrics, new_project

pytestmark = pytest.mark.real

PACKAGE = CHECKOUT / "adapters" / "opencode-plugin"
DEAD_REGISTRY = "http://127.0.0.1:9/"


def npm_install(prefix: Path) -> None:
    """What the README tells a user to type, offline."""
    env = {**os.environ, "npm_config_registry": DEAD_REGISTRY, "npm_config_cache": str(prefix.parent / ".npm")}
    done = subprocess.run(["npm", "install", "--offline", "--no-audit", "--no-fund", "--prefix", str(prefix), str(PACKAGE)],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def package_cache(home: Path) -> Path:
    return home / ".cache" / "opencode" / "packages" / "opencode-hookgate@latest"


@pytest.fixture
def by_name(tmp_path: Path, fake_model: FakeModel, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A project whose opencode.json names the plugin; no plugin file, no `hookgate install`."""
    monkeypatch.setattr(drivers.opencode, "preinstall", preinstall_opencode)
    work, home = new_project(tmp_path)
    (home / ".npmrc").write_text(f"registry={DEAD_REGISTRY}\n")  # OpenCode's installer reads it too
    configure(work, home, fake_model)
    config = json.loads((work / "opencode.json").read_text())
    (work / "opencode.json").write_text(json.dumps({**config, "plugin": ["opencode-hookgate"]}, indent=2))
    hookgate("role", "set", "build", cwd=work)
    return work, home


def forbidden_write(work: Path, home: Path, fake_model: FakeModel, name: str) -> tuple[Path, list[str]]:
    target = work / "src" / "player.gd"
    marker = fake_model.script(name, Call("write", {"filePath": str(target), "content": "extends Node\n"}), Say("done"))
    run = run_opencode(work, home, f"{marker} write the player")
    assert run.returncode == 0, run.stderr[-3000:]
    return target, fake_model.tool_results(name)


def test_the_plugin_named_in_opencode_json_blocks_a_forbidden_write(
        by_name: tuple[Path, Path], fake_model: FakeModel, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    work, home = by_name
    npm_install(package_cache(home))
    use_path(monkeypatch, path_with_hookgate(tmp_path / "bin"))
    target, results = forbidden_write(work, home, fake_model, "ocp_forbidden")
    assert not target.exists()
    assert any("Build role cannot write game code directly (player.gd)" in r for r in results), results
    blocks = [m for m in metrics(work) if m["event"] == "hook_block"]
    assert [(b["gate"], b["runtime"]) for b in blocks] == [("check_file_permissions", "opencode")]
    assert not (work / ".opencode" / "plugin").exists() and not (work / ".opencode" / "plugins").exists()


def test_a_package_in_the_config_dirs_node_modules_is_not_loaded_by_name(
        by_name: tuple[Path, Path], fake_model: FakeModel, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Why the README installs into OpenCode's package cache: the pinned binary never looks here,
    tries the registry, and runs the session unguarded (without a word at the default log level)."""
    work, home = by_name
    modules = home / ".config" / "opencode" / "node_modules"
    (modules / "opencode-hookgate").symlink_to(PACKAGE, target_is_directory=True)
    use_path(monkeypatch, path_with_hookgate(tmp_path / "bin"))
    target, _ = forbidden_write(work, home, fake_model, "ocp_config_dir")
    assert target.exists() and metrics(work) == []


def test_without_hookgate_on_path_writes_are_refused_and_the_model_is_told(
        by_name: tuple[Path, Path], fake_model: FakeModel, monkeypatch: pytest.MonkeyPatch) -> None:
    work, home = by_name
    npm_install(package_cache(home))
    use_path(monkeypatch, path_without_hookgate())
    target = work / "notes.txt"  # a write every role may make: only the missing hookgate refuses it
    marker = fake_model.script("ocp_missing", Call("write", {"filePath": str(target), "content": "ok\n"}), Say("done"))
    run = run_opencode(work, home, f"{marker} write the notes")
    assert run.returncode == 0, run.stderr[-3000:]
    assert not target.exists()
    results = fake_model.tool_results("ocp_missing")
    assert any('could not run hookgate: Executable not found in $PATH: "hookgate"' in r and "blocked" in r
               for r in results), results
    assert 'could not run hookgate: Executable not found in $PATH' in run.stderr  # the user's log
    assert not (work / ".hookgate" / "metrics.jsonl").exists()
