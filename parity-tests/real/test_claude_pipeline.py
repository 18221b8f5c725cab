"""The pipeline gate pack on the real Claude Code (pinned), driven by the scripted fake model.

One scenario per gate family: role write, stage append, prerequisite, report block then accept,
completion hold. Each checks the effect on disk, what reached the model, and the metrics."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from drivers.claude import copy_agents, run_claude
from harness.fakemodel import API, MARKER, Call, FakeModel, Say, Step
from harness.reports import REVIEWER_REPORT, VERIFIER_REPORT, WORKER_REPORT
from harness.runtimes import hookgate, metrics, new_project

pytestmark = pytest.mark.real


class RevisingModel(FakeModel):
    """The scripted model, plus one thing a real subagent does: once a hook refused its report,
    it hands in a revised one. (The script's step only advances with tool calls, and a refused
    stop adds none.)"""

    def __init__(self) -> None:
        super().__init__()
        self.revisions: dict[str, tuple[str, Step]] = {}

    def revise(self, scenario: str, when: str, then: Step) -> None:
        self.revisions[scenario] = (when, then)

    def reply_for(self, api: str, path: str, body: dict[str, Any]) -> Step:
        reply = super().reply_for(api, path, body)
        texts = API[api].user_texts(body)
        scenario = next((m.group(1) for t in texts for m in [MARKER.search(t)] if m), None)
        if scenario in self.revisions and body.get("tools"):
            when, then = self.revisions[scenario]
            if any(when in text for text in texts):
                self.requests[-1].reply = then
                return then
        return reply


@pytest.fixture
def revising_model():
    with RevisingModel() as model:
        yield model


def lead_texts(model: FakeModel, scenario: str) -> list[str]:
    return [t for r in model.seen(scenario) for t in r.user_texts + r.tool_results]


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


def test_role_writes_are_blocked_by_every_tool(project, fake_model: FakeModel) -> None:
    """build: game code and e2e/ are not the lead's to write, whether by Write or by a shell
    command; the lead may not look at asset images itself; an ordinary note goes through."""
    work, home = project
    hookgate("role", "set", "build", cwd=work)
    (work / "e2e").mkdir()
    (work / "e2e" / "test_play.gd").write_text("original\n")
    (work / "assets").mkdir()
    (work / "assets" / "hero.png").write_bytes(b"\x89PNG")
    marker = fake_model.script(
        "pl_cc_roles",
        Call("Write", {"file_path": str(work / "src" / "player.gd"), "content": "extends Node\n"}),
        Call("Bash", {"command": "sed -i 's/original/changed/' e2e/test_play.gd"}),
        Call("Bash", {"command": "cat > src/enemy.gd <<'EOF'\nextends Node\nEOF"}),
        Call("Read", {"file_path": str(work / "assets" / "hero.png")}),
        Call("Bash", {"command": "echo ok > notes.txt && grep -c original e2e/test_play.gd >&2"}),
        Say("done"),
    )
    run = run_claude(work, home, fake_model, f"{marker} build")
    assert run.returncode == 0, run.stderr
    assert not (work / "src" / "player.gd").exists() and not (work / "src" / "enemy.gd").exists()
    assert (work / "e2e" / "test_play.gd").read_text() == "original\n"
    assert (work / "notes.txt").read_text() == "ok\n"
    results = fake_model.tool_results("pl_cc_roles")
    for reason in ("Build role cannot write game code directly (player.gd)",
                   "Build role cannot write to e2e/ (test_play.gd). E2E tests are owned by the Evaluator. "
                   "(via `sed -i s/original/changed/ e2e/test_play.gd`)",
                   "Build role cannot write game code directly (enemy.gd)",
                   "cannot read image files in assets/ directly. Dispatch an analyst subagent to analyze 'hero.png'"):
        assert any(reason in r for r in results), (reason, results)
    gates = [m["gate"] for m in metrics(work) if m["event"] == "hook_block"]
    assert gates == ["check_file_permissions", "check_shell_writes", "check_shell_writes", "check_asset_access"]


def test_stage_appends_are_validated_and_the_next_role_is_named(project, fake_model: FakeModel) -> None:
    """An append whose outputs do not validate is refused with what is missing; a shell append
    is refused outright; once the outputs hold, the append goes through and the model is told
    the next role's command."""
    work, home = project
    hookgate("role", "set", "build", cwd=work)
    (work / "PLAN.md").write_text("| Task | Status |\n|---|---|\n| M1 | verified |\n| M2 | pending |\n")
    log = work / ".hookgate" / "stage.jsonl"
    line = json.dumps({"role": "build", "ts": "2026-01-01T00:00:00Z"})
    marker = fake_model.script(
        "pl_cc_stage",
        Call("Write", {"file_path": str(log), "content": line + "\n"}),
        Call("Bash", {"command": f"echo '{line}' >> .hookgate/stage.jsonl"}),
        Call("Bash", {"command": "sed -i 's/| pending |/| verified |/' PLAN.md"}),
        Call("Write", {"file_path": str(log), "content": line + "\n"}),
        Say("build recorded"),
    )
    run = run_claude(work, home, fake_model, f"{marker} finish build")
    assert run.returncode == 0, run.stderr
    results = fake_model.tool_results("pl_cc_stage")
    assert any("Cannot mark role 'build' as complete - validation failed:" in r
               and "PLAN.md has tasks not yet verified: 1 pending" in r for r in results), results
    assert any("`hookgate stage complete build`" in r for r in results), results
    assert [json.loads(x)["role"] for x in log.read_text().splitlines()] == ["build"]
    assert any("[Role 'build' complete] Next: /gm-verify" in t for t in lead_texts(fake_model, "pl_cc_stage"))
    records = metrics(work)
    assert [m["role"] for m in records if m["event"] == "stage_complete"] == ["build"]
    assert [m["gate"] for m in records if m["event"] == "hook_block"] == ["stage_reminder", "check_shell_writes"]


