"""A GodotMaker project as GodotMaker lays it out (its published docs: project layout, hooks
reference): the game files at the root, the pipeline state under `.godotmaker/` written the way
its `/gm-*` skills write it (the role file first, the stage log appended one JSON line per
completed role), its stage schemas deployed to `.godotmaker/stage_schemas.json`, and its hooks
registered for each runtime the way its publish step registers them."""

from __future__ import annotations

import json
from pathlib import Path

# upstream config/stage_schemas.json, as publish deploys it
STAGE_SCHEMAS = {
    "scaffold": {"files": ["project.godot"]},
    "gdd": {"files": ["GDD.md", "PLAN.md", "STRUCTURE.md"]},
    "asset": {}, "build": {"checks": ["plan_all_verified"]},
    "verify": {"files": [".godotmaker/verify_report.json"]},
    "evaluate": {"files": [".godotmaker/evaluation.json"], "checks": ["evaluation_playable_unit"]},
    "fixgap": {"checks": ["gap_archived"]}, "accept": {},
    "finalize": {"files": [".godotmaker/final_report.json"], "checks": ["tag_archived"]}, "rescue": {},
}
SCRIPTS = ("session_start", "check_file_permissions", "stage_reminder", "check_stage_prerequisites",
           "check_asset_access", "log_subagent", "on_subagent_stop", "check_completion")


def _hook(script: str) -> dict[str, str]:
    return {"type": "command", "command": f"python3 .godotmaker/hooks/{script}.py"}


# GodotMaker's Claude Code registration (agent-runtimes/claude-code/config/settings.json), beside
# a user's own permission rules and hook, formatted by hand
CLAUDE_SETTINGS = """{
    "permissions": {"allow": ["Bash(godot --headless *)"]},
    "hooks": {
        "SessionStart": [{"hooks": [%s]}],
        "PreToolUse": [
            {"matcher": "Write|Edit", "hooks": [%s, %s]},
            {"matcher": "Agent|Task", "hooks": [%s]},
            {"matcher": "Read", "hooks": [%s]},
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "./scripts/my-own-check.sh"}]}
        ],
        "SubagentStart": [{"hooks": [%s]}],
        "SubagentStop": [{"hooks": [%s]}],
        "Stop": [{"hooks": [%s]}]
    }
}
""" % tuple(json.dumps(_hook(s)) for s in SCRIPTS)

CODEX_HOOKS = json.dumps({"hooks": {
    "SessionStart": [{"hooks": [_hook("session_start")]}],
    "SubagentStart": [{"hooks": [_hook("log_subagent")]}],
    "SubagentStop": [{"hooks": [_hook("on_subagent_stop")]}],
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo mine"}]}],
}}, indent=4)

OPENCODE_ADAPTER = """// GodotMaker OpenCode adapter: OpenCode events -> .godotmaker/hooks/*.py
import { spawnSync } from "node:child_process"
export const GodotMakerHooks = async () => ({
  "tool.execute.before": async (input, output) => {
    spawnSync(process.env.GODOTMAKER_HOOK_PYTHON || "python", [".godotmaker/hooks/check_file_permissions.py"])
  },
})
"""

PLAN = """# PLAN

**Tag:** v0.2.0

| id | task | status |
|----|------|--------|
| M1 | player movement | pending |
"""


def godotmaker_project(root: Path, *, version: str | None = "1.1.0", registrations: bool = True) -> Path:
    """The project after `/gm-scaffold` and a `/gm-gdd` run, before `/gm-build` starts."""
    gm = root / ".godotmaker"
    (gm / "hooks").mkdir(parents=True)
    for name, text in {
        "project.godot": "config_version=5\n", "GDD.md": "# GDD\n", "PLAN.md": PLAN, "STRUCTURE.md": "# STRUCTURE\n",
        "MEMORY.md": "# MEMORY\n", "src/player.gd": "extends Node\n", "e2e/test_play.gd": "extends Node\n",
        "assets/player.png": "png", "CLAUDE.md": "# project instructions\n",
    }.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    if version is not None:
        (gm / "version").write_text(f"{version}\n")
    (gm / "stage_schemas.json").write_text(json.dumps(STAGE_SCHEMAS, indent=2))
    for script in SCRIPTS:
        (gm / "hooks" / f"{script}.py").write_text("import sys; sys.exit(0)\n")
    if registrations:
        (root / ".claude").mkdir()
        (root / ".claude" / "settings.json").write_text(CLAUDE_SETTINGS)
        (root / ".codex").mkdir()
        (root / ".codex" / "hooks.json").write_text(CODEX_HOOKS)
        (root / ".opencode" / "plugins").mkdir(parents=True)
        (root / ".opencode" / "plugins" / "godotmaker-hooks.js").write_text(OPENCODE_ADAPTER)
    return root


def skill_sets_role(root: Path, role: str) -> None:
    """A `/gm-*` skill's first action: write its role to `.godotmaker/current_role`."""
    (root / ".godotmaker" / "current_role").write_text(f"{role}\n")


def skill_completes(root: Path, role: str) -> None:
    """A skill's last action: append its completion to `.godotmaker/stage.jsonl`."""
    with open(root / ".godotmaker" / "stage.jsonl", "a") as log:
        log.write(json.dumps({"role": role, "ts": "2026-12-01T09:00:00Z"}) + "\n")
