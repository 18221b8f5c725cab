"""check_file_permissions, one row per rule of seed 000, through the Claude stdin protocol."""

import json
import os
import shlex
from pathlib import Path

import pytest

from hookgate.hookcall import handle
from hookgate_claude import dialect

MAIN = None


def decide(root: Path, role: str | None, path: str, agent_type: str | None = MAIN, tool: str = "Write",
           cwd: Path | None = None) -> str | None:
    """The deny reason hookgate gives, or None when the write is allowed."""
    hookgate = root / ".hookgate"
    hookgate.mkdir(exist_ok=True)
    (hookgate / "current_role").unlink(missing_ok=True)
    if role:
        (hookgate / "current_role").write_text(role + "\n")
    # a stage log line must be a valid completion (stage_reminder checks that), here of a role with no outputs
    content = '{"role": "verify", "ts": "2026-01-01T00:00:00Z"}' if path.endswith("stage.jsonl") else "x"
    payload = {"hook_event_name": "PreToolUse", "session_id": "s", "cwd": str(cwd or root), "tool_name": tool,
               "tool_input": {"file_path": path, "content": content}}
    if agent_type is not None:
        payload.update(agent_id="agent-1", agent_type=agent_type)
    answer = handle(dialect, json.dumps(payload).encode(), {"HOOKGATE_PROJECT_DIR": str(root)})
    assert answer.exit_code == 0
    if not answer.stdout:
        return None
    output = json.loads(answer.stdout)["hookSpecificOutput"]
    if "permissionDecision" not in output:
        return None  # allowed, with context for the model (the next stage after a stage.jsonl append)
    assert output["permissionDecision"] == "deny"
    return output["permissionDecisionReason"]


# role, path, allowed?
MAIN_AGENT_TABLE = [
    (None, "src/player.gd", True),           # no role: record only
    (None, "e2e/test.gd", True),
    ("scaffold", "src/player.gd", True),
    ("scaffold", "e2e/x.gd", True),
    ("gdd", "GDD.md", True),
    ("gdd", "docs/PLAN.md", True),
    ("gdd", "project.godot", True),
    ("gdd", ".hookgate/notes.json", True),
    ("gdd", "assets/hero.png", False),
    ("gdd", "assets/readme.md", False),       # assets/ outranks the .md rule
    ("gdd", "e2e/plan.md", False),
    ("gdd", "src/player.gd", False),
    ("gdd", "notes.txt", False),
    ("asset", "ASSETS.md", True),
    ("asset", "docs/ASSETS.md", False),       # only the project-root ASSETS.md
    ("asset", ".hookgate/asset_plan.json", True),
    ("asset", "assets/hero.png", False),
    ("asset", "e2e/a.md", False),
    ("build", "src/player.gd", False),
    ("build", "scenes/main.tscn", False),
    ("build", "res/theme.tres", False),
    ("build", "e2e/smoke_test.gd", False),
    ("build", "docs/e2e/readme.md", False),
    ("build", "PLAN.md", True),
    ("build", "notes.txt", True),
    ("fixgap", "src/player.gd", False),
    ("fixgap", "GAP.md", True),
    ("verify", ".hookgate/verify_report.json", True),
    ("verify", ".hookgate/stage.jsonl", True),
    ("verify", ".hookgate/current_role", True),
    ("verify", ".hookgate/evaluation.json", False),
    ("verify", "notes.txt", False),
    ("evaluate", "e2e/test_play.gd", True),
    ("evaluate", ".hookgate/evaluation.json", True),
    ("evaluate", ".hookgate/verify_report.json", False),
    ("evaluate", "src/player.gd", False),
    ("accept", "README.md", True),
    ("accept", "src/player.gd", False),
    ("accept", "e2e/x.md", False),
    ("finalize", "CHANGELOG.md", True),
    ("finalize", "scenes/a.tscn", False),
    ("rescue", ".hookgate/stage.jsonl", True),
    ("rescue", "notes.md", False),
    ("mystery", "src/player.gd", False),       # a role the config does not list: the "*" rules
    ("mystery", "notes.md", True),
]


@pytest.mark.parametrize("role, path, allowed", MAIN_AGENT_TABLE)
def test_main_agent_role_rules(tmp_path, role, path, allowed):
    assert (decide(tmp_path, role, path) is None) == allowed


