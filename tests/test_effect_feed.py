"""The effect check's change feed (effect/feed.py): a reading that looks only at what the feed saw
touched is the full reading, after each of a corpus of real writes and harmless commands, each
run by a real bash in the project, with what really changed taken from the files' bytes and
modes before and after. The corpus counts misses (a protected file the command changed that the
reading does not report) and false reports; both must be zero, and the feed reading must equal
the full one (the folders, the files found changed with their signatures, the files gone)."""

from __future__ import annotations

import mmap
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import msgspec
import pytest

from hookgate.effect import check, feed as feeds, tree as tree_module
from hookgate.effect.check import _reading
from hookgate.effect.feed import Feed
from hookgate.effect.tree import RACY_NS, Index, Skip, file_sig, read
from warm_support import warm  # noqa: F401 (a fixture)

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")


class Protection:
    """What the build role may not write, in miniature: the docs and the game code."""

    key = "test"

    @staticmethod
    def reason(rel: str) -> str | None:
        return "protected" if rel.endswith(".md") or rel.startswith("src/") else None


SKIP = Skip(frozenset({".git"}), frozenset())
TREE = {
    "README.md": "# game\n",
    "docs/PLAN.md": "- [ ] a\n- [ ] b\n",
    "docs/a/b/deep.md": "deep\n",
    "src/player.gd": "extends Node\nvar speed = 1\n",
    "src/enemies/slime.gd": "extends Node\n",
    "notes.txt": "notes\n",
    ".git/HEAD": "ref: main\n",
}

# (name, bash command run in the project; $OUT is a folder outside it on the same filesystem)
WRITES = [
    ("append", "echo x >> docs/PLAN.md"),
    ("sed -i (a new inode renamed over)", "sed -i 's/a/z/' docs/PLAN.md"),
    ("perl -pi", "perl -pi -e 's/b/y/' docs/PLAN.md"),
    ("truncate", "truncate -s 0 src/player.gd"),
    ("in place, same size", "printf Q | dd of=src/player.gd conv=notrunc bs=1 seek=0 status=none"),
    ("python open r+b", "python3 -c \"open('src/player.gd', 'r+b').write(b'Z')\""),
    ("mmap, same size", "python3 -c \"import mmap; f = open('docs/PLAN.md', 'r+b'); m = mmap.mmap(f.fileno(), 0); "
                        "m[0:1] = b'#'; m.flush()\""),
    ("mmap, mtime put back", "python3 -c \"import mmap, os; st = os.stat('docs/PLAN.md'); f = open('docs/PLAN.md', 'r+b'); "
                             "m = mmap.mmap(f.fileno(), 0); m[0:1] = b'#'; m.flush(); m.close(); f.close(); "
                             "os.utime('docs/PLAN.md', ns=(st.st_atime_ns, st.st_mtime_ns))\""),
    ("write, touch -r to hide it", "cp docs/PLAN.md $OUT/t && echo x >> docs/PLAN.md && touch -r $OUT/t docs/PLAN.md"),
    ("a hard link made outside, written", "ln docs/PLAN.md $OUT/link && echo evil >> $OUT/link"),
    ("a hard link outside, mmap through it", "ln src/player.gd $OUT/p && python3 -c \"import mmap; f = open('$OUT/p', 'r+b'); "
                                             "m = mmap.mmap(f.fileno(), 0); m[0:1] = b'#'\""),
    ("chmod", "chmod 600 docs/PLAN.md"),
    ("rm", "rm docs/PLAN.md"),
    ("mv away", "mv docs/PLAN.md docs/OLD.txt"),
    ("renamed over by a file made outside", "echo forged > $OUT/f && mv $OUT/f docs/PLAN.md"),
    ("cp over", "cp README.md docs/a/b/deep.md"),
    ("install over", "echo x > $OUT/i && install -m 644 $OUT/i docs/PLAN.md"),
    ("created", "echo x > docs/a/b/new.md"),
    ("created in new folders", "mkdir -p docs/new/deeper && echo x > docs/new/deeper/made.md"),
    ("a folder removed with its files", "rm -r docs/a"),
    ("a folder swapped for a symlink", "rm -r docs/a && ln -s ../src docs/a"),
    ("a file swapped for a symlink", "rm src/player.gd && ln -s /etc/hostname src/player.gd"),
    ("tar extracted over", "mkdir -p $OUT/t/docs && echo tarred > $OUT/t/docs/PLAN.md && tar -C $OUT/t -cf $OUT/t.tar docs "
                           "&& tar -xf $OUT/t.tar"),
    ("a folder moved", "mv docs/a docs/z"),
    ("many files at once", "for i in $(seq 50); do echo $i >> docs/a/b/deep.md; echo $i > docs/a/f$i.md; done"),
]
HARMLESS = [
    ("cat", "cat docs/PLAN.md src/player.gd > /dev/null"),
    ("ls -R", "ls -R > /dev/null"),
    ("grep -r", "grep -r speed . > /dev/null; true"),
    ("an unprotected file written", "echo more >> notes.txt"),
    ("a file made and removed outside", "echo x > $OUT/tmp && rm $OUT/tmp"),
    ("git's folder written", "echo x > .git/index"),
    ("opened for writing, nothing written", "python3 -c \"open('docs/PLAN.md', 'r+b').close()\""),
]


