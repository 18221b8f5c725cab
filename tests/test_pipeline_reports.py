"""SubagentStop: check_worker_report (evaluate), log_subagent_stop (log, seeing the final Decision)
and the answer (apply), in one process. One row per rule of seed 000, through the Claude stdin
protocol."""

import copy
import json

import pytest

from pipeline_support import Pipeline

WORKER = """## Report: M01 Player movement
### Status: DONE
### Files Changed
- `src/player.gd`: movement
### Tests
Ran test_player.gd with gdunit: 5 tests -- 5 passed, 0 failed
### Build
Build OK, exit code 0
"""
VERIFIER = """## Verification Report: M01
### Overall: PASS
### Results
build, unit tests and e2e all pass
### Adversarial Probes
spammed jump while falling; no double jump
"""
REVIEW_TEXT = "Checked every component is plain data and systems own the behaviour; no state in nodes."
REVIEWER = f"""## Review Report: M01
### Reviewers Matched
ecs-reviewer
### ECS Review
{REVIEW_TEXT}
### Issues Found
{REVIEW_TEXT}
### Summary
approve
"""
ANALYST = """## Analyst Report: art pass
### Status: DONE
### Asset Summary
12 sprites
### Art Style Summary
pixel art, 16 colours
### Files Generated
- ASSETS.md
"""
OUTCOME = {
    "gm_outcome_version": 1, "report_type": "asset-producer", "status": "DONE", "unit_id": "ui_kit",
    "outputs": {"sources": ["assets/ui/src.png"], "runtime": [], "prompts": [], "reports": [], "request": [],
                "result": []},
    "validation": {"passed": True, "levels": {"L0": True, "L5": True}, "notes": "checked"},
    "blockers": [],
}
ASSET_MD = """## Asset Producer Report: ui kit
### Status: DONE
### Production Unit
ui_kit
### Outputs
assets/ui/src.png
### Tools
image tool
### Validation
L0 ok
### Handoff
ready
"""


def producer(block=OUTCOME, markdown=ASSET_MD):
    body = block if isinstance(block, str) else json.dumps(block, indent=2)
    return f"{markdown}\n```json\n{body}\n```\n"


def changed(**fields):
    block = copy.deepcopy(OUTCOME)
    for key, value in fields.items():
        if value is _DROP:
            del block[key]
        else:
            block[key] = value
    return block


_DROP = object()


@pytest.fixture
def pipe(tmp_path):
    return Pipeline(tmp_path).role("asset")


def stop(pipe, role, message, agent_id="a1", subagent_type=None):
    """Dispatch `role` (as its own agent type), start it and stop it with `message`."""
    kind = subagent_type or role
    pipe.dispatch(f"{role}: task", kind)
    pipe.start(agent_id, kind)
    return pipe.subagent_stop(agent_id, message, kind)


def last_stop(pipe):
    return pipe.metrics("subagent_stop")[-1]


# -- the machine outcome block: every field rule, each error naming its field -----------------

