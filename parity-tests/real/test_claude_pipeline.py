"""The pipeline gate pack on the real Claude Code (pinned), driven by the scripted fake model.

One scenario per gate family: role write, stage append, prerequisite, report block then accept,
completion hold. Each checks the effect on disk, what reached the model, and the metrics."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.fakemodel import Call, FakeModel, Say
from harness.runtimes import copy_agents, hookgate, metrics, new_project, run_claude

pytestmark = pytest.mark.real

WORKER_REPORT = """## Report: M1 Player movement
### Status: DONE
### Files Changed
- `src/player.gd`: movement
### Tests
test_player.gd (gdunit): 5 tests -- 5 passed, 0 failed
### Build
build OK
"""

AGENTS = {
    role: f"---\nname: {role}\ndescription: the pipeline's {role}\n---\nYou are the {role}. Do what you are asked.\n"
    for role in ("worker", "verifier", "reviewer")
}


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, Path]:
    work, home = new_project(tmp_path)
    hookgate("install", "claude", "--project", str(work), cwd=work)
    copy_agents(work, AGENTS)
    return work, home


def ready_to_build(work: Path) -> None:
    """What build needs before it may dispatch: the gdd stage completed (validated) and project.godot."""
    for name in ("project.godot", "GDD.md", "PLAN.md", "STRUCTURE.md"):
        (work / name).write_text("")
    hookgate("stage", "complete", "gdd", cwd=work)


def test_completion_is_held_until_the_bound_then_released_unverified(project, fake_model: FakeModel) -> None:
    """build: a worker ran, no verifier or reviewer. Each time the lead tries to stop, hookgate
    holds the stop and tells it what is missing; after 5 holds the stop goes through, recorded
    `unverified`, before Claude Code's own cap of 8 would end the turn silently."""
    work, home = project
    ready_to_build(work)
    hookgate("role", "set", "build", cwd=work)
    worker = fake_model.script("pl_cc_worker", Say(WORKER_REPORT))
    marker = fake_model.script(
        "pl_cc_hold",
        Call("Agent", {"description": "worker: M1", "prompt": f"{worker} implement M1", "subagent_type": "worker"}),
        Say("All finished."),
    )
    run = run_claude(work, home, fake_model, f"{marker} build it")
    assert run.returncode == 0, run.stderr

    records = metrics(work)
    starts = [m for m in records if m["event"] == "subagent_start"]
    assert [(s["agent_type"], s["role"]) for s in starts] == [("worker", "worker")]
    holds = [m for m in records if m["event"] == "hook_block" and m["gate"] == "check_completion"]
    assert len(holds) == 5
    assert all("0 verifiers" in h["reason"] and "0 reviewers" in h["reason"] for h in holds)
    # Claude Code 2.1.332 runs one more turn after the release (a background-task notification for
    # the finished subagent); that turn's stop is released again, never held past the bound
    released = [m for m in records if m["event"] == "hook_force_allow"]
    assert released and all((r["gate"], r["outcome_kind"], r["count"]) == ("check_completion", "unverified", 5)
                            for r in released)
    [stop] = [m for m in records if m["event"] == "subagent_stop"]
    assert (stop["role"], stop["outcome_kind"]) == ("worker", "terminal")
    # the hold reached the model as its next instruction
    lead_texts = [t for r in fake_model.seen("pl_cc_hold") for t in r.user_texts]
    assert any("Cannot finish build yet" in t for t in lead_texts), lead_texts
