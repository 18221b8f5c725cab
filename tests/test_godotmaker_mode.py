"""GodotMaker mode: a GodotMaker project guarded by hookgate with its skills unchanged. The role
comes from `.godotmaker/current_role`, the stage log and schemas are GodotMaker's, and the session
records land in `.godotmaker/metrics_current.jsonl` and `state.json` in GodotMaker's format, all
through the Claude Code stdin protocol (the real `hookgate hook claude` for the first call)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from harness.godotmaker import godotmaker_project, skill_completes, skill_sets_role
from hookgate.hookcall import handle
from hookgate.store.layout import GODOTMAKER, HOOKGATE, choose
from hookgate_claude import dialect
from pipeline_support import Answer, read_answer
from test_pipeline_reports import REVIEWER, VERIFIER, WORKER

HOOKGATE_BIN = Path(sys.executable).with_name("hookgate")


class Session:
    """One Claude Code session in the project, with the cwd the runtime gives (no project env)."""

    def __init__(self, root: Path, session_id: str = "gm-1") -> None:
        self.root, self.session_id = root, session_id

    def call(self, payload: dict[str, Any]) -> Answer:
        full = {"session_id": self.session_id, "cwd": str(self.root / "src"), **payload}
        answer = handle(dialect, json.dumps(full).encode(), {})
        assert answer.exit_code == 0, answer.stderr
        return read_answer(answer.stdout)

    def tool(self, tool: str, agent: str | None = None, agent_type: str = "general-purpose", **tool_input: Any) -> Answer:
        payload: dict[str, Any] = {"hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": tool_input}
        if agent:
            payload.update(agent_id=agent, agent_type=agent_type)
        return self.call(payload)

    def subagent(self, agent: str, description: str, report: str) -> Answer:
        assert not self.tool("Agent", description=description, prompt="go", subagent_type="general-purpose").blocked
        self.call({"hook_event_name": "SubagentStart", "agent_id": agent, "agent_type": "general-purpose"})
        return self.call({"hook_event_name": "SubagentStop", "agent_id": agent, "agent_type": "general-purpose",
                          "stop_hook_active": False, "last_assistant_message": report})

    def stop(self) -> Answer:
        return self.call({"hook_event_name": "Stop", "stop_hook_active": False, "last_assistant_message": "done"})

    def metrics(self) -> list[dict[str, Any]]:
        path = self.root / ".godotmaker" / "metrics_current.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()]

    def state(self) -> dict[str, Any]:
        return json.loads((self.root / ".godotmaker" / "state.json").read_text())


def claude_cli(root: Path, payload: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOOKGATE_WARM": "off"}
    env.pop("HOOKGATE_PROJECT_DIR", None)
    env.pop("CLAUDE_PROJECT_DIR", None)
    return subprocess.run([str(HOOKGATE_BIN), "hook", "claude", "--event", payload["hook_event_name"]],
                          input=json.dumps(payload), capture_output=True, text=True, cwd=root, env=env, timeout=60)


@pytest.fixture
def game(tmp_path: Path) -> Path:
    return godotmaker_project(tmp_path / "game")


def test_a_godotmaker_project_is_in_godotmaker_mode(tmp_path: Path, game: Path) -> None:
    assert choose(game, None).name == GODOTMAKER
    plain = tmp_path / "plain"
    (plain / ".hookgate").mkdir(parents=True)
    assert choose(plain, None).name == HOOKGATE
    both = godotmaker_project(tmp_path / "both", registrations=False)
    (both / ".hookgate").mkdir()
    assert choose(both, None).name == HOOKGATE  # a `.hookgate/` of its own: hookgate's layout ...
    assert choose(both, "godotmaker").name == GODOTMAKER  # ... unless its config says compat


def test_a_build_session_reads_and_writes_godotmakers_files(game: Path) -> None:
    started = claude_cli(game, {"hook_event_name": "SessionStart", "session_id": "gm-1", "cwd": str(game),
                                "source": "startup"})
    assert started.returncode == 0, started.stderr
    banner = json.loads(started.stdout)["hookSpecificOutput"]["additionalContext"]
    assert banner == "[GodotMaker v1.1.0 | tag: v0.2.0]"

    skill_sets_role(game, "build")  # /gm-build's first action
    session = Session(game)
    blocked = session.tool("Write", file_path=str(game / "src" / "enemy.gd"), content="extends Node\n")
    assert blocked.blocked and "Build" in blocked.reason
    assert not session.tool("Write", file_path=str(game / ".godotmaker" / "build_notes.md"), content="x").blocked

    refused = session.tool("Agent", description="worker: M1 player movement", prompt="go", subagent_type="general-purpose")
    assert refused.blocked and "'gdd' has not completed" in refused.reason
    assert ".godotmaker/stage.jsonl" in refused.reason and ".hookgate" not in refused.reason
    skill_completes(game, "gdd")

    bad = session.subagent("w1", "worker: M1 player movement", WORKER.split("### Tests")[0])
    assert bad.blocked and "Tests" in bad.reason
    accepted = session.call({"hook_event_name": "SubagentStop", "agent_id": "w1", "agent_type": "general-purpose",
                             "stop_hook_active": True, "last_assistant_message": WORKER})
    assert not accepted.blocked

    held = session.stop()
    assert held.blocked and "verifier" in held.reason.lower()
    assert not session.subagent("v1", "verifier: M1", VERIFIER).blocked
    assert not session.subagent("r1", "reviewer: M1", REVIEWER).blocked
    assert not session.stop().blocked

    # GodotMaker's own files, in its formats: one JSON object per line with ts and event, the
    # hook that blocked named as `hook`, flat counters in state.json under GodotMaker's keys
    records = session.metrics()
    assert all({"ts", "event"} <= set(r) for r in records)
    assert {"subagent_start", "subagent_stop", "hook_block", "worker_done", "verifier_pass"} <= {r["event"] for r in records}
    assert {r["hook"] for r in records if r["event"] == "hook_block"} >= {
        "check_file_permissions", "check_stage_prerequisites", "check_worker_report", "check_completion"}
    state = session.state()
    assert state["worker_report_block:w1"] == 1
    assert state["stop_block_count"] == 1
    lifetime = (game / ".godotmaker" / "metrics.jsonl").read_text().splitlines()
    assert len(lifetime) >= len(records)
    assert not (game / ".hookgate").exists()  # hookgate made no folder of its own


def test_session_start_resets_godotmakers_session_files(game: Path) -> None:
    (game / ".godotmaker" / "metrics_current.jsonl").write_text('{"ts": "x", "event": "file_write"}\n')
    (game / ".godotmaker" / "state.json").write_text('{"stop_block_count": 5}')
    Session(game).call({"hook_event_name": "SessionStart", "source": "startup"})
    assert "stop_block_count" not in json.loads((game / ".godotmaker" / "state.json").read_text())
    assert [r["event"] for r in Session(game).metrics()] == ["session_start"]


@pytest.mark.parametrize("version, plan, banner", [
    ("1.1.0", None, "[GodotMaker v1.1.0 | tag: v0.2.0]"),
    ("v1.0.0", "# PLAN\nno tag yet\n", "[GodotMaker v1.0.0 | no current tag — run /gm-gdd to start one]"),
    (None, None, None),
])
def test_the_banner_is_godotmakers(tmp_path: Path, version: str | None, plan: str | None, banner: str | None) -> None:
    root = godotmaker_project(tmp_path / "g", version=version, registrations=False)
    if plan is not None:
        (root / "PLAN.md").write_text(plan)
    answer = Session(root).call({"hook_event_name": "SessionStart", "source": "startup"})
    assert (answer.context or None) == banner


def test_the_rules_name_godotmakers_folder(game: Path) -> None:
    skill_sets_role(game, "build")
    session = Session(game)
    forged = session.tool("Write", agent="w9", file_path=str(game / ".godotmaker" / "metrics_current.jsonl"),
                          content='{"event": "subagent_start"}')
    assert forged.blocked and ".godotmaker/" in forged.reason and ".hookgate" not in forged.reason
    stage = session.tool("Write", file_path=str(game / ".godotmaker" / "stage.jsonl"),
                         content='{"role": "build", "ts": "2026-12-01T00:00:00Z"}\n')
    assert stage.blocked and "PLAN.md has tasks not yet verified" in stage.reason


def test_godotmakers_deployed_stage_schemas_decide(game: Path) -> None:
    schemas = json.loads((game / ".godotmaker" / "stage_schemas.json").read_text())
    schemas["gdd"]["files"].append("ROADMAP.md")
    (game / ".godotmaker" / "stage_schemas.json").write_text(json.dumps(schemas))
    skill_sets_role(game, "gdd")
    refused = Session(game).tool("Write", file_path=str(game / ".godotmaker" / "stage.jsonl"),
                                 content='{"role": "gdd", "ts": "2026-12-01T00:00:00Z"}\n')
    assert refused.blocked and "ROADMAP.md" in refused.reason


def test_compat_mode_keeps_the_users_hooks_json(tmp_path: Path) -> None:
    root = godotmaker_project(tmp_path / "g", registrations=False)
    (root / ".hookgate").mkdir()
    (root / ".hookgate" / "config.toml").write_text('compat = "godotmaker"\n')
    (root / ".hookgate" / "hooks.json").write_text(json.dumps({"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "echo 'no deploys from agents' >&2; exit 2"}]}]}))
    skill_sets_role(root, "build")
    session = Session(root)
    assert session.tool("Bash", command="./deploy.sh").blocked  # the user's command hook
    assert session.tool("Write", file_path=str(root / "src" / "x.gd"), content="").blocked  # GodotMaker's role rule
    assert (root / ".godotmaker" / "metrics_current.jsonl").exists()
    assert not (root / ".hookgate" / "sessions").exists()


# -- migration ----------------------------------------------------------------------------------

def files_of(*roots: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for root in roots for p in sorted(root.rglob("*")) if p.is_file()}


def migrate(root: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(home), "CODEX_HOME": str(home / ".codex"), "HOOKGATE_WARM": "off"}
    return subprocess.run([str(HOOKGATE_BIN), "migrate", "godotmaker", "--project", str(root), *args],
                          capture_output=True, text=True, env=env, timeout=120)


def test_migrate_is_a_dry_run_by_default_and_undo_restores_every_byte(tmp_path: Path, game: Path) -> None:
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    (home / ".codex" / "config.toml").write_text('model = "gpt-5"\n\n[projects."/elsewhere"]\ntrust_level = "trusted"\n')
    before = files_of(game, home)
    tree = sorted(game.rglob("*"))

    dry = migrate(game, home)
    assert dry.returncode == 0, dry.stderr
    assert "would replace 8 GodotMaker handlers" in dry.stdout and "dry run" in dry.stdout
    assert files_of(game, home) == before

    applied = migrate(game, home, "--apply")
    assert applied.returncode == 0, applied.stderr
    settings = json.loads((game / ".claude" / "settings.json").read_text())
    commands = [h["command"] for groups in settings["hooks"].values() for g in groups for h in g["hooks"]]
    assert not [c for c in commands if ".godotmaker/hooks/" in c]
    assert "./scripts/my-own-check.sh" in commands and any("hookgate" in c for c in commands)
    assert settings["permissions"] == {"allow": ["Bash(godot --headless *)"]}
    codex = json.loads((game / ".codex" / "hooks.json").read_text())
    assert "echo mine" in json.dumps(codex) and ".godotmaker/hooks/" not in json.dumps(codex)
    assert not (game / ".opencode" / "plugins" / "godotmaker-hooks.js").exists()
    assert "hookgate" in next((game / ".opencode").rglob("hookgate.js")).read_text()
    assert (game / ".godotmaker" / "stage_schemas.json").read_bytes() == before[str(game / ".godotmaker" / "stage_schemas.json")]
    assert migrate(game, home, "--apply").returncode == 1  # once only

    undone = migrate(game, home, "--undo")
    assert undone.returncode == 0, undone.stderr
    assert files_of(game, home) == before
    assert sorted(game.rglob("*")) == tree  # and no folder the migration made is left


def test_undo_keeps_a_later_edit_unless_forced(tmp_path: Path, game: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    assert migrate(game, home, "--apply").returncode == 0
    settings = game / ".claude" / "settings.json"
    settings.write_text(settings.read_text().replace('"permissions"', '"model": "opus", "permissions"'))
    refused = migrate(game, home, "--undo")
    assert refused.returncode == 1 and str(settings) in refused.stderr
    assert '"model": "opus"' in settings.read_text()
    assert migrate(game, home, "--undo", "--force").returncode == 0
    assert '"model"' not in settings.read_text()


def test_the_commands_a_person_runs_use_godotmakers_files(game: Path) -> None:
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(HOOKGATE_BIN), *args], capture_output=True, text=True, cwd=game / "src",
                              env={**os.environ, "HOOKGATE_WARM": "off"}, timeout=60)

    assert run("role", "set", "gdd").returncode == 0
    assert (game / ".godotmaker" / "current_role").read_text() == "gdd\n"
    done = run("stage", "complete", "gdd")
    assert done.returncode == 0, done.stderr
    assert "in .godotmaker/stage.jsonl" in done.stdout
    assert json.loads((game / ".godotmaker" / "stage.jsonl").read_text())["role"] == "gdd"
    Session(game).call({"hook_event_name": "SessionStart", "source": "startup"})
    report = run("metrics", "report")
    assert report.returncode == 0, report.stderr
    assert Path(report.stdout.strip()).parent == game / ".godotmaker" / "reports"
    assert not (game / ".hookgate").exists()