def test_a_worker_dispatch_before_the_prerequisite_is_refused(project, fake_model: FakeModel) -> None:
    work, home = project
    hookgate("role", "set", "build", cwd=work)
    worker = fake_model.script("pl_cc_never", Say("should not run"))
    marker = fake_model.script(
        "pl_cc_prereq",
        Call("Agent", {"description": "worker: M1", "prompt": f"{worker} implement M1", "subagent_type": "worker"}),
        Say("blocked, will run gdd first"),
    )
    run = run_claude(work, home, fake_model, f"{marker} build")
    assert run.returncode == 0, run.stderr
    results = fake_model.tool_results("pl_cc_prereq")
    assert any("Cannot dispatch worker - 'build' role prerequisites missing:" in r
               and "project.godot not found" in r and "Role 'gdd' has not completed yet" in r for r in results), results
    assert not fake_model.seen("pl_cc_never")
    records = metrics(work)
    assert not [m for m in records if m["event"] == "subagent_start"]
    assert [m["gate"] for m in records if m["event"] == "hook_block"] == ["check_stage_prerequisites"]


def test_a_workflow_before_the_prerequisite_is_refused(project, fake_model: FakeModel) -> None:
    """2.1.332's Workflow tool starts subagents from a script, with no Agent call: before the
    gate read it, this workflow's agent ran (agent_type "workflow-subagent") while gdd had not
    completed. The lead waits in a Bash call long enough for a started workflow to run its agent."""
    work, home = project
    hookgate("role", "set", "build", cwd=work)
    worker = fake_model.script("pl_cc_wf_never", Say("should not run"))
    script = f"export const meta = {{name: 'build', description: 'M1'}}\nawait agent('{worker} implement M1')\n"
    marker = fake_model.script("pl_cc_wf", Call("Workflow", {"script": script}),
                               Call("Bash", {"command": "sleep 6", "description": "wait"}), Say("blocked"))
    run = run_claude(work, home, fake_model, f"{marker} ultracode: build with a workflow")
    assert run.returncode == 0, run.stderr
    refused = fake_model.tool_results("pl_cc_wf")[0]
    assert "PreToolUse:Workflow" in refused and "Role 'gdd' has not completed yet" in refused, refused
    assert not fake_model.seen("pl_cc_wf_never")
    assert not [m for m in metrics(work) if m["event"] == "subagent_start"]


def test_a_report_is_refused_then_accepted_and_the_round_completes(project, revising_model: RevisingModel) -> None:
    """A build round: worker, verifier and reviewer run in the background. The worker's first
    report lacks its Tests and Build sections and is refused; it hands in a complete one, which
    is accepted (rejected_attempt, then terminal; one worker_done). With all three done, the
    lead's stop goes through."""
    work, home = project
    ready_to_build(work)
    hookgate("role", "set", "build", cwd=work)
    model = revising_model
    first = WORKER_REPORT.split("### Tests")[0]
    worker = model.script("pl_cc_w", Say(first))
    model.revise("pl_cc_w", when="missing required sections: Tests, Build", then=Say(WORKER_REPORT))
    verifier = model.script("pl_cc_v", Say(VERIFIER_REPORT))
    reviewer = model.script("pl_cc_r", Say(REVIEWER_REPORT))
    marker = model.script(
        "pl_cc_round",
        Call("Agent", {"description": "worker: M1", "prompt": f"{worker} implement M1", "subagent_type": "worker"}),
        Call("Agent", {"description": "verify: M1", "prompt": f"{verifier} verify M1", "subagent_type": "verifier"}),
        Call("Agent", {"description": "review: M1", "prompt": f"{reviewer} review M1", "subagent_type": "reviewer"}),
        Say("Round complete."),
    )
    run = run_claude(work, home, model, f"{marker} run the round")
    assert run.returncode == 0, run.stderr

    records = metrics(work)
    stops = {}
    for m in records:
        if m["event"] == "subagent_stop":
            stops.setdefault(m["role"], []).append(m["outcome_kind"])
    assert stops == {"worker": ["rejected_attempt", "terminal"], "verifier": ["terminal"], "reviewer": ["terminal"]}
    [refusal] = [m for m in records if m["event"] == "hook_block"]
    assert refusal["gate"] == "check_worker_report" and "Worker report missing required sections: Tests, Build" in refusal["reason"]
    assert [m["event"] for m in records if m["event"] in ("worker_done", "verifier_pass")] in (
        ["worker_done", "verifier_pass"], ["verifier_pass", "worker_done"])
    # the refusal reached the worker, and the accepted round let the lead stop without a hold
    assert any("missing required sections: Tests, Build" in t for r in model.seen("pl_cc_w") for t in r.user_texts)
    assert not [m for m in records if m["event"] in ("hook_force_allow", "gate_error")]
