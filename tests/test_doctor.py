import json
import os
import subprocess

import pytest

from support import HOOKGATE
from hookgate.cli.doctor import Finding, Setup, report, run
from hookgate_claude import install as settings
from hookgate_codex import install as registration


@pytest.fixture
def env(tmp_path, monkeypatch):
    """A throwaway home for every runtime, in the checks' environment and in this process's."""
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "CODEX_HOME": str(home / ".codex"),
           "CLAUDE_CONFIG_DIR": str(home / ".claude"), "SHELL": "/bin/sh"}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return env


@pytest.fixture
def project(tmp_path):
    work = tmp_path / "work"
    (work / ".hookgate").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    return work


def doctor(project, env):
    return subprocess.run([HOOKGATE, "doctor", "--project", str(project)], capture_output=True, text=True, env=env,
                          cwd=project)


def hookgate(*args, project, env):
    return subprocess.run([HOOKGATE, *args], capture_output=True, text=True, env=env, cwd=project, check=True)


def findings(project, env):
    return [(name, f.status, f.message, f.fix) for name, f in run(Setup(project=project, env=env))]


def failures(project, env):
    return [(name, message, fix) for name, status, message, fix in findings(project, env) if status == "fail"]


def trust_project(env, project):
    with open(os.path.join(env["CODEX_HOME"], "config.toml"), "a") as config:
        config.write(f'\n[projects."{project}"]\ntrust_level = "trusted"\n')


def test_a_fresh_project_is_healthy_and_says_how_to_install(project, env):
    done = doctor(project, env)
    assert done.returncode == 0, done.stdout
    assert "no problems found" in done.stdout
    assert f"run: hookgate install claude --project {project}" in done.stdout
    assert f"run: hookgate install codex --project {project}" in done.stdout


def test_an_untrusted_codex_project_is_found_with_the_command_that_trusts_it(project, env):
    hookgate("install", "codex", "--project", str(project), project=project, env=env)
    ((name, message, fix),) = failures(project, env)
    assert name == "codex trust" and "has never been trusted" in message and str(project / ".codex") in message
    assert f"codex exec --trust --skip-git-repo-check -C {project} 'ok'" in fix
    trust_project(env, project)
    assert failures(project, env) == []
    done = doctor(project, env)
    assert done.returncode == 0 and "all 12 hookgate hooks in" in done.stdout


def test_an_explicitly_untrusted_project_is_named_so(project, env):
    hookgate("install", "codex", "--project", str(project), project=project, env=env)
    with open(os.path.join(env["CODEX_HOME"], "config.toml"), "a") as config:
        config.write(f'\n[projects."{project}"]\ntrust_level = "untrusted"\n')
    ((_, message, _),) = failures(project, env)
    assert "is marked untrusted" in message


def test_a_hook_edited_after_install_is_untrusted_again_and_reinstall_fixes_it(project, env):
    hookgate("install", "codex", "--user", project=project, env=env)
    hooks_path = registration.config_path(None, env)
    data = json.loads(hooks_path.read_text())
    data["hooks"]["Stop"][0]["hooks"][0]["timeout"] = 99  # any edit needs trust again
    hooks_path.write_text(json.dumps(data))
    found = {name: (message, fix) for name, message, fix in failures(project, env)}
    assert set(found) == {"codex hooks", "codex trust"}
    assert "the registration of Stop differs from the lifecycle matrix" in found["codex hooks"][0]
    message, fix = found["codex trust"]
    assert "1 of hookgate's 12 hooks" in message and "changed since they were trusted: Stop" in message
    assert fix == found["codex hooks"][1] == "hookgate install codex --user"
    hookgate(*fix.split()[1:], project=project, env=env)
    assert failures(project, env) == []