OUTCOME_RULES = [
    (changed(), None),
    (changed(status="partial", blockers=["no surface sheet"], validation={"passed": False}), None),
    (changed(status="FAILED", blockers=["provider down"], validation={"passed": False}), None),
    (changed(outputs={"request": ["req.json"]}), None),                       # categories may be left out
    (changed(gm_outcome_version=2), "'gm_outcome_version' must be 1, got 2"),
    (changed(gm_outcome_version=True), "'gm_outcome_version' must be 1, got True"),
    (changed(gm_outcome_version="1"), "'gm_outcome_version' must be 1, got '1'"),
    (changed(report_type="wizard"), "'report_type' must be one of: analyst, asset-producer, reviewer, verifier, worker"),
    (changed(report_type=""), "'report_type' must be a non-empty string"),
    (changed(status="DONEISH"), "'status' must be one of: DONE, PARTIAL, FAILED"),
    (changed(status=3), "'status' must be one of: DONE, PARTIAL, FAILED"),
    (changed(unit_id="  "), "'unit_id' must be a non-empty string"),
    (changed(outputs=["a.png"]), "'outputs' must be an object of path lists"),
    (changed(outputs={"images": []}), "'outputs' has unknown categories: images"),
    (changed(outputs={"sources": "a.png"}), "'outputs.sources' must be an array of paths"),
    (changed(outputs={"result": [""]}), "'outputs.result' entries must be non-empty strings"),
    (changed(validation=True), "'validation' must be an object with a 'passed' boolean"),
    (changed(validation={"passed": "yes"}), "'validation.passed' must be true or false"),
    (changed(validation={"passed": True, "score": 9}), "'validation' has unknown keys: score"),
    (changed(validation={"passed": True, "levels": {"L6": True}}), "'validation.levels' has unknown levels: L6"),
    (changed(validation={"passed": True, "levels": {"L2": "ok"}}), "'validation.levels.L2' must be true or false"),
    (changed(validation={"passed": True, "levels": []}), "'validation.levels' must be an object of L0-L5 booleans"),
    (changed(validation={"passed": True, "notes": 3}), "'validation.notes' must be a string"),
    (changed(blockers="none"), "'blockers' must be an array of strings"),
    (changed(blockers=[""]), "'blockers' entries must be non-empty strings"),
    (changed(validation={"passed": False}), "'status' DONE requires 'validation.passed' true"),
    (changed(blockers=["x"]), "'status' DONE requires an empty 'blockers' array"),
    (changed(status="PARTIAL", validation={"passed": False}), "'status' PARTIAL requires at least one entry in 'blockers'"),
    (changed(extra=1), "outcome block has unknown fields: extra"),
    (changed(blockers=_DROP), "outcome block is missing fields: blockers"),
    ('{"gm_outcome_version": 1, "status": ', "outcome block is not valid JSON"),
    ('["gm_outcome_version", 1]', "outcome block must be a JSON object carrying 'gm_outcome_version'"),
]


@pytest.mark.parametrize("block, error", OUTCOME_RULES)
def test_outcome_block_field_rules(pipe, block, error):
    answer = stop(pipe, "asset-producer", producer(block))
    record = last_stop(pipe)
    if error is None:
        assert not answer.blocked, answer.reason
        assert record["outcome_kind"] == "terminal" and record["outcome_error"] is None
        status = record["status"].lower()
        [outcome] = pipe.metrics(f"asset_producer_{status}")
        assert outcome["unit_id"] == "ui_kit"
    else:
        assert answer.blocked
        assert "asset-producer report has no valid machine-readable outcome block: " + error in answer.reason
        assert "its outputs must not be registered" in answer.reason
        assert record["outcome_kind"] == "rejected_attempt" and error in record["outcome_error"]
        assert not [m for m in pipe.metrics() if m["event"].startswith("asset_producer_")]


def test_exactly_one_outcome_block(pipe):
    answer = stop(pipe, "asset-producer", producer() + "\n```json\n" + json.dumps(OUTCOME) + "\n```\n")
    assert answer.blocked and "report carries 2 outcome blocks; exactly one is allowed" in answer.reason


def test_a_report_without_any_block_is_refused(pipe):
    answer = stop(pipe, "asset-producer", ASSET_MD)
    assert answer.blocked and "No machine outcome block found." in answer.reason


def test_other_fenced_json_is_not_an_outcome_block(pipe):
    sample = "```json\n{\"atlas\": [1, 2]}\n```\n"
    assert not stop(pipe, "asset-producer", sample + producer()).blocked


# -- role binding: the dispatched role outranks the report's claim ------------------------------

def test_a_block_for_another_role_is_refused(pipe):
    answer = stop(pipe, "asset-producer", producer(changed(report_type="worker")))
    assert answer.blocked
    assert "declares report_type 'worker', but you were dispatched as asset-producer" in answer.reason


