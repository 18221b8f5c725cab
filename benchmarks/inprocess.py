"""The in-process benchmarks, run by benchmarks/run.py with the benchmark venv's interpreter (so
hookgate is the regular install). Prints one JSON object.

    python benchmarks/inprocess.py engine       decisions per second vs bare calls per second
    python benchmarks/inprocess.py completion   a Stop decision with a 1,000,000-line session log vs an empty one
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

import msgspec

from hookgate.engine.context import Context
from hookgate.hookcall import load_policy
from hookgate_claude import dialect

ROUNDS = 7
ROUND_SECONDS = 0.4
LOG_LINES = 1_000_000


def rate(fn: Callable[[], object], seconds: float = ROUND_SECONDS) -> float:
    """Calls per second of `fn`, run in batches for about `seconds`."""
    calls, batch, start = 0, 64, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        for _ in range(batch):
            fn()
        calls += batch
    return calls / elapsed


def interleaved(fns: dict[str, Callable[[], object]]) -> dict[str, float]:
    """The median rate of each, the functions taking turns round by round."""
    rates: dict[str, list[float]] = {name: [] for name in fns}
    for name, fn in fns.items():
        rate(fn, 0.1)  # warm-up: first-use caches, allocator
    for _ in range(ROUNDS):
        for name, fn in fns.items():
            rates[name].append(rate(fn))
    return {name: statistics.median(values) for name, values in rates.items()}


def project(root: Path, role: str = "build") -> None:
    """A project whose folders are there, as a game's are: the written files land in folders
    that exist (a write into a new folder costs a lookup more per missing folder)."""
    (root / ".hookgate").mkdir(parents=True)
    for folder in ("src", "docs"):
        (root / folder).mkdir()
    (root / ".hookgate" / "current_role").write_text(role + "\n")


def decider(root: Path, payload: dict) -> tuple[Callable[[], object], Callable[[], object]]:
    """(one engine decision on the real store, one bare call with the same arguments)."""
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


def engine() -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="hookgate-bench-") as tmp:
        root = Path(tmp)
        project(root)
        denied, bare = decider(root, {"hook_event_name": "PreToolUse", "tool_name": "Write",
                                      "tool_input": {"file_path": str(root / "src/player.gd"), "content": "x"}})
        allowed, _ = decider(root, {"hook_event_name": "PreToolUse", "tool_name": "Write",
                                    "tool_input": {"file_path": str(root / "docs/notes.md"), "content": "x"}})
        unmatched, _ = decider(root, {"hook_event_name": "PreToolUse", "tool_name": "Glob",
                                      "tool_input": {"pattern": "*"}})
        rates = interleaved({"bare call": bare, "PreToolUse Glob, no gate applies": unmatched,
                             "PreToolUse Write, allowed": allowed, "PreToolUse Write, denied": denied})
    return {"per_second": {k: round(v) for k, v in rates.items()}}


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
        rates = interleaved(deciders)
    return {"per_second": {k: round(v) for k, v in rates.items()}, "log_bytes": log_bytes,
            "cost_ratio": round(rates["empty log"] / rates[long_log], 2)}


if __name__ == "__main__":
    print(json.dumps({"engine": engine, "completion": completion}[sys.argv[1]]()))
