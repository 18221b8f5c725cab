"""The governing project is pinned per session (hookgate.store.pin), through real hook processes
(`hookgate hook claude|codex`, the payload on stdin, the warm core where one runs): a `.hookgate/`
made below the project, then a changed cwd, leaves every rule in force."""

from __future__ import annotations

import json
import os
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from hookgate.store import pin
from support import HOOKGATE, run_hook

PATCH = "*** Begin Patch\n*** Add File: {path}\n+extends Node\n*** End Patch\n"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A project in role build (its lead may not write game code nor read asset images), with src/."""
    work = tmp_path / "game"
    (work / ".hookgate").mkdir(parents=True)
    (work / "src").mkdir()
    (work / "assets").mkdir()
    (work / "assets" / "hero.png").write_bytes(b"\x89PNG")
    (work / ".hookgate" / "current_role").write_text("build\n")
    return work


def call(runtime: str, cwd: Path, event: str, session: str = "s1", env: dict[str, str] | None = None,
         **fields) -> tuple[bool, str]:
    """One hook call; (refused?, the reason)."""
    payload = {"session_id": session, "cwd": str(cwd), "hook_event_name": event, **fields}
    if env:  # run_hook drops the runtimes' project variables, which these tests set on purpose
        full_env = {"HOOKGATE_WARM_IDLE": "10", **os.environ, **env}
        done = subprocess.run([HOOKGATE, "hook", runtime, "--event", event], input=json.dumps(payload).encode(),
                              cwd=cwd, capture_output=True, env=full_env, timeout=60)
    else:
        done = run_hook(runtime, payload, cwd, "--event", event)
    if runtime == "codex":
        assert done.returncode in (0, 2), done.stderr
        return done.returncode == 2, done.stderr.decode()
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout) if done.stdout.strip() else {}
    specific = out.get("hookSpecificOutput", {})
    return specific.get("permissionDecision") == "deny", specific.get("permissionDecisionReason", "")


def tool(runtime: str, cwd: Path, name: str, session: str = "s1", env: dict[str, str] | None = None,
         **tool_input) -> tuple[bool, str]:
    return call(runtime, cwd, "PreToolUse", session, env, tool_name=name, tool_input=tool_input)


def start(runtime: str, cwd: Path, session: str = "s1", env: dict[str, str] | None = None) -> None:
    call(runtime, cwd, "SessionStart", session, env, source="startup")


def nest(root: Path) -> Path:
    """What the agent did: `mkdir -p src/.hookgate; cd src` (here made behind hookgate's back, as
    if before the role was set: the point is what it changes afterwards)."""
    (root / "src" / ".hookgate").mkdir()
    return root / "src"


GAME_CODE = "Build role cannot write game code directly (player.gd)"


def test_claude_a_nested_project_and_cd_change_nothing_for_write_edit_read_and_bash(root: Path) -> None:
    start("claude", root)
    src = nest(root)
    assert tool("claude", src, "Write", file_path=str(src / "player.gd"), content="x") == (True, GAME_CODE + ". Dispatch a Worker subagent.")
    (src / "player.gd").write_text("extends Node\n")
    assert tool("claude", src, "Edit", file_path="player.gd", old_string="Node", new_string="Node2D")[0]
    refused, reason = tool("claude", src, "Read", file_path="../assets/hero.png")
    assert refused and "cannot read image files in assets/" in reason
    refused, reason = tool("claude", src, "Bash", command="echo 'extends Node' > enemy.gd")
    assert refused and "Build role cannot write game code directly (enemy.gd)" in reason
    # and an ordinary write still goes through, from the nested folder too
    assert tool("claude", src, "Write", file_path="notes.txt", content="x") == (False, "")


def test_codex_a_nested_project_and_cd_change_nothing_for_apply_patch_and_bash(root: Path) -> None:
    start("codex", root)
    src = nest(root)
    refused, reason = call("codex", src, "PreToolUse", tool_name="apply_patch",
                           tool_input={"command": PATCH.format(path="player.gd")})
    assert refused and GAME_CODE in reason
    refused, reason = tool("codex", src, "Bash", command="printf 'extends Node' > player.gd")
    assert refused and GAME_CODE in reason
    assert not (src / "player.gd").exists()


def test_the_runtimes_project_dir_governs_even_a_first_event_in_the_nested_folder(root: Path) -> None:
    """Claude Code names its project for its hooks (CLAUDE_PROJECT_DIR): a session whose first
    event hookgate sees is already in the nested folder is still the project's."""
    src = nest(root)
    env = {"CLAUDE_PROJECT_DIR": str(root)}
    assert tool("claude", src, "Write", env=env, file_path="player.gd", content="x")[0]