def test_a_report_cannot_change_its_agents_role(tmp_path):
    pipe = Pipeline(tmp_path).role("build").ready_to_dispatch()
    answer = stop(pipe, "verifier", WORKER)  # a verifier handing in a worker report
    assert answer.blocked
    assert answer.reason.startswith("Verifier report missing required sections: Overall, Results, Adversarial Probes.")
    assert last_stop(pipe)["role"] == "verifier" and last_stop(pipe)["report_type"] == "worker"


def test_the_role_of_a_generic_agent_comes_from_its_dispatch(tmp_path):
    pipe = Pipeline(tmp_path).role("build").ready_to_dispatch()
    pipe.dispatch("worker: M1", "general-purpose")
    pipe.start("g1", "general-purpose")
    answer = pipe.subagent_stop("g1", VERIFIER, "general-purpose")
    assert answer.blocked and answer.reason.startswith("Worker report missing required sections: Status, Files Changed")


def test_an_unclassified_agent_is_judged_by_the_report_it_hands_in(tmp_path):
    pipe = Pipeline(tmp_path).role("build").ready_to_dispatch()
    pipe.start("g1")
    answer = pipe.subagent_stop("g1", "## Verification Report: M1\n### Overall: PASS\n")
    assert answer.blocked and "Verifier report missing required sections: Results, Adversarial Probes" in answer.reason
    assert not pipe.subagent_stop("g2", "just chatting, no report").blocked


def test_a_known_role_without_a_report_must_hand_one_in(tmp_path):
    pipe = Pipeline(tmp_path).role("build").ready_to_dispatch()
    answer = stop(pipe, "worker", "I changed some files.")
    assert answer.blocked
    assert answer.reason.startswith("You are a worker but your output does not contain a properly formatted report.")
    assert "## Report:\n### Status\n### Files Changed\n### Tests\n### Build" in answer.reason


# -- layered detection -----------------------------------------------------------------------

@pytest.mark.parametrize("message, report_type", [
    ("## Report: M1", "worker"),                                   # exact markers
    ("## Verification Report: M1", "verifier"),
    ("## Review Report: M1", "reviewer"),
    ("## Analyst Report: art", "analyst"),
    ("## Asset Producer Report: ui", "asset-producer"),
    ("### Verification Report：M1", "verifier"),                   # patterns (full-width colon)
    ("#### report - M1", "worker"),
    ("# Asset Producer Report", "asset-producer"),
    ("notes\n### Overall: FAIL", "verifier"),                      # fallback headings
    ("### Status: PARTIAL", "worker"),
    ("### Reviewer Matched", "reviewer"),
    ("### Asset Summary", "analyst"),
    ("### Production Unit", "asset-producer"),
    ("All done, nothing to report in a heading.", None),
])
def test_layered_report_detection(tmp_path, message, report_type):
    pipe = Pipeline(tmp_path)  # no role: nothing blocks, the stop is still read and logged
    pipe.start("a1")
    pipe.subagent_stop("a1", message)
    assert last_stop(pipe)["report_type"] == report_type


# -- required sections per role -----------------------------------------------------------------

SECTIONS = [
    ("worker", WORKER, ["### Status: DONE", "### Files Changed", "### Tests", "### Build"]),
    ("verifier", VERIFIER, ["### Overall: PASS", "### Results", "### Adversarial Probes"]),
    ("reviewer", REVIEWER, ["### Reviewers Matched", "### ECS Review", "### Issues Found", "### Summary"]),
    ("analyst", ANALYST, ["### Status: DONE", "### Asset Summary", "### Art Style Summary", "### Files Generated"]),
]


@pytest.mark.parametrize("role, report, headings", SECTIONS)
def test_required_sections(tmp_path, role, report, headings):
    pipe = Pipeline(tmp_path).role("build").ready_to_dispatch()
    pipe.write("e2e/test_player.gd")
    assert not stop(pipe, role, report, "ok").blocked
    for i, heading in enumerate(headings):
        broken = report.replace(heading, "### Something else")
        answer = stop(pipe, role, broken, f"missing-{i}")
        name = heading.removeprefix("### ").split(":")[0]
        assert answer.blocked and f"{role.capitalize()} report missing required sections: {name}." in answer.reason


