"""The runtime plugins (Claude Code and Codex; Gemini CLI's extension) are generated from the lifecycle matrix with zero
drift, register exactly what `hookgate install` registers, and their commands, run by a real sh,
call the hookgate on PATH, or refuse the gating events with a reason when there is none."""

from __future__ import annotations

import json
import os
import shlex
import stat
import subprocess
import tomllib
from pathlib import Path

import pytest

from hookgate import __version__, lifecycle
from hookgate.installers import plugin_hooks
from hookgate_claude import plugin as claude_plugin
from hookgate_claude import install as claude_settings
from hookgate_codex import plugin as codex_plugin
from hookgate_codex import install as codex_registration, plugin_trust, trust
from hookgate_gemini import extension as gemini_extension, install as gemini_settings
from support import HOOKGATE, handler_argv

ROOT = Path(__file__).resolve().parents[1]
PLUGINS = {"claude": (claude_plugin, claude_settings), "codex": (codex_plugin, codex_registration),
           "gemini": (gemini_extension, gemini_settings)}
GATING = lifecycle.fail_closed_events()
# a runtime whose hooks name the event and the tool in its own words
NATIVE_WRITE = {"gemini": {"hook_event_name": "BeforeTool", "tool_name": "write_file"}}


@pytest.mark.parametrize("runtime", sorted(PLUGINS))
def test_the_plugin_files_are_generated_from_the_matrix(runtime):
    module, _ = PLUGINS[runtime]
    for relative, text in module.files().items():
        path = ROOT / relative
        assert path.is_file() and path.read_text() == text, \
            f"{relative} drifted: regenerate with python -m {module.__name__}"


@pytest.mark.parametrize("runtime", sorted(PLUGINS))
def test_the_plugin_registers_what_install_registers(runtime):
    module, installer = PLUGINS[runtime]
    installed = installer.registrations("hookgate")
    shipped = module.hooks()["hooks"]
    assert list(shipped) == [r.on(runtime) for r in lifecycle.for_runtime(runtime)] == list(installed)
    for entry in lifecycle.for_runtime(runtime):  # the runtime's name for the hook, the canonical event
        groups, event = shipped[entry.on(runtime)], entry.event
        (group,), (theirs,) = groups, installed[entry.on(runtime)]
        (handler,), (their_handler,) = group["hooks"], theirs["hooks"]
        assert {k: v for k, v in group.items() if k != "hooks"} == {k: v for k, v in theirs.items() if k != "hooks"}
        assert {k: v for k, v in handler.items() if k not in ("command", "args")} == \
            {k: v for k, v in their_handler.items() if k not in ("command", "args")}
        # what it runs is the command line the tests below run through a shell; Claude Code's
        # handlers are in exec form, as install writes them: sh, its script an argument
        argv = handler_argv(handler)
        assert f'"$@" hook {runtime} --event {event}' in argv[-1]
        assert argv == (shlex.split(module.hook_command(event)) if runtime == "claude"
                        else ["sh", "-c", module.hook_command(event)])
        assert ("args" in handler) == ("args" in their_handler) == (runtime == "claude")


def test_the_manifests_carry_this_version_and_point_at_the_plugin_folders():
    claude_market = json.loads((ROOT / ".claude-plugin" / "marketplace.json").read_text())
    (entry,) = claude_market["plugins"]
    assert (ROOT / entry["source"] / ".claude-plugin" / "plugin.json").is_file() and entry["version"] == __version__
    codex_market = json.loads((ROOT / ".agents" / "plugins" / "marketplace.json").read_text())
    (entry,) = codex_market["plugins"]
    manifest = json.loads((ROOT / entry["source"]["path"] / ".codex-plugin" / "plugin.json").read_text())
    assert manifest["version"] == __version__ and manifest["hooks"] == "./hooks/hooks.json"


# -- the commands, run ---------------------------------------------------------------------------

def fake_hookgate(bin_dir: Path, exit_code: int = 0) -> Path:
    """A `hookgate` that records its argv and stdin, answers `{}` and exits with `exit_code`."""
    bin_dir.mkdir()
    log = bin_dir / "calls"
    script = bin_dir / "hookgate"
    script.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> {log}\ncat >> {log}\necho "{{}}"\nexit {exit_code}\n')
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return log


def run(command: str, path: str, payload: str = '{"hook_event_name": "x"}') -> subprocess.CompletedProcess[str]:
    # the runtimes start a command through a shell, Codex through the user's login shell
    return subprocess.run(["bash", "-c", command], input=payload, env={"PATH": path}, capture_output=True,
                          text=True, timeout=30)


