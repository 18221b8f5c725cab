"""Install then uninstall gives back every file hookgate edits byte for byte, on a corpus of
hand-formatted files (tests/corpus/: odd indentation and key order, tabs, CRLF, one line, no
final newline, escapes json.dumps would rewrite, empty containers the user wrote), and a user's
own edits made while hookgate was installed survive uninstall."""

from __future__ import annotations

import json
import shutil
import tomllib
from pathlib import Path

import pytest

from hookgate import lifecycle
from hookgate_opencode import install as opencode
from hookgate_claude import install as claude
from hookgate_codex import install as codex, plugin_trust

CORPUS = Path(__file__).resolve().with_name("corpus")
HOOKS_FILES = sorted((CORPUS / "hooks-json").iterdir())
TOML_FILES = sorted((CORPUS / "config-toml").iterdir())
COMMAND = "/opt/hookgate/bin/hookgate"


@pytest.fixture
def codex_home(tmp_path, monkeypatch):
    home = tmp_path / "codex-home"
    home.mkdir()
    monkeypatch.setenv("CODEX_HOME", str(home))
    return home


def installers(codex_home: Path):
    """runtime -> (the file, install, uninstall)."""
    return {
        "claude": (codex_home.parent / "project" / ".claude" / "settings.json",
                   lambda p: claude.install(p, COMMAND), claude.uninstall),
        "codex": (codex_home / "hooks.json", lambda p: codex.install(p, COMMAND), codex.uninstall),
    }


def ours_in(path: Path, runtime: str) -> set[str]:
    module = claude if runtime == "claude" else codex
    return {event for event, _ in module.installed_commands(path)}


@pytest.mark.parametrize("runtime", ["claude", "codex"])
@pytest.mark.parametrize("corpus", HOOKS_FILES, ids=lambda p: p.name)
def test_install_then_uninstall_gives_back_the_very_bytes(corpus, runtime, codex_home):
    path, install, uninstall = installers(codex_home)[runtime]
    path.parent.mkdir(parents=True, exist_ok=True)
    original = corpus.read_bytes()
    path.write_bytes(original)
    user_hooks = json.loads(original).get("hooks", {})
    assert install(path) is True
    installed = json.loads(path.read_bytes())
    assert ours_in(path, runtime) == {r.event for r in lifecycle.for_runtime(runtime)}
    for event, groups in user_hooks.items():  # the user's come first, as they were
        assert installed["hooks"][event][:len(groups)] == groups
    assert {k: v for k, v in installed.items() if k != "hooks"} == \
        {k: v for k, v in json.loads(original).items() if k != "hooks"}
    assert install(path) is False  # idempotent: nothing to change
    assert uninstall(path) is True
    assert path.read_bytes() == original


@pytest.mark.parametrize("runtime", ["claude", "codex"])
def test_a_file_install_created_is_gone_after_uninstall(runtime, codex_home):
    path, install, uninstall = installers(codex_home)[runtime]
    assert not path.exists()
    install(path)
    assert path.exists()
    uninstall(path)
    assert not path.exists()


@pytest.mark.parametrize("runtime", ["claude", "gemini", "codex"])
def test_a_project_folder_install_made_goes_with_its_file_and_one_the_user_had_stays(runtime, tmp_path, codex_home):
    from hookgate_gemini import install as gemini

    module = {"claude": claude, "gemini": gemini, "codex": codex}[runtime]
    project = tmp_path / "project"
    project.mkdir()
    path = project / f".{runtime}" / ("hooks.json" if runtime == "codex" else "settings.json")
    module.install(path, COMMAND)
    module.uninstall(path)
    # the project as it was: no empty .claude/, .gemini/ or .codex/ (whose config.toml install
    # also wrote) left
    assert list(project.iterdir()) == []
    (path.parent).mkdir()
    (path.parent / "agents.md").write_text("the user's\n")
    module.install(path, COMMAND)
    module.uninstall(path)
    assert sorted(p.name for p in path.parent.iterdir()) == ["agents.md"]


EDITS = [
    # (what the user did while hookgate was installed, as a text replacement in the file)
    ("odd-indent-key-order.json", '"model":  "opus"', '"model":  "sonnet"'),
    ("odd-indent-key-order.json", '"env": {"A": "1"}', '"env": {"A": "1", "B": "2"}'),
    ("crlf.json", '"theme": "dark",\r\n', '"theme": "dark",\r\n    "verbose": true,\r\n'),
    ("one-line.json", '"model":"opus"', '"model":"haiku","effort":"high"'),
    ("tabs.json", '"command": "echo hi"', '"command": "echo hello"'),
]


