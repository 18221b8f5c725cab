"""store/kept.py: the filesystem's answers a long-running core keeps across decisions, and the
kernel's change queue that drops them. An agent's shell changes the project between two decisions
(real bash, real files), and the keeping process must decide as the filesystem now is: the
ground truth is where the write lands (realpath after the change), what the role file holds and
how many stages the stage log holds (their bytes after the change), never a label."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Iterator

import pytest

from hookgate.store import kept
from support import decider


@pytest.fixture
def keeping(monkeypatch: pytest.MonkeyPatch) -> Iterator[kept.Kept]:
    monkeypatch.setattr(kept, "_kept", None)
    answers = kept.keep_answers()
    assert answers is not None, "no inotify here"
    yield answers
    answers.close()


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    project = tmp_path / "game"
    for folder in (".hookgate", "docs/notes", "docs/real", "e2e", "src"):
        (project / folder).mkdir(parents=True)
    (project / ".hookgate" / "current_role").write_text("build\n")
    return project


# (what the agent's shell does, in the project; the path then written)
PLACES = [
    ("rm -r docs/notes && ln -s ../e2e docs/notes", "docs/notes/plan.md"),
    ('mv docs/notes docs/old && ln -s "$PWD/e2e" docs/notes', "docs/notes/plan.md"),
    ("mv docs docs.away && ln -s e2e docs", "docs/notes/plan.md"),
    ("ln -s ../../e2e/plan.md docs/notes/plan.md", "docs/notes/plan.md"),
    ("rm -r docs/notes && ln -s real docs/notes && ln -sfn ../e2e docs/notes.next && mv -T docs/notes.next docs/notes",
     "docs/notes/plan.md"),
    ('python3 - <<"EOF"\nimport os\nos.rename("docs/notes", "docs/gone")\nos.symlink("../e2e", "docs/notes")\nEOF',
     "docs/notes/plan.md"),
    ("rm -r docs/notes && mkdir docs/notes", "docs/notes/plan.md"),  # a new folder, same name: still allowed
    ("ln -s ../e2e docs/inbox", "docs/inbox/plan.md"),  # a name that did not exist when first judged
    ("touch docs/notes/other.md", "docs/notes/plan.md"),  # nothing on the way changed
]
# links set up before the first decision: the route holds a symlink, so nothing is kept for it
LINKED = [
    ("ln -sfn ../e2e docs/notes.next && mv -T docs/notes.next docs/linked", "docs/linked/plan.md"),
    ("ln -sfn e2e hop.next && mv -T hop.next hop", "docs/chain/plan.md"),
]


def shell(root: Path, command: str) -> None:
    subprocess.run(["bash", "-c", command], cwd=root, check=True, timeout=30)


@pytest.mark.parametrize("command,written", PLACES + LINKED, ids=[c.split("\n")[0][:60] for c, _ in PLACES + LINKED])
def test_a_change_between_two_decisions_is_judged_where_the_write_now_lands(keeping: kept.Kept, root: Path,
                                                                             command: str, written: str) -> None:
    shell(root, "ln -s real docs/linked && mkdir -p hop.real && ln -s hop.real hop && ln -s ../hop docs/chain")
    decide = decider(root)
    target = str(root / written)
    first = decide(target)
    assert first is None and decide(target) is None  # docs/ is the build role's; the second is kept
    shell(root, command)
    lands_in_e2e = os.path.realpath(target).startswith(str(root / "e2e") + os.sep)
    after = decide(target)
    assert (after is not None) == lands_in_e2e, (command, os.path.realpath(target), after)
    if lands_in_e2e:
        assert "e2e" in after


# what the agent's shell does to the role file; the role it then names is read from its bytes
ROLES = [
    "echo asset > .hookgate/current_role",
    "printf 'asset\\n' > .hookgate/r.tmp && mv .hookgate/r.tmp .hookgate/current_role",
    "sed -i s/build/asset/ .hookgate/current_role",
    "rm .hookgate/current_role",
    "ln .hookgate/current_role outside-link && echo asset > outside-link",  # another name, same file
    "echo asset > elsewhere && ln -sf ../elsewhere .hookgate/current_role",
    'python3 -c "open(\'.hookgate/current_role\', \'r+\').write(\'asset\')"',  # same length, in place
    "touch .hookgate/current_role",  # unchanged role
    "mkdir other && echo asset > other/current_role && mv .hookgate .hookgate.old && ln -s other .hookgate",
    "mkdir other && echo asset > other/current_role && cp -a .hookgate/. other/ 2>/dev/null; "
    "echo asset > other/current_role && rm -r .hookgate && mv other .hookgate",  # the state folder replaced
]


@pytest.mark.parametrize("command", ROLES)
def test_a_role_changed_between_two_decisions_is_the_role_judged(keeping: kept.Kept, root: Path, command: str) -> None:
    decide = decider(root)
    code = str(root / "src" / "player.gd")
    assert "Build role" in (decide(code) or "") and "Build role" in (decide(code) or "")
    shell(root, command)
    role_file = root / ".hookgate" / "current_role"
    role = role_file.read_text().strip() if role_file.exists() else None
    reason = decide(code)
    if role is None:
        assert reason is None
    else:
        assert f"{role.capitalize()} role" in (reason or ""), (command, role, reason)


def test_an_answer_is_asked_again_only_after_a_change_on_its_way(keeping: kept.Kept, root: Path) -> None:
    asked: list[str] = []

    def work() -> str:
        asked.append("asked")
        return "answer"

    path = str(root / "docs" / "notes" / "plan.md")

    def look() -> int:
        assert keeping.look(("test", path), work, route=path) == "answer"
        return len(asked)

    assert [look() for _ in range(3)] == [1, 1, 1]
    (root.parent / "elsewhere").mkdir()  # a new name beside the way, not on it
    (root / "docs" / "notes" / "other.md").write_text("x")  # the agent's last Write: a new file
    (root / "src" / "player.gd").write_text("x")  # a folder off the way
    assert look() == 1
    (root / "docs" / "notes" / "plan.md").write_text("x")  # the name itself appears
    assert look() == 2
    os.chmod(root / "docs", 0o700)  # a folder on the way: its attributes
    assert look() == 3
    (root / "docs").rename(root / "docs.away")  # a folder on the way: moved
    assert look() == 4
    (root / "docs.away").rename(root / "docs")  # and back: the watches follow the paths, not the folders
    assert look() == 5
    assert look() == 5
    (root / "docs" / "notes" / "plan.md").unlink()
    assert look() == 6


class _CountedQueue:
    """The store's poll of its queue, counted."""

    def __init__(self, queue: object) -> None:
        self.queue, self.polls = queue, 0

    def poll(self, timeout: int) -> object:
        self.polls += 1
        return self.queue.poll(timeout)  # type: ignore[attr-defined]

    def __getattr__(self, name: str) -> object:
        return getattr(self.queue, name)