def test_a_session_that_starts_in_a_sub_project_is_governed_by_it(root: Path) -> None:
    """A real sub-project with its own .hookgate/ (no role active there) keeps working for the
    sessions that start in it, while the outer project's sessions keep their rules."""
    src = nest(root)
    start("claude", root, session="outer")
    start("claude", src, session="inner")
    assert tool("claude", src, "Write", session="inner", file_path="player.gd", content="x") == (False, "")
    assert tool("claude", src, "Write", session="outer", file_path="player.gd", content="x")[0]
    assert tool("claude", root, "Write", session="inner", file_path="src/player.gd", content="x") == (False, "")


def test_making_a_nested_project_is_refused_while_a_role_is_active(root: Path) -> None:
    start("claude", root)
    for command in ("mkdir -p src/.hookgate", "mkdir -p src/.hookgate && cd src", "cd src && mkdir .hookgate"):
        refused, reason = tool("claude", root, "Bash", command=command)
        assert refused and "Creating a .hookgate/ (or .godotmaker/) folder below the project is refused" in reason, command
    assert tool("claude", root, "Write", file_path="src/.hookgate/current_role", content="build\n")[0]
    refused, _ = call("codex", root, "PreToolUse", session="c1", tool_name="apply_patch",
                      tool_input={"command": PATCH.format(path="src/.hookgate/config.toml")})
    assert refused
    assert not (root / "src" / ".hookgate").exists()
    # the project's own .hookgate/ is not a nested one: the role file stays writable
    assert tool("claude", root, "Write", file_path=".hookgate/current_role", content="verify\n") == (False, "")


def test_without_a_role_a_nested_project_may_be_made(root: Path) -> None:
    """The decision: like every rule, this one holds while a pipeline role is active; the pin
    keeps the running session's root either way."""
    (root / ".hookgate" / "current_role").unlink()
    start("claude", root)
    assert tool("claude", root, "Bash", command="mkdir -p src/.hookgate") == (False, "")


def test_the_pin_is_one_record_per_session_in_the_users_state_dir(root: Path) -> None:
    start("claude", root, session="abc-123")
    record = Path(os.environ["XDG_STATE_HOME"]) / "hookgate" / "pins" / "claude-abc-123"
    assert record.read_text().strip() == str(root.resolve())
    # an id no file name can hold is hashed, and still pins
    start("codex", root, session="../../etc/x y")
    (odd,) = [p for p in record.parent.iterdir() if p.name.startswith("codex-h")]
    assert odd.read_text().strip() == str(root.resolve())


def test_a_fifo_planted_as_a_pin_neither_hangs_the_hook_nor_governs(root: Path) -> None:
    """The pins live where the agent (the same user) could write; a FIFO opened for reading waits
    for a writer, so the record is opened without blocking: it reads as no pin, and the session's
    first event pins over it."""
    record = Path(os.environ["XDG_STATE_HOME"]) / "hookgate" / "pins" / "claude-fifo-1"
    record.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(record)
    start("claude", root, session="fifo-1")
    assert record.is_file() and record.read_text().strip() == str(root.resolve())


