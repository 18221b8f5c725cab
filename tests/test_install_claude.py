import json
import subprocess

import pytest

from support import HOOKGATE, handler_argv
from hookgate_claude.install import REGISTRATIONS, install, installed_events, uninstall

USER_SETTINGS = {
    "model": "opus",
    "permissions": {"allow": ["Bash(ls:*)"]},
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./lint.sh", "timeout": 5}]}],
        "Notification": [{"matcher": "", "hooks": [{"type": "command", "command": "notify-send hi"}]}],
    },
}


def cli(*args, cwd):
    return subprocess.run([HOOKGATE, *args], cwd=cwd, capture_output=True, text=True)


def test_install_merges_is_idempotent_and_uninstall_restores_exactly(tmp_path):
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps(USER_SETTINGS))
    assert cli("install", "claude", "--project", str(tmp_path), cwd=tmp_path).returncode == 0
    first = settings.read_text()
    done = cli("install", "claude", "--project", str(tmp_path), cwd=tmp_path)
    assert "already up to date" in done.stdout and settings.read_text() == first
    data = json.loads(first)
    assert data["model"] == "opus" and data["permissions"] == USER_SETTINGS["permissions"]
    assert data["hooks"]["PreToolUse"][0] == USER_SETTINGS["hooks"]["PreToolUse"][0]
    assert installed_events(settings) == {event for event, *_ in REGISTRATIONS}
    ours = data["hooks"]["PreToolUse"][1]["hooks"][0]
    # exec form: Claude Code starts hookgate itself, no shell in between
    assert handler_argv(ours) == [HOOKGATE, "hook", "claude", "--event", "PreToolUse"]
    assert ours["onFailure"] == "block"
    assert cli("uninstall", "claude", "--project", str(tmp_path), cwd=tmp_path).returncode == 0
    assert json.loads(settings.read_text()) == USER_SETTINGS
    again = cli("uninstall", "claude", "--project", str(tmp_path), cwd=tmp_path)  # the user's settings stay
    assert again.returncode == 0 and "holds nothing of hookgate's (nothing removed)" in again.stdout
    assert json.loads(settings.read_text()) == USER_SETTINGS


def test_install_into_a_fresh_project_and_back(tmp_path):
    settings = tmp_path / ".claude" / "settings.json"
    assert install(settings, "hookgate") and settings.exists()
    assert uninstall(settings)
    assert not settings.exists()  # it was hookgate's alone
    assert not uninstall(settings)


def test_installed_command_runs_outside_the_venv(tmp_path):
    install(tmp_path / "s.json", HOOKGATE)
    handler = json.loads((tmp_path / "s.json").read_text())["hooks"]["Stop"][0]["hooks"][0]
    payload = json.dumps({"hook_event_name": "Stop", "session_id": "s", "cwd": str(tmp_path)})
    done = subprocess.run(handler_argv(handler), input=payload, text=True, capture_output=True, cwd=tmp_path,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "HOOKGATE_WARM_IDLE": "10"})
    assert done.returncode == 0 and done.stderr == ""


def test_broken_settings_are_left_alone(tmp_path):
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text("{oops")
    done = cli("install", "claude", "--project", str(tmp_path), cwd=tmp_path)
    assert done.returncode == 1 and "not valid JSON" in done.stderr and settings.read_text() == "{oops"


@pytest.mark.parametrize("args", [["install"], ["install", "vim"], ["install", "claude", "--user", "--project", "x"]])
def test_install_usage_errors(tmp_path, args):
    assert cli(*args, cwd=tmp_path).returncode == 2


def test_role_command(tmp_path):
    (tmp_path / ".hookgate").mkdir()
    assert cli("role", "show", cwd=tmp_path).stdout.strip() == "(no active role)"
    assert cli("role", "set", "build", cwd=tmp_path).stdout.strip() == "active role: build"
    assert (tmp_path / ".hookgate" / "current_role").read_text() == "build\n"
    assert cli("role", "show", cwd=tmp_path).stdout.strip() == "build"
    bad = cli("role", "set", "Two Words", cwd=tmp_path)
    assert bad.returncode == 2 and "invalid role" in bad.stderr
    assert cli("role", "clear", cwd=tmp_path).stdout.strip() == "role cleared"
    assert cli("role", "clear", cwd=tmp_path).stdout.strip() == "no role was active"


