"""A GodotMaker project, laid out and registered as GodotMaker publishes it, switched to hookgate by
`hookgate migrate godotmaker --apply` and then driven on the real (pinned) Claude Code, Codex and
OpenCode by the scripted fake model. The skills' files are written as the skills write them
(`.godotmaker/current_role` first, `.godotmaker/stage.jsonl` appended); hookgate reads them in
place and keeps its records in GodotMaker's own files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from drivers.claude import copy_agents, run_claude
from drivers.codex import hookgate as codex_hookgate
from drivers.codex import run_codex, write_config
from drivers.opencode import configure, run_opencode
from harness.fakemodel import Call, FakeModel, Say
from harness.godotmaker import godotmaker_project, skill_completes, skill_sets_role
from harness.reports import REVIEWER_REPORT, VERIFIER_REPORT, WORKER_REPORT
from harness.runtimes import hookgate, new_project
from real.test_claude_pipeline import AGENTS, RevisingModel

pytestmark = pytest.mark.real

PREREQUISITE = "Role 'gdd' has not completed yet (no 'gdd' entry in .godotmaker/stage.jsonl)"
LEAD_WRITE = "Build role cannot write game code directly (enemy.gd)"


def records(work: Path, name: str = "metrics_current.jsonl") -> list[dict[str, Any]]:
    path = work / ".godotmaker" / name
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def state(work: Path) -> dict[str, Any]:
    return json.loads((work / ".godotmaker" / "state.json").read_text())


def migrated(tmp_path: Path) -> tuple[Path, Path]:
    work, home = new_project(tmp_path)
    godotmaker_project(work)
    done = hookgate("migrate", "godotmaker", "--apply", cwd=work)
    assert "replaced 8 GodotMaker handlers" in done.stdout, done.stdout
    return work, home


def held_back(results: list[str]) -> None:
    assert any(LEAD_WRITE in r for r in results), results
    assert any("Cannot dispatch worker" in r and PREREQUISITE in r for r in results), results


def test_a_godotmaker_build_on_real_claude_code(tmp_path: Path) -> None:
    work, home = migrated(tmp_path)
    copy_agents(work, AGENTS)
    skill_sets_role(work, "build")
    with RevisingModel() as model:
        worker = model.script("gm_cc_never", Say("should not run"))
        first = model.script(
            "gm_cc_before_gdd",
            Call("Write", {"file_path": str(work / "src" / "enemy.gd"), "content": "extends Node\n"}),
            Call("Agent", {"description": "worker: M1", "prompt": f"{worker} implement M1", "subagent_type": "worker"}),
            Say("waiting for gdd"),
        )
        run = run_claude(work, home, model, f"{first} build")
        assert run.returncode == 0, run.stderr
        held_back(model.tool_results("gm_cc_before_gdd"))
        assert not (work / "src" / "enemy.gd").exists() and not model.seen("gm_cc_never")
        banner = [t for r in model.seen("gm_cc_before_gdd") for t in r.user_texts if "[GodotMaker v" in t]
        assert banner and "[GodotMaker v1.1.0 | tag: v0.2.0]" in banner[0]

        skill_completes(work, "gdd")  # /gm-gdd ran in between
        skill_sets_role(work, "build")  # and /gm-build again: each skill run writes its role first
        worker = model.script("gm_cc_w", Say(WORKER_REPORT.split("### Tests")[0]))
        model.revise("gm_cc_w", when="missing required sections: Tests, Build", then=Say(WORKER_REPORT))
        verifier = model.script("gm_cc_v", Say(VERIFIER_REPORT))
        reviewer = model.script("gm_cc_r", Say(REVIEWER_REPORT))
        round_ = model.script(
            "gm_cc_round",
            Call("Agent", {"description": "worker: M1", "prompt": f"{worker} implement M1", "subagent_type": "worker"}),
            Call("Agent", {"description": "verify: M1", "prompt": f"{verifier} verify M1", "subagent_type": "verifier"}),
            Call("Agent", {"description": "review: M1", "prompt": f"{reviewer} review M1", "subagent_type": "reviewer"}),
            Say("Round complete."),
        )
        run = run_claude(work, home, model, f"{round_} run the round")
        assert run.returncode == 0, run.stderr
        current = records(work)
        stops: dict[str, list[str]] = {}
        for record in current:
            if record["event"] == "subagent_stop":
                stops.setdefault(record["role"], []).append(record["outcome_kind"])
        assert stops == {"worker": ["rejected_attempt", "terminal"], "verifier": ["terminal"], "reviewer": ["terminal"]}
        [refusal] = [r for r in current if r["event"] == "hook_block"]
        assert refusal["hook"] == "check_worker_report"  # GodotMaker's reporter names the hook
        assert state(work)["worker_report_block:" + refusal["agent_id"]] == 1

        skill_sets_role(work, "build")
        lone = model.script("gm_cc_lone", Say(WORKER_REPORT))
        alone = model.script(
            "gm_cc_alone",
            Call("Agent", {"description": "worker: M2", "prompt": f"{lone} implement M2", "subagent_type": "worker"}),
            Say("All finished."),
        )
        run = run_claude(work, home, model, f"{alone} build M2")
        assert run.returncode == 0, run.stderr
    holds = [r for r in records(work) if r["event"] == "hook_block" and r["hook"] == "check_completion"]
    assert len(holds) == 5 and state(work)["stop_block_count"] == 5
    lifetime = records(work, "metrics.jsonl")
    assert {"worker_done", "verifier_pass", "hook_force_allow", "session_start"} <= {r["event"] for r in lifetime}
    assert not (work / ".hookgate").exists()


def test_a_godotmaker_build_on_real_codex(tmp_path: Path, fake_model: FakeModel) -> None:
    work, home = new_project(tmp_path)
    godotmaker_project(work)
    config = write_config(home, fake_model)
    # the user trusted the project once (Codex loads a project's .codex/ only then)
    config.write_text(config.read_text() + f'\n[projects."{work}"]\ntrust_level = "trusted"\n')
    done = codex_hookgate("migrate", "godotmaker", "--apply", cwd=work, home=home)
    assert "codex: replaced" in done.stdout, done.stdout
    skill_sets_role(work, "build")
    worker = fake_model.script("gm_cx_never", Say("should not run"))
    marker = fake_model.script(
        "gm_cx_before_gdd",
        Call("exec_command", {"cmd": "printf 'extends Node\\n' > src/enemy.gd"}),
        Call("spawn_agent", {"message": f"worker: M1\n{worker} implement M1"}, namespace="multi_agent_v1"),
        Say("waiting for gdd"),
    )
    run = run_codex(work, home, f"{marker} build", bypass_hook_trust=False)  # hookgate's trust, recorded by migrate
    assert run.returncode == 0, run.stderr[-3000:]
    held_back(fake_model.tool_results("gm_cx_before_gdd"))
    assert not (work / "src" / "enemy.gd").exists()
    current = records(work)
    assert [r["hook"] for r in current if r["event"] == "hook_block"] == ["check_shell_writes", "check_stage_prerequisites"]
    assert {r["runtime"] for r in current} == {"codex"}
    assert not (work / ".hookgate").exists()


def test_a_godotmaker_build_on_real_opencode(tmp_path: Path, fake_model: FakeModel) -> None:
    work, home = migrated(tmp_path)
    configure(work, home, fake_model)
    skill_sets_role(work, "build")
    worker = fake_model.script("gm_oc_never", Say("should not run"))
    marker = fake_model.script(
        "gm_oc_before_gdd",
        Call("write", {"filePath": str(work / "src" / "enemy.gd"), "content": "extends Node\n"}),
        Call("task", {"description": "worker: M1", "prompt": f"{worker} implement M1", "subagent_type": "general"}),
        Say("waiting for gdd"),
    )
    run = run_opencode(work, home, f"{marker} build")
    assert run.returncode == 0, run.stderr[-3000:]
    held_back(fake_model.tool_results("gm_oc_before_gdd"))
    assert not (work / "src" / "enemy.gd").exists() and not fake_model.seen("gm_oc_never")
    current = records(work)
    assert [r["hook"] for r in current if r["event"] == "hook_block"] == ["check_file_permissions",
                                                                        "check_stage_prerequisites"]
    assert {r["runtime"] for r in current} == {"opencode"}
    assert not (work / ".hookgate").exists()
