"""Hot reload: the core rebuilds its policy when a policy file changes; a broken file keeps the last
good policy, and the error reaches the next verdict's user message, once."""

from __future__ import annotations

from pathlib import Path

import pytest

from hookgate.hookcall import load_policy
from hookgate.rpc.reload import PolicyHolder, WatchSet
from hookgate.store.project import Project
from rpc_support import Core, pre_write, root  # noqa: F401 (a fixture)

DISABLE_WRITE_RULES = "[gates.check_file_permissions]\nenabled = false\n"
TYPO = "[gates.check_file_permissions]\nfail_mod = \"closed\"\n"


@pytest.fixture
def core(root: Path, tmp_path_factory):
    core = Core(root, env={"HOME": str(tmp_path_factory.mktemp("home"))})
    core.initialize()
    yield core
    core.close()


def test_a_config_change_applies_without_a_restart(core: Core, root: Path):
    assert core.evaluate(pre_write(root, "src/a.gd"))["kind"] == "block"
    (root / ".hookgate" / "config.toml").write_text(DISABLE_WRITE_RULES)
    reloaded = core.notification("policy/reloaded")
    assert reloaded["ok"] and reloaded["generation"] == 2
    gates = {gate["id"] for gate in reloaded["capabilities"]["events"]["PreToolUse"]["gates"]}
    assert "check_file_permissions" not in gates  # the capabilities follow the new policy
    assert core.evaluate(pre_write(root, "src/a.gd"))["kind"] == "allow"


def test_a_broken_file_keeps_the_last_good_policy_and_says_so_once(core: Core, root: Path):
    config = root / ".hookgate" / "config.toml"
    config.write_text(DISABLE_WRITE_RULES)
    assert core.notification("policy/reloaded")["ok"]
    config.write_text(TYPO)
    failed = core.notification("policy/reloaded")
    assert not failed["ok"] and "fail_mod" in failed["error"] and failed["generation"] == 2
    first = core.evaluate(pre_write(root, "src/a.gd"))
    assert first["kind"] == "allow"  # the last good policy (write rules disabled) still stands
    assert "reload failed, keeping the last good policy" in first["message"] and "fail_mod" in first["message"]
    assert core.evaluate(pre_write(root, "src/b.gd"))["message"] is None
    assert any("fail_mod" in line for line in core.stderr_lines)
    assert core.proc.poll() is None
    config.write_text("")  # fixed: back to the preset, the write rules apply again
    assert core.notification("policy/reloaded") ["generation"] == 3
    assert core.evaluate(pre_write(root, "src/c.gd"))["kind"] == "block"


def test_every_policy_file_is_watched(core: Core, root: Path):
    hookgate_dir = root / ".hookgate"
    (hookgate_dir / "current_role").write_text("verify\n")
    assert core.notification("policy/reloaded")["ok"]
    assert "Verify is read-only" in core.evaluate(pre_write(root, "notes.txt"))["reason"]
    (hookgate_dir / "stage_schemas.json").write_text("{}")
    assert core.notification("policy/reloaded")["ok"]
    (hookgate_dir / "hooks.json").write_text('{"hooks": {}}')
    assert core.notification("policy/reloaded")["ok"]
    policies = hookgate_dir / "policies"
    policies.mkdir()  # a directory that did not exist when the core started
    core.notification("policy/reloaded")
    (policies / "mine.py").write_text("# a policy\n")
    assert core.notification("policy/reloaded")["ok"]


def test_session_records_do_not_trigger_reloads(core: Core, root: Path):
    for name in ("a.txt", "b.txt", "c.gd"):
        core.evaluate(pre_write(root, name))
    (root / ".hookgate" / "config.toml").write_text(DISABLE_WRITE_RULES)
    assert core.notification("policy/reloaded")["generation"] == 2  # the first reload is the config's


def test_a_policy_that_raises_is_kept_out(tmp_path: Path):
    logged: list[str] = []
    good = load_policy(str(tmp_path))
    calls = iter([good])

    def load():
        policy = next(calls, None)
        if policy is None:
            raise SyntaxError("invalid syntax (mine.py, line 1)")
        return policy

    holder = PolicyHolder(load, logged.append)
    assert holder.reload() == "SyntaxError: invalid syntax (mine.py, line 1)"
    assert holder.policy is good and holder.generation == 1
    assert "SyntaxError" in holder.take_notice() and holder.take_notice() is None
    assert any("reload failed" in line for line in logged)


def test_the_watch_roots_follow_missing_directories(tmp_path: Path):
    project = Project(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    targets = WatchSet(project, home)
    assert targets.roots() == {tmp_path, home}  # .hookgate/ and ~/.hookgate/ do not exist yet
    (tmp_path / ".hookgate" / "policies").mkdir(parents=True)
    assert targets.roots() == {tmp_path / ".hookgate", tmp_path / ".hookgate" / "policies", home}
    assert targets.matters(tmp_path / ".hookgate" / "config.toml")
    assert targets.matters(tmp_path / ".hookgate" / "policies" / "x.py")
    assert not targets.matters(tmp_path / ".hookgate" / "policies" / "x.txt")
    assert not targets.matters(tmp_path / ".hookgate" / "metrics.jsonl")
    assert targets.matters(home / ".hookgate")  # appearing: the roots change


BLOCK_PUBLISH = '''from hookgate import block, register_hook
register_hook("no-publish", "pre_tool_use", {"tool": "Bash", "command_pattern": r"npm publish"}, None,
              lambda event: block("CI publishes releases"))
'''


def publish(root: Path) -> dict:
    return {"hook_event_name": "PreToolUse", "session_id": "s1", "cwd": str(root), "runtime": "opencode",
            "tool_name": "Bash", "tool_input": {"command": "npm publish"}}


def test_a_python_policy_applies_on_save_and_a_broken_one_keeps_the_last_good(core: Core, root: Path):
    policies = root / ".hookgate" / "policies"
    policies.mkdir()
    core.notification("policy/reloaded")
    (policies / "release.py").write_text(BLOCK_PUBLISH)
    assert core.notification("policy/reloaded")["ok"]
    # (under the verify role the shell gate adds its own refusal: what `npm` runs is unknown)
    assert core.evaluate(publish(root))["reason"].splitlines()[0] == "CI publishes releases"
    (policies / "release.py").write_text(BLOCK_PUBLISH + "this is not python\n")
    failed = core.notification("policy/reloaded")
    assert not failed["ok"] and "release.py" in failed["error"]
    verdict = core.evaluate(publish(root))
    assert verdict["reason"].splitlines()[0] == "CI publishes releases"  # the last good rules, not a blanket block
    assert "reload failed, keeping the last good policy" in verdict["message"]
    assert core.evaluate(pre_write(root, "notes.txt"))["kind"] == "allow"  # nothing else is blocked


def test_an_unreadable_hooks_json_keeps_the_command_hooks_in_force(core: Core, root: Path):
    hooks = root / ".hookgate" / "hooks.json"
    hooks.write_text('{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", '
                     '"command": "echo no shell today >&2; exit 2"}]}]}}')
    assert core.notification("policy/reloaded")["ok"]
    assert "no shell today" in core.evaluate(publish(root))["reason"]
    hooks.write_text('{"hooks": {"PreToolUse": [')
    assert not core.notification("policy/reloaded")["ok"]
    verdict = core.evaluate(publish(root))
    assert "no shell today" in verdict["reason"] and "reload failed" in verdict["message"]