def test_an_explicit_project_dir_wins_and_is_not_pinned(root: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    (other / ".hookgate").mkdir(parents=True)
    start("claude", root)
    # HOOKGATE_PROJECT_DIR is fixed by whoever started the runtime: it governs every call
    payload = {"session_id": "s1", "cwd": str(root), "hook_event_name": "PreToolUse", "tool_name": "Write",
               "tool_input": {"file_path": str(root / "src" / "a.gd"), "content": "x"}}
    done = subprocess.run([HOOKGATE, "hook", "claude"], input=json.dumps(payload).encode(), capture_output=True,
                          env={"HOOKGATE_WARM_IDLE": "10", **os.environ, "HOOKGATE_PROJECT_DIR": str(other)}, cwd=root)
    assert b"deny" not in done.stdout  # other/ has no role
    assert tool("claude", root, "Write", file_path="src/a.gd", content="x")[0]  # the pin was not moved


def test_concurrent_first_events_agree_on_one_root(tmp_path: Path) -> None:
    """Many hook processes of one session racing to pin, from different places: one root wins
    and every one of them is governed by it."""
    directory = tmp_path / "pins"
    roots = [tmp_path / f"r{i}" for i in range(8)]
    for r in roots:
        r.mkdir()
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda r: pin.pin(directory, "claude", "race", r), roots * 4))
    assert len(set(results)) == 1
    assert pin.pinned(directory, "claude", "race") == results[0]
    assert [p.name for p in directory.iterdir()] == ["claude-race"]  # no temporary file left behind


def test_pins_are_bounded_by_age_and_count(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    directory = tmp_path / "pins"
    monkeypatch.setattr(pin, "MAX_PINS", 5)
    now = time.time()
    directory.mkdir()
    for i in range(8):
        (directory / f"claude-s{i}").write_text(str(tmp_path))
        stamp = now - 1000 + i  # s7 is the most recent
        os.utime(directory / f"claude-s{i}", (stamp, stamp))
    old = directory / "claude-ancient"
    old.write_text(str(tmp_path))
    os.utime(old, (now - pin.MAX_AGE - 10, now - pin.MAX_AGE - 10))
    assert pin.prune(directory) == 4  # three beyond the count, one beyond the age
    assert sorted(p.name for p in directory.iterdir()) == [f"claude-s{i}" for i in range(3, 8)]
    # making a pin prunes: the count stays bounded
    for i in range(8, 12):
        pin.pin(directory, "claude", f"s{i}", tmp_path)
    assert len(list(directory.iterdir())) == 5 and (directory / "claude-s11").exists()


def test_a_pin_whose_root_is_gone_starts_over(tmp_path: Path) -> None:
    directory = tmp_path / "pins"
    gone, here = tmp_path / "gone", tmp_path / "here"
    gone.mkdir(), here.mkdir()
    assert pin.pin(directory, "codex", "s", gone) == gone
    gone.rmdir()
    assert pin.pinned(directory, "codex", "s") is None
    assert pin.pin(directory, "codex", "s", here) == here
    assert pin.pinned(directory, "codex", "s") == here


def test_doctor_lists_nested_projects(root: Path) -> None:
    nest(root)
    (root / "node_modules" / "pkg" / ".hookgate").mkdir(parents=True)  # not searched
    done = subprocess.run([HOOKGATE, "doctor", "--project", str(root)], capture_output=True, text=True)
    lines = [line for line in done.stdout.splitlines() if "nested projects" in line]
    assert len(lines) == 1 and "src/.hookgate: a project of its own" in lines[0], done.stdout


@pytest.mark.parametrize("env", [{"XDG_STATE_HOME": "/"}, {"XDG_STATE_HOME": "/x/"}, {"XDG_STATE_HOME": "rel", "HOME": "/h"},
                                 {"HOME": "/root"}, {"HOME": "/"}, {"HOME": "rel"}, {}])
def test_the_pins_are_in_the_state_home_however_it_is_spelled(env: dict[str, str]) -> None:
    """Each call looks its pin up by text (no Path built for it): the same folder as state_home's."""
    home = pin.state_home(env)
    assert pin.pins_dir(env) == (home / "pins" if home is not None else None)