def state(root: Path) -> dict[str, tuple[bytes, int] | None]:
    """Every protected file's bytes and mode, read from disk (the ground truth)."""
    found: dict[str, tuple[bytes, int] | None] = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in files:
            rel = os.path.relpath(os.path.join(folder, name), root)
            if Protection.reason(rel):
                path = os.path.join(folder, name)
                st = os.lstat(path)
                found[rel] = (os.readlink(path).encode() if os.path.islink(path) else Path(path).read_bytes(), st.st_mode)
    return found


def indexed(root: str, index: Index) -> Index:
    """A reading as the check takes one through the feed (check._reading), made the new index."""
    now = time.time_ns()
    (dirs, _, changed, gone), token = _reading(index, root, now, Protection(), SKIP, True)
    files = dict(index.files)
    for rel in gone:
        files.pop(rel, None)
    for rel, st in changed.items():
        files[rel] = file_sig(st, now)
    return Index(key=index.key, t=now, dirs=dirs, files=files, feed=token)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    root = tmp_path / "game"
    outside = tmp_path / "outside"
    outside.mkdir()
    for rel, text in TREE.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    monkeypatch.setattr(feeds, "_live", True)
    monkeypatch.setattr(feeds, "_feeds", {})
    time.sleep(RACY_NS / 1e9 + 0.1)  # signatures that can be trusted
    index = indexed(str(root), Index(key="test"))  # read whole, everything watched after
    index = indexed(str(root), index)  # the paths first watched after it: looked at once more
    feed = feeds.for_root(str(root))
    assert feed is not None, "inotify is there on Linux"
    yield root, outside, feed, index
    for kept in feeds._feeds.values():
        kept.close()


