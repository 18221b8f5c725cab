"""The Gemini CLI extension channel on the real, pinned binary: `gemini extensions install
adapters/gemini/extension --consent` (Gemini CLI asks to trust an extension's source folder first:
the test's user trusts it), and a real session guarded by the extension alone (the project has no
.gemini/settings.json hooks). The extension calls the hookgate on PATH; without one, the gating
events are refused with a reason that says so."""

from __future__ import annotations

from pathlib import Path

import pytest

from drivers import gemini
from harness.channels import path_with_hookgate, path_without_hookgate, use_path
from harness.fakemodel import Call, FakeModel, Say
from harness.runtimes import metrics, new_project
from hookgate.checks import Setup
from hookgate.installers import plugin_hooks
from hookgate_gemini import checks

pytestmark = pytest.mark.real


@pytest.fixture
def extended(tmp_path: Path) -> tuple[Path, Path]:
    """A project and a home whose Gemini CLI has hookgate from the extension channel, nothing else."""
    work, home = new_project(tmp_path)
    gemini.configure(work, home)
    gemini.install_extension(work, home)
    gemini.hookgate("role", "set", "build", cwd=work, home=home)
    return work, home


def write_game_code(work: Path, home: Path, fake_model: FakeModel, name: str) -> list[str]:
    (work / "src").mkdir(exist_ok=True)
    marker = fake_model.script(name, Call("write_file", {"file_path": "src/player.gd", "content": "x\n"}), Say("ok"))
    run = gemini.run_gemini(work, home, fake_model, f"{marker} go")
    assert run.returncode == 0, run.stderr[-2000:]
    return fake_model.tool_results(name)


def test_the_extension_alone_guards_a_session(extended: tuple[Path, Path], fake_model: FakeModel,
                                              tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work, home = extended
    use_path(monkeypatch, path_with_hookgate(tmp_path / "bin"))
    assert not (work / ".gemini" / "settings.json").exists()
    results = write_game_code(work, home, fake_model, "gm_ext")
    assert "Build role cannot write game code directly (player.gd)" in results[-1]
    assert not (work / "src" / "player.gd").exists()
    assert any(m["event"] == "hook_block" and m["gate"] == "check_file_permissions" for m in metrics(work))
    env = {"PATH": path_with_hookgate(tmp_path / "bin"), "HOME": str(home), "GEMINI_CLI_HOME": str(home)}
    assert [f.status for f in checks.check_extension(Setup(project=work, env=env))] == ["ok"]


def test_without_hookgate_on_path_the_extension_refuses_the_call(extended: tuple[Path, Path], fake_model: FakeModel,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    work, home = extended
    use_path(monkeypatch, path_without_hookgate())
    results = write_game_code(work, home, fake_model, "gm_ext_missing")
    assert plugin_hooks.missing_message("PreToolUse", True) in results[-1]
    assert not (work / "src" / "player.gd").exists()