def test_untrusted_and_disabled_hooks(project, env):
    hookgate("install", "codex", "--user", project=project, env=env)
    config = registration.trust.user_config(env)
    text = config.read_text()
    key = registration.trust.hook_key(registration.config_path(None, env), "PreToolUse", 0, 0)
    start = text.index(f'[hooks.state."{key}"]')
    end = text.index("\n[", start + 1)
    config.write_text(text[:start] + f'[hooks.state."{key}"]\nenabled = false\n' + text[end:])
    problems = failures(project, env)
    assert [m for _, m, _ in problems] == [f"1 of hookgate's 12 hooks in {registration.config_path(None, env)} are "
                                          "disabled (in Codex's /hooks): PreToolUse; Codex skips them without a word"]
    assert "delete `enabled = false`" in problems[0][2]
    config.write_text(text[:start] + text[end:])
    ((_, message, fix),) = failures(project, env)
    assert "are not trusted: PreToolUse" in message and fix == "hookgate install codex --user"


def test_hooks_turned_off_are_found_with_the_exact_edit(project, env):
    hookgate("install", "codex", "--user", project=project, env=env)
    config = registration.trust.user_config(env)
    config.write_text(config.read_text().replace("hooks = true  # hookgate", "hooks = false"))
    ((name, message, fix),) = failures(project, env)
    assert name == "codex feature" and "hooks are turned off" in message
    assert fix == f"set `hooks = true` under [features] in {config}"


def test_a_moved_hookgate_is_found(project, env, tmp_path):
    gone = tmp_path / "old-venv" / "bin" / "hookgate"
    registration.install(registration.config_path(project, env), str(gone), env)
    trust_project(env, project)
    ((name, message, fix),) = failures(project, env)
    assert name == "codex hooks" and f"start {gone}, which does not exist" in message
    assert fix == f"hookgate install codex --project {project}"


def test_a_login_shell_that_prints_is_found(project, env, tmp_path):
    hookgate("install", "codex", "--user", project=project, env=env)
    noisy = tmp_path / "noisy-shell"
    noisy.write_text('#!/bin/sh\necho "Welcome back!"\nexec /bin/sh "$@"\n')
    noisy.chmod(0o755)
    ((name, message, fix),) = failures(project, {**env, "SHELL": str(noisy)})
    assert name == "codex shell" and "'Welcome back!'" in message and "[ -t 1 ]" in fix


def test_claude_registrations(project, env):
    hookgate("install", "claude", "--project", str(project), project=project, env=env)
    assert ("claude", "ok") in [(n, s) for n, s, _, _ in findings(project, env)]
    settings = project / ".claude" / "settings.json"
    data = json.loads(settings.read_text())
    del data["hooks"]["PreToolUse"]
    settings.write_text(json.dumps(data))
    ((name, message, fix),) = failures(project, env)
    assert name == "claude" and "no hookgate hook for PreToolUse" in message
    assert fix == f"hookgate install claude --project {project}"


def test_an_invalid_config_is_named(project, env):
    (project / ".hookgate" / "config.toml").write_text("[gates.check_file_permissions]\nfail_mod = 'open'\n")
    ((name, message, fix),) = failures(project, env)
    assert name == "config" and "unknown field `fail_mod` - at `$.gates.check_file_permissions`" in message
    assert fix == f"edit {project / '.hookgate' / 'config.toml'}"
    assert doctor(project, env).returncode == 1


def test_a_check_that_crashes_is_reported_and_the_others_still_run(project, env):
    def boom(setup):
        raise RuntimeError("no disk")

    import sys
    module = type(sys)("doctor_test_checks")
    module.boom = boom
    module.fine = lambda setup: [Finding("ok", "fine")]
    sys.modules["doctor_test_checks"] = module
    try:
        results = run(Setup(project, env), (("boom", "doctor_test_checks:boom"), ("fine", "doctor_test_checks:fine")))
    finally:
        del sys.modules["doctor_test_checks"]
    assert [(n, f.status) for n, f in results] == [("boom", "fail"), ("fine", "ok")]
    assert "the check itself failed: RuntimeError: no disk" in results[0][1].message
    text = report(results)
    assert "FAIL  boom" in text and "ok    fine" in text


def test_the_interpreter_and_node_are_reported(project, env):
    found = {(name, status) for name, status, *_ in findings(project, env)}
    assert ("python", "ok") in found and ("node", "ok") in found
    no_node = {**env, "PATH": "/nonexistent"}
    (node,) = [f for name, f in run(Setup(project=project, env=no_node), [("node", "hookgate.checks:check_node")])]
    assert node.status == "info" and "Node.js is not on PATH" in node.message