def system_path() -> str:
    return os.pathsep.join(d for d in ("/usr/bin", "/bin") if not os.access(os.path.join(d, "hookgate"), os.X_OK))


CASES = [(runtime, r.event) for runtime in sorted(PLUGINS) for r in lifecycle.for_runtime(runtime)]


@pytest.mark.parametrize("runtime, event", CASES)
def test_with_hookgate_on_path_the_command_is_that_hookgate(runtime, event, tmp_path):
    log = fake_hookgate(tmp_path / "bin")
    done = run(PLUGINS[runtime][0].hook_command(event), f"{tmp_path / 'bin'}{os.pathsep}{system_path()}")
    assert (done.returncode, done.stdout, done.stderr) == (0, "{}\n", "")
    assert log.read_text() == f'hook {runtime} --event {event}\n{{"hook_event_name": "x"}}'


def fake_python(folder: Path) -> tuple[Path, Path]:
    """An interpreter that records the arguments it was started with and its stdin, and answers `{}`."""
    folder.mkdir()
    log, python = folder / "calls", folder / "python3.11"
    python.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> {log}\ncat >> {log}\necho "{{}}"\n')
    python.chmod(0o755)
    return python, log


def launcher(bin_dir: Path, first_line: str, second_line: str = plugin_hooks.LAUNCHER_MARK + ": as installed") -> Path:
    bin_dir.mkdir(parents=True, exist_ok=True)
    script = bin_dir / "hookgate"
    script.write_text(f"{first_line}\n{second_line}\n")
    script.chmod(0o755)
    return script


@pytest.mark.parametrize("runtime, event", CASES)
def test_hookgates_own_launcher_is_started_without_site(runtime, event, tmp_path):
    """As `hookgate install` registers it: its interpreter without site and without the working
    directory on sys.path, with the statements that put its install's folder there (the folder
    above the launcher's bin/) and call the hook command, instead of the script."""
    python, log = fake_python(tmp_path / "py")
    launcher(tmp_path / "bin", f"#!{python}")
    done = run(PLUGINS[runtime][0].hook_command(event), f"{tmp_path / 'bin'}{os.pathsep}{system_path()}")
    assert (done.returncode, done.stdout, done.stderr) == (0, "{}\n", "")
    siteless = f"-S -P -c {plugin_hooks.SITELESS} {tmp_path}"
    assert log.read_text() == f'{siteless} hook {runtime} --event {event}\n{{"hook_event_name": "x"}}'


@pytest.mark.parametrize("runtime", sorted(PLUGINS))
def test_a_link_to_the_launcher_is_started_as_the_script(runtime, tmp_path):
    """pipx puts a link to the launcher on PATH: its install is beside the link's target, which
    the launcher itself finds (core/bin/hookgate follows the link)."""
    python, log = fake_python(tmp_path / "py")
    script = launcher(tmp_path / "venv" / "bin", f"#!{python}")
    link = tmp_path / "links" / "hookgate"
    link.parent.mkdir()
    link.symlink_to(script)
    done = run(PLUGINS[runtime][0].hook_command("PreToolUse"), f"{link.parent}{os.pathsep}{system_path()}")
    assert (done.returncode, done.stdout, done.stderr) == (0, "{}\n", "")
    assert log.read_text() == f'-S {link} hook {runtime} --event PreToolUse\n{{"hook_event_name": "x"}}'


@pytest.mark.parametrize("first, second", [
    ("#!/bin/sh", plugin_hooks.LAUNCHER_MARK),  # not a python
    ("#!/usr/bin/env sh", plugin_hooks.LAUNCHER_MARK),  # an interpreter with an argument
    ("#!PYTHON -E", plugin_hooks.LAUNCHER_MARK),  # a python with an argument of its own
    ("#!PYTHON", "# another program's script"),  # a python, but not hookgate's launcher
    ("#!PYTHON", ""),
], ids=["sh", "env", "python-with-argument", "unmarked", "one-line"])
@pytest.mark.parametrize("runtime", sorted(PLUGINS))
def test_anything_else_named_hookgate_is_run_as_it_is(runtime, first, second, tmp_path):
    python, log = fake_python(tmp_path / "py")
    body = "" if first.startswith("#!PYTHON") else f'printf "%s\\n" "$*" >> {log}; cat >> {log}; echo "{{}}"'
    script = launcher(tmp_path / "bin", first.replace("PYTHON", str(python)), f"{second}\n{body}")
    done = run(PLUGINS[runtime][0].hook_command("PreToolUse"), f"{tmp_path / 'bin'}{os.pathsep}{system_path()}")
    assert (done.returncode, done.stdout) == (0, "{}\n"), done.stderr
    called = log.read_text().splitlines()[0]
    assert "-S" not in called and called.endswith(f"hook {runtime} --event PreToolUse"), called
    assert (str(script) in called) == first.startswith("#!PYTHON")  # the kernel ran the script


