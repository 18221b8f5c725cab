"""stage_reminder, check_stage_prerequisites and `hookgate stage complete`: a role's completion
enters stage.jsonl only through validation, and build/fixgap dispatch only after their
prerequisite role. Through the Claude stdin protocol, one row per rule of seed 000."""

import json
import subprocess

import pytest

from pipeline_support import Pipeline
from support import HOOKGATE

TS = "2026-01-02T03:04:05Z"


def entry(role: str) -> str:
    return json.dumps({"role": role, "ts": TS})


@pytest.fixture
def pipe(tmp_path):
    return Pipeline(tmp_path).role("gdd")


def append(pipe: Pipeline, role: str, path: str = ".hookgate/stage.jsonl"):
    """What a /gm-* skill does: Write the log with its old lines and the new completion."""
    log = pipe.root / ".hookgate" / "stage.jsonl"
    old = log.read_text() if log.exists() else ""
    return pipe.tool("Write", file_path=path, content=old + entry(role) + "\n")


PLAN_VERIFIED = "| Task | Status |\n|---|---|\n| M1 | verified |\n| M2 | verified |\n"
PLAN_PENDING = "| Task | Status |\n|---|---|\n| M1 | verified |\n| M2 | pending |\n| M3 | completed |\n"

# role completed, files to create, allowed?, text in the reason (block) or the context (allow)
STAGE_TABLE = [
    ("scaffold", {}, False, "Required file missing: project.godot"),
    ("scaffold", {"project.godot": ""}, True, "[Role 'scaffold' complete] Next: /gm-gdd"),
    ("gdd", {"GDD.md": "", "PLAN.md": ""}, False, "Required file missing: STRUCTURE.md"),
    ("gdd", {"GDD.md": "", "PLAN.md": "", "STRUCTURE.md": ""}, True, "Next: /gm-asset"),
    ("asset", {}, True, "Next: /gm-build"),
    ("build", {}, False, "PLAN.md not found"),
    ("build", {"PLAN.md": PLAN_PENDING}, False, "PLAN.md has tasks not yet verified: 1 pending, 1 completed"),
    ("build", {"PLAN.md": PLAN_VERIFIED}, True, "Next: /gm-verify"),
    ("verify", {}, True, "Next: /gm-evaluate"),
    ("evaluate", {}, False, "Required file missing: .hookgate/evaluation.json"),
    ("fixgap", {"GAP.md": "gaps"}, False, "GAP.md is still at the project root"),
    ("fixgap", {}, False, "no archived gap list"),
    ("fixgap", {".hookgate/gaps/2/GAP.md": "gaps"}, True, "Next: /gm-verify"),
    ("accept", {}, True, "Next: /gm-finalize"),
    ("finalize", {}, False, "Required file missing: .hookgate/final_report.json"),
    ("rescue", {}, True, ""),   # nothing follows rescue: allowed without a hint
    ("mystery", {}, False, "unknown role 'mystery'; stage roles: scaffold, gdd,"),
]


@pytest.mark.parametrize("role, files, allowed, text", STAGE_TABLE)
def test_stage_append_is_validated(pipe, role, files, allowed, text):
    for name, content in files.items():
        pipe.write(name, content)
    answer = append(pipe, role)
    assert answer.blocked != allowed, answer
    if allowed:
        assert text in answer.context and (text or not answer.context)
        assert [m["role"] for m in pipe.metrics("stage_complete")] == [role]
    else:
        assert text in answer.reason
        assert answer.reason.startswith(f"Cannot mark role '{role}' as complete - validation failed:") or "unknown" in text
        assert not pipe.metrics("stage_complete")


# -- evaluate: evaluation.json covers the Playable Unit ------------------------------------------

PLAN_UNIT = """# Plan

**Tag:** v0.1.0

## Playable Unit

- **Unit outcome:** exit reached through normal play

| Mechanic | Player operation | Expected effect | Required visible content | Evidence |
|----------|------------------|-----------------|--------------------------|----------|
| [v0.1.0-M1] | Press Start | Gameplay opens | Player visible | e2e + screenshot |
| [v0.1.0-M2] | Move to exit | Run ends | Results visible | e2e + screenshot |

## Next
"""