SUBAGENT_TABLE = [
    # (agent_type, path, allowed)
    ("worker", "src/player.gd", True),
    ("worker", "MEMORY.md", False),
    ("worker", "docs/MEMORY.md", False),       # MEMORY.md by name, anywhere
    ("worker", "memory/notes.txt", False),
    ("worker", "memory/rules.json", False),
    ("worker", "src/memory/cache.gd", True),   # a game's own memory/ folder is not project memory
    ("worker", "e2e/test.gd", False),
    ("worker", ".hookgate/metrics.jsonl", False),
    ("worker", "PLAN.md", False),
    ("worker", "docs/structure.md", False),
    ("worker", "project.godot", False),
    ("general-purpose", "ROADMAP.md", False),
    ("decomposer", "PLAN.md", True),
    ("decomposer", "project.godot", True),
    ("decomposer", "e2e/x.gd", False),
    ("decomposer", "MEMORY.md", False),
    ("asset-producer", "assets/hero.png", True),
    ("asset-producer", "references/style.png", True),
    ("asset-producer", ".hookgate/asset-generation/run1/prompt.txt", True),
    ("asset-producer", "assets/plan.md", True),      # its folders come first, as in seed 000
    ("asset-producer", "PLAN.md", False),
    ("asset-producer", "src/player.gd", False),
    ("asset-producer", "notes.txt", False),
    ("asset-producer", "memory/x.md", False),
]


@pytest.mark.parametrize("agent_type, path, allowed", SUBAGENT_TABLE)
def test_subagent_rules(tmp_path, agent_type, path, allowed):
    assert (decide(tmp_path, "build", path, agent_type=agent_type) is None) == allowed


def test_subagents_are_unrestricted_without_a_role(tmp_path):
    assert decide(tmp_path, None, "MEMORY.md", agent_type="worker") is None


def test_reasons_name_the_file_and_the_way_out(tmp_path):
    assert decide(tmp_path, "build", "src/player.gd") == \
        "Build role cannot write game code directly (player.gd). Dispatch a Worker subagent."


@pytest.mark.parametrize("tool", ["Edit", "MultiEdit", "Write"])
def test_every_file_tool_is_checked(tmp_path, tool):
    assert decide(tmp_path, "build", "src/player.gd", tool=tool) is not None


def test_writes_are_recorded_even_without_a_role(tmp_path):
    decide(tmp_path, None, "src/a.gd")
    decide(tmp_path, None, "src/a.gd", tool="Edit")
    lines = (tmp_path / ".hookgate" / "sessions" / "s" / "metrics.jsonl").read_text().splitlines()
    assert [json.loads(line)["event"] for line in lines] == ["file_write", "file_edit"]


# -- path normalisation: every spelling of a forbidden path is caught ------------------------