def test_asset_producer_sections_are_required_too(pipe):
    answer = stop(pipe, "asset-producer", producer(markdown=ASSET_MD.replace("### Handoff\nready\n", "")))
    assert answer.blocked and "missing required sections: Handoff" in answer.reason


# -- substance --------------------------------------------------------------------------------

@pytest.mark.parametrize("tests, error", [
    ("ok", "Tests section is empty"),
    ("I ran everything and it looked fine to me", "Tests section lacks substance"),
    ("Commands run: godot --check-only, everything is fine", "Tests section is missing unit test results"),
    ("unit tests: tests/unit/movement.gd -- 4 passed", None),
])
def test_worker_tests_must_show_unit_test_output(tmp_path, tests, error):
    pipe = Pipeline(tmp_path).role("build").ready_to_dispatch()
    report = WORKER.replace("Ran test_player.gd with gdunit: 5 tests -- 5 passed, 0 failed", tests)
    answer = stop(pipe, "worker", report)
    assert answer.blocked == (error is not None)
    if error:
        assert answer.reason.startswith(error)


def test_worker_resource_paths_must_exist(tmp_path):
    pipe = Pipeline(tmp_path).role("build").ready_to_dispatch()
    pipe.write("src/player.gd", 'extends Node\n# res://commented/out.png\nvar t = load("res://assets/hero.png")\n')
    answer = stop(pipe, "worker", WORKER, "w1")
    assert answer.blocked
    assert answer.reason.startswith("Worker references non-existent resource: res://assets/hero.png.")
    pipe.write("assets/hero.png")
    assert not stop(pipe, "worker", WORKER, "w2").blocked


def test_worker_files_are_read_from_its_worktree(tmp_path):
    pipe = Pipeline(tmp_path).role("build").ready_to_dispatch()
    pipe.write(".claude/worktrees/agent-7/src/player.gd", 'class_name Timer\nextends Node\n')
    answer = stop(pipe, "worker", WORKER)
    assert answer.blocked
    assert answer.reason == "class_name 'Timer' conflicts with Godot built-in 'Timer'. Rename it, e.g. 'TimerEntity' or 'TimerComp'."


def test_worker_files_outside_the_project_are_not_read(tmp_path):
    outside = tmp_path / "elsewhere.gd"
    outside.write_text("class_name Node\n")
    project = tmp_path / "game"
    pipe = Pipeline(project).role("build").ready_to_dispatch()
    report = WORKER.replace("`src/player.gd`", "`../elsewhere.gd`")
    assert not stop(pipe, "worker", report).blocked


@pytest.mark.parametrize("text, blocked", [(REVIEW_TEXT, False), ("LGTM", True), ("x" * 49, True), ("x" * 50, False)])
def test_reviewer_sections_need_50_characters(tmp_path, text, blocked):
    pipe = Pipeline(tmp_path).role("build").ready_to_dispatch()
    report = REVIEWER.replace(f"### Issues Found\n{REVIEW_TEXT}", f"### Issues Found\n{text}")
    answer = stop(pipe, "reviewer", report)
    assert answer.blocked == blocked
    if blocked:
        assert answer.reason.startswith(f"Issues Found section has {len(text)} characters")


def test_nothing_is_enforced_without_a_pipeline_role(tmp_path):
    pipe = Pipeline(tmp_path)
    assert not stop(pipe, "worker", "no report at all").blocked
    assert last_stop(pipe)["outcome_kind"] == "terminal"


# -- bounded blocking and outcome_kind ---------------------------------------------------------

