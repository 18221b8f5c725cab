"""The Claude Code plugin channel on the real, pinned binary: this checkout added as a marketplace,
`claude plugin install hookgate@hookgate`, and a real session guarded by the plugin alone (the
project has no .claude/settings.json). The plugin calls the hookgate on PATH; without one, the
gating events are refused with a reason that says so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.channels import CHECKOUT, path_with_hookgate, path_without_hookgate, use_path
from harness.fakemodel import Call, FakeModel, Say
from drivers.claude import claude_command, install_plugin, run_claude
from harness.runtimes import hookgate, metrics, new_project

pytestmark = pytest.mark.real


@pytest.fixture
def plugged(tmp_path: Path) -> tuple[Path, Path]:
    """A project and a home whose Claude Code has hookgate from the plugin channel, nothing else."""
    work, home = new_project(tmp_path)
    install_plugin(work, home)
    listed = json.loads(claude_command("plugin", "list", "--json", home=home, cwd=work).stdout)
    ours = [p for p in listed if str(p.get("id", p.get("name"))).startswith("hookgate@hookgate")]
    assert ours and ours[0].get("enabled", True), listed
    hookgate("role", "set", "build", cwd=work)
    assert not (work / ".claude").exists()  # whatever guards the session below is the plugin
    return work, home


def test_the_marketplace_and_the_plugin_validate(tmp_path: Path) -> None:
    for target in (CHECKOUT, CHECKOUT / "adapters" / "claude" / "plugin"):
        done = claude_command("plugin", "validate", str(target), home=tmp_path, cwd=tmp_path)
        assert done.returncode == 0 and "Validation passed" in done.stdout, done.stdout + done.stderr


def test_a_plugin_installed_session_blocks_a_forbidden_write(
        plugged: tuple[Path, Path], fake_model: FakeModel, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    work, home = plugged
    use_path(monkeypatch, path_with_hookgate(tmp_path / "bin"))
    target, allowed = work / "src" / "player.gd", work / "notes.txt"
    marker = fake_model.script(
        "ccp_forbidden", Call("Write", {"file_path": str(target), "content": "extends Node\n"}),
        Call("Write", {"file_path": str(allowed), "content": "ok\n"}), Say("ok"))
    run = run_claude(work, home, fake_model, f"{marker} write the player")
    assert run.returncode == 0, run.stderr
    assert not target.exists() and allowed.read_text() == "ok\n"
    results = fake_model.tool_results("ccp_forbidden")
    assert any("Build role cannot write game code directly (player.gd)" in r for r in results), results
    records = metrics(work)
    assert [(m["gate"], m["runtime"]) for m in records if m["event"] == "hook_block"] == \
        [("check_file_permissions", "claude")]
    assert [m["file"] for m in records if m["event"] == "file_write"] == ["player.gd", "notes.txt"]


def test_without_hookgate_on_path_writes_are_refused_and_the_model_is_told(
        plugged: tuple[Path, Path], fake_model: FakeModel, monkeypatch: pytest.MonkeyPatch) -> None:
    work, home = plugged
    use_path(monkeypatch, path_without_hookgate())
    target = work / "notes.txt"  # a write every role may make: only the missing hookgate refuses it
    marker = fake_model.script("ccp_missing", Call("Write", {"file_path": str(target), "content": "ok\n"}), Say("ok"))
    run = run_claude(work, home, fake_model, f"{marker} write the notes")
    assert run.returncode == 0, run.stderr
    assert not target.exists()
    results = fake_model.tool_results("ccp_missing")
    assert any("hookgate is not installed or not on PATH: PreToolUse is refused" in r for r in results), results
    # SessionStart told the model before its first turn that nothing guards the session
    first = json.dumps(fake_model.seen("ccp_missing")[0].body)
    assert "this session is not guarded by hookgate" in first
    assert not (work / ".hookgate" / "metrics.jsonl").exists()  # no hookgate ran at all
