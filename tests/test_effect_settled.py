"""The effect check on a project that has settled (its files and folders older than a kernel tick),
where a reading takes its short way: no folder moved, so only the protected files are read again,
each by an lstat compared with the index's signature (tree._Plan). Each test checks that the short
way was taken and that it still saw what the command really did: the bytes and mode of every file
after the call, read from disk, are what they were before it."""

from __future__ import annotations

import os
import subprocess
import time

import pytest

from effect_support import Project, state
from hookgate.effect import tree

GD = "extends Node\nvar speed = 1\n"
NO_SYNTAX_GATE = "[gates.check_shell_writes]\nenabled = false\n"
TARGET = "src/player.gd"


@pytest.fixture(params=["claude", "codex"])
def project(request, tmp_path) -> Project:
    project = Project(tmp_path / "game", request.param).role("build")
    project.config(NO_SYNTAX_GATE)
    project.write(TARGET, GD)
    project.write("src/enemy.gd", GD.replace("1", "2"))
    project.write("PLAN.md", "- [ ] pending\n")
    project.write("notes.txt", "notes\n")
    project.bash("true")  # the first reading (its signatures too fresh to trust)
    time.sleep(tree.RACY_NS / 1e9 + 0.15)
    project.bash("true")  # a reading every signature of which can be trusted
    settle(project)
    return project


def settle(project: Project) -> None:
    """A call that changes nothing: the reading it starts from, read by both its halves, has its
    plan from then on (tree._worth_a_plan), as the warm core builds one for its forks."""
    project.bash("true")


@pytest.fixture
def walks(monkeypatch) -> list[str]:
    """The folder walks (read_dirs) the check makes: none is the short way."""
    seen: list[str] = []
    real = tree.read_dirs

    def counting(*args, **kwargs):
        seen.append("walk")
        return real(*args, **kwargs)

    monkeypatch.setattr(tree, "read_dirs", counting)
    return seen


def call(project: Project, command: str, walks: list[str]) -> tuple[bool, int, int]:
    """One Bash call, its halves apart: (put back, folder walks before the command, walks after)."""
    call_id = f"toolu_settled_{time.monotonic_ns()}"
    tool_input = {"command": command}
    start = len(walks)
    blocked, _, _ = project.hook(project.tool_payload("PreToolUse", "Bash", tool_input, call_id))
    assert not blocked
    walked_before = len(walks) - start
    done = subprocess.run(["bash", "-c", command], cwd=project.root, capture_output=True, text=True, timeout=60)
    put_back, _, _ = project.after(call_id, tool_input, done)
    return put_back, walked_before, len(walks) - start - walked_before


def test_a_settled_project_is_read_the_short_way(project, walks):
    before = state(project.root)
    put_back, walked_before, walked_after = call(project, "cat src/player.gd > /dev/null", walks)
    assert (put_back, walked_before, walked_after) == (False, 0, 0)
    assert state(project.root) == before


IN_PLACE = {
    # same size, mtime and inode as before: only the ctime tells
    "same size, mtime put back": "python3 -c \"import os; p='src/player.gd'; s=os.stat(p); "
                                 "f=open(p,'r+b'); f.write(b'EVIL'); f.close(); "
                                 "os.utime(p, ns=(s.st_atime_ns, s.st_mtime_ns))\"",
    "mmap write": "python3 -c \"import mmap; f=open('src/player.gd','r+b'); m=mmap.mmap(f.fileno(), 0); "
                  "m[0:4]=b'EVIL'; m.flush(); m.close(); f.close()\"",
    "mmap write, mtime put back": "python3 -c \"import mmap, os; p='src/player.gd'; s=os.stat(p); f=open(p,'r+b'); "
                                  "m=mmap.mmap(f.fileno(), 0); m[0:4]=b'EVIL'; m.flush(); m.close(); f.close(); "
                                  "os.utime(p, ns=(s.st_atime_ns, s.st_mtime_ns))\"",
    "through a hard link made outside": "d=$(mktemp -d); ln src/player.gd $d/l; printf EVIL | dd of=$d/l conv=notrunc "
                                        "status=none; touch -r src/enemy.gd $d/l; rm -r $d",
    "chmod only": "chmod 600 src/player.gd",
    "append": "echo evil >> src/player.gd",
}


@pytest.mark.parametrize("command", IN_PLACE.values(), ids=IN_PLACE.keys())
def test_an_in_place_write_is_seen_the_short_way(project, walks, command):
    before = state(project.root)
    put_back, walked_before, walked_after = call(project, command, walks)
    assert (walked_before, walked_after) == (0, 0)  # no folder moved: the short way, both halves
    assert put_back
    assert state(project.root) == before


MOVES_A_FOLDER = {
    "renamed over": "cp src/enemy.gd src/.x; mv src/.x src/player.gd",
    "deleted": "rm src/player.gd",
    "created": "echo 'extends Node' > src/new.gd",
    "renamed over from outside the folder": "d=$(mktemp -d -p .); echo evil > $d/p; mv $d/p src/player.gd; rmdir $d",
}


@pytest.mark.parametrize("command", MOVES_A_FOLDER.values(), ids=MOVES_A_FOLDER.keys())
def test_a_change_of_names_is_seen_after_a_short_way_before(project, walks, command):
    before = state(project.root)
    put_back, walked_before, walked_after = call(project, command, walks)
    assert walked_before == 0 and walked_after >= 1  # the folder moved: walked again after the call
    assert put_back
    assert state(project.root) == before


def test_an_edit_between_calls_is_the_state_kept_on_the_short_way(project, walks):
    """A person's edit made between two calls, hidden as well as it can be (same size, mtime put
    back), is the file's state from then on: not put back by the next call, and what a later call
    that changes the file is put back to."""
    path = project.root / TARGET
    st = path.stat()
    with open(path, "r+b") as handle:
        handle.write(b"MINE")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    edited = state(project.root)
    put_back, walked_before, _ = call(project, "true", walks)
    assert not put_back and walked_before == 0
    assert state(project.root) == edited
    time.sleep(tree.RACY_NS / 1e9 + 0.15)
    settle(project)
    put_back, walked_before, _ = call(project, IN_PLACE["same size, mtime put back"], walks)
    assert put_back and walked_before == 0
    assert state(project.root) == edited
    assert path.read_bytes().startswith(b"MINE")
