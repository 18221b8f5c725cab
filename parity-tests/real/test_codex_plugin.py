"""The Codex plugin channel on the real, pinned binary: this checkout added as a marketplace,
`codex plugin add hookgate@hookgate`, the plugin's hooks reviewed (`hookgate install codex
--plugin` records the review; Codex's own `hooks/list` says whether it took), and a real
`codex exec` without `--dangerously-bypass-hook-trust` guarded by the plugin alone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.channels import path_with_hookgate, path_without_hookgate, use_path
from drivers.codex import PLUGIN_ID, add_plugin, codex_home, hookgate, hooks_list, run_codex
from harness.fakemodel import Call, FakeModel, Say
from harness.runtimes import metrics, new_project
from hookgate_codex.install import REGISTRATIONS

pytestmark = pytest.mark.real


def plugin_hooks(home: Path, work: Path) -> list[dict]:
    return [h for h in hooks_list(home, work) if h.get("pluginId") == PLUGIN_ID]


@pytest.fixture
def added(tmp_path: Path, fake_model: FakeModel) -> tuple[Path, Path]:
    """A project and a CODEX_HOME with the hookgate plugin added from the checkout's marketplace
    (plugins on; the remote catalog off, so nothing leaves 127.0.0.1)."""
    work, home = new_project(tmp_path)
    add_plugin(work, home, fake_model)
    hookgate("role", "set", "build", cwd=work, home=home)
    return work, home


def test_plugin_hooks_are_unreviewed_until_hookgate_records_the_review(added: tuple[Path, Path]) -> None:
    work, home = added
    listed = plugin_hooks(home, work)
    assert len(listed) == len(REGISTRATIONS) and {h["trustStatus"] for h in listed} == {"untrusted"}, listed
    config = codex_home(home) / "config.toml"
    before = config.read_bytes()
    done = hookgate("install", "codex", "--plugin", cwd=work, home=home)
    assert f"{len(REGISTRATIONS)} hooks of the {PLUGIN_ID} plugin" in done.stdout
    listed = plugin_hooks(home, work)
    assert {h["trustStatus"] for h in listed} == {"trusted"} and all(h["enabled"] for h in listed), listed
    hookgate("uninstall", "codex", "--plugin", cwd=work, home=home)
    assert config.read_bytes() == before
    assert {h["trustStatus"] for h in plugin_hooks(home, work)} == {"untrusted"}


def test_an_unreviewed_plugin_is_skipped_without_a_word(
        added: tuple[Path, Path], fake_model: FakeModel, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """What the user must know: without the review, Codex exec runs no hookgate hook at all."""
    work, home = added
    use_path(monkeypatch, path_with_hookgate(tmp_path / "bin"))
    target = work / "src" / "player.gd"
    marker = fake_model.script("cxp_unreviewed", Call("exec_command", {"cmd": f"mkdir -p src && echo x > {target}"}),
                               Say("done"))
    run = run_codex(work, home, f"{marker} write the player", bypass_hook_trust=False)
    assert run.returncode == 0, run.stderr
    assert target.exists() and metrics(work) == []


def test_a_reviewed_plugin_guards_a_session(
        added: tuple[Path, Path], fake_model: FakeModel, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    work, home = added
    hookgate("install", "codex", "--plugin", cwd=work, home=home)
    use_path(monkeypatch, path_with_hookgate(tmp_path / "bin"))
    target, allowed = work / "src" / "player.gd", work / "notes.txt"
    marker = fake_model.script(
        "cxp_forbidden", Call("exec_command", {"cmd": f"mkdir -p src && echo x > {target}"}),
        Call("exec_command", {"cmd": f"echo ok > {allowed}"}), Say("done"))
    run = run_codex(work, home, f"{marker} write the player", bypass_hook_trust=False)
    assert run.returncode == 0, run.stderr
    assert not target.exists() and allowed.read_text() == "ok\n"
    results = fake_model.tool_results("cxp_forbidden")
    assert any("Build role cannot write game code directly (player.gd)" in r for r in results), results
    blocks = [m for m in metrics(work) if m["event"] == "hook_block"]
    assert [(b["gate"], b["runtime"]) for b in blocks] == [("check_shell_writes", "codex")]
    # nothing but the plugin registered hookgate
    assert not (work / ".codex").exists() and not (codex_home(home) / "hooks.json").exists()


def test_without_hookgate_on_path_commands_are_refused_and_the_model_is_told(
        added: tuple[Path, Path], fake_model: FakeModel, monkeypatch: pytest.MonkeyPatch) -> None:
    work, home = added
    hookgate("install", "codex", "--plugin", cwd=work, home=home)
    use_path(monkeypatch, path_without_hookgate())
    target = work / "notes.txt"  # a command every role may run: only the missing hookgate refuses it
    marker = fake_model.script("cxp_missing", Call("exec_command", {"cmd": f"echo ok > {target}"}), Say("done"))
    run = run_codex(work, home, f"{marker} write the notes", bypass_hook_trust=False)
    assert run.returncode == 0, run.stderr
    assert not target.exists()
    results = fake_model.tool_results("cxp_missing")
    assert any("hookgate is not installed or not on PATH: PreToolUse is refused" in r for r in results), results
    first = json.dumps(fake_model.seen("cxp_missing")[0].body)
    assert "this session is not guarded by hookgate" in first  # SessionStart's context reached the model
    assert not (work / ".hookgate" / "metrics.jsonl").exists()