@pytest.mark.parametrize("runtime", ["claude", "codex"])
@pytest.mark.parametrize("name, before, after", EDITS)
def test_the_users_edits_made_meanwhile_survive_uninstall(name, before, after, runtime, codex_home):
    path, install, uninstall = installers(codex_home)[runtime]
    path.parent.mkdir(parents=True, exist_ok=True)
    original = (CORPUS / "hooks-json" / name).read_bytes().decode()
    assert original.count(before) == 1
    path.write_bytes(original.encode())
    install(path)
    installed = path.read_bytes().decode()
    assert installed.count(before) == 1
    path.write_bytes(installed.replace(before, after).encode())
    uninstall(path)
    assert path.read_bytes() == original.replace(before, after).encode()


@pytest.mark.parametrize("runtime", ["claude", "codex"])
def test_a_hook_the_user_added_beside_hookgates_survives_uninstall(runtime, codex_home):
    path, install, uninstall = installers(codex_home)[runtime]
    path.parent.mkdir(parents=True, exist_ok=True)
    original = (CORPUS / "hooks-json" / "odd-indent-key-order.json").read_bytes()
    path.write_bytes(original)
    install(path)
    document = json.loads(path.read_bytes())
    mine = {"matcher": "Write", "hooks": [{"type": "command", "command": "./format.sh"}]}
    document["hooks"]["PreToolUse"].append(mine)  # after hookgate's group
    document["hooks"]["PreToolUse"][-2]["hooks"].append({"type": "command", "command": "./audit.sh"})  # into it
    path.write_text(json.dumps(document, indent=3))
    uninstall(path)
    left = json.loads(path.read_bytes())
    assert left["hooks"]["PreToolUse"] == [json.loads(original)["hooks"]["PreToolUse"][0],
                                           {"matcher": "*", "hooks": [{"type": "command", "command": "./audit.sh"}]},
                                           mine]
    assert not ours_in(path, runtime)


@pytest.mark.parametrize("corpus", TOML_FILES, ids=lambda p: p.name)
def test_codex_config_toml_gives_back_the_very_bytes(corpus, codex_home):
    config = codex_home / "config.toml"
    original = corpus.read_bytes()
    config.write_bytes(original)
    hooks = codex_home / "hooks.json"
    codex.install(hooks, COMMAND)
    edited = tomllib.loads(config.read_text())
    assert edited["features"]["hooks"] is True and len(edited["hooks"]["state"]) == len(lifecycle.for_runtime("codex"))
    plugin_trust.install(config, COMMAND)
    codex.uninstall(hooks)
    plugin_trust.uninstall(config)
    assert config.read_bytes() == original and not hooks.exists()


def test_a_project_install_of_codex_restores_both_config_files(tmp_path, codex_home):
    project = tmp_path / "app"
    (project / ".codex").mkdir(parents=True)
    user_original = (CORPUS / "config-toml" / "crlf-comments.toml").read_bytes()
    project_original = (CORPUS / "config-toml" / "no-final-newline.toml").read_bytes()
    hooks_original = (CORPUS / "hooks-json" / "crlf.json").read_bytes()
    (codex_home / "config.toml").write_bytes(user_original)
    (project / ".codex" / "config.toml").write_bytes(project_original)
    (project / ".codex" / "hooks.json").write_bytes(hooks_original)
    path = codex.config_path(project)
    codex.install(path, COMMAND)
    codex.uninstall(path)
    assert (codex_home / "config.toml").read_bytes() == user_original
    assert (project / ".codex" / "config.toml").read_bytes() == project_original
    assert path.read_bytes() == hooks_original


def test_opencode_uninstall_leaves_the_users_config_and_plugins_as_they_were(tmp_path, monkeypatch):
    """OpenCode's registration is a file of hookgate's own; opencode.json(c) is never opened."""
    monkeypatch.setattr(opencode, "plugin_dir", lambda: tmp_path / "plugin-pkg")
    (tmp_path / "plugin-pkg").mkdir()
    (tmp_path / "plugin-pkg" / "index.js").write_text("export const HookgatePlugin = async () => ({})\n")
    project = tmp_path / "app"
    (project / ".opencode" / "plugin").mkdir(parents=True)
    jsonc = b'{\r\n  // my model\r\n  "model": "x/y", /* trailing */\r\n  "plugin": ["other",],\r\n}'
    (project / "opencode.jsonc").write_bytes(jsonc)
    (project / ".opencode" / "plugin" / "mine.js").write_bytes(b"export const Mine = async () => ({})")
    before = {p: p.read_bytes() for p in project.rglob("*") if p.is_file()}
    path = opencode.config_path(project)
    opencode.install(path, COMMAND)
    assert path.exists()
    opencode.uninstall(path)
    assert {p: p.read_bytes() for p in project.rglob("*") if p.is_file()} == before
