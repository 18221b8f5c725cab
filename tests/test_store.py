import json
import multiprocessing
from pathlib import Path

import pytest

from hookgate.store.project import Project
from hookgate.store.session import SessionStore, safe_session_dir_name

PROCESSES, EVENTS = 16, 500


def _hammer(state_dir: str, worker: int) -> None:
    store = SessionStore(Path(state_dir), "shared-session")
    for i in range(EVENTS):
        store.append([{"event": "tick", "worker": worker, "i": i, "pad": "x" * (i % 97)}])
        store.bump("ticks")
        store.bump(f"worker/{worker}")


def test_concurrent_processes_lose_no_line_and_no_count(tmp_path: Path):
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_hammer, args=(str(tmp_path), w)) for w in range(PROCESSES)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    store = SessionStore(tmp_path, "shared-session")
    lines = store.metrics_path.read_text().splitlines()
    records = [json.loads(line) for line in lines]  # every line parses: none torn
    assert len(records) == PROCESSES * EVENTS
    assert {(r["worker"], r["i"]) for r in records} == {(w, i) for w in range(PROCESSES) for i in range(EVENTS)}
    assert len((tmp_path / "metrics.jsonl").read_text().splitlines()) == PROCESSES * EVENTS
    counters = store.read()["counters"]
    assert counters["ticks"] == PROCESSES * EVENTS
    assert all(counters[f"worker/{w}"] == EVENTS for w in range(PROCESSES))


def _spend(state_dir: str, results) -> None:
    store = SessionStore(Path(state_dir), "s")
    results.put(sum(store.spend("blocks/g/main", 5) for _ in range(40)))


