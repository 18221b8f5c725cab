"""Explain, replay and monitor mode on the real runtimes: the scenario sessions (scenarios.py) run on
each pinned binary against the fake model, as the parity tier runs them, then

- replayed under the same policy: no verdict changes, but one the replay cannot reproduce by
  design: the lead session's first stage.jsonl write was refused because PLAN.md still had a
  pending task, and a later move of the session edited PLAN.md (replay reads project files as they
  are now; see hookgate.replay.run);
- replayed under a changed policy (the asset gate off): exactly the asset read changes besides it;
- every refusal of those sessions explained, and the rule it names checked against the gate;
- a write refused by the role rules, run in monitor mode on Claude Code: it runs, and would_block
  is recorded."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from pytest import mark

from drivers import claude, codex, opencode
from drivers.real import check_real
from harness.runtimes import HOOKGATE
from hookgate.explain import calls, explain
from scenarios import SESSIONS, Expect, Session, Tool, opening, rec

pytestmark = mark.real
DRIVERS = {"claude": claude, "codex": codex, "opencode": opencode}
NAMES = ("lead", "round")

# the rule each refusing gate of these sessions must be explained by (key, and where it is)
RULES = {
    "check_stage_prerequisites": ("pipeline.prerequisites.build", "preset godot"),
    "check_file_permissions": (("pipeline.roles.build.rules[1]", "pipeline.subagents.always[0]"), "preset godot"),
    "check_shell_writes": (("pipeline.roles.build.rules[1]", "pipeline.subagents.always[0]"), "preset godot"),
    "check_asset_access": ("pipeline.asset_read", "preset godot"),
    "check_hookgate_commands": ("pipeline.protect.commands", "preset godot"),
    "effect_restore": ("pipeline.roles.build.rules[1]", "preset godot"),
    "stage_reminder": ("pipeline.stage_schemas.build", "preset godot"),
    "check_worker_report": ("pipeline.reports.worker", "preset godot"),
    "command_hooks.pre_tool_use": ("$.hooks.PreToolUse[0].hooks[0]", ".hookgate/hooks.json"),
    "python_hooks.pre_tool_use": ("keep-important", ".hookgate/policies/parity.py"),
}


@pytest.fixture(scope="module")
def plays(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], Any]:
    return {}


def played(plays: dict, tmp_path_factory: pytest.TempPathFactory, runtime: str, name: str) -> Any:
    if (runtime, name) not in plays:
        plays[runtime, name] = DRIVERS[runtime].play(SESSIONS[name], tmp_path_factory.mktemp(f"{runtime}-{name}"))
    return plays[runtime, name]


def session_dirs(work: Path) -> list[Path]:
    return sorted(p.parent for p in (work / ".hookgate" / "sessions").glob("*/decisions.jsonl"))


def replay(work: Path, *args: str) -> dict[str, Any]:
    done = subprocess.run([HOOKGATE, "replay", *map(str, session_dirs(work)), *args, "--format", "json"], cwd=work,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def fingerprint(work: Path) -> dict[str, bytes]:
    return {str(p.relative_to(work)): p.read_bytes() for p in sorted(work.rglob("*")) if p.is_file()}


def _stage_write_flip(change: dict[str, Any]) -> bool:
    """The one call replay cannot reproduce: a stage completion refused for a PLAN.md edited since."""
    return change["old"]["gates"] == ["stage_reminder"] and "PLAN.md has tasks not yet verified" in change["old"]["reason"]


@pytest.mark.parametrize("runtime", DRIVERS)
@pytest.mark.parametrize("name", NAMES)
def test_replay_under_the_same_and_a_changed_policy(plays, tmp_path_factory, runtime: str, name: str) -> None:
    play = played(plays, tmp_path_factory, runtime, name)
    before = fingerprint(play.work)
    same = replay(play.work)
    assert same["decided"] > 5
    flips = [c for c in same["changed"] if _stage_write_flip(c)]
    assert len(flips) == (1 if name == "lead" else 0), same["changed"]
    assert [c for c in same["changed"] if not _stage_write_flip(c)] == [], same["changed"]
    changed_policy = play.work.parent / f"{name}-no-asset-gate.toml"
    changed_policy.write_text("[gates.check_asset_access]\nenabled = false\n")
    other = replay(play.work, "--config", str(changed_policy))
    moved = [c for c in other["changed"] if not _stage_write_flip(c)]
    if name == "lead":  # the lead reads assets/hero.png once, refused by check_asset_access
        assert [(c["tool"], c["subject"].rsplit("/", 1)[-1], c["old"]["verdict"], c["new"]["verdict"]) for c in moved] \
            == [("Read", "hero.png", "block", "allow")], other["changed"]
        assert moved[0]["old"]["gates"] == ["check_asset_access"] and moved[0]["tool_use_id"]
    else:
        assert moved == []
    assert fingerprint(play.work) == before  # neither replay wrote a byte of the project
    print(f"{runtime} {name}: {same['decided']} decided events replayed; same policy: {len(same['changed'])} changed "
          f"({len(flips)} by the edited PLAN.md); without the asset gate: {len(other['changed'])} changed")


@pytest.mark.parametrize("runtime", DRIVERS)
@pytest.mark.parametrize("name", NAMES)
def test_every_refusal_is_explained_by_its_rule(plays, tmp_path_factory, runtime: str, name: str) -> None:
    play = played(plays, tmp_path_factory, runtime, name)
    explained = 0
    for directory in session_dirs(play.work):
        records = [json.loads(line) for line in (directory / "metrics.jsonl").read_text().splitlines() if line.strip()]
        decisions = [json.loads(line) for line in (directory / "decisions.jsonl").read_text().splitlines()]
        for call in calls(decisions):
            if not call.refused:
                continue
            use_id = call.decision.get("tool_use_id")
            if use_id:  # through the command, as a user runs it
                done = subprocess.run([HOOKGATE, "explain", directory.name, "--tool-use-id", use_id, "--format", "json"],
                                      cwd=play.work, capture_output=True, text=True, timeout=60)
                assert done.returncode == 0, done.stderr
                got = json.loads(done.stdout)
            else:
                got = explain(call, play.work, records)
            gate = call.decision["blocked_by"][0]
            keys, where = RULES[gate]
            assert got["rule"] is not None, (runtime, gate, got)
            assert got["rule"]["key"] in (keys if isinstance(keys, tuple) else (keys,)), (runtime, gate, got["rule"])
            assert got["rule"]["file"].startswith(where), (runtime, gate, got["rule"])
            assert got["event"]["runtime"] == runtime and got["verdict"]["kind"] == call.decision["decision"]
            explained += 1
    # lead: prerequisites, a write, a shell write, hookgate uninstall, a shell write put back after the
    # call, an asset read, a command hook, a Python hook, a stage completion; round: the subagent's
    # write and shell write, its first report (Codex's refusal of the draft.md rewrite is its
    # adapter's, not a gate's: the gates' verdict was a rewrite)
    assert explained == {"lead": 9, "round": 3}[name], (runtime, name, explained)
    print(f"{runtime} {name}: {explained} refusals explained, each by its rule")


MONITORED = Session(
    name="monitor", role="build",
    files={".hookgate/config.toml": '[gates.check_file_permissions]\nmode = "monitor"\n'},
    moves=(
        *opening("write the player"),
        Tool(tool="Write", input={"file_path": "src/player.gd", "content": "extends Node\n"}, expect=Expect(
            records=(rec("file_write", file="player.gd"), rec("would_block", gate="check_file_permissions", kind="block")),
            files={"src/player.gd": "extends Node\n"})),
    ),
)


def test_monitor_mode_on_claude_code_lets_the_write_run_and_records_would_block(tmp_path: Path) -> None:
    play = claude.play(MONITORED, tmp_path)
    index = 2
    check_real(play, index)  # the file was written, would_block recorded
    assert not [r for r in play.records if r["event"] == "hook_block"]
    [directory] = session_dirs(play.work)
    decisions = [json.loads(line) for line in (directory / "decisions.jsonl").read_text().splitlines()]
    [write] = [d for d in decisions if d.get("tool") == "Write" and d["hook_event"] == "PreToolUse"]
    assert write["decision"] == "allow" and write["would_block"] == ["check_file_permissions"]
    # the rollout: what enforcing it would have done to this real session
    enforce = tmp_path / "enforce.toml"
    enforce.write_text("")
    result = replay(play.work, "--config", str(enforce))
    assert [(c["tool"], c["old"]["verdict"], c["new"]["verdict"]) for c in result["changed"]] == [("Write", "allow", "block")]