def test_role_set_refuses_a_role_the_config_does_not_know(tmp_path):
    (tmp_path / ".hookgate").mkdir()
    cli("role", "set", "build", cwd=tmp_path)
    typo = cli("role", "set", "biuld", cwd=tmp_path)
    assert typo.returncode == 2 and "'biuld' is not a role of the config" in typo.stderr
    # every role of the preset is listed, '*' is not one a user sets
    listed = typo.stderr.split("known roles: ", 1)[1].split(".", 1)[0].split(", ")
    assert listed == sorted(["accept", "asset", "build", "evaluate", "finalize", "fixgap", "gdd", "rescue",
                             "scaffold", "verify"])
    assert (tmp_path / ".hookgate" / "current_role").read_text() == "build\n"  # nothing changed
    forced = cli("role", "set", "biuld", "--force", cwd=tmp_path)
    assert forced.returncode == 0 and "'*' rules" in forced.stderr
    assert (tmp_path / ".hookgate" / "current_role").read_text() == "biuld\n"


def test_role_set_knows_the_roles_a_project_adds(tmp_path):
    (tmp_path / ".hookgate").mkdir()
    (tmp_path / ".hookgate" / "config.toml").write_text(
        '[pipeline.roles.docs]\nrules = [{ deny = ["@game_code"], reason = "docs only ({file})" }]\n')
    assert cli("role", "set", "docs", cwd=tmp_path).returncode == 0
    assert "docs" in cli("role", "set", "nope", cwd=tmp_path).stderr.split("known roles: ", 1)[1]


def test_role_set_under_a_broken_config_is_refused_with_the_config_error(tmp_path):
    (tmp_path / ".hookgate").mkdir()
    (tmp_path / ".hookgate" / "config.toml").write_text("[pipeline\n")
    done = cli("role", "set", "build", cwd=tmp_path)
    assert done.returncode == 2 and "config could not be read" in done.stderr and "config.toml" in done.stderr
    assert not (tmp_path / ".hookgate" / "current_role").exists()
    assert cli("role", "set", "build", "--force", cwd=tmp_path).returncode == 0


def test_a_shell_form_registration_of_an_earlier_hookgate_is_stale_replaced_and_removed(tmp_path):
    """An earlier hookgate wrote each handler as one command line, which Claude Code hands to a
    shell. Doctor calls it stale, install replaces it by the exec form (no handler twice), and
    uninstall takes either form out."""
    from hookgate.formats import hooksjson
    from hookgate_claude.install import _is_ours, registrations, stale_events

    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    earlier = {event: [{**group, "hooks": [{**{k: v for k, v in handler.items() if k != "args"},
                                            "command": f"{HOOKGATE} hook claude --event {event}"}
                                           for handler in group["hooks"]]} for group in groups]
               for event, groups in registrations(HOOKGATE).items()}

    def install_earlier() -> None:  # as the earlier install wrote them: into the user's file
        settings.write_text(json.dumps(USER_SETTINGS))
        assert hooksjson.register(settings, earlier, _is_ours)

    install_earlier()
    assert installed_events(settings) == {event for event, *_ in REGISTRATIONS}
    assert stale_events(settings) == sorted(event for event, *_ in REGISTRATIONS)
    assert cli("install", "claude", "--project", str(tmp_path), cwd=tmp_path).returncode == 0
    assert stale_events(settings) == []
    handlers = [h for groups in json.loads(settings.read_text())["hooks"].values() for g in groups for h in g["hooks"]]
    ours = [h for h in handlers if "hookgate" in json.dumps(h)]
    assert len(ours) == len(REGISTRATIONS) and all(isinstance(h.get("args"), list) for h in ours)
    install_earlier()
    assert uninstall(settings) and json.loads(settings.read_text()) == USER_SETTINGS
