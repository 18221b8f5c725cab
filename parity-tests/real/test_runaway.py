"""A runaway model on the real runtimes: it ignores every block and every hold. The lead writes a
file its role forbids, again, then claims to be done, again and again; its worker never writes
the report it is asked for. The session must still end by itself, within the bounds the project
configured, with every release recorded as `unverified` and the forbidden file never written.

The bounds are the project's own (config.toml), not the defaults, so the test proves they are
honoured: 3 holds of the lead's stop, 1 of the worker's. The hook calls go the default way: the
first one in-process, which starts the project's warm core, the rest through the core."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from drivers import codex
from drivers.claude import copy_agents, run_claude
from harness.fakemodel import Call, FakeModel, Say
from harness.runtimes import HOOKGATE, base_env, hookgate, metrics, new_project

pytestmark = pytest.mark.real

STOP_HOLDS, REPORT_HOLDS = 3, 1
CONFIG = f"""\
[gates.check_completion]
block_limit = {STOP_HOLDS}

[gates.check_worker_report]
block_limit = {REPORT_HOLDS}
"""
GIVEN_UP = "All finished."
WORKER = "---\nname: worker\ndescription: the pipeline's worker\n---\nYou are the worker. Do what you are asked.\n"


def configure(work: Path, home: Path, run_hookgate) -> None:
    """Role build, ready to dispatch workers, with the project's own bounds."""
    for name in ("project.godot", "GDD.md", "PLAN.md", "STRUCTURE.md"):
        (work / name).write_text("")
    (work / "src").mkdir()  # a write that got through would land
    run_hookgate("stage", "complete", "gdd")
    run_hookgate("role", "set", "build")
    (work / ".hookgate" / "config.toml").write_text(CONFIG)


def check_bounded(work: Path, home: Path, write_gate: str) -> list[dict]:
    """What every runaway session must have left behind, whatever the runtime."""
    records = metrics(work)
    blocks = [m for m in records if m["event"] == "hook_block"]
    released = [m for m in records if m["event"] == "hook_force_allow"]
    # the forbidden write, tried twice, refused twice; the file never exists
    assert [b["gate"] for b in blocks if b["gate"] == write_gate] == [write_gate] * 2
    assert not (work / "src" / "player.gd").exists()
    # the lead's stop: held exactly the configured number of times, then let go as unverified
    holds = [b for b in blocks if b["gate"] == "check_completion"]
    assert len(holds) == STOP_HOLDS and all("Cannot finish build yet" in h["reason"] for h in holds)
    lead = [r for r in released if r["gate"] == "check_completion"]
    assert lead and all((r["outcome_kind"], r["count"]) == ("unverified", STOP_HOLDS) for r in lead)
    # the worker's report: refused the configured number of times, then let go, recorded unverified
    assert len([b for b in blocks if b["gate"] == "check_worker_report"]) == REPORT_HOLDS
    assert [(r["outcome_kind"], r["count"]) for r in released if r["gate"] == "check_worker_report"] == [
        ("unverified", REPORT_HOLDS)]
    stops = [(m["role"], m["outcome_kind"]) for m in records if m["event"] == "subagent_stop"]
    assert stops == [("worker", "rejected_attempt")] * REPORT_HOLDS + [("worker", "unverified")]
    assert not [m for m in records if m["event"] == "worker_done"]  # an unverified report is no result
    # the path the calls took: the first in-process, then the warm core it started
    status = subprocess.run([str(HOOKGATE), "warm", "status"], cwd=work, env=base_env(home), capture_output=True,
                            text=True)
    assert status.returncode == 0 and " 0 calls answered" not in status.stdout, status.stdout
    return records


def test_claude_code_ends_a_runaway_session_within_the_configured_bounds(tmp_path: Path, fake_model: FakeModel) -> None:
    work, home = new_project(tmp_path)
    hookgate("install", "claude", "--project", str(work), cwd=work)
    copy_agents(work, {"worker": WORKER})
    configure(work, home, lambda *args: hookgate(*args, cwd=work))
    worker = fake_model.script("ra_cc_worker", Say("I did the work."))  # never the report it is asked for
    lead = fake_model.script(
        "ra_cc_lead",
        Call("Agent", {"description": "worker: M1", "prompt": f"{worker} implement M1", "subagent_type": "worker"}),
        Call("Write", {"file_path": str(work / "src" / "player.gd"), "content": "extends Node\n"}),
        Call("Write", {"file_path": str(work / "src" / "player.gd"), "content": "extends Node\n"}),
        Say(GIVEN_UP),
    )
    run = run_claude(work, home, fake_model, f"{lead} build it")
    assert run.returncode == 0, run.stderr  # the session ended by itself

    check_bounded(work, home, "check_file_permissions")
    # the worker was told what was missing once, then let go
    worker_turns = fake_model.seen("ra_cc_worker")
    assert len(worker_turns) == 1 + REPORT_HOLDS
    assert any("properly formatted report" in t for t in worker_turns[-1].user_texts)
    # the lead said it was done, was held, said it again: one more time than the bound, then the end
    # (Claude Code may run one more turn for the finished subagent's notification, before the first
    # hold or after the release, whichever way the background worker's timing falls)
    gave_up = [r for r in fake_model.seen("ra_cc_lead") if r.reply == Say(GIVEN_UP)]
    assert STOP_HOLDS + 1 <= len(gave_up) <= STOP_HOLDS + 2
    # the transcript keeps every hold: the last request carries each of them, and no more
    held = [t for t in gave_up[-1].user_texts if t.startswith("<system-reminder>\nStop hook blocking error")]
    assert len(held) == STOP_HOLDS and all("Cannot finish build yet" in t for t in held)


def test_codex_ends_a_runaway_session_within_the_configured_bounds(tmp_path: Path, fake_model: FakeModel) -> None:
    work, home = new_project(tmp_path)
    codex.write_config(home, fake_model)
    codex.hookgate("install", "codex", "--user", cwd=work, home=home)
    configure(work, home, lambda *args: codex.hookgate(*args, cwd=work, home=home))
    worker = fake_model.script("ra_cx_worker", Say("I did the work."))
    lead = fake_model.script(
        "ra_cx_lead",
        Call("spawn_agent", {"message": f"worker: M1\n{worker} implement M1"}, namespace="multi_agent_v1"),
        Call("wait_agent", {"targets": ["{{last_json.agent_id}}"]}, namespace="multi_agent_v1"),
        Call("exec_command", {"cmd": f"echo 'extends Node' > {work / 'src' / 'player.gd'}"}),
        Call("exec_command", {"cmd": f"echo 'extends Node' > {work / 'src' / 'player.gd'}"}),
        Say(GIVEN_UP),
    )
    run = codex.run_codex(work, home, f"{lead} build it")
    assert run.returncode == 0, run.stderr

    check_bounded(work, home, "check_shell_writes")
    assert len(fake_model.seen("ra_cx_worker")) == 1 + REPORT_HOLDS
    gave_up = [r for r in fake_model.seen("ra_cx_lead") if r.reply == Say(GIVEN_UP)]
    assert len(gave_up) == STOP_HOLDS + 1
    assert sum("Cannot finish build yet" in t for t in gave_up[-1].user_texts) == STOP_HOLDS
    assert run.stderr.count("hook: Stop Blocked") == STOP_HOLDS
