"""Many `hookgate hook claude` processes at once on one session, as parallel tool calls and
subagents make them: no metrics line lost, torn or doubled, counters exact, and two sessions of
one project never see each other's records or budgets.

Every call is a real `hookgate hook claude` process. They go through the project's warm core
(the test asserts the core answered every one of them): 8,000 cold processes would take several
minutes of CPU on two cores, and the core's forks write through the same locked store, so what is
proven here holds for the in-process path as well (tests/test_store.py drives the store itself
from 16 processes)."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from pipeline_support import Pipeline
from warm_support import Warm, warm  # noqa: F401 (a fixture)

pytestmark = pytest.mark.slow

WORKERS = 16
EVENTS = 500
START_EVERY = 4  # one call in four is a subagent start (a locked read-modify-write of the state)


def event(root: Path, session: str, worker: int, n: int) -> dict[str, Any]:
    base = {"session_id": session, "cwd": str(root)}
    if n % START_EVERY == 0:
        return {**base, "hook_event_name": "SubagentStart", "agent_id": f"a{worker}-{n}", "agent_type": "worker"}
    return {**base, "hook_event_name": "PreToolUse", "tool_name": "Write",
            "tool_input": {"file_path": f"src/w{worker}-{n}.gd", "content": ""}}


def run_worker(warm: Warm, root: Path, session: str, worker: int, events: int) -> list[tuple[bytes, bytes, int]]:
    env = warm.env()
    return [warm.hook("claude", event(root, session, worker, n), root, env) for n in range(events)]


def lines(path: Path) -> list[dict[str, Any]]:
    raw = path.read_bytes()
    assert raw.endswith(b"\n")
    return [json.loads(line) for line in raw.split(b"\n")[:-1]]  # a torn line would not parse


def expected_marks(session: str, workers: range, events: int) -> dict[str, list[str]]:
    """What each worker's calls must have left, by metrics event: file_write and hook_block per
    write (the build role forbids game code), subagent_start per start."""
    marks: dict[str, list[str]] = {"file_write": [], "hook_block": [], "subagent_start": []}
    for worker in workers:
        for n in range(events):
            if n % START_EVERY == 0:
                marks["subagent_start"].append(f"a{worker}-{n}")
            else:
                marks["file_write"].append(f"w{worker}-{n}.gd")
                marks["hook_block"].append(f"w{worker}-{n}.gd")
    return {k: sorted(v) for k, v in marks.items()}


def marks_of(records: list[dict[str, Any]], session: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {"file_write": [], "hook_block": [], "subagent_start": []}
    for record in records:
        if record["session_id"] != session:
            continue
        if record["event"] == "file_write":
            found["file_write"].append(record["file"])
        elif record["event"] == "hook_block" and record["gate"] == "check_file_permissions":
            found["hook_block"].append(record["reason"].split("(")[1].split(")")[0])
        elif record["event"] == "subagent_start":
            found["subagent_start"].append(record["agent_id"])
    return {k: sorted(v) for k, v in found.items()}


def test_16_processes_x_500_events_on_one_session(warm: Warm, tmp_path: Path) -> None:
    root = tmp_path
    session = Pipeline(root, "one").role("build")
    assert warm.warm("start", root).returncode == 0
    with ThreadPoolExecutor(WORKERS) as pool:
        replies = [r for rs in pool.map(lambda w: run_worker(warm, root, "one", w, EVENTS), range(WORKERS)) for r in rs]
    total = WORKERS * EVENTS
    assert warm.answered(root, total) == total  # the path: every call was answered by the warm core
    assert all(code == 0 and b"Traceback" not in err for _, err, code in replies)
    expected = expected_marks("one", range(WORKERS), EVENTS)
    assert sum(b'"permissionDecision":"deny"' in out for out, _, _ in replies) == len(expected["file_write"])

    session_log = lines(session.session_dir / "metrics.jsonl")
    assert marks_of(session_log, "one") == expected  # every line there once, none torn, none doubled
    assert len(session_log) == sum(map(len, expected.values()))
    assert marks_of(lines(root / ".hookgate" / "metrics.jsonl"), "one") == expected  # the lifetime log too

    pipeline = session.state()["pipeline"]
    assert pipeline["roles"] == {"worker": len(expected["subagent_start"])}  # a locked read-modify-write each
    assert sorted(pipeline["agents"]) == sorted(expected["subagent_start"])


def test_two_sessions_in_one_project_do_not_disturb_each_other(warm: Warm, tmp_path: Path) -> None:
    root = tmp_path
    sessions = {name: Pipeline(root, name) for name in ("left", "right")}
    sessions["left"].role("build").ready_to_dispatch()
    assert warm.warm("start", root).returncode == 0
    workers, events = 8, 60

    def stops(name: str) -> list[tuple[bytes, bytes, int]]:
        """The lead of each session tries to stop, again and again: its own budget of 5 holds."""
        env = warm.env()
        body = {"session_id": name, "cwd": str(root), "hook_event_name": "Stop", "stop_hook_active": False}
        return [warm.hook("claude", body, root, env) for _ in range(7)]

    with ThreadPoolExecutor(workers + 2) as pool:
        calls = [pool.submit(run_worker, warm, root, name, w, events) for name in sessions for w in range(workers // 2)]
        for call in calls:
            call.result()
        held = {name: pool.submit(stops, name) for name in sessions}
        answers = {name: future.result() for name, future in held.items()}
    assert warm.answered(root, workers * events + 14) == workers * events + 14

    for name, session in sessions.items():
        log = lines(session.session_dir / "metrics.jsonl")
        assert {r["session_id"] for r in log} == {name}
        assert marks_of(log, name) == expected_marks(name, range(workers // 2), events)
        assert session.state()["pipeline"]["roles"] == {"worker": workers // 2 * events // START_EVERY}
        assert events % START_EVERY == 0
        holds = [r for r in log if r["event"] == "hook_block" and r["gate"] == "check_completion"]
        released = [r for r in log if r["event"] == "hook_force_allow"]
        assert (len(holds), len(released)) == (5, 2)  # each session its own bound, untouched by the other
        assert [b'"decision":"block"' in out for out, _, _ in answers[name]] == [True] * 5 + [False] * 2
