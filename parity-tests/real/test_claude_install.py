"""`hookgate install claude` on the real Claude Code (pinned), driven by the scripted fake model: an
allowed write goes through, a forbidden one is blocked with the reason, a subagent's is judged
with its identity. Each checks the side effect on disk and what reached the model. (Every gate on
every runtime and version: real/test_scenarios.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from drivers.claude import run_claude
from harness.fakemodel import Call, FakeModel, Say
from harness.runtimes import hookgate, metrics, new_project

pytestmark = pytest.mark.real


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, Path]:
    work, home = new_project(tmp_path)
    hookgate("install", "claude", "--project", str(work), cwd=work)
    hookgate("role", "set", "build", cwd=work)
    return work, home


def test_allowed_write_goes_through(project: tuple[Path, Path], fake_model: FakeModel) -> None:
    work, home = project
    marker = fake_model.script("cc_allowed", Call("Write", {"file_path": str(work / "notes.txt"), "content": "ok\n"}), Say("done"))
    run = run_claude(work, home, fake_model, f"{marker} write the notes")
    assert run.returncode == 0, run.stderr
    assert (work / "notes.txt").read_text() == "ok\n"
    writes = [m for m in metrics(work) if m["event"] == "file_write"]
    assert [(m["file"], m["runtime"], m["agent_id"]) for m in writes] == [("notes.txt", "claude", "main")]
    assert not [m for m in metrics(work) if m["event"] == "hook_block"]


def test_forbidden_write_is_blocked_and_the_model_is_told_why(project: tuple[Path, Path], fake_model: FakeModel) -> None:
    work, home = project
    target = work / "src" / "player.gd"
    marker = fake_model.script("cc_forbidden", Call("Write", {"file_path": str(target), "content": "extends Node\n"}), Say("ok"))
    run = run_claude(work, home, fake_model, f"{marker} write the player")
    assert run.returncode == 0, run.stderr
    assert not target.exists()
    results = fake_model.tool_results("cc_forbidden")
    assert any("Build role cannot write game code directly (player.gd). Dispatch a Worker subagent." in r for r in results), results
    blocks = [m for m in metrics(work) if m["event"] == "hook_block"]
    assert [(b["gate"], b["agent_id"]) for b in blocks] == [("check_file_permissions", "main")]


def test_subagent_writing_memory_is_blocked_with_its_identity(project: tuple[Path, Path], fake_model: FakeModel) -> None:
    work, home = project
    # build may dispatch only once gdd has completed (check_stage_prerequisites)
    for name in ("project.godot", "GDD.md", "PLAN.md", "STRUCTURE.md"):
        (work / name).write_text("")
    hookgate("stage", "complete", "gdd", cwd=work)
    memory = work / "MEMORY.md"
    sub = fake_model.script("cc_sub_memory", Call("Write", {"file_path": str(memory), "content": "remember\n"}), Say("Subagent done."))
    marker = fake_model.script(
        "cc_main_memory",
        Call("Agent", {"description": "note progress", "prompt": f"{sub} write the memory",
                       "subagent_type": "general-purpose"}),
        Say("all done"),
    )
    run = run_claude(work, home, fake_model, f"{marker} delegate")
    assert run.returncode == 0, run.stderr
    assert not memory.exists()
    # the subagent's own next request carried the gate's reason
    assert any("Subagents cannot write project memory (MEMORY.md)" in r for r in fake_model.tool_results("cc_sub_memory"))
    blocks = [m for m in metrics(work) if m["event"] == "hook_block"]
    assert len(blocks) == 1 and blocks[0]["gate"] == "check_file_permissions"
    agent_id = blocks[0]["agent_id"]
    assert agent_id not in (None, "main") and blocks[0]["agent_type"] == "general-purpose"
    attempt = [m for m in metrics(work) if m["event"] == "file_write" and m["agent_id"] == agent_id]
    assert attempt and attempt[0]["is_subagent"] is True
