"""A runaway model on the real OpenCode: it ignores every block and every hold. The lead writes a
file its role forbids, again, then claims to be done, again and again; its worker never writes
the report it is asked for. The session must still end by itself, within the bounds the project
configured, with every release recorded as `unverified` and the forbidden file never written.

OpenCode has no Stop hook: the plugin decides Stop on the turn's final text and holds the session
by queueing the reason as a user message, inside the loop (a subagent's SubagentStop the same way,
in its child session). Run twice: with the project's own bounds (config.toml: 3 holds of the lead's
stop, 1 of the worker's), so the test proves they are honoured, and with the preset's (5 and 2)."""

from __future__ import annotations

import tomllib
from importlib.resources import files
from pathlib import Path
from typing import NamedTuple

import pytest

from drivers.opencode import configure, hookgate_log, run_opencode
from harness.fakemodel import Call, FakeModel, Say
from harness.runtimes import hookgate, metrics, new_project

pytestmark = pytest.mark.real



class Bounds(NamedTuple):
    stop_holds: int  # check_completion's block_limit (per session)
    report_holds: int  # check_worker_report's (per agent)
    config: str | None  # the project's config.toml, if it sets them


PRESET = tomllib.loads(files("hookgate.presets").joinpath("godot.toml").read_text())["gates"]
BOUNDS = {
    "configured": Bounds(3, 1, "[gates.check_completion]\nblock_limit = 3\n\n[gates.check_worker_report]\nblock_limit = 1\n"),
    "preset": Bounds(PRESET["check_completion"]["block_limit"], PRESET["check_worker_report"]["block_limit"], None),
}
GIVEN_UP = "All finished."
DID_IT = "I did the work."
HOLD = "[hookgate] You may not stop yet:"


@pytest.mark.parametrize("bounds", BOUNDS.values(), ids=BOUNDS.keys())
def test_opencode_ends_a_runaway_session_within_the_configured_bounds(tmp_path: Path, fake_model: FakeModel,
                                                                      bounds: Bounds) -> None:
    stop_holds, report_holds = bounds.stop_holds, bounds.report_holds
    work, home = new_project(tmp_path)
    hookgate("install", "opencode", "--project", str(work), cwd=work)
    for name in ("project.godot", "GDD.md", "PLAN.md", "STRUCTURE.md"):
        (work / name).write_text("")
    (work / "src").mkdir()  # a write that got through would land
    hookgate("stage", "complete", "gdd", cwd=work)
    hookgate("role", "set", "build", cwd=work)
    if bounds.config:
        (work / ".hookgate" / "config.toml").write_text(bounds.config)
    configure(work, home, fake_model)
    worker = fake_model.script("ra_oc_worker", Say(DID_IT))  # never the report it is asked for
    lead = fake_model.script(
        "ra_oc_lead",
        Call("task", {"description": "worker: M1", "prompt": f"{worker} implement M1", "subagent_type": "general"}),
        Call("write", {"filePath": str(work / "src" / "player.gd"), "content": "extends Node\n"}),
        Call("write", {"filePath": str(work / "src" / "player.gd"), "content": "extends Node\n"}),
        Say(GIVEN_UP),  # asked again after each hold (holds are user messages, not tool turns): the same
    )
    run = run_opencode(work, home, f"{lead} build it")
    assert run.returncode == 0, run.stderr[-3000:]  # the session ended by itself

    records = metrics(work)
    blocks = [m for m in records if m["event"] == "hook_block"]
    released = [m for m in records if m["event"] == "hook_force_allow"]
    # the forbidden write, tried twice, refused twice; the file never exists
    assert [b["gate"] for b in blocks if b["gate"] == "check_file_permissions"] == ["check_file_permissions"] * 2
    assert not (work / "src" / "player.gd").exists()
    # the lead's stop: held exactly the configured number of times, then let go as unverified
    holds = [b for b in blocks if b["gate"] == "check_completion"]
    assert len(holds) == stop_holds and all("Cannot finish build yet" in h["reason"] for h in holds)
    lead_released = [r for r in released if r["gate"] == "check_completion"]
    assert [(r["outcome_kind"], r["count"], r["runtime"]) for r in lead_released] == [("unverified", stop_holds, "opencode")]
    # the worker's report: refused the configured number of times, then let go, recorded unverified
    assert len([b for b in blocks if b["gate"] == "check_worker_report"]) == report_holds
    assert [(r["outcome_kind"], r["count"]) for r in released if r["gate"] == "check_worker_report"] == [
        ("unverified", report_holds)]
    stops = [(m["role"], m["outcome_kind"]) for m in records if m["event"] == "subagent_stop"]
    assert stops == [("worker", "rejected_attempt")] * report_holds + [("worker", "unverified")]
    assert not [m for m in records if m["event"] == "worker_done"]  # an unverified report is no result

    # the worker was held the configured number of times (each hold reached it as its next message), then let go
    worker_turns = fake_model.seen("ra_oc_worker")
    assert len(worker_turns) == 1 + report_holds
    assert any(t.startswith(HOLD) and "properly formatted report" in t for t in worker_turns[-1].user_texts)
    # the lead said it was done, was held, said it again: one more time than the bound, then the end
    gave_up = [r for r in fake_model.seen("ra_oc_lead") if r.reply == Say(GIVEN_UP)]
    assert len(gave_up) == stop_holds + 1
    held = [t for t in gave_up[-1].user_texts if t.startswith(HOLD)]
    assert len(held) == stop_holds and all("Cannot finish build yet" in t for t in held)
    # the release told the user, through the plugin, that the stop went through unverified
    assert any(f"has blocked {stop_holds} times (the limit per session); letting this through UNVERIFIED" in line
               for line in hookgate_log(run.stderr))