def test_two_blocks_per_agent_then_released_unverified(tmp_path):
    pipe = Pipeline(tmp_path).role("build").ready_to_dispatch()
    pipe.dispatch("worker: M1", "worker")
    pipe.start("w1", "worker")
    answers = [pipe.subagent_stop("w1", "not a report", "worker") for _ in range(3)]
    assert [a.blocked for a in answers] == [True, True, False]
    assert [m["outcome_kind"] for m in pipe.metrics("subagent_stop")] == ["rejected_attempt", "rejected_attempt", "unverified"]
    assert not pipe.metrics("worker_done")
    [forced] = pipe.metrics("hook_force_allow")
    assert (forced["gate"], forced["agent_id"], forced["count"]) == ("check_worker_report", "w1", 2)
    # the release warning reaches the lead on its next turn
    assert "letting this through UNVERIFIED" in pipe.tool("Read", file_path="PLAN.md").context
    # another agent has its own two blocks
    assert stop(pipe, "worker", "still not a report", "w2").blocked


def test_a_rejected_attempt_then_the_accepted_report(tmp_path):
    pipe = Pipeline(tmp_path).role("build").ready_to_dispatch()
    pipe.write("e2e/test_player.gd")
    assert stop(pipe, "worker", WORKER.replace("### Build\n", "### Bild\n")).blocked
    assert not pipe.subagent_stop("a1", WORKER, "worker").blocked
    assert not pipe.subagent_stop("a1", WORKER, "worker").blocked  # a repeated stop writes no second result
    assert [m["outcome_kind"] for m in pipe.metrics("subagent_stop")] == ["rejected_attempt", "terminal", "terminal"]
    [done] = pipe.metrics("worker_done")
    assert (done["agent_id"], done["files"]) == ("a1", ["src/player.gd"])


@pytest.mark.parametrize("role, report, event", [
    ("worker", WORKER.replace("DONE", "PARTIAL"), "worker_partial"),
    ("worker", WORKER.replace("DONE", "FAILED"), "worker_failed"),
    ("verifier", VERIFIER, "verifier_pass"),
    ("verifier", VERIFIER.replace("PASS", "FAIL"), "verifier_fail"),
    ("verifier", VERIFIER.replace("PASS", "PARTIAL"), "verifier_partial"),
])
def test_terminal_outcome_events(tmp_path, role, report, event):
    pipe = Pipeline(tmp_path).role("build").ready_to_dispatch()
    assert not stop(pipe, role, report).blocked
    assert [m["event"] for m in pipe.metrics() if m["event"].startswith(role + "_") and m["event"] != "worker_error"] == [event]


def test_progress_reaches_the_lead_after_an_accepted_report(tmp_path):
    pipe = Pipeline(tmp_path).role("build").ready_to_dispatch()
    stop(pipe, "worker", WORKER, "w1")
    assert pipe.tool("Read", file_path="PLAN.md").context == (
        "[Progress] worker: 1 done | verifier: 0 | reviewer: 0. Every worker needs verifier + reviewer before "
        "build may stop.")
    stop(pipe, "verifier", VERIFIER, "v1")
    assert "[Progress] worker: 1 done | verifier: 1 | reviewer: 0." in pipe.tool("Read", file_path="PLAN.md").context


def test_an_agent_identified_by_its_report_counts_for_completion(tmp_path):
    pipe = Pipeline(tmp_path).role("build").ready_to_dispatch()
    stop(pipe, "worker", WORKER, "w1")
    for agent, report in (("g1", VERIFIER), ("g2", REVIEWER)):
        pipe.start(agent)
        assert not pipe.subagent_stop(agent, report).blocked
    assert pipe.state()["pipeline"]["roles"] == {"worker": 1, "verifier": 1, "reviewer": 1}
    assert not pipe.stop().blocked


# -- worker_error diagnostics ---------------------------------------------------------------

FAILED_WORKER = """## Report: M03 Enemy spawner
### Status: FAILED
### Files Changed
- `src/spawner.gd`
### Tests
test_spawner.gd: 3 tests -- 1 passed, 2 failed (exit code 1)
### Build
Godot exited with 0
### Repair Attempt Evidence
- Handoff condition: tool_or_environment_error
- Suggested classification: orchestration_failure
- Error: headless Godot crashed after 12 seconds, see .hookgate/traces/run-3.log
### Notes
evidence in e2e/out/log.txt
"""