def evaluation(result="approve", **rows):
    rows = rows or {key: "pass" for key in ("v0.1.0-M1", "v0.1.0-M2")}
    return {
        "result": result,
        "playable_closed_loop": {"playable_unit_coverage": result == "approve", "completion_fail_or_exit_reached": True},
        "playable_unit": {"rows": {key: {"result": value, "test": "e2e/test_unit.gd", "evidence": ["shot.png"]}
                                   for key, value in rows.items()}},
        "critical_issues": [],
    }


@pytest.mark.parametrize("doc, allowed, text", [
    (evaluation(), True, ""),
    (evaluation(**{"v0.1.0-M1": "pass"}), False, "Playable Unit row v0.1.0-M2 missing"),
    (evaluation(**{"v0.1.0-M1": "pass", "v0.1.0-M2": "fail"}), False, "approve requires Playable Unit row v0.1.0-M2 to pass"),
    (evaluation("reject", **{"v0.1.0-M1": "pass", "v0.1.0-M2": "fail"}), True, ""),
    (evaluation("reject"), False, "reject requires at least one failed Playable Unit row"),
    ({"result": "maybe"}, False, 'field "result" must be "approve" or "reject"'),
])
def test_evaluation_playable_unit(pipe, doc, allowed, text):
    pipe.write("PLAN.md", PLAN_UNIT)
    pipe.write("e2e/test_unit.gd", "extends Node")
    pipe.write(".hookgate/evaluation.json", json.dumps(doc))
    answer = append(pipe, "evaluate")
    assert answer.blocked != allowed, answer
    assert text in answer.reason


def test_tag_archived(pipe):
    pipe.write(".hookgate/final_report.json", "{}")
    pipe.write("PLAN.md", "**Tag:** v0.2.0\n")
    assert "docs/tags/v0.2.0/ not created" in append(pipe, "finalize").reason
    archive = "docs/tags/v0.2.0/"
    for name in ("GDD-snapshot.md", "PLAN.md", "STRUCTURE.md", "STYLE.md", "SCENES.md", "MEMORY.md",
                 "evaluation-final.json", "CHANGELOG.md", "README.md"):
        pipe.write(archive + name)
    assert "missing required files: SUMMARY.md" in append(pipe, "finalize").reason
    pipe.write(archive + "SUMMARY.md")
    pipe.write(archive + "evidence/manifest.json", json.dumps({"sealed": False}))
    assert '"sealed": true' in append(pipe, "finalize").reason
    pipe.write(archive + "evidence/manifest.json", json.dumps({"sealed": True}))
    assert "docs/tags/README.md not found" in append(pipe, "finalize").reason
    pipe.write("docs/tags/README.md", "- [v0.1.0](v0.1.0/)\n")
    assert "does not list v0.2.0" in append(pipe, "finalize").reason
    pipe.write("docs/tags/README.md", "- [v0.2.0](v0.2.0/)\n")
    assert not append(pipe, "finalize").blocked


# -- what counts as an append -------------------------------------------------------------------

def test_only_added_lines_are_validated(pipe):
    pipe.write("project.godot")
    pipe.completed("build")  # an old completion whose check would fail today (no PLAN.md)
    assert not append(pipe, "scaffold").blocked


@pytest.mark.parametrize("content, text", [
    ("not json\n", 'not a stage entry {"role": ..., "ts": ...}: not json'),
    ('{"role": "asset"}\n', 'not a stage entry'),
    ('["asset", "now"]\n', 'not a stage entry'),
])
def test_a_malformed_line_is_refused(pipe, content, text):
    answer = pipe.tool("Write", file_path=".hookgate/stage.jsonl", content=content)
    assert answer.blocked and text in answer.reason


def test_edit_and_multiedit_appends_are_validated(pipe):
    pipe.completed("asset")
    old = entry("asset").replace(TS, "2026-01-01T00:00:00Z")
    edit = pipe.tool("Edit", file_path=".hookgate/stage.jsonl", old_string=old, new_string=old + "\n" + entry("scaffold"))
    assert edit.blocked and "project.godot" in edit.reason
    multi = pipe.tool("MultiEdit", file_path=".hookgate/stage.jsonl",
                      edits=[{"old_string": old, "new_string": old + "\n" + entry("asset")},
                             {"old_string": "x", "new_string": entry("gdd")}])
    assert multi.blocked and "Cannot mark roles 'asset', 'gdd' as complete" in multi.reason


