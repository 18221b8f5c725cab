"""Hot reload: the core rebuilds its policy when a policy file changes; a broken file keeps the last
good policy, and the error reaches the next verdict's user message, once."""

from __future__ import annotations

import os
import time
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


def _wake_ups(pid: int, skip: int) -> int:
    """Context switches, so far, of a process's threads other than `skip` (its main thread)."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        if int(task) != skip:
            with open(f"/proc/{pid}/task/{task}/status") as status:
                for line in status:
                    name, _, value = line.partition(":")
                    if name in ("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches"):
                        total += int(value)
    return total


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts a thread's wake-ups in /proc")
def test_an_idle_core_s_reload_thread_sleeps(core: Core, root: Path):
    """The watch wakes when a policy file or a folder on the way to one changes, not on a timer nor
    on the records the core appends beside config.toml: in half a second of a core between calls,
    its thread is woken at most once (to look whether the core is stopping), where watchfiles'
    was woken some 17 times. The quietest of four such windows is taken: a folder on the way
    (/tmp, here) may see other programs' files come and go."""
    for name in ("a.txt", "b.txt"):  # the session's files are made (new entries: it looks at them)
        core.evaluate(pre_write(root, name))
    time.sleep(0.5)
    windows = []
    for name in ("c.txt", "d.txt", "e.txt", "f.txt"):  # from here on its records only grow
        before = _wake_ups(core.proc.pid, core.proc.pid)
        core.evaluate(pre_write(root, name))
        time.sleep(0.5)
        windows.append(_wake_ups(core.proc.pid, core.proc.pid) - before)
    assert min(windows) < 6, windows
    (root / ".hookgate" / "config.toml").write_text(DISABLE_WRITE_RULES)
    assert core.notification("policy/reloaded")["ok"]  # and it still wakes for what matters


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


@pytest.fixture
def watched(tmp_path: Path):
    """A policy watch on an inotify store of its own, as the core's reload thread keeps it."""
    from hookgate.rpc.reload import _watch_targets
    from hookgate.store.kept import new_store

    store = new_store()
    if store is None:
        pytest.skip("no inotify here: the core watches with watchfiles")  # never on Linux, where CI runs
    (tmp_path / "home").mkdir()
    (tmp_path / ".hookgate").mkdir()
    targets = WatchSet(Project(tmp_path), tmp_path / "home")
    assert _watch_targets(store, targets)
    yield store, targets, lambda: _watch_targets(store, targets)
    store.close()


def test_the_logs_beside_the_policy_files_never_wake_the_watch(watched, tmp_path: Path):
    """The core appends its records to .hookgate/metrics.jsonl, beside config.toml, after every
    decision, and so does every hook process of another runtime in the project: the kernel queues
    nothing for those, so the reload thread sleeps through them."""
    store, _, _ = watched
    hookgate_dir = tmp_path / ".hookgate"
    log = hookgate_dir / "metrics.jsonl"

    def woken() -> set[str]:
        """What the writes here queued. The folders on the way from / are watched too, and /tmp is
        everyone's: an entry another process makes there (a hookgate core's scratch folder, as an
        earlier test's core leaves) is not this test's. Its own writes are queued before it asks."""
        return {path for path in store.wait(0.2) if path.startswith(f"{tmp_path}/")}

    log.write_text("{}\n")
    assert woken() == {str(log)}  # a new file: an entry of the folder (not a policy file)
    with log.open("a") as kept_open:  # the core keeps its logs open
        for _ in range(20):
            kept_open.write("{}\n")
            kept_open.flush()
    assert woken() == set()
    (hookgate_dir / "sessions" / "s1").mkdir(parents=True)
    store.wait(0.2)
    (hookgate_dir / "sessions" / "s1" / "metrics.jsonl").write_text("{}\n")
    assert woken() == set()


