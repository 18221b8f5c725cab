import json
import os
import subprocess
import tomllib

import pytest

from support import HOOKGATE
from hookgate_codex import registration, trust
from hookgate_codex.registration import REGISTRATIONS, install, installed_events, uninstall

USER_CONFIG = """\
# my codex setup
model = "gpt-5.5"

[features]
  hooks = false  # I was trying something
web_search = true

[hooks.state."/elsewhere/.codex/hooks.json:stop:0:0"]
trusted_hash = "sha256:abc"

[projects."/code/app"]
trust_level = "trusted"
"""
THEIR_HOOKS = {
    "hooks": {
        "PreToolUse": [{"matcher": "^Bash$", "hooks": [{"type": "command", "command": "./lint.sh", "timeout": 5}]}],
        "Notification": [{"hooks": [{"type": "command", "command": "notify-send hi"}]}],
    },
    "other": 1,
}


@pytest.fixture
def home(tmp_path, monkeypatch):
    codex_home = tmp_path / "home" / ".codex"
    codex_home.mkdir(parents=True)
    monkeypatch.setenv("CODEX_HOME", str(codex_home))
    return codex_home


def cli(*args, cwd):
    return subprocess.run([HOOKGATE, *args], cwd=cwd, capture_output=True, text=True, env=os.environ)


def states(config):
    return tomllib.loads(config.read_text()).get("hooks", {}).get("state", {})


def test_user_install_merges_is_idempotent_and_uninstall_restores_every_byte(home, tmp_path):
    (home / "config.toml").write_text(USER_CONFIG)
    (home / "hooks.json").write_text(json.dumps(THEIR_HOOKS))
    hooks_before = (home / "hooks.json").read_text()
    done = cli("install", "codex", "--user", cwd=tmp_path)
    assert done.returncode == 0 and "updated" in done.stdout and "recorded trust for hookgate's 12 hooks" in done.stdout
    first = ((home / "hooks.json").read_text(), (home / "config.toml").read_text())
    again = cli("install", "codex", "--user", cwd=tmp_path)
    assert "already up to date" in again.stdout
    assert ((home / "hooks.json").read_text(), (home / "config.toml").read_text()) == first

    data = json.loads(first[0])
    assert data["other"] == 1 and data["hooks"]["PreToolUse"][0] == THEIR_HOOKS["hooks"]["PreToolUse"][0]
    assert installed_events(home / "hooks.json") == {event for event, *_ in REGISTRATIONS}
    config = tomllib.loads(first[1])
    assert config["features"] == {"hooks": True, "web_search": True} and config["model"] == "gpt-5.5"
    assert "hooks = true  # hookgate (was:   hooks = false  # I was trying something)" in first[1]
    trusted = {k: v["trusted_hash"] for k, v in config["hooks"]["state"].items()}
    ours = [(e, g, h, group, handler) for e, g, h, group, handler in trust.command_handlers(data["hooks"])
            if registration.is_ours(handler)]
    assert len(ours) == 12
    for event, g, h, group, handler in ours:
        assert trusted[trust.hook_key(home / "hooks.json", event, g, h)] == trust.hook_hash(event, group, handler)
    assert trusted["/elsewhere/.codex/hooks.json:stop:0:0"] == "sha256:abc"

    assert cli("uninstall", "codex", "--user", cwd=tmp_path).returncode == 0
    assert (home / "config.toml").read_text() == USER_CONFIG
    assert json.loads((home / "hooks.json").read_text()) == json.loads(hooks_before)


def test_project_install_flags_the_project_config_and_trusts_in_the_user_config(home, tmp_path):
    project = tmp_path / "app"
    project.mkdir()
    done = cli("install", "codex", "--project", str(project), cwd=tmp_path)
    assert done.returncode == 0
    assert "Codex loads" in done.stdout and f"codex exec --trust --skip-git-repo-check -C {project} 'ok'" in done.stdout
    assert tomllib.loads((project / ".codex" / "config.toml").read_text()) == {"features": {"hooks": True}}
    keys = set(states(home / "config.toml"))
    assert len(keys) == 12 and all(k.startswith(f"{project / '.codex' / 'hooks.json'}:") for k in keys)
    assert cli("uninstall", "codex", "--project", str(project), cwd=tmp_path).returncode == 0
    assert not (project / ".codex" / "config.toml").exists() and not (home / "config.toml").exists()
    assert not (project / ".codex" / "hooks.json").exists()  # install created it