@pytest.mark.parametrize("spelling", ["{root}/.hookgate/stage.jsonl", "./.hookgate/stage.jsonl",
                                      "src/../.hookgate/stage.jsonl", ".hookgate//stage.jsonl"])
def test_every_spelling_of_the_stage_log_is_validated(pipe, spelling):
    (pipe.root / "src").mkdir()
    answer = pipe.tool("Write", file_path=spelling.format(root=pipe.root), content=entry("scaffold") + "\n")
    assert answer.blocked and "project.godot" in answer.reason


def test_another_file_named_stage_jsonl_is_not_the_stage_log(pipe):
    pipe.role("build")
    answer = pipe.tool("Write", file_path="docs/stage.jsonl", content="anything\n")
    assert not answer.blocked


# -- .hookgate/stage_schemas.json ------------------------------------------------------------

def test_the_schema_file_replaces_the_roles_it_names(pipe):
    (pipe.root / ".hookgate" / "stage_schemas.json").write_text(json.dumps({"asset": {"files": ["ASSETS.md"]}}))
    assert "Required file missing: ASSETS.md" in append(pipe, "asset").reason
    assert "project.godot" in append(pipe, "scaffold").reason  # roles it does not name keep the preset's


@pytest.mark.parametrize("text, field", [
    ("{not json", "stage_schemas.json: "),
    ('{"build": {"checks": "plan_all_verified"}}', "at `$.build.checks`"),
    ('{"build": {"checks": ["plan_all_verifed"]}}', "unknown check 'plan_all_verifed' - at `$.build.checks[0]`"),
    ('{"build": {"file": ["PLAN.md"]}}', "unknown field `file`"),
])
def test_an_invalid_schema_file_blocks_and_names_the_field(pipe, text, field):
    """Seed 000 skipped validation when the schema was missing or malformed; here a missing
    file means the preset's schemas and a malformed one blocks every stage append and dispatch."""
    (pipe.root / ".hookgate" / "stage_schemas.json").write_text(text)
    answer = append(pipe, "asset")
    assert answer.blocked and "hookgate cannot validate stage completions" in answer.reason
    assert field in answer.reason
    pipe.role("build").ready_to_dispatch()
    dispatch = pipe.dispatch("worker: M1", "worker")
    assert dispatch.blocked and field in dispatch.reason


# -- check_stage_prerequisites --------------------------------------------------------------------

# role, setup, allowed?, text in the reason
PREREQUISITES = [
    ("build", [], False, "Role 'gdd' has not completed yet"),
    ("build", ["gdd-done", "gdd-files"], False, "project.godot not found"),
    ("build", ["gdd-done", "project.godot"], False, "gdd output missing: GDD.md"),
    ("build", ["gdd-files", "project.godot"], False, "Role 'gdd' has not completed yet"),
    ("build", ["gdd-done", "gdd-files", "project.godot"], True, ""),
    ("fixgap", [], False, "Role 'evaluate' has not completed yet"),
    ("fixgap", ["evaluate-done"], False, "evaluate output missing: .hookgate/evaluation.json"),
    ("fixgap", ["evaluate-done", "evaluation"], True, ""),
    ("verify", [], True, ""),     # only worker-dispatch roles have prerequisites
    ("asset", [], True, ""),
    (None, [], True, ""),
]


@pytest.mark.parametrize("role, setup, allowed, text", PREREQUISITES)
def test_stage_prerequisites(tmp_path, role, setup, allowed, text):
    pipe = Pipeline(tmp_path).role(role)
    actions = {
        "gdd-done": lambda: pipe.completed("gdd"),
        "evaluate-done": lambda: pipe.completed("evaluate"),
        "gdd-files": lambda: [pipe.write(n) for n in ("GDD.md", "PLAN.md", "STRUCTURE.md")],
        "project.godot": lambda: pipe.write("project.godot"),
        "evaluation": lambda: pipe.write(".hookgate/evaluation.json", "{}"),
    }
    for step in setup:
        actions[step]()
    answer = pipe.dispatch("worker: M1", "worker")
    assert answer.blocked != allowed, answer
    if not allowed:
        assert answer.reason.startswith(f"Cannot dispatch worker - '{role}' role prerequisites missing:")
        assert text in answer.reason


