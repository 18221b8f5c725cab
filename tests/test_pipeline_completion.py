"""check_completion (Stop): build/fixgap may not end with workers dispatched but no verifier or
reviewer run; bounded at 5 blocks per session by the engine."""

import json

import pytest

from pipeline_support import Pipeline, read_answer
from support import run_hook


@pytest.fixture
def pipe(tmp_path):
    return Pipeline(tmp_path).role("build").ready_to_dispatch()


# active role, subagents run this session (dispatch type, description), stop blocked?, roles named
TABLE = [
    ("build", [("worker", "")], True, ["verifier", "reviewer"]),
    ("build", [("worker", ""), ("verifier", "")], True, ["reviewer"]),
    ("build", [("worker", ""), ("reviewer", "")], True, ["verifier"]),
    ("build", [("worker", ""), ("verifier", ""), ("reviewer", "")], False, []),
    ("build", [("general-purpose", "worker: M1"), ("general-purpose", "verify: M1"),
               ("general-purpose", "review: M1")], False, []),
    ("build", [("general-purpose", "worker: M1")], True, ["verifier", "reviewer"]),
    ("build", [], False, []),                                   # no worker dispatched
    ("build", [("verifier", ""), ("analyst", "")], False, []),
    ("fixgap", [("worker", "")], True, ["verifier", "reviewer"]),
    ("verify", [("worker", "")], False, []),                    # not a worker-dispatch role
    ("gdd", [("worker", "")], False, []),
    (None, [("worker", "")], False, []),                        # no pipeline role: ordinary session
]


@pytest.mark.parametrize("role, subagents, blocked, missing", TABLE)
def test_completion_rule(tmp_path, role, subagents, blocked, missing):
    pipe = Pipeline(tmp_path).role(role).ready_to_dispatch()
    for i, (kind, text) in enumerate(subagents):
        pipe.run_subagent(f"a{i}", text, kind)
    answer = pipe.stop()
    assert answer.blocked == blocked, answer
    for needed in ("verifier", "reviewer"):
        assert (f"0 {needed}s" in answer.reason) == (needed in missing)
    if blocked:
        assert answer.reason.startswith(f"Cannot finish {role} yet:")
        assert f"subagent_type: '{missing[0]}'" in answer.reason


def test_counts_come_from_the_session_state_not_the_log(pipe):
    pipe.run_subagent("w", "", "worker")
    (pipe.session_dir / "metrics.jsonl").unlink()  # the log is gone; the state still knows
    assert pipe.stop().blocked
    assert pipe.state()["pipeline"]["roles"] == {"worker": 1}


def test_counts_are_per_session(tmp_path):
    first = Pipeline(tmp_path, "one").role("build").ready_to_dispatch()
    first.run_subagent("w", "", "worker")
    assert first.stop().blocked
    assert not Pipeline(tmp_path, "two").stop().blocked


def test_five_blocks_then_released_unverified_and_the_model_is_told(pipe):
    pipe.run_subagent("w", "", "worker")
    answers = [pipe.stop() for _ in range(6)]
    assert [a.blocked for a in answers] == [True] * 5 + [False]
    assert "letting this through UNVERIFIED" in pipe.last_stderr
    [forced] = pipe.metrics("hook_force_allow")
    assert (forced["gate"], forced["outcome_kind"], forced["count"]) == ("check_completion", "unverified", 5)
    assert len(pipe.metrics("hook_block")) == 5
    # the release warning reaches the model on its next turn (a Stop answer cannot carry context)
    nxt = pipe.tool("Read", file_path="README.md")
    assert "check_completion has blocked 5 times" in nxt.context


def test_the_limit_is_config(pipe):
    (pipe.root / ".hookgate" / "config.toml").write_text("[gates.check_completion]\nblock_limit = 2\n")
    pipe.run_subagent("w", "", "worker")
    assert [pipe.stop().blocked for _ in range(3)] == [True, True, False]


def test_a_limit_at_claude_codes_own_cap_is_a_config_error(pipe):
    pipe.run_subagent("w", "", "worker")
    (pipe.root / ".hookgate" / "config.toml").write_text("[gates.check_completion]\nblock_limit = 8\n")
    answer = pipe.stop()
    assert "below Claude Code's own cap of 8" in pipe.last_stderr
    assert "$.gates.check_completion" in pipe.last_stderr
    assert not answer.blocked  # an invalid config fails by the gates' fail modes; this one fails open


def test_a_real_hook_process_holds_the_stop(pipe):
    pipe.run_subagent("w", "", "worker")
    payload = {"hook_event_name": "Stop", "session_id": pipe.session_id, "cwd": str(pipe.root),
               "stop_hook_active": False}
    done = run_hook("claude", payload, pipe.root)
    assert done.returncode == 0, done.stderr
    answer = read_answer(done.stdout)
    assert answer.blocked and "0 verifiers" in answer.reason
    assert json.loads(done.stdout)["decision"] == "block"


def test_a_stop_while_subagents_still_run_is_judged_later(pipe):
    """Claude Code runs subagents in the background: the lead's turn ends while the worker works
    and resumes when it finishes. That first stop is not the end of the round."""
    pipe.run_subagent("w", "", "worker")
    running = [{"id": "w", "type": "subagent", "status": "running", "description": "worker: M1", "agent_type": "worker"}]
    answer = pipe.call({"hook_event_name": "Stop", "stop_hook_active": False, "background_tasks": running})
    assert not answer.blocked
    assert pipe.metrics("gate_check")[-1] == {**pipe.metrics("gate_check")[-1], "result": "deferred", "running": 1}
    assert not pipe.metrics("hook_block")
    finished = [{**running[0], "status": "completed"}]
    assert pipe.call({"hook_event_name": "Stop", "background_tasks": finished}).blocked
    assert pipe.stop().blocked