def test_a_failed_worker_leaves_one_bounded_diagnostic(tmp_path):
    pipe = Pipeline(tmp_path).role("build").ready_to_dispatch()
    assert not stop(pipe, "worker", FAILED_WORKER, "w1").blocked
    pipe.subagent_stop("w1", FAILED_WORKER, "worker")  # SubagentStop again: deduplicated
    [error] = pipe.metrics("worker_error")
    assert {k: error[k] for k in ("task_id", "attempt", "stage", "runtime", "role", "agent_id", "run_id",
                                  "error_type", "classification", "status", "outcome_kind", "exit_code",
                                  "retryable", "repeat_count")} == {
        "task_id": "M03", "attempt": 1, "stage": "build", "runtime": "claude", "role": "worker", "agent_id": "w1",
        "run_id": pipe.session_id, "error_type": "tool_or_environment_error", "classification": "orchestration_failure",
        "status": "FAILED", "outcome_kind": "terminal", "exit_code": 1, "retryable": True, "repeat_count": 0,
    }
    assert error["summary"] == "headless Godot crashed after 12 seconds, see .hookgate/traces/run-3.log"
    assert error["evidence_paths"] == [".hookgate/traces/run-3.log", "e2e/out/log.txt"]
    assert len(error["error_fingerprint"]) == 16 and "output_digest" not in error


def test_the_same_failure_again_counts_as_a_repeat(tmp_path):
    pipe = Pipeline(tmp_path).role("build").ready_to_dispatch()
    stop(pipe, "worker", FAILED_WORKER, "w1")
    stop(pipe, "worker", FAILED_WORKER.replace("12 seconds", "31 seconds"), "w2")  # digits fold
    first, second = pipe.metrics("worker_error")
    assert first["error_fingerprint"] == second["error_fingerprint"]
    assert (second["attempt"], second["repeat_count"]) == (2, 1)


@pytest.mark.parametrize("message, limit_hit, error_type", [
    (WORKER.replace("DONE", "PARTIAL"), False, "task_partial"),
    (WORKER.replace("DONE", "FAILED"), False, "task_failed"),
    ("not a report", False, "report_rejected"),
    ("not a report", True, "unverified_handoff"),
    (WORKER, False, None),  # a clean success leaves no diagnostic
])
def test_worker_error_types(tmp_path, message, limit_hit, error_type):
    pipe = Pipeline(tmp_path).role("build").ready_to_dispatch()
    pipe.write("e2e/test_player.gd")
    stop(pipe, "worker", message, "w1")
    if limit_hit:
        pipe.subagent_stop("w1", message, "worker")
        pipe.subagent_stop("w1", message, "worker")
    types = [e["error_type"] for e in pipe.metrics("worker_error")]
    if error_type is None:
        assert types == []
    else:
        assert types[-1] == error_type


def test_only_worker_stops_leave_diagnostics(tmp_path):
    pipe = Pipeline(tmp_path).role("build").ready_to_dispatch()
    stop(pipe, "verifier", VERIFIER.replace("PASS", "FAIL"))
    stop(pipe, "analyst", ANALYST.replace("DONE", "FAILED"), "a2")
    assert pipe.metrics("worker_error") == []


def test_large_output_is_kept_as_a_digest(tmp_path):
    pipe = Pipeline(tmp_path).role("build").ready_to_dispatch()
    log = "\n".join(f"line {i}: assertion failed in test_spawner.gd" for i in range(200))
    report = FAILED_WORKER.replace("Godot exited with 0", log)
    stop(pipe, "worker", report)
    [error] = pipe.metrics("worker_error")
    assert len(error["output_digest"]) == 64 and error["output_bytes"] > 8000
    assert len(error["output_tail"]) == 400 and error["output_tail"].endswith("line 199: assertion failed in test_spawner.gd")
    assert len(json.dumps(error)) < 2500
