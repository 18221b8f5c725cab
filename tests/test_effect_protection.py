"""The compiled protection answers exactly as write_denial does, for every role and agent of the
preset, on paths drawn from the preset's own patterns and from hypothesis."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from hookgate.config.load import preset_config
from hookgate.effect.protection import Agent, protection_for
from hookgate.engine.context import Context
from hookgate.model.events import PreToolUse
from hookgate.pipeline.permissions import write_denial
from hookgate.store.project import Project
from support import MemorySession

CONFIG = preset_config()
ROLES = sorted(set(CONFIG.pipeline.roles) | {"nosuchrole"})
AGENTS = [(None, None), ("a1", "worker"), ("a2", "decomposer"), ("a3", "asset-producer"), ("a4", "nosuchtype")]
SAMPLE = ["PLAN.md", "plan.md", "docs/PLAN.md", "src/player.gd", "SRC/Player.GD", "e2e/t.py", "x/e2e/t.py",
          "assets/a.png", "ASSETS.md", "sub/ASSETS.md", ".hookgate/stage.jsonl", ".hookgate/current_role",
          ".hookgate/verify_report.json", ".hookgate/asset-generation/x", "project.godot", "MEMORY.md",
          "memory/notes.md", "scenes/main.tscn", "res/a.tres", ".claude/worktrees/w1/src/player.gd",
          ".claude/worktrees/w1/PLAN.md", "references/r.png", "notes.txt", "a/b/c/d.gd"]

segment = st.sampled_from(["src", "e2e", "assets", ".hookgate", "memory", "x", "A", "references", ".claude",
                           "worktrees", "w1", "plan.md", "player.gd", "main.tscn", "STYLE.md", "project.godot",
                           "stage.jsonl", "asset-generation", "a.png", "Notes.TXT"])


def denial(root: Path, rel: str, role: str, agent) -> str | None:
    ctx = Context(project=Project(root), session=MemorySession(), config=CONFIG)
    agent_id, agent_type = agent
    event = PreToolUse(session_id="s", cwd=str(root), tool_name="Write", tool_input={"file_path": rel},
                       agent_id=agent_id, agent_type=agent_type)
    return write_denial(rel, event, role, ctx)


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("agent", AGENTS, ids=lambda a: a[1] or "main")
def test_the_compiled_check_is_write_denial(tmp_path, role, agent):
    protection = protection_for(Agent(role, agent[0] is not None, agent[1]), CONFIG)
    for rel in SAMPLE:
        assert protection.reason(rel) == denial(tmp_path, rel, role, agent), rel


@settings(max_examples=300, deadline=None)
@given(parts=st.lists(segment, min_size=1, max_size=5), role=st.sampled_from(ROLES),
       agent=st.sampled_from(AGENTS))
def test_the_compiled_check_is_write_denial_on_any_path(tmp_path_factory, parts, role, agent):
    root = tmp_path_factory.getbasetemp()
    rel = "/".join(parts)
    protection = protection_for(Agent(role, agent[0] is not None, agent[1]), CONFIG)
    assert protection.reason(rel) == denial(root, rel, role, agent)