def test_prerequisite_files_are_rechecked_on_every_dispatch(tmp_path):
    pipe = Pipeline(tmp_path).role("build").ready_to_dispatch()
    assert not pipe.dispatch("worker: M1", "worker").blocked
    (pipe.root / "STRUCTURE.md").unlink()
    assert "gdd output missing: STRUCTURE.md" in pipe.dispatch("worker: M2", "worker").reason


def test_a_workflow_starts_subagents_and_meets_the_same_prerequisites(tmp_path):
    """Claude Code's Workflow tool runs a script whose agent() calls start subagents, no Agent call
    among them: before the gate read it, a build lead ran its workers before the design existed."""
    pipe = Pipeline(tmp_path).role("build")
    script = "export const meta = {name: 'build', description: 'm1'}\nawait agent('worker: M1')\n"
    answer = pipe.tool("Workflow", script=script)
    assert answer.blocked and "Role 'gdd' has not completed yet" in answer.reason
    assert pipe.tool("Workflow", name="saved-build").blocked
    pipe.ready_to_dispatch()
    assert not pipe.tool("Workflow", script=script).blocked


def test_a_subagents_own_dispatch_is_not_checked(tmp_path):
    pipe = Pipeline(tmp_path).role("build")
    answer = pipe.tool("Agent", ("a1", "worker"), description="helper", prompt="x", subagent_type="Explore")
    assert not answer.blocked


def test_a_refused_dispatch_starts_no_role_tracking(tmp_path):
    pipe = Pipeline(tmp_path).role("build")
    assert pipe.dispatch("worker: M1", "general-purpose").blocked
    assert pipe.state().get("pipeline", {}).get("dispatches", []) == []


# -- hookgate stage complete ------------------------------------------------------------------

def stage_cli(root, *args):
    return subprocess.run([HOOKGATE, "stage", *args], cwd=root, capture_output=True, text=True, timeout=60)


def test_stage_complete_validates_then_appends(tmp_path):
    (tmp_path / ".hookgate").mkdir()
    refused = stage_cli(tmp_path, "complete", "scaffold")
    assert refused.returncode == 1
    assert "Cannot mark role 'scaffold' as complete" in refused.stderr and "project.godot" in refused.stderr
    assert not (tmp_path / ".hookgate" / "stage.jsonl").exists()
    (tmp_path / "project.godot").write_text("")
    done = stage_cli(tmp_path, "complete", "scaffold")
    assert done.returncode == 0, done.stderr
    assert "[Role 'scaffold' complete] Next: /gm-gdd" in done.stdout
    [line] = (tmp_path / ".hookgate" / "stage.jsonl").read_text().splitlines()
    assert json.loads(line)["role"] == "scaffold"


def test_stage_complete_refuses_unknown_roles_and_bad_schemas(tmp_path):
    (tmp_path / ".hookgate").mkdir()
    unknown = stage_cli(tmp_path, "complete", "deploy")
    assert unknown.returncode == 2 and "unknown role 'deploy'" in unknown.stderr
    (tmp_path / ".hookgate" / "stage_schemas.json").write_text('{"asset": {"checks": ["nope"]}}')
    bad = stage_cli(tmp_path, "complete", "asset")
    assert bad.returncode == 2 and "`$.asset.checks[0]`" in bad.stderr
    assert not (tmp_path / ".hookgate" / "stage.jsonl").exists()


def test_stage_complete_finds_the_project_from_a_subdirectory(tmp_path):
    (tmp_path / ".hookgate").mkdir()
    (tmp_path / "src").mkdir()
    assert stage_cli(tmp_path / "src", "complete", "asset").returncode == 0
    assert (tmp_path / ".hookgate" / "stage.jsonl").exists()
