"""`hookgate install|uninstall opencode`: one plugin file that names this hookgate by absolute path;
the user's files are never touched, and uninstall removes exactly what install added."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from support import HOOKGATE
from wheel_support import installed_wheel
from hookgate_opencode import install as opencode


def cli(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([HOOKGATE, *args], cwd=cwd, capture_output=True, text=True, env=env)


def test_install_writes_one_plugin_file_naming_this_hookgate(tmp_path: Path):
    done = cli("install", "opencode", "--project", str(tmp_path), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    plugin = tmp_path / ".opencode" / "plugin" / "hookgate.js"
    text = plugin.read_text()
    assert text.startswith(opencode.MARKER)
    command = json.loads(re.search(r"command: (\[.*?\])", text).group(1))
    assert command == [HOOKGATE, "serve", "--stdio"]
    entry = re.search(r'from "(file://[^"]+)"', text).group(1)
    assert Path(entry.removeprefix("file://")).is_file()
    again = cli("install", "opencode", "--project", str(tmp_path), cwd=tmp_path)
    assert "already up to date" in again.stdout and plugin.read_text() == text


def test_the_generated_file_loads_as_an_opencode_plugin_module(tmp_path: Path):
    assert cli("install", "opencode", "--project", str(tmp_path), cwd=tmp_path).returncode == 0
    plugin = tmp_path / ".opencode" / "plugin" / "hookgate.js"
    probe = (f"import({json.dumps(plugin.as_uri())}).then(m => console.log(JSON.stringify("
             "Object.entries(m).map(([k, v]) => [k, typeof v]))))")
    done = subprocess.run(["node", "--input-type=module", "-e", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [["Hookgate", "function"]]  # every export must be a plugin


def test_other_plugins_and_the_users_config_are_left_alone(tmp_path: Path):
    plugins = tmp_path / ".opencode" / "plugins"  # the user's folder is the plural one
    plugins.mkdir(parents=True)
    (plugins / "mine.js").write_text("export const Mine = async () => ({})\n")
    config = tmp_path / "opencode.jsonc"
    config.write_text('{\n  // my comment\n  "model": "x/y"\n}\n')
    assert cli("install", "opencode", "--project", str(tmp_path), cwd=tmp_path).returncode == 0
    assert (plugins / "hookgate.js").is_file() and not (tmp_path / ".opencode" / "plugin").exists()
    assert cli("uninstall", "opencode", "--project", str(tmp_path), cwd=tmp_path).returncode == 0
    assert sorted(p.name for p in plugins.iterdir()) == ["mine.js"]
    assert config.read_text() == '{\n  // my comment\n  "model": "x/y"\n}\n'


def test_uninstall_removes_exactly_what_install_added(tmp_path: Path):
    assert cli("install", "opencode", "--project", str(tmp_path), cwd=tmp_path).returncode == 0
    assert cli("uninstall", "opencode", "--project", str(tmp_path), cwd=tmp_path).returncode == 0
    assert list(tmp_path.iterdir()) == []
    done = cli("uninstall", "opencode", "--project", str(tmp_path), cwd=tmp_path)
    assert done.returncode == 0 and "does not exist (nothing removed)" in done.stdout


def test_a_file_hookgate_did_not_write_is_never_overwritten_or_removed(tmp_path: Path):
    plugin = tmp_path / ".opencode" / "plugin" / "hookgate.js"
    plugin.parent.mkdir(parents=True)
    plugin.write_text("export const Theirs = async () => ({})\n")
    for action in ("install", "uninstall"):
        done = cli(action, "opencode", "--project", str(tmp_path), cwd=tmp_path)
        assert done.returncode == 1 and "was not written by hookgate" in done.stderr
    assert plugin.read_text() == "export const Theirs = async () => ({})\n"


def test_user_install_goes_to_the_opencode_config_dir(tmp_path: Path):
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    assert cli("install", "opencode", "--user", cwd=tmp_path, env=env).returncode == 0
    assert opencode.installed(tmp_path / "cfg" / "opencode" / "plugin" / "hookgate.js")


def test_a_regular_install_ships_the_plugin_and_registers_its_copy(tmp_path: Path):
    """What a user gets from `pip install .`: the plugin files installed with hookgate."""
    hookgate = installed_wheel(tmp_path)
    venv = hookgate.parents[1]
    project = tmp_path / "project"
    project.mkdir()
    done = subprocess.run([str(hookgate), "install", "opencode", "--project", str(project)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    text = (project / ".opencode" / "plugin" / "hookgate.js").read_text()
    shipped = venv / "share" / "hookgate" / "opencode-plugin"
    assert f'from "{(shipped / "index.js").as_uri()}"' in text
    assert str(venv / "bin" / "hookgate") in text
    checkout_lib = Path(__file__).resolve().parents[1] / "adapters" / "opencode-plugin" / "lib"
    assert {p.name for p in (shipped / "lib").iterdir()} == {p.name for p in checkout_lib.glob("*.js")}
    assert {p.name for p in (shipped / "types" / "lib").iterdir()} == {p.name for p in checkout_lib.parent.glob("types/lib/*.d.ts")}
    # the registration works as OpenCode loads it: every module the shipped copy imports is there,
    # and the wheel's own hookgate decides
    (project / ".hookgate").mkdir()
    (project / ".hookgate" / "current_role").write_text("build\n")
    registration = (project / ".opencode" / "plugin" / "hookgate.js").as_uri()
    probe = (f"const {{ Hookgate }} = await import({json.dumps(registration)});"
             f"const hooks = await Hookgate({{ client: {{}}, directory: {json.dumps(str(project))} }});"
             "const call = (file) => hooks['tool.execute.before']({ tool: 'write', sessionID: 's', callID: 'c' },"
             " { args: { filePath: file, content: '' } }).then(() => 'allowed', (e) => e.message);"
             f"console.log(JSON.stringify([await call({json.dumps(str(project / 'src' / 'p.gd'))}),"
             f" await call({json.dumps(str(project / 'notes.txt'))})]));"
             "await hooks.dispose()")
    ran = subprocess.run(["node", "--input-type=module", "-e", probe], capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stderr
    refused, allowed = json.loads(ran.stdout)
    assert "Build role cannot write game code directly (p.gd)" in refused and allowed == "allowed"