def test_the_first_hookgate_on_path_is_the_one_started(tmp_path):
    """As `command -v` finds it: a folder without one, a folder named hookgate and an empty entry
    (the working directory, here without one) are passed over; a later launcher is not taken."""
    python, log = fake_python(tmp_path / "py")
    (tmp_path / "empty").mkdir()
    (tmp_path / "dir" / "hookgate").mkdir(parents=True)
    first = launcher(tmp_path / "first", f"#!{python}")
    launcher(tmp_path / "second", f"#!{python}")
    path = os.pathsep.join([str(tmp_path / "empty"), "", str(tmp_path / "dir"), str(tmp_path / "first"),
                            str(tmp_path / "second"), system_path()])
    done = subprocess.run(["bash", "-c", claude_plugin.hook_command("PreToolUse")], input="{}", env={"PATH": path},
                          capture_output=True, text=True, timeout=30, cwd=tmp_path / "empty")
    assert done.returncode == 0, done.stderr
    assert log.read_text() == f"-S -P -c {plugin_hooks.SITELESS} {first.parent.parent} hook claude --event PreToolUse\n{{}}"


@pytest.mark.parametrize("runtime, event", CASES)
def test_without_hookgate_the_gating_events_are_refused_and_the_start_says_so(runtime, event):
    done = run(PLUGINS[runtime][0].hook_command(event), system_path())
    if event in GATING:
        assert done.returncode == 2 and done.stdout == ""
        assert done.stderr == plugin_hooks.missing_message(event, True) + "\n"
        assert "not installed or not on PATH" in done.stderr and "pip install . in a hookgate checkout" in done.stderr
    elif event == "SessionStart":
        answer = json.loads(done.stdout)
        message = plugin_hooks.missing_message(event, False)
        assert done.returncode == 0 and answer == {
            "systemMessage": message, "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": message}}
    else:
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


@pytest.mark.parametrize("exit_code", [1, 127, 137])
@pytest.mark.parametrize("event", sorted(GATING))
@pytest.mark.parametrize("plugin", [codex_plugin, gemini_extension], ids=["codex", "gemini"])
def test_a_hookgate_that_crashes_under_codex_is_a_refusal(plugin, event, exit_code, tmp_path):
    """Codex lets an action go ahead when its hook fails, Gemini CLI when it exits 1; Claude Code
    has onFailure for that."""
    fake_hookgate(tmp_path / "bin", exit_code)
    done = run(plugin.hook_command(event), f"{tmp_path / 'bin'}{os.pathsep}{system_path()}")
    assert done.returncode == 2 and f"hookgate could not run (exit {exit_code}): {event} is refused" in done.stderr
    assert all(h["hooks"][0].get("onFailure") == "block" for e, h in
               ((e, g[0]) for e, g in claude_plugin.hooks()["hooks"].items()) if e in GATING)