def test_spending_a_block_budget_is_one_atomic_step(tmp_path: Path):
    ctx = multiprocessing.get_context("fork")
    results = ctx.Queue()
    procs = [ctx.Process(target=_spend, args=(str(tmp_path), results)) for _ in range(8)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    granted = sum(results.get() for _ in procs)
    assert granted == 5  # 320 attempts from 8 processes at once: exactly the budget is granted


def test_two_sessions_keep_separate_state(tmp_path: Path):
    a, b = SessionStore(tmp_path, "a"), SessionStore(tmp_path, "b")
    a.bump("k")
    b.append([{"event": "x"}])
    assert a.count("k") == 1 and b.count("k") == 0
    assert a.metrics() == [] and b.metrics() == [{"event": "x"}]


def test_reset_starts_a_session_from_nothing(tmp_path: Path):
    store = SessionStore(tmp_path, "s")
    store.bump("k")
    store.append([{"event": "x"}])
    store.push_notice("n")
    store.reset()
    assert store.read() == {} and store.metrics() == [] and store.pop_notices() == []
    assert (tmp_path / "metrics.jsonl").read_text().count("\n") == 1  # the lifetime log keeps it


def test_notices_are_delivered_once(tmp_path: Path):
    store = SessionStore(tmp_path, "s")
    store.push_notice("first")
    store.push_notice("second")
    assert store.pop_notices() == ["first", "second"]
    assert store.pop_notices() == []


def test_a_damaged_state_file_reads_as_empty(tmp_path: Path):
    store = SessionStore(tmp_path, "s")
    store.dir.mkdir(parents=True)
    store.state_path.write_text("{not json")
    assert store.read() == {} and store.bump("k") == 1


def test_session_ids_are_safe_directory_names():
    assert safe_session_dir_name("01a22be9-0546-7b81") == "01a22be9-0546-7b81"
    for hostile in ("../../etc", "a/b", "..", "", "x" * 500, "ses id"):
        name = safe_session_dir_name(hostile)
        assert "/" not in name and name not in (".", "..") and len(name) < 130


def test_project_role_and_stage_files(tmp_path: Path):
    project = Project(tmp_path)
    assert project.current_role() is None
    project.set_role("build")
    assert project.current_role() == "build"
    (tmp_path / ".hookgate" / "current_role").write_text("two words\n")
    assert project.current_role() is None  # not one word: no role, never a crash
    assert project.clear_role() and not project.clear_role()
    project.append_stage("gdd")
    (tmp_path / ".hookgate" / "stage.jsonl").open("a").write("{broken\n")
    project.append_stage("build")
    assert [e["role"] for e in project.stage_log()] == ["gdd", "build"]


def test_project_is_found_from_a_subdirectory(tmp_path: Path):
    (tmp_path / ".hookgate").mkdir()
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    assert Project.find(deep, env={}).root == tmp_path.resolve()
    assert Project.find(deep, env={"HOOKGATE_PROJECT_DIR": str(deep)}).root == deep.resolve()


def test_an_append_after_the_file_was_replaced_or_removed_lands_in_the_file_the_path_names(tmp_path):
    """locked.append keeps its descriptors open between calls (store/locked.py): a log replaced
    (a session reset) or removed since the last append gets the next line, not the old inode."""
    import os

    from hookgate.store import locked

    log = tmp_path / "logs" / "metrics.jsonl"
    locked.append(log, b"one\n")
    locked.append(log, b"two\n")
    assert log.read_bytes() == b"one\ntwo\n"
    locked.replace(log, b"")  # a new inode under the same name
    locked.append(log, b"three\n")
    assert log.read_bytes() == b"three\n"
    log.unlink()
    locked.append(log, b"four\n")
    assert log.read_bytes() == b"four\n"
    moved = tmp_path / "logs" / "old.jsonl"
    os.rename(log, moved)
    log.write_bytes(b"")  # another file took the name
    locked.append(log, b"five\n")
    assert log.read_bytes() == b"five\n" and moved.read_bytes() == b"four\n"


def test_a_fork_appends_through_its_own_descriptor_and_holds_its_own_lock(tmp_path):
    """A child shares its parent's open files, and a flock is held per open file: a child that
    appended through the parent's descriptor would not be excluded by the parent's lock."""
    import fcntl
    import os

    from hookgate.store import locked

    log = tmp_path / "metrics.jsonl"
    locked.append(log, b"parent\n")
    parent_fd = locked._appenders[str(log)][0]
    fcntl.flock(parent_fd, fcntl.LOCK_EX)  # the parent holds the lock, as during its own append
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its append must wait for the parent's lock
        try:
            locked.append(log, b"child\n")
            os.write(write, b"1" if locked._appenders[str(log)][0] != parent_fd else b"0")
        finally:
            os._exit(0)
    os.close(write)
    import select

    waited, _, _ = select.select([read], [], [], 1.0)
    assert waited == []  # the child is held by the parent's lock
    assert log.read_bytes() == b"parent\n"
    fcntl.flock(parent_fd, fcntl.LOCK_UN)
    assert os.read(read, 1) == b"1"  # it appended through a descriptor of its own
    os.waitpid(pid, 0)
    assert log.read_bytes() == b"parent\nchild\n"


STATE_FILES = ["current_role", "stage.jsonl", "config.toml", "role_owner.json", "stage_schemas.json", "hooks.json",
               "policies/p.py", "verify_report.json", "sessions/s/state.json", "sessions/s/notices.jsonl",
               "sessions/s/metrics.jsonl", "sessions/s/decisions.jsonl", "metrics.jsonl"]


@pytest.mark.parametrize("warm", ["on", "off"])
@pytest.mark.parametrize("name", STATE_FILES)
def test_a_fifo_in_place_of_a_state_file_neither_hangs_nor_lets_a_refused_write_through(tmp_path, name, warm):
    """The agent runs as the same user and may write some of these (the lead may write the role
    file and the stage log, by the preset's rules). A FIFO waits for a writer when opened for
    reading and for a reader when opened for writing, and a hook that never answers is let through
    by the runtime's timeout: before, the role file, the stage log, the notices and the three logs
    did that. Now every call is answered, and a Write the build role may not make is refused."""
    import os
    import subprocess

    from support import HOOKGATE, run_hook

    (tmp_path / ".hookgate" / "policies").mkdir(parents=True)
    (tmp_path / ".hookgate" / "sessions" / "s").mkdir(parents=True)
    (tmp_path / ".hookgate" / "current_role").write_text("build\n")
    (tmp_path / ".hookgate" / name).unlink(missing_ok=True)
    os.mkfifo(tmp_path / ".hookgate" / name)
    payload = {"hook_event_name": "PreToolUse", "session_id": "s", "cwd": str(tmp_path), "tool_name": "Write",
               "tool_input": {"file_path": str(tmp_path / "src" / "player.gd"), "content": "x"}}
    done = run_hook("claude", payload, tmp_path, "--event", "PreToolUse", env={"HOOKGATE_WARM": warm})
    denied = done.returncode == 0 and json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert denied or done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    if name in ("current_role", "stage.jsonl"):
        assert f"{name} is not a regular file".encode() in done.stderr
    if name == "current_role":  # `hookgate role set` mends it
        mended = subprocess.run([HOOKGATE, "role", "set", "build"], cwd=tmp_path, capture_output=True, timeout=60)
        assert mended.returncode == 0 and (tmp_path / ".hookgate" / name).read_text() == "build\n"
        payload["tool_input"]["file_path"] = str(tmp_path / "notes.txt")
        done = run_hook("claude", payload, tmp_path, "--event", "PreToolUse", env={"HOOKGATE_WARM": warm})
        assert done.returncode == 0 and b"deny" not in done.stdout, done.stderr


def test_write_all_writes_what_a_short_write_left(tmp_path, monkeypatch):
    """A write may take less than it is given (a full disk, a signal): the rest follows."""
    import os

    from hookgate.store import locked

    real_write = os.write
    taken = []

    def short(fd, data):
        taken.append(real_write(fd, bytes(data[:3])))
        return taken[-1]

    path = tmp_path / "log"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT)
    monkeypatch.setattr(os, "write", short)
    try:
        locked.write_all(fd, b"0123456789\n")
    finally:
        os.close(fd)
    assert path.read_bytes() == b"0123456789\n" and taken == [3, 3, 3, 2]