def test_uninstall_leaves_other_installs_trust_alone(home, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    for project in (a, b):
        project.mkdir()
        install(registration.config_path(project), HOOKGATE)
    install(registration.config_path(None), HOOKGATE)
    assert len(states(home / "config.toml")) == 36
    uninstall(registration.config_path(a))
    left = states(home / "config.toml")
    assert len(left) == 24 and not any(k.startswith(str(a)) for k in left)
    uninstall(registration.config_path(None))
    assert tomllib.loads((home / "config.toml").read_text()) == {"hooks": {"state": {
        k: v for k, v in left.items() if k.startswith(str(b))}}}


def test_the_users_own_hooks_keep_their_trust_when_hookgates_leave(home, tmp_path):
    """Codex keys trust by position; a hook the user added after hookgate's moves up on uninstall."""
    hooks_path = home / "hooks.json"
    install(hooks_path, HOOKGATE)
    data = json.loads(hooks_path.read_text())
    theirs = {"type": "command", "command": "./audit.sh", "timeout": 5}
    data["hooks"]["Stop"].append({"hooks": [theirs]})
    hooks_path.write_text(json.dumps(data))
    old_key = trust.hook_key(hooks_path, "Stop", 1, 0)
    digest = trust.hook_hash("Stop", {}, theirs)
    with (home / "config.toml").open("a") as config:
        config.write(f'\n[hooks.state."{old_key}"]\ntrusted_hash = "{digest}"\n')
    uninstall(hooks_path)
    assert json.loads(hooks_path.read_text())["hooks"]["Stop"] == [{"hooks": [theirs]}]
    assert states(home / "config.toml") == {trust.hook_key(hooks_path, "Stop", 0, 0): {"trusted_hash": digest}}


def test_the_deprecated_feature_alias_is_switched_on_and_back(home, tmp_path):
    (home / "config.toml").write_text("[features]\ncodex_hooks = false\n")
    install(registration.config_path(None), HOOKGATE)
    assert tomllib.loads((home / "config.toml").read_text())["features"] == {"hooks": True, "codex_hooks": True}
    uninstall(registration.config_path(None))
    assert (home / "config.toml").read_text() == "[features]\ncodex_hooks = false\n"


@pytest.mark.parametrize(("name", "text", "error"), [
    ("hooks.json", "{oops", "not valid JSON"), ("hooks.json", "[]", "expected an object"),
    ("config.toml", "[features\n", "not valid TOML"),
    ("config.toml", "features.hooks = false\n[features]\nx = 1\n", "not valid TOML"),
])
def test_broken_files_are_left_alone(home, tmp_path, name, text, error):
    (home / name).write_text(text)
    done = cli("install", "codex", "--user", cwd=tmp_path)
    assert done.returncode == 1 and error in done.stderr and (home / name).read_text() == text


def test_an_edit_that_would_break_the_toml_is_refused_and_nothing_changes(home, tmp_path):
    text = "features.web_search = true\n"  # dotted keys define [features]; a second header is invalid
    (home / "config.toml").write_text(text)
    done = cli("install", "codex", "--user", cwd=tmp_path)
    assert done.returncode == 1 and "could not edit it safely" in done.stderr
    assert (home / "config.toml").read_text() == text and not (home / "hooks.json").exists()


def test_installed_commands_run_outside_the_venv(home, tmp_path):
    install(home / "hooks.json", HOOKGATE)
    hooks = json.loads((home / "hooks.json").read_text())["hooks"]
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "HOOKGATE_WARM_IDLE": "10"}
    for event in ("Stop", "PreToolUse"):  # a plain one and a fail-closed one
        command = hooks[event][0]["hooks"][0]["command"]
        payload = {"hook_event_name": event, "session_id": "s", "cwd": str(tmp_path), "tool_name": "Bash",
                   "tool_input": {"command": "ls"}}
        done = subprocess.run(["sh", "-c", command], input=json.dumps(payload), text=True, capture_output=True,
                              cwd=tmp_path, env=env)
        assert (done.returncode, done.stdout, done.stderr) == (0, "", ""), event


def test_registrations_match_what_codex_accepts():
    hooks = registration.registrations("hookgate")
    for event, matcher, timeout in REGISTRATIONS:
        (group,) = hooks[event]
        assert group.get("matcher") == matcher
        assert (event in trust.UNMATCHED_EVENTS) == (matcher is None) or event == "SessionEnd"
        low, high = trust.CLAMPED_TIMEOUTS.get(event, (1, 600))
        assert low <= group["hooks"][0]["timeout"] <= high  # so Codex neither clamps nor warns


def test_trust_hashes_are_the_ones_codex_computes():
    # Codex 0.171's own hooks/list answer (codex app-server) for these two handlers
    pre = {"type": "command", "command": "echo hi", "timeout": 30}
    assert trust.hook_hash("PreToolUse", {"matcher": "*"}, pre) == \
        "sha256:6e4e918f0015bc3f3fac7864fd00f035ac12d2ba415b6dcdc80415135dbf4c44"
    assert trust.hook_hash("Stop", {"matcher": "ignored"}, {"type": "command", "command": "echo stop"}) == \
        "sha256:236335e9e512004a0f5f42af65a07ea9059bd9a23dbb68286ed57fecf2b69ddf"
    session_end = {"type": "command", "command": "echo a", "timeout": 10}  # Codex clamps it to 3 s first
    assert trust.hook_hash("SessionEnd", {"matcher": "*"}, session_end) == \
        "sha256:10b90234cc34743b1e288cec1b59ab217a730dc1e0a5593df833fb01264020c2"


def test_project_trust_is_read_the_way_codex_reads_it(tmp_path):
    checkout = tmp_path / "repo"
    (checkout / ".git").mkdir(parents=True)
    (checkout / "sub").mkdir()
    user = {"projects": {str(checkout): {"trust_level": "trusted"}, str(tmp_path / "x"): {"trust_level": "untrusted"}}}
    assert trust.project_trust(user, checkout) == "trusted"
    assert trust.project_trust(user, checkout / "sub") == "trusted"  # through its git checkout
    assert trust.project_trust(user, tmp_path / "x") == "untrusted"
    assert trust.project_trust(user, tmp_path / "y") is None
    assert trust.project_trust({}, checkout) is None


def test_uninstall_keeps_what_the_user_wrote_after_install(home, tmp_path):
    (home / "config.toml").write_text(USER_CONFIG)
    install(registration.config_path(None), HOOKGATE)
    with (home / "config.toml").open("a") as config:
        config.write('\n[tui]\nnotifications = true\n')
    uninstall(registration.config_path(None))
    assert (home / "config.toml").read_text() == USER_CONFIG + '\n[tui]\nnotifications = true\n'
