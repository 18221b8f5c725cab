"""The in-process benchmarks, run by benchmarks/run.py with the benchmark venv's interpreter (so
hookgate is the regular install). Prints one JSON object.

    python benchmarks/inprocess.py engine       decisions per second vs bare calls per second
    python benchmarks/inprocess.py completion   a Stop decision with a 1,000,000-line session log vs an empty one
    python benchmarks/inprocess.py pause        an allowed Write after a pause vs right after another
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

import msgspec

from hookgate.engine.context import Context
from hookgate.engine.deadline import keep_timer
from hookgate.hookcall import load_policy
from hookgate.store.kept import keep_answers
from hookgate.store.locked import RACY_SECONDS
from hookgate_claude import dialect

ROUNDS = 7
ROUND_SECONDS = 0.4
PAUSE_SECONDS = 0.033  # about a process spawn: what a call finds the OpenCode core after, in the benchmark
PAUSED_CALLS = 200
LOG_LINES = 1_000_000
ALLOWED, DENIED = "PreToolUse Write, allowed", "PreToolUse Write, denied"
JUDGED = (ALLOWED, DENIED)  # the role-judged Writes the 50,000/s target is for
# a decision -> the row of its system calls alone (a refused Write, settled, makes none)
FLOORS = {ALLOWED: "its system calls alone, allowed"}


def rate(fn: Callable[[], object], seconds: float = ROUND_SECONDS) -> float:
    """Calls per second of `fn`, run in batches for about `seconds`."""
    calls, batch, start = 0, 64, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        for _ in range(batch):
            fn()
        calls += batch
    return calls / elapsed


def interleaved(fns: dict[str, Callable[[], object]]) -> dict[str, list[float]]:
    """Each one's rate in every round, the functions taking turns round by round (benchmarks/run.py
    takes the medians, the spreads and the ratios round by round)."""
    rates: dict[str, list[float]] = {name: [] for name in fns}
    for name, fn in fns.items():
        rate(fn, 0.1)  # warm-up: first-use caches, allocator
    for _ in range(ROUNDS):
        for name, fn in fns.items():
            rates[name].append(rate(fn))
    return rates


def project(root: Path, role: str = "build") -> None:
    """A project whose folders are there, as a game's are: the written files land in folders
    that exist (a write into a new folder costs a lookup more per missing folder)."""
    (root / ".hookgate").mkdir(parents=True)
    for folder in ("src", "docs"):
        (root / folder).mkdir()
    (root / ".hookgate" / "current_role").write_text(role + "\n")


def settled() -> None:
    """Wait out the racy window (store/locked.py): a file younger than it (the role file, the
    owner note a session's first decision writes) is read again on every look, which no session
    pays past its first seconds."""
    time.sleep(RACY_SECONDS + 0.1)


def decider(root: Path, payload: dict) -> tuple[Callable[[], object], Callable[[], object]]:
    """(one engine decision on the real store, one bare call with the same arguments), the
    gates' timer handler installed for good and the filesystem's answers kept, as the cores that
    decide event after event keep them."""
    keep_timer()
    keep_answers()
    policy = load_policy(str(root), {"HOOKGATE_PROJECT_DIR": str(root)})
    (event,) = dialect.decode(msgspec.json.encode({"session_id": "bench", "cwd": str(root), **payload}))
    session = policy.project.session("bench")

    def decide() -> object:
        return policy.engine.evaluate(event, Context(project=policy.project, session=session, config=policy.config))

    def noop(event: object, ctx: object) -> None:
        return None

    def bare() -> object:
        return noop(event, Context(project=policy.project, session=session, config=policy.config))

    return decide, bare


def syscall_floor(root: Path) -> Callable[[], object]:
    """The system calls an allowed Write's decision makes, in their order, with as little Python
    around them as will make them: what no engine written in Python can go below, measured beside
    the engine so that its cost above the floor shows. The filesystem's answers are kept across
    decisions and the kernel tells the deciding thread of a change by a signal (store/kept.py), so
    a decision in a settled project asks the kernel nothing: a refused Write makes no system
    call, an allowed one its note in the effect ledger under the ledger's lock, 3 calls
    (tests/test_bench_floor.py traces both and compares them call by call). The gates' timer
    costs none either: its handler stays installed and the timer armed from one decision to the
    next, as in the long-running cores (deadline.keep_timer), and is armed again once per gate
    timeout."""
    from hookgate.effect.store import store_for

    ledger = str(store_for(root).ledger_path)
    os.makedirs(os.path.dirname(ledger), exist_ok=True)
    fd = os.open(ledger, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)  # kept open, as hookgate keeps it
    line = b'{"t":0,"call":"bench/1","paths":["docs/notes.md"]}\n'

    def decide() -> object:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.write(fd, line)
        return fcntl.flock(fd, fcntl.LOCK_UN)

    return decide


def engine() -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="hookgate-bench-") as tmp:
        root = Path(tmp)
        project(root)
        refused_path, allowed_path = str(root / "src/player.gd"), str(root / "docs/notes.md")
        denied, bare = decider(root, {"hook_event_name": "PreToolUse", "tool_name": "Write",
                                      "tool_input": {"file_path": refused_path, "content": "x"}})
        allowed, _ = decider(root, {"hook_event_name": "PreToolUse", "tool_name": "Write",
                                    "tool_input": {"file_path": allowed_path, "content": "x"}})
        unmatched, _ = decider(root, {"hook_event_name": "PreToolUse", "tool_name": "Glob",
                                      "tool_input": {"pattern": "*"}})
        allowed()  # the role's owner note and the ledger exist from here on, as in a session
        settled()
        rates = interleaved({"bare call": bare, "PreToolUse Glob, nothing written": unmatched,
                             ALLOWED: allowed, DENIED: denied,
                             FLOORS[ALLOWED]: syscall_floor(root)})
    return {"rounds": rates, "judged": JUDGED, "floors": FLOORS}


def completion() -> dict[str, object]:
    """The same Stop decision (build, workers dispatched, verifier and reviewer run: the gate
    counts and lets it through) in a session whose log is empty and in one of 1,000,000 lines."""
    line = msgspec.json.encode({"ts": "2026-01-01T00:00:00.000Z", "event": "file_write", "session_id": "bench",
                                "runtime": "claude", "agent_id": "main", "file": "src/player.gd"}) + b"\n"
    state = msgspec.json.encode({"pipeline": {"roles": {"worker": 3, "verifier": 1, "reviewer": 1}}})
    long_log = f"{LOG_LINES:,}-line log"
    deciders = {}
    with tempfile.TemporaryDirectory(prefix="hookgate-bench-") as tmp:
        for name, folder, lines in (("empty log", "empty", 0), (long_log, "long", LOG_LINES)):
            root = Path(tmp) / folder
            project(root)
            session_dir = root / ".hookgate" / "sessions" / "bench"
            session_dir.mkdir(parents=True)
            (session_dir / "state.json").write_bytes(state)
            with open(session_dir / "metrics.jsonl", "wb") as log:
                for _ in range(lines // 10_000):
                    log.write(line * 10_000)
            deciders[name], _ = decider(root, {"hook_event_name": "Stop", "stop_hook_active": False})
        log_bytes = (Path(tmp) / "long" / ".hookgate" / "sessions" / "bench" / "metrics.jsonl").stat().st_size
        settled()
        rates = interleaved(deciders)
    return {"rounds": rates, "log_bytes": log_bytes, "baseline": "empty log", "long": long_log}


def pause() -> dict[str, object]:
    """The same allowed Write decided right after a pause (the process slept, as the OpenCode core
    waits for its next call) and at once after that, pair by pair: what a pause costs a decision
    on this machine, which bounds a call after a spawn (README, "After a pause")."""
    with tempfile.TemporaryDirectory(prefix="hookgate-bench-") as tmp:
        root = Path(tmp)
        project(root)
        allowed, _ = decider(root, {"hook_event_name": "PreToolUse", "tool_name": "Write",
                                    "tool_input": {"file_path": str(root / "docs/notes.md"), "content": "x"}})
        allowed()
        settled()
        after_pause: list[float] = []
        at_once: list[float] = []
        for _ in range(PAUSED_CALLS):
            time.sleep(PAUSE_SECONDS)
            for times in (after_pause, at_once):
                started = time.perf_counter()
                allowed()
                times.append(time.perf_counter() - started)
    return {"after_pause_s": after_pause, "at_once_s": at_once, "pause_s": PAUSE_SECONDS}


if __name__ == "__main__":
    print(json.dumps({"engine": engine, "completion": completion, "pause": pause}[sys.argv[1]]()))