def bypass_spellings(root: Path) -> list[str]:
    (root / "src").mkdir(exist_ok=True)
    (root / "memory").mkdir(exist_ok=True)
    (root / "e2e").mkdir(exist_ok=True)
    os.symlink(root / "memory", root / "notes")             # a friendly name for memory/
    os.symlink(root / "e2e", root / "src" / "tests_link")  # e2e/ behind a link
    (root / "MEMORY.md").write_text("")
    os.symlink(root / "MEMORY.md", root / "readme_link.md")    # a file link to the memory file
    os.symlink(root / "memory" / "new.md", root / "dangling.md")  # a link to a memory file not yet there
    os.symlink(root, root.parent / "proj_link")              # the whole project under another name
    return [
        "memory/../memory/a.md",
        "memory/./a.md",
        "./memory//a.md",
        "memory/sub/deep/a.md",
        "MEMORY/../memory/x.txt",
        "./MEMORY.md",
        "src/../MEMORY.md",
        "MeMoRy.Md",
        "docs/MEMORY.md",
        "/" + str(root / "memory" / "a.md"),
        str(root) + "//memory//a.md",
        str(root.parent / "proj_link" / "memory" / "a.md"),
        str(root.parent / "proj_link" / "MEMORY.md"),
        "readme_link.md",
        "dangling.md",
        ".claude/worktrees/agent-7/../../../memory/a.md",
        ".claude/worktrees/a/.claude/worktrees/b/memory/x.md",
        ".Claude/Worktrees/Agent-9/MEMORY.md",
        "e2e/./x.gd",
        "e2e//x.gd",
        "src/../e2e/x.gd",
        "E2E/X.GD",
        "src/tests_link/./deep/t.gd",
        "docs/PLAN.md",
        "deep/a/b/structure.md",
        "GAP.md",
        "Roadmap.MD",
        "style.md",
        ".hookgate/../.hookgate/state.json",
        "sub/.hookgate/x.json",
        "sub/project.godot",
        "Project.Godot",
        str(root / "memory" / "a.md"),
        "memory/a.md",
        "./memory/a.md",
        "src/../memory/a.md",
        "src//..//memory/./a.md",
        str(root / "src" / ".." / "memory" / "a.md"),
        "MEMORY.md",
        "memory.md",
        "Memory.MD",
        "MEMORY/a.md",
        "notes/a.md",
        str(root / "notes" / "deep" / "x.json"),
        ".claude/worktrees/agent-7/memory/a.md",
        str(root / ".claude" / "worktrees" / "agent-7" / "memory" / "b.md"),
        ".claude/worktrees/agent-7/../agent-8/memory/c.md",
        "e2e/test.gd",
        "E2E/test.gd",
        "src/tests_link/test.gd",
        "./e2e/../e2e/x.gd",
        str(root / "e2e" / "x.gd"),
        ".hookgate/metrics.jsonl",
        "./.hookgate/state.json",
        "src/../.hookgate/current_role",
        "PLAN.md",
        "docs/../PLAN.md",
        "Plan.md",
        "project.godot",
        "./project.godot",
    ]


def test_path_bypass_corpus_has_no_bypass(tmp_path):
    root = tmp_path / "proj"
    root.mkdir()
    corpus = bypass_spellings(root)
    # each spelling as given from the project root, and the same path from a subdirectory
    cases = [(root, p) for p in corpus] + [(root / "src", p if os.path.isabs(p) else f"../{p}") for p in corpus]
    bypasses = [(str(cwd), path) for cwd, path in cases if decide(root, "build", path, agent_type="worker", cwd=cwd) is None]
    assert len(cases) >= 100
    assert bypasses == []


def test_path_bypass_corpus_through_the_shell_has_no_bypass(tmp_path):
    """The same spellings written by a shell command (`echo x > PATH`) meet the same rules."""
    root = tmp_path / "proj"
    root.mkdir()
    corpus = bypass_spellings(root)
    (root / ".hookgate").mkdir(exist_ok=True)
    (root / ".hookgate" / "current_role").write_text("build\n")
    bypasses = []
    for path in corpus:
        payload = {"hook_event_name": "PreToolUse", "session_id": "s", "cwd": str(root), "tool_name": "Bash",
                   "tool_input": {"command": f"echo x > {shlex.quote(path)}"}, "agent_id": "a1", "agent_type": "worker"}
        answer = handle(dialect, json.dumps(payload).encode(), {"HOOKGATE_PROJECT_DIR": str(root)})
        if b"deny" not in answer.stdout:
            bypasses.append(path)
    assert len(corpus) >= 50
    assert bypasses == []


def test_a_moves_source_is_judged_too(tmp_path):
    """A Codex patch that moves e2e/old.gd to notes/old.txt removes a file build may not touch."""
    hookgate = tmp_path / ".hookgate"
    hookgate.mkdir()
    (hookgate / "current_role").write_text("build\n")
    payload = {"hook_event_name": "PreToolUse", "session_id": "s", "cwd": str(tmp_path), "tool_name": "Edit",
               "tool_input": {"file_path": str(tmp_path / "notes" / "old.txt"), "old_string": "a", "new_string": "b",
                              "moved_from": str(tmp_path / "e2e" / "old.gd")}}
    answer = handle(dialect, json.dumps(payload).encode(), {"HOOKGATE_PROJECT_DIR": str(tmp_path)})
    reason = json.loads(answer.stdout)["hookSpecificOutput"]["permissionDecisionReason"]
    assert reason.startswith("Build role cannot write to e2e/ (old.gd)")