@pytest.mark.parametrize("runtime", sorted(PLUGINS))
def test_the_real_hookgate_answers_through_the_plugin_command(runtime, tmp_path):
    """The command with this checkout's hookgate on PATH, on a real payload: a refused write."""
    (tmp_path / ".hookgate").mkdir()
    (tmp_path / ".hookgate" / "current_role").write_text("build\n")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "hookgate").symlink_to(HOOKGATE)
    payload = {"session_id": "s1", "cwd": str(tmp_path), "hook_event_name": "PreToolUse", "tool_name": "Write",
               "tool_input": {"file_path": str(tmp_path / "src" / "player.gd"), "content": "x"},
               "transcript_path": "", "permission_mode": "default", "tool_use_id": "t1"}
    payload.update(NATIVE_WRITE.get(runtime, {}))
    env = {"PATH": f"{bin_dir}{os.pathsep}{system_path()}", "HOME": str(tmp_path), "HOOKGATE_WARM": "off"}
    done = subprocess.run(["bash", "-c", PLUGINS[runtime][0].hook_command("PreToolUse")], input=json.dumps(payload),
                          env=env, capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert "Build role cannot write game code directly (player.gd)" in done.stdout + done.stderr, done


# -- Codex: the review of the plugin's hooks -----------------------------------------------------

def test_the_recorded_review_covers_every_shipped_handler_and_uninstall_takes_it_back(tmp_path):
    config = tmp_path / "config.toml"
    original = b'# mine\r\nmodel = "x"\r\n\r\n[hooks.state."other:pre_tool_use:0:0"]\r\ntrusted_hash = "sha256:00"'
    config.write_bytes(original)
    assert plugin_trust.install(config, "hookgate") is True
    assert plugin_trust.install(config, "hookgate") is False  # idempotent
    state = tomllib.loads(config.read_text())["hooks"]["state"]
    hooks = codex_plugin.hooks()["hooks"]
    expected = {f"hookgate@hookgate:hooks/hooks.json:{trust.EVENT_LABELS[e]}:{g}:{h}": trust.hook_hash(e, group, handler)
                for e, g, h, group, handler in trust.command_handlers(hooks)}
    assert len(expected) == len(lifecycle.for_runtime("codex"))
    assert {k: v["trusted_hash"] for k, v in state.items() if k.startswith("hookgate@")} == expected
    assert state["other:pre_tool_use:0:0"] == {"trusted_hash": "sha256:00"}
    assert plugin_trust.uninstall(config) is True
    assert config.read_bytes() == original


def test_install_codex_plugin_from_the_command_line(tmp_path):
    env = {**os.environ, "CODEX_HOME": str(tmp_path / "codex")}
    done = subprocess.run([HOOKGATE, "install", "codex", "--plugin"], env=env, capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0 and "hooks of the hookgate@hookgate plugin" in done.stdout, done.stderr
    assert "trusted_hash" in (tmp_path / "codex" / "config.toml").read_text()
    done = subprocess.run([HOOKGATE, "uninstall", "codex", "--plugin"], env=env, capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0 and not (tmp_path / "codex" / "config.toml").exists()
    refused = subprocess.run([HOOKGATE, "install", "claude", "--plugin"], env=env, capture_output=True, text=True, cwd=tmp_path)
    assert refused.returncode == 2 and "needs nothing from hookgate install" in refused.stderr


# -- doctor --------------------------------------------------------------------------------------

def doctor(project: Path, env: dict[str, str], name: str) -> list:
    from hookgate.cli.doctor import Setup, run

    target = {"claude plugin": "hookgate_claude.plugin:doctor_check",
              "codex plugin": "hookgate_codex.plugin_trust:doctor_check"}[name]
    return [finding for _, finding in run(Setup(project=project, env=env), [(name, target)])]


def test_doctor_on_the_claude_plugin(tmp_path, monkeypatch):
    home = tmp_path / "claude-home"
    home.mkdir()
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home))
    project = tmp_path / "app"
    project.mkdir()
    bin_dir = tmp_path / "bin"
    fake_hookgate(bin_dir)
    with_path = {"PATH": f"{bin_dir}{os.pathsep}{system_path()}"}
    assert [f.status for f in doctor(project, with_path, "claude plugin")] == ["info"]
    (home / "settings.json").write_text(json.dumps({"enabledPlugins": {"hookgate@hookgate": True}}))
    (ok,) = doctor(project, with_path, "claude plugin")
    assert ok.status == "ok" and str(bin_dir / "hookgate") in ok.message
    (missing,) = doctor(project, {"PATH": system_path()}, "claude plugin")
    assert missing.status == "fail" and "no hookgate on PATH" in missing.message
    claude_settings.install(claude_settings.config_path(project), "hookgate")
    twice = doctor(project, with_path, "claude plugin")[-1]
    assert twice.status == "fail" and "decided twice" in twice.message and "claude plugin uninstall" in twice.fix
    # a project's settings.local.json that turns it off wins
    (project / ".claude" / "settings.local.json").write_text(json.dumps({"enabledPlugins": {"hookgate@hookgate": False}}))
    assert [f.status for f in doctor(project, with_path, "claude plugin")] == ["info"]


def test_doctor_on_the_codex_plugin_and_its_review(tmp_path):
    codex_home = tmp_path / "codex-home"
    codex_home.mkdir()
    config = codex_home / "config.toml"
    config.write_text('[plugins."hookgate@hookgate"]\nenabled = true\n')
    bin_dir = tmp_path / "bin"
    fake_hookgate(bin_dir)
    env = {"PATH": f"{bin_dir}{os.pathsep}{system_path()}", "CODEX_HOME": str(codex_home)}
    unreviewed, ok = doctor(tmp_path, env, "codex plugin")
    assert unreviewed.status == "fail" and "not reviewed" in unreviewed.message
    assert unreviewed.fix.startswith("hookgate install codex --plugin") and ok.status == "ok"
    plugin_trust.install(config, "hookgate")
    assert [f.status for f in doctor(tmp_path, env, "codex plugin")] == ["ok"]
    config.write_text(config.read_text().replace("sha256:", "sha256:0", 1))  # a stale review of one hook
    assert doctor(tmp_path, env, "codex plugin")[0].status == "fail"
