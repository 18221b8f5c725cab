"""`hookgate demo`, the README's main job, runs end to end and every verdict is the expected one."""

import os
import subprocess
import sys
import time
from pathlib import Path

from hookgate.runtimes import NAMES, STDIN, plug
from hookgate.demo.session import ACTS

HOOKGATE = str(Path(sys.executable).with_name("hookgate"))


def test_the_demo_plays_every_act_through_every_adapter(tmp_path):
    done = subprocess.run([HOOKGATE, "demo", "--keep", str(tmp_path)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    for number, act in enumerate(ACTS, 1):
        row = next(line for line in lines if line.startswith(f"{number:>2}. "))
        verdicts = dict(zip(NAMES, row.split()[-len(NAMES):]))
        expected = act.expect.upper() if act.expect == "block" else act.expect
        for runtime, verdict in verdicts.items():
            # a malformed payload reaches only the stdin runtimes; a subagent's act only a runtime
            # whose payloads can say who made the call
            unplayable = (act.stdin_only and runtime not in STDIN) or (
                act.agent and not getattr(plug(runtime).module("demo"), "SUBAGENT_IDENTITY", True))
            assert verdict == ("n/a" if unplayable else expected), row
    assert "Traceback" not in done.stderr and "(!)" not in done.stdout
    assert "parity: which gate each runtime can enforce" in done.stdout
    # every runtime's project kept its own metrics
    for runtime in NAMES:
        assert list((tmp_path / runtime / ".hookgate" / "sessions").glob("*/metrics.jsonl"))
    assert _warm_processes(tmp_path) == [], "the demo leaves no warm core of its projects behind"


def test_a_kept_demo_project_does_not_govern_the_next_demo(tmp_path):
    """Each played project is its own session: a session stays governed by the root its first call
    came from (store/pin.py), and a project kept with --keep outlives its run. With one session id
    for every run, the second demo here was judged by the first one's project (5 wrong verdicts)."""
    for name in ("first", "second"):
        done = subprocess.run([HOOKGATE, "demo", "--keep", str(tmp_path / name)], capture_output=True, text=True,
                              timeout=600)
        assert done.returncode == 0 and "(!)" not in done.stdout, name + ":\n" + done.stdout + done.stderr


def _warm_processes(base: Path, wait: float = 5.0) -> list[str]:
    """The command lines of `hookgate warm` processes (cores and their forks) of projects under
    `base`, once the forks of a stopped core have had `wait` seconds to leave."""
    deadline = time.monotonic() + wait
    while True:
        found = [cmd for cmd in _command_lines() if "hookgate warm" in cmd and f"--project {base}/" in cmd]
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


def _command_lines() -> list[str]:
    lines = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            lines.append(Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"))
        except OSError:  # gone meanwhile
            continue
    return lines


def test_gemini_plays_no_act_of_a_subagent_and_every_act_of_the_lead(tmp_path):
    """Gemini CLI's payloads carry no subagent identity: its column says n/a there, never a verdict
    reached as if the lead had made the call; the lead's acts come to the expected verdicts."""
    from hookgate.demo import hookgate_command, prepare, stop_cores

    prepare(tmp_path)
    try:
        outcomes = plug("gemini").module("demo").play(ACTS, tmp_path, hookgate_command())
    finally:
        stop_cores([tmp_path])  # its hook calls started the project's warm core
    for act, outcome in zip(ACTS, outcomes, strict=True):
        assert outcome.verdict == ("n/a" if act.agent else act.expect), act.title


def test_opencode_hears_of_the_worker_only_through_session_events(tmp_path):
    demo = plug("opencode").module("demo")
    calls = demo.calls(ACTS, tmp_path)
    created = [c for c in calls if c["hook"] == "event"]
    assert [c["input"]["event"]["properties"]["info"].get("parentID") for c in created] == [None, demo.ROOT_SESSION]
    tool_calls = [c for c in calls if c["hook"] == "tool.execute.before"]
    assert all(set(c["input"]) == {"tool", "sessionID", "callID"} for c in tool_calls)