def test_an_opencode_registration_is_checked_against_what_it_starts(project, env):
    hookgate("install", "opencode", "--project", str(project), project=project, env=env)
    assert [(s, m.endswith(HOOKGATE)) for name, s, m, _ in findings(project, env) if name == "opencode"] == [("ok", True)]
    plugin_file = project / ".opencode" / "plugin" / "hookgate.js"
    plugin_file.write_text(plugin_file.read_text().replace(json.dumps(HOOKGATE), json.dumps("/moved/venv/bin/hookgate")))
    ((name, message, fix),) = failures(project, env)
    assert name == "opencode" and "/moved/venv/bin/hookgate, which does not exist" in message
    assert fix == f"hookgate install opencode --project {project}"
    hookgate(*fix.split()[1:], project=project, env=env)
    assert failures(project, env) == []
    plugin_file.write_text("export const Mine = async () => ({})\n")
    ((name, message, _),) = failures(project, env)
    assert name == "opencode" and "was not written by hookgate" in message


def test_hookgate_registered_twice_for_a_runtime_is_found(project, env, tmp_path):
    other = tmp_path / "other-venv" / "bin" / "hookgate"  # a second install, say an older venv
    other.parent.mkdir(parents=True)
    other.symlink_to(HOOKGATE)
    assert ("decided once", "ok") in [(n, s) for n, s, _, _ in findings(project, env)]

    # Claude Code runs an identical command once: the same hookgate in both places is fine
    hookgate("install", "claude", "--project", str(project), project=project, env=env)
    hookgate("install", "claude", "--user", project=project, env=env)
    assert not [f for f in failures(project, env) if f[0] == "decided once"]
    # ... another hookgate in the user's settings decides every call again
    settings.install(settings.config_path(None), str(other))
    ((name, message, fix),) = [f for f in failures(project, env) if f[0] == "decided once"]
    assert message.startswith("claude: hookgate is registered 2 times in the project's and the user's configuration")
    assert "each block counts 2 times against its limit" in message
    assert fix == f"keep one: hookgate uninstall claude --user (or --project {project})"
    hookgate("uninstall", "claude", "--user", project=project, env=env)

    # Codex runs every handler: the same hookgate installed for the project and the user runs twice
    hookgate("install", "codex", "--project", str(project), project=project, env=env)
    hookgate("install", "codex", "--user", project=project, env=env)
    ((name, message, _),) = [f for f in failures(project, env) if f[0] == "decided once"]
    assert message.startswith("codex: hookgate is registered 2 times in the project's and the user's")
    hookgate("uninstall", "codex", "--user", project=project, env=env)

    # OpenCode loads both plugin files
    hookgate("install", "opencode", "--project", str(project), project=project, env=env)
    hookgate("install", "opencode", "--user", project=project, env=env)
    ((name, message, _),) = [f for f in failures(project, env) if f[0] == "decided once"]
    assert message.startswith("opencode: hookgate is registered 2 times in the project's and the user's")
    hookgate("uninstall", "opencode", "--user", project=project, env=env)
    assert ("decided once", "ok") in [(n, s) for n, s, _, _ in findings(project, env)]


def test_modules_without_bytecode_are_reported_with_the_command_that_compiles_them(tmp_path):
    """Every cold hook call compiles from source what has no bytecode where none is written."""
    import shlex

    from hookgate.checks import check_bytecode

    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "gates.py").write_text("X = 1\n")
    unwritten = Setup(project=tmp_path, env={"PYTHONDONTWRITEBYTECODE": "1"})
    (finding,) = check_bytecode(unwritten, [package])
    assert finding.status == "info" and "2 of hookgate's modules have no compiled bytecode" in finding.message
    assert "PYTHONDONTWRITEBYTECODE is set" in finding.message
    (later,) = check_bytecode(Setup(project=tmp_path, env={}), [package])
    assert "the first call that imports each one writes it" in later.message
    subprocess.run(shlex.split(finding.fix), check=True, timeout=60)  # the command it prints
    assert [f.status for f in check_bytecode(unwritten, [package])] == ["ok"]