def test_a_told_store_asks_its_queue_only_after_the_kernel_told_it_of_a_change(
        keeping: kept.Kept, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The deciding (main) thread's store is told of changes by a signal, and polls its queue only
    once told; what another process changed is still seen by the very next look."""
    assert keeping.told_of_changes()
    queue = _CountedQueue(keeping._queued)
    monkeypatch.setattr(keeping, "_queued", queue)
    decide = decider(root)
    code = str(root / "src" / "player.gd")
    assert "Build role" in (decide(code) or "")
    asked = queue.polls
    for _ in range(5):
        assert "Build role" in (decide(code) or "")
    assert queue.polls == asked  # nothing changed: no poll
    shell(root, "echo asset > .hookgate/current_role")
    assert "Asset role" in (decide(code) or "")
    assert queue.polls > asked
    # (the decision noted the new role's owner: its own write tells the store too)
    assert "Asset role" in (decide(code) or "")
    asked = queue.polls
    for _ in range(5):
        assert "Asset role" in (decide(code) or "")
    assert queue.polls == asked


def test_while_another_handler_holds_sigurg_every_look_asks(keeping: kept.Kept, root: Path) -> None:
    """A handler a policy installs over the store's would leave the store never told: from then
    on the store asks its queue at every look, and gives its handler back no thought."""
    import signal

    decide = decider(root)
    code = str(root / "src" / "player.gd")
    assert "Build role" in (decide(code) or "")
    heard: list[int] = []
    previous = signal.signal(signal.SIGURG, lambda signum, frame: heard.append(signum))
    try:
        for role in ("asset", "build", "asset"):
            shell(root, f"echo {role} > .hookgate/current_role")
            assert f"{role.capitalize()} role" in (decide(code) or "")
        assert heard  # the queue did raise it, to the other handler
    finally:
        signal.signal(signal.SIGURG, previous)


def test_a_program_s_own_sigurg_handler_is_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    import signal

    def programs(signum: int, frame: object) -> None:
        pass

    monkeypatch.setattr(kept, "_kept", None)
    previous = signal.signal(signal.SIGURG, programs)
    try:
        answers = kept.keep_answers()
        assert answers is not None
        assert not answers.told_of_changes()
        assert signal.getsignal(signal.SIGURG) is programs
        answers.close()
        assert signal.getsignal(signal.SIGURG) is programs  # closing gives back only its own
    finally:
        signal.signal(signal.SIGURG, previous)


def test_a_store_off_the_main_thread_is_not_told() -> None:
    import threading

    told: list[bool] = []

    def make() -> None:
        store = kept.new_store()
        assert store is not None
        told.append(store.told_of_changes())
        store.close()

    thread = threading.Thread(target=make)
    thread.start()
    thread.join()
    assert told == [False]


def test_nothing_is_kept_through_a_symlink_or_for_a_symlinked_file(keeping: kept.Kept, root: Path) -> None:
    (root / "docs" / "linked").symlink_to(root / "docs" / "real")
    (root / "role.link").symlink_to(root / ".hookgate" / "current_role")
    asked: list[str] = []
    for _ in range(2):
        keeping.look("route", lambda: asked.append("route"), route=str(root / "docs" / "linked" / "x.md"))
        keeping.look("file", lambda: asked.append("file"), files=(str(root / "role.link"),))
        keeping.look("dotted", lambda: asked.append("dotted"), route=str(root / "docs" / ".." / "src" / "x.gd"))
    assert asked == ["route", "file", "dotted"] * 2


def test_many_changes_in_a_row_are_each_seen(keeping: kept.Kept, root: Path) -> None:
    """Each of the roles written in turn (a new file each time, renamed over the last) is the one
    the next decision judges."""
    decide = decider(root)
    role_file = root / ".hookgate" / "current_role"
    code = str(root / "src" / "player.gd")
    for turn in range(200):
        role = ("asset", "build")[turn % 2]
        (root / ".hookgate" / "role.tmp").write_text(role + "\n")
        (root / ".hookgate" / "role.tmp").replace(role_file)
        assert f"{role.capitalize()} role" in (decide(code) or "")
        assert f"{role.capitalize()} role" in (decide(code) or "")


def test_a_change_off_the_way_keeps_the_watches_and_one_on_it_watches_again(keeping: kept.Kept, root: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A new file in a watched folder drops the answers but not the watches, whose paths still name
    what they watched; a folder on the way replaced is watched again, as the folder it is now."""
    tried: list[tuple[str, bool]] = []  # (path, watched)
    add_watch = keeping._add_watch

    def counted(fd: int, path: bytes, mask: int) -> int:
        wd = add_watch(fd, path, mask)
        tried.append((os.fsdecode(path), wd >= 0))
        return wd

    monkeypatch.setattr(keeping, "_add_watch", counted)
    decide = decider(root)
    target = str(root / "docs" / "notes" / "plan.md")
    assert decide(target) is None  # the first decision makes the session's and the ledger's folders
    (root / "docs" / "notes" / "first.md").write_text("x")
    assert decide(target) is None
    first = len(tried)
    assert any(watched for _, watched in tried)
    (root / "docs" / "notes" / "other.md").write_text("x")  # the agent's last Write: a new file
    assert decide(target) is None
    assert not [path for path, watched in tried[first:] if watched]
    (root / "docs" / "notes").rename(root / "docs" / "old")
    (root / "docs" / "notes").symlink_to(root / "e2e")
    assert "e2e" in (decide(target) or "")
    assert (str(root / "docs" / "notes"), False) in tried[first:]  # a symlink now: not watched, not kept


def test_events_lost_to_a_full_queue_drop_everything(keeping: kept.Kept, root: Path) -> None:
    """More changes than the kernel queues (fs.inotify.max_queued_events) between two decisions:
    the queue reports an overflow, and the next decision asks the filesystem again."""
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    decide = decider(root)
    code = str(root / "src" / "player.gd")
    assert "Build role" in (decide(code) or "")
    first, second = root / ".hookgate" / "a", root / ".hookgate" / "b"
    first.write_text("")
    second.write_text("")
    for turn in range(limit // 2 + 10):  # two files in turn, so that no event merges with the last
        os.utime(first, ns=(turn, turn))
        os.utime(second, ns=(turn, turn))
    (root / ".hookgate" / "current_role").write_text("asset\n")
    assert "Asset role" in (decide(code) or "")
    (root / ".hookgate" / "current_role").write_text("build\n")  # the queue opened anew tells too
    assert "Build role" in (decide(code) or "")


def test_a_forked_child_keeps_nothing_and_leaves_its_parent_the_queue(keeping: kept.Kept, root: Path) -> None:
    decide = decider(root)
    code = str(root / "src" / "player.gd")
    assert "Build role" in (decide(code) or "")
    pid = os.fork()
    if pid == 0:  # the child: nothing kept, and it must not drain its parent's queue
        os._exit(0 if kept.current() is None else 1)
    assert os.waitpid(pid, 0)[1] == 0
    (root / ".hookgate" / "current_role").write_text("asset\n")
    assert "Asset role" in (decide(code) or "")


def test_another_thread_neither_uses_nor_fills_the_store(keeping: kept.Kept, root: Path) -> None:
    """The store is the deciding thread's: a look from another thread (a core's reload watcher,
    say) asks the filesystem and keeps nothing, so it cannot race the deciding thread's answers."""
    import threading

    asked: list[str] = []
    path = str(root / "docs" / "notes" / "plan.md")

    def look(name: str) -> None:
        kept.look(("test", path), lambda: asked.append(name), route=path)

    for _ in range(2):
        thread = threading.Thread(target=look, args=("other",))
        thread.start()
        thread.join()
    look("deciding")
    look("deciding")
    assert asked == ["other", "other", "deciding"]


# what the agent's shell does to the log of completed stages (`hookgate stage complete` appends to
# it); the stages then counted are read from its bytes
STAGES = [
    "echo '{\"role\": \"asset\"}' >> .hookgate/stage.jsonl",
    "sed -i 's/design/asset/' .hookgate/stage.jsonl",
    "printf '' > .hookgate/stage.jsonl",
    "rm .hookgate/stage.jsonl",
    "cp .hookgate/stage.jsonl s.tmp && echo '{\"role\": \"asset\"}' >> s.tmp && mv s.tmp .hookgate/stage.jsonl",
    "echo '{\"role\": \"asset\"}' > elsewhere && ln -sf ../elsewhere .hookgate/stage.jsonl",
    'python3 -c "open(\'.hookgate/stage.jsonl\', \'r+\').write(\'{\\"role\\": \\"asset\\" }\')"',  # in place
    "mkdir other && cp .hookgate/current_role other/ && mv .hookgate .hookgate.old && ln -s other .hookgate",
    "touch .hookgate/stage.jsonl",  # the same stages
]


def stages_in(path: Path) -> int:
    """The stages a log holds, read from its bytes here: lines that are JSON objects naming a role."""
    if not path.exists():
        return 0
    count = 0
    for line in path.read_bytes().splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        count += isinstance(entry, dict) and isinstance(entry.get("role"), str)
    return count


@pytest.mark.parametrize("command", STAGES)
def test_the_stages_counted_after_a_change_are_those_in_the_log(keeping: kept.Kept, root: Path, command: str) -> None:
    from hookgate.store.project import Project

    log = root / ".hookgate" / "stage.jsonl"
    log.write_text('{"role": "design", "ts": "2026-01-01T00:00:00Z"}\n')
    project = Project.open(root)
    assert len(project.stage_log()) == len(project.stage_log()) == 1  # the second is kept
    shell(root, command)
    assert len(project.stage_log()) == stages_in(log), (command, log.read_bytes() if log.exists() else None)