def test_every_way_a_policy_file_changes_wakes_the_watch(watched, tmp_path: Path):
    store, targets, rewatch = watched
    hookgate_dir = tmp_path / ".hookgate"
    config = hookgate_dir / "config.toml"

    def woken() -> set[str]:
        changed = store.wait(0.5)
        while more := store.wait(0.05):
            changed |= more
        assert rewatch()  # as the thread does after each burst
        return {path for path in changed if targets.matters(Path(path))}

    config.write_text("a = 1\n")  # created
    assert woken() == {str(config)}
    with config.open("a") as f:  # written in place, without a new entry in the folder
        f.write("b = 2\n")
    assert woken() == {str(config)}
    for _ in range(2):  # saved the way editors save: a new file renamed over it, twice
        staged = hookgate_dir / ".config.toml.swp"
        staged.write_text("c = 3\n")
        staged.rename(config)
        assert str(config) in woken()
    config.chmod(0o600)
    assert woken() == {str(config)}
    policies = hookgate_dir / "policies"
    policies.mkdir()  # a folder that did not exist when the watch began
    assert woken() == {str(policies)}
    (policies / "mine.py").write_text("# a policy\n")
    assert woken() == {str(policies / "mine.py")}
    with (policies / "mine.py").open("a") as f:
        f.write("# more\n")
    assert woken() == {str(policies / "mine.py")}
    (tmp_path / "home" / ".hookgate").mkdir()
    assert woken() == {str(tmp_path / "home" / ".hookgate")}
    (tmp_path / "home" / ".hookgate" / "hooks.json").write_text("{}")
    assert woken() == {str(tmp_path / "home" / ".hookgate" / "hooks.json")}
    config.unlink()
    assert str(config) in woken()


def test_a_policy_file_behind_a_symlink_is_watched_by_watchfiles(tmp_path: Path):
    """A symlink on the way to a policy file (a dotfiles manager's ~/.hookgate/hooks.json): the
    kernel would not say when what it points to changes, so the other watch takes over."""
    import threading

    from hookgate.rpc.reload import _watch_targets, watch
    from hookgate.store.kept import new_store

    home, dotfiles = tmp_path / "home", tmp_path / "dotfiles"
    (home / ".hookgate").mkdir(parents=True)
    dotfiles.mkdir()
    (dotfiles / "hooks.json").write_text("{}")
    (home / ".hookgate" / "hooks.json").symlink_to(dotfiles / "hooks.json")
    project = tmp_path / "project"
    (project / ".hookgate").mkdir(parents=True)
    targets = WatchSet(Project(project), home)
    store = new_store()
    assert store is not None and not _watch_targets(store, targets)
    store.close()
    changes, stop, ready = [], threading.Event(), threading.Event()
    thread = threading.Thread(target=watch, args=(targets, lambda: changes.append(1), stop, ready), daemon=True)
    thread.start()
    try:
        assert ready.wait(10)
        (project / ".hookgate" / "config.toml").write_text("a = 1\n")
        deadline = time.monotonic() + 10
        while not changes and time.monotonic() < deadline:
            time.sleep(0.02)
        assert changes
    finally:
        stop.set()
        thread.join(10)
    assert not thread.is_alive()


@pytest.mark.parametrize("watcher", ["inotify", "watchfiles"])
def test_the_watch_follows_the_settings_files_a_reloaded_config_names(tmp_path: Path, watcher: str,
                                                                        monkeypatch: pytest.MonkeyPatch):
    """A change of `[pipeline.protect] command_settings` names other runtime settings: once the
    policy reloaded, the watch takes them, and a save of one reloads the policy again (their
    commands' scripts are in the config), in a folder made only afterwards as well."""
    import threading

    from hookgate.rpc import reload
    from hookgate.store import kept

    if watcher == "watchfiles":
        monkeypatch.setattr(kept, "new_store", lambda: None)
    (tmp_path / ".hookgate").mkdir()
    (tmp_path / "home").mkdir()
    config, later = tmp_path / ".hookgate" / "config.toml", tmp_path / "later" / "settings.json"
    named: list[Path] = []
    targets = WatchSet(Project(tmp_path), tmp_path / "home", lambda: list(named))
    reloads: list[int] = []

    def on_change() -> None:  # as the core's reload: the config now names the later file
        reloads.append(1)
        named[:] = [later]

    def reloaded(more_than: int) -> bool:
        deadline = time.monotonic() + 10
        while len(reloads) <= more_than and time.monotonic() < deadline:
            time.sleep(0.02)
        return len(reloads) > more_than

    stop, ready = threading.Event(), threading.Event()
    thread = threading.Thread(target=reload.watch, args=(targets, on_change, stop, ready), daemon=True)
    thread.start()
    try:
        assert ready.wait(10)
        config.write_text("preset = 'godot'\n")
        assert reloaded(0) and later in targets.files
        time.sleep(reload.DEBOUNCE_MS / 1000 + 0.3)  # the reload's burst is over
        count = len(reloads)
        later.parent.mkdir()
        later.write_text('{"hooks": {}}\n')
        assert reloaded(count)
    finally:
        stop.set()
        thread.join(10)
    assert not thread.is_alive()