def run(root: Path, outside: Path, command: str) -> None:
    done = subprocess.run(["bash", "-c", command], cwd=root, env={**os.environ, "OUT": str(outside)},
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def readings(root: Path, index: Index, feed: Feed):
    now = time.time_ns()
    full = read(index, str(root), now, Protection(), SKIP)
    _, touched = feed.since(index.feed)
    fed = read(index, str(root), now, Protection(), SKIP, touched)
    return full, fed, touched


def sig(changed: dict[str, os.stat_result]) -> dict[str, tuple[int, int, int, int, int]]:
    return {rel: (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_mode) for rel, st in changed.items()}


def reported(reading) -> set[str]:
    _, _, changed, gone = reading
    return set(changed) | set(gone)


@pytest.mark.parametrize("command", [c for _, c in WRITES], ids=[n for n, _ in WRITES])
def test_a_write_is_seen_by_the_feed_reading_as_by_the_full_one(project, command: str) -> None:
    root, outside, feed, index = project
    before = state(root)
    run(root, outside, command)
    after = state(root)
    really = {rel for rel in before.keys() | after.keys() if before.get(rel) != after.get(rel)}
    assert really, f"the case changed no protected file: {command}"
    full, fed, touched = readings(root, index, feed)
    missed = really - reported(fed)
    assert not missed, f"the feed reading missed {sorted(missed)}"
    assert fed[0] == full[0] and fed[1] == full[1]
    assert sig(fed[2]) == sig(full[2]) and sorted(fed[3]) == sorted(full[3])
    if touched is not None:  # the short way was taken: it looked at far fewer files than there are
        assert len(touched) < 60 or command.startswith("for")


@pytest.mark.parametrize("command", [c for _, c in HARMLESS], ids=[n for n, _ in HARMLESS])
def test_a_harmless_command_is_reported_by_neither_reading(project, command: str) -> None:
    root, outside, feed, index = project
    before = state(root)
    run(root, outside, command)
    assert state(root) == before
    full, fed, touched = readings(root, index, feed)
    assert touched is not None
    assert reported(fed) == reported(full) == set()
    assert fed[0] == full[0]


def test_readings_in_a_row_each_see_what_happened_since_the_one_before(project) -> None:
    """The index each reading makes carries the token the next one asks the feed from."""
    root, outside, feed, index = project
    for step, command in enumerate(["echo 1 >> docs/PLAN.md", "true", "mkdir -p docs/n && echo 2 > docs/n/x.md",
                                    "rm docs/n/x.md", "echo 3 >> src/enemies/slime.gd", "true"]):
        run(root, outside, command)
        full, fed, touched = readings(root, index, feed)
        assert touched is not None, step
        assert sig(fed[2]) == sig(full[2]) and sorted(fed[3]) == sorted(full[3]) and fed[0] == full[0], step
        index = indexed(str(root), index)


def test_a_token_of_another_feed_or_a_lost_queue_reads_the_tree_whole(project, tmp_path: Path) -> None:
    root, outside, feed, index = project
    other = feeds._start(str(root))
    assert other is not None
    try:
        assert other.since(index.feed)[1] is None
    finally:
        other.close()
    feed._event(-1, feeds.IN_Q_OVERFLOW, "", set())
    assert feed.since(index.feed)[1] is None
    renewed = feeds.for_root(str(root))
    assert renewed is not None and renewed is not feed and renewed.since(index.feed)[1] is None


def test_a_mapping_kept_open_across_the_reading_is_the_known_limit(project) -> None:
    """What the module's docstring names: a process that mapped a protected file before the
    reading, writes through the mapping and still holds it when the next reading comes makes no
    event by then. The full reading sees the times move; the feed reading does not, until the
    mapping is let go (its last reference to the file closes it, an event). Such a process is
    one kept running across calls, whose writes after a call the check keeps anyway."""
    root, outside, feed, index = project
    path = root / "docs" / "PLAN.md"
    with open(path, "r+b") as f:
        mapped = mmap.mmap(f.fileno(), 0)
    index = indexed(str(root), index)  # the open and close above: looked at once
    time.sleep(0.05)
    mapped[0:1] = b"#"
    mapped.flush()
    full, fed, touched = readings(root, index, feed)
    assert "docs/PLAN.md" in reported(full)
    assert touched is not None and "docs/PLAN.md" not in reported(fed)
    mapped.close()
    full, fed, touched = readings(root, index, feed)
    assert "docs/PLAN.md" in reported(fed) and sig(fed[2]) == sig(full[2])


def test_a_root_whose_watches_the_kernel_refuses_is_read_whole_and_not_watched_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past fs.inotify.max_user_watches every watch is refused: the reading is kept without a
    token (read whole next time), and the root gets no new feed, which would only add watches
    until refused again on every reading."""
    monkeypatch.setattr(feeds, "_live", True)
    monkeypatch.setattr(feeds, "_feeds", {})
    monkeypatch.setattr(feeds, "_refused", set())
    monkeypatch.setattr(feeds, "_errno", lambda: 28)  # ENOSPC
    refusing = Feed(str(tmp_path), os.open(os.devnull, os.O_RDONLY), lambda path, mask: -1)
    feeds._feeds[str(tmp_path)] = refusing
    assert feeds.for_root(str(tmp_path)) is refusing
    assert refusing.watch([""], []) is False and refusing.broken
    assert feeds.for_root(str(tmp_path)) is None
    assert feeds.for_root(str(tmp_path)) is None and str(tmp_path) in feeds._refused


def test_without_enable_a_process_keeps_no_feed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(feeds, "_live", False)
    assert feeds.for_root(str(tmp_path)) is None


# -- the whole check, decided as the OpenCode core decides it (in one process, the feed on) --------

@pytest.fixture
def core(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from effect_support import Project

    monkeypatch.setattr(feeds, "_live", True)
    monkeypatch.setattr(feeds, "_feeds", {})
    monkeypatch.setattr(check, "_skips", {})
    project = Project(tmp_path / "game").role("build")
    project.config("[gates.check_shell_writes]\nenabled = false\n")  # the effect check alone decides
    project.write("src/player.gd", "extends Node\n")
    for i in range(200):
        project.write(f"src/more/f{i}.gd", f"# {i}\n")
    time.sleep(RACY_NS / 1e9 + 0.1)
    walks: list[str] = []
    real_touched, real_dirs = tree_module.read_touched, tree_module.read_dirs
    monkeypatch.setattr(tree_module, "read_touched", lambda *a: walks.append("touched") or real_touched(*a))
    monkeypatch.setattr(tree_module, "read_dirs", lambda *a, **k: walks.append("whole") or real_dirs(*a, **k))
    yield project, walks
    for feed in feeds._feeds.values():
        feed.close()


def test_the_check_through_the_feed_puts_back_what_a_call_wrote(core) -> None:
    project, walks = core
    for _ in range(2):
        project.bash("true")  # read whole once, then settled
    walks.clear()
    outcome = project.bash("sed -i 's/Node/Evil/' src/player.gd && echo x > src/more/new.gd")
    assert outcome.post_blocked and "src/player.gd" in outcome.post_reason
    assert (project.root / "src/player.gd").read_text() == "extends Node\n"
    assert not (project.root / "src/more/new.gd").exists()
    assert walks.count("touched") == 2 and "whole" not in walks[:walks.index("touched") + 1]


def test_a_reading_left_by_another_process_is_read_whole_once_then_followed(core) -> None:
    """A new core (another feed) finds an index whose token is not its own: it reads the tree
    whole once; the unchanged reading is not written again, and the next readings still ask the
    feed from the token that reading was true at (Feed.settle)."""
    project, walks = core
    for _ in range(2):
        project.bash("true")
    time.sleep(RACY_NS / 1e9 + 0.05)  # the role claim's change of .hookgate/ older than a tick: no folder moves
    project.bash("true")
    for feed in feeds._feeds.values():  # as if this process had ended and a new core begun
        feed.close()
    feeds._feeds.clear()
    walks.clear()
    project.bash("true")
    assert walks[0] == "whole"
    walks.clear()
    for _ in range(3):
        project.bash("cat src/player.gd > /dev/null")
    assert walks == ["touched"] * 6
    outcome = project.bash("echo gone > src/player.gd")
    assert outcome.post_blocked and (project.root / "src/player.gd").read_text() == "extends Node\n"


# Commands run outside any checked call (a user's terminal, another program) that move where
# hookgate's own files land, each after a setup run before the answer is first worked out: the
# effect scan skips what those files resolve to, so a kept answer that missed one would scan
# hookgate's own writes as protected, or skip protected files.
OWN_MOVES = [
    ("the session folder swapped for a symlink into the game code", "",
     "rm -rf .hookgate/sessions && ln -s ../src .hookgate/sessions"),
    ("the session folder renamed away, a symlink renamed in", "",
     "mv .hookgate/sessions $OUT/s && ln -s ../src/more $OUT/l && mv $OUT/l .hookgate/sessions"),
    ("the lifetime log made a symlink to a game file", "",
     "rm -f .hookgate/metrics.jsonl && ln -s ../src/player.gd .hookgate/metrics.jsonl"),
    ("the role owner note made a symlink to a folder", "",
     "rm -f .hookgate/role_owner.json && ln -s ../src/more .hookgate/role_owner.json"),
    ("the state folder moved out and linked back", "", "mv .hookgate $OUT/state && ln -s $OUT/state .hookgate"),
    ("the state folder linked into the game code", "",
     "mkdir -p src/hg && cp -r .hookgate/. src/hg/ && rm -rf .hookgate && ln -s src/hg .hookgate"),
    ("the role owner note's symlink undone", "ln -s ../src/more .hookgate/role_owner.json",
     "rm .hookgate/role_owner.json"),
]


def own_context(project, feed: bool = True):
    """A decision's context in `project`; feed=False: its config keeps no change feed, so skip_for
    works its answer out from the files."""
    from hookgate.engine.context import Context
    from hookgate.hookcall import load_policy

    policy = load_policy(str(project.root), {"HOOKGATE_PROJECT_DIR": str(project.root)})
    config = policy.config
    if not feed:
        config = msgspec.structs.replace(config, effect=msgspec.structs.replace(config.effect, feed=False))
    return Context(project=policy.project, session=policy.project.session(project.session), config=config)


@pytest.mark.parametrize("setup,command", [case[1:] for case in OWN_MOVES], ids=[case[0] for case in OWN_MOVES])
def test_what_hookgate_skips_follows_its_own_files_where_a_command_moved_them(
        core, tmp_path: Path, setup: str, command: str) -> None:
    """The answer the core keeps (skip_for with the feed) equals the one worked out from the files,
    after each command of the corpus; the corpus moves that answer (the ground truth is the
    kernel's resolution before and after, not a label), and a later checked call still sees it."""
    project, _ = core
    outside = tmp_path / "outside"
    outside.mkdir()
    if setup:
        run(project.root, outside, setup)
    for _ in range(2):
        project.bash("true")  # the project read through the feed, its folders watched
    before = check.skip_for(own_context(project))
    assert before == check.skip_for(own_context(project, feed=False))
    run(project.root, outside, command)
    now = check.skip_for(own_context(project, feed=False))
    assert now != before, "the command moved where hookgate's files land"
    assert check.skip_for(own_context(project)) == now
    project.bash("true")
    assert check.skip_for(own_context(project)) == check.skip_for(own_context(project, feed=False))


def test_the_answer_is_kept_while_only_other_files_change(core, monkeypatch: pytest.MonkeyPatch) -> None:
    project, _ = core
    for _ in range(2):
        project.bash("true")
    ctx = own_context(project)
    kept = check.skip_for(ctx)
    lookups: list[str] = []
    real = check.resolved
    monkeypatch.setattr(check, "resolved", lambda path: lookups.append(path) or real(path))
    for command in ("echo x > src/more/new.gd", "mkdir -p src/deeper && echo y > src/deeper/a.gd", "rm src/more/f1.gd"):
        subprocess.run(["bash", "-c", command], cwd=project.root, check=True)
        assert check.skip_for(ctx) is kept
    assert lookups == []
    (project.root / ".hookgate" / "extra").write_text("x")  # a change in the state folder: worked out again
    assert check.skip_for(ctx) == kept and lookups


# -- the warm core's forks, asking the core's feed (real `hookgate hook` processes, a real core) ----

WARM_WRITES = [
    "echo x >> src/player.gd",
    "sed -i 's/Node/Evil/' src/player.gd",
    "python3 -c \"import mmap; f = open('src/player.gd', 'r+b'); m = mmap.mmap(f.fileno(), 0); m[0:1] = b'#'\"",
    "ln src/player.gd $OUT/link && echo evil >> $OUT/link",
    "mkdir -p src/new/deeper && echo x > src/new/deeper/made.gd",
    "rm src/more/f3.gd",
]


def test_the_warm_core_feeds_its_forks_and_every_write_is_put_back(tmp_path: Path, warm) -> None:
    """Each call is a `hookgate hook claude` process answered by a fork of the project's core; the
    forks' readings ask the core's feed (the index each writes carries the core's token, and a
    settled call looks again at a handful of paths, not the tree), and every forbidden write of
    the corpus is put back, read from disk."""
    from hookgate.effect.store import store_for

    root = tmp_path / "game"
    (root / ".hookgate").mkdir(parents=True)
    (root / ".hookgate" / "current_role").write_text("build\n")
    (root / ".hookgate" / "config.toml").write_text("[gates.check_shell_writes]\nenabled = false\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    for i in range(300):
        (root / "src" / "more").mkdir(parents=True, exist_ok=True)
        (root / "src" / "more" / f"f{i}.gd").write_text(f"# {i}\n")
    (root / "src" / "player.gd").write_text("extends Node\n")
    env = warm.env()
    assert warm.warm("start", root).returncode == 0
    calls = iter(range(1000))

    def bash(command: str) -> bytes:
        call = f"toolu_w{next(calls)}"
        base = {"session_id": "s1", "cwd": str(root), "tool_name": "Bash", "tool_input": {"command": command},
                "tool_use_id": call}
        pre, _, code = warm.hook("claude", {**base, "hook_event_name": "PreToolUse"}, root, env)
        assert code == 0 and b'"deny"' not in pre, pre
        subprocess.run(["bash", "-c", command], cwd=root, env={**os.environ, "OUT": str(outside)}, check=True)
        post, _, code = warm.hook("claude", {**base, "hook_event_name": "PostToolUse", "tool_response": "ok"}, root, env)
        assert code == 0
        return post

    time.sleep(RACY_NS / 1e9 + 0.1)
    for _ in range(3):
        bash("true")
    store = store_for(root, env)

    def feed_id() -> str:
        (index,) = [store._load(path) for path in store.dir.glob("index-*.msgpack")]
        assert index is not None and index.feed, "a fork's reading carries a feed's token"
        return index.feed.partition(":")[0]

    core_feed = feed_id()
    for command in WARM_WRITES:
        before = state(root)
        answer = bash(command)
        assert b'"decision":"block"' in answer, (command, answer)
        assert state(root) == before, command
        assert feed_id() == core_feed, "every fork asked the one feed the core keeps"
        time.sleep(RACY_NS / 1e9 + 0.05)  # the put-back files' signatures settle
    assert warm.answered(root, 2 * (3 + len(WARM_WRITES))) >= 2 * (3 + len(WARM_WRITES))


def test_a_fork_asking_the_cores_feed_is_answered_before_the_core_forks_again(tmp_path: Path, warm) -> None:
    """A fork's feed questions wake the core in the middle of that fork's call. The core used to
    make the taken fork's replacement right then: a copy of the core (milliseconds of page tables)
    that held the answer to the call's next question, and a scratch decision competing with the
    call for the CPU (11 ms of a 41 ms Bash PreToolUse in the benchmark project). Traced with
    strace: the core makes no fork between the taken fork's first question and its answer."""
    import shutil

    assert shutil.which("strace"), "strace is missing: `make strace` installs Debian's (`make test` does)"
    root = tmp_path / "game"
    (root / ".hookgate").mkdir(parents=True)
    (root / ".hookgate" / "current_role").write_text("build\n")
    for i in range(50):
        (root / "src" / "more").mkdir(parents=True, exist_ok=True)
        (root / "src" / "more" / f"f{i}.gd").write_text(f"# {i}\n")
    env = warm.env()
    assert warm.warm("start", root).returncode == 0
    base = {"session_id": "s1", "cwd": str(root), "tool_name": "Bash", "tool_input": {"command": "true"}}

    def pre(call: str) -> None:
        _, _, code = warm.hook("claude", {**base, "hook_event_name": "PreToolUse", "tool_use_id": call}, root, env)
        assert code == 0

    for i in range(3):
        pre(f"toolu_{i}")  # readings settled, forks made after each call
    time.sleep(1.5)
    (lock,) = (warm.runtime_dir / "hookgate").glob("*.lock")
    core = int(lock.read_text().split()[0])
    forks = subprocess.run(["pgrep", "-P", str(core)], capture_output=True, text=True).stdout.split()
    log = tmp_path / "strace.log"
    tracer = subprocess.Popen(["strace", "-f", "-tt", "-e", "trace=clone,clone3,sendto,write", "-o", str(log),
                               "-p", ",".join([str(core), *forks])], stderr=subprocess.PIPE, text=True)
    try:
        assert tracer.stderr is not None
        for _ in forks + [core]:
            assert "attached" in tracer.stderr.readline()
        pre("toolu_traced")
        time.sleep(1.5)  # the core makes the replacement once the call is answered
    finally:
        tracer.send_signal(signal.SIGINT)
        tracer.wait(timeout=30)
    lines = [line.split(None, 2) for line in log.read_text().splitlines() if line.count(" ") >= 2]
    seconds = lambda at: sum(float(part) * unit for part, unit in zip(at.split(":"), (3600, 60, 1)))  # noqa: E731
    asking = [(pid, seconds(at)) for pid, at, call in lines if call.startswith("sendto(") and "reading" in call]
    assert asking, "the traced call asked the core's feed"
    taken, asked_at = asking[0]
    (answered_at,) = [seconds(at) for pid, at, call in lines if pid == taken and call.startswith('write(') and '".", 1' in call]
    cloned = [seconds(at) for pid, at, call in lines if pid == str(core) and call.startswith(("clone(", "clone3("))]
    assert cloned, "the core replaced the taken fork"
    assert not [at for at in cloned if asked_at <= at <= answered_at], (asked_at, answered_at, cloned)
