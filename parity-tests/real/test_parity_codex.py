"""The real tier on Codex CLI 0.171.0: the scenario sessions of scenarios.py, each run once on the
pinned binary against the scripted fake model (drivers/codex.py). Each test shows one row of the
parity matrix on Codex CLI, by what the runs left behind: what reached the model, the files, the
metrics records, and which of the user's own hooks ran (or never did)."""

from __future__ import annotations

import pytest
from pytest import mark

from drivers import codex as driver
from drivers.real import RealTier, tier_fixture

pytestmark = mark.real
tier = tier_fixture(driver)


# -- pipeline ---------------------------------------------------------------------------------------

@mark.proves("session_start@codex")
def test_session_start(tier: RealTier, request: pytest.FixtureRequest) -> None:
    tier.show(request)


@mark.proves("check_file_permissions@codex")
def test_check_file_permissions(tier: RealTier, request: pytest.FixtureRequest) -> None:
    tier.show(request)


@mark.proves("check_shell_writes@codex")
def test_check_shell_writes(tier: RealTier, request: pytest.FixtureRequest) -> None:
    tier.show(request)


@mark.proves("stage_reminder@codex")
def test_stage_reminder(tier: RealTier, request: pytest.FixtureRequest) -> None:
    tier.show(request)


@mark.proves("check_stage_prerequisites@codex")
def test_check_stage_prerequisites(tier: RealTier, request: pytest.FixtureRequest) -> None:
    tier.show(request)


@mark.proves("check_asset_access@codex")
def test_check_asset_access(tier: RealTier, request: pytest.FixtureRequest) -> None:
    tier.show(request)


@mark.proves("log_subagent@codex")
def test_log_subagent(tier: RealTier, request: pytest.FixtureRequest) -> None:
    tier.show(request)


@mark.proves("check_worker_report@codex")
def test_check_worker_report(tier: RealTier, request: pytest.FixtureRequest) -> None:
    tier.show(request)


@mark.proves("check_completion@codex")
def test_check_completion(tier: RealTier, request: pytest.FixtureRequest) -> None:
    tier.show(request)


@mark.proves("note_dispatch@codex")
def test_note_dispatch(tier: RealTier, request: pytest.FixtureRequest) -> None:
    tier.show(request)


@mark.proves("log_subagent_stop@codex")
def test_log_subagent_stop(tier: RealTier, request: pytest.FixtureRequest) -> None:
    tier.show(request)


@mark.proves("effect_restore@codex")
def test_effect_restore(tier: RealTier, request: pytest.FixtureRequest) -> None:
    tier.show(request)


# -- command hooks ----------------------------------------------------------------------------------

@mark.proves("command_hooks.session_start@codex")
def test_command_hooks_session_start(tier: RealTier, request: pytest.FixtureRequest) -> None:
    tier.show(request)


@mark.proves("command_hooks.user_prompt_submit@codex")
def test_command_hooks_user_prompt_submit(tier: RealTier, request: pytest.FixtureRequest) -> None:
    tier.show(request)


@mark.proves("command_hooks.pre_tool_use@codex")
def test_command_hooks_pre_tool_use(tier: RealTier, request: pytest.FixtureRequest) -> None:
    tier.show(request)


@mark.proves("command_hooks.post_tool_use@codex")
def test_command_hooks_post_tool_use(tier: RealTier, request: pytest.FixtureRequest) -> None:
    tier.show(request)


@mark.proves("command_hooks.stop@codex")
def test_command_hooks_stop(tier: RealTier, request: pytest.FixtureRequest) -> None:
    tier.show(request)


@mark.proves("command_hooks.subagent_start@codex")
def test_command_hooks_subagent_start(tier: RealTier, request: pytest.FixtureRequest) -> None:
    tier.show(request)


@mark.proves("command_hooks.subagent_stop@codex")
def test_command_hooks_subagent_stop(tier: RealTier, request: pytest.FixtureRequest) -> None:
    tier.show(request)


@mark.proves("command_hooks.pre_compact@codex")
def test_command_hooks_pre_compact(tier: RealTier, request: pytest.FixtureRequest) -> None:
    tier.show(request)


@mark.proves("command_hooks.post_compact@codex")
def test_command_hooks_post_compact(tier: RealTier, request: pytest.FixtureRequest) -> None:
    tier.show(request)


@mark.proves("command_hooks.goal_update@codex")
def test_command_hooks_goal_update(tier: RealTier, request: pytest.FixtureRequest) -> None:
    tier.show(request)


# -- registered hooks -------------------------------------------------------------------------------

@mark.proves("python_hooks.pre_tool_use@codex")
def test_python_hooks_pre_tool_use(tier: RealTier, request: pytest.FixtureRequest) -> None:
    tier.show(request)


@mark.proves("python_hooks.pre_tool_use.modified@codex")
def test_python_hooks_pre_tool_use_modified(tier: RealTier, request: pytest.FixtureRequest) -> None:
    tier.show(request)


@mark.proves("python_hooks.post_tool_use@codex")
def test_python_hooks_post_tool_use(tier: RealTier, request: pytest.FixtureRequest) -> None:
    tier.show(request)


@mark.proves("python_hooks.generate_start@codex")
def test_python_hooks_generate_start(tier: RealTier, request: pytest.FixtureRequest) -> None:
    tier.show(request)


@mark.proves("python_hooks.generate_end@codex")
def test_python_hooks_generate_end(tier: RealTier, request: pytest.FixtureRequest) -> None:
    tier.show(request)


@mark.proves("python_hooks.session_start@codex")
def test_python_hooks_session_start(tier: RealTier, request: pytest.FixtureRequest) -> None:
    tier.show(request)


@mark.proves("python_hooks.session_end@codex")
def test_python_hooks_session_end(tier: RealTier, request: pytest.FixtureRequest) -> None:
    tier.show(request)


@mark.proves("python_hooks.skill_load@codex")
def test_python_hooks_skill_load(tier: RealTier, request: pytest.FixtureRequest) -> None:
    tier.show(request)


@mark.proves("python_hooks.skill_unload@codex")
def test_python_hooks_skill_unload(tier: RealTier, request: pytest.FixtureRequest) -> None:
    tier.show(request)


@mark.proves("python_hooks.pre_prompt@codex")
def test_python_hooks_pre_prompt(tier: RealTier, request: pytest.FixtureRequest) -> None:
    tier.show(request)


@mark.proves("python_hooks.post_response@codex")
def test_python_hooks_post_response(tier: RealTier, request: pytest.FixtureRequest) -> None:
    tier.show(request)


@mark.proves("python_hooks.on_error@codex")
def test_python_hooks_on_error(tier: RealTier, request: pytest.FixtureRequest) -> None:
    tier.show(request)


@mark.proves("python_hooks.on_success@codex")
def test_python_hooks_on_success(tier: RealTier, request: pytest.FixtureRequest) -> None:
    tier.show(request)


@mark.proves("python_hooks.pre_context_perception@codex")
def test_python_hooks_pre_context_perception(tier: RealTier, request: pytest.FixtureRequest) -> None:
    tier.show(request)


@mark.proves("python_hooks.post_context_perception@codex")
def test_python_hooks_post_context_perception(tier: RealTier, request: pytest.FixtureRequest) -> None:
    tier.show(request)


@mark.proves("python_hooks.pre_memory_recall@codex")
def test_python_hooks_pre_memory_recall(tier: RealTier, request: pytest.FixtureRequest) -> None:
    tier.show(request)


@mark.proves("python_hooks.post_memory_recall@codex")
def test_python_hooks_post_memory_recall(tier: RealTier, request: pytest.FixtureRequest) -> None:
    tier.show(request)


@mark.proves("python_hooks.pre_planning@codex")
def test_python_hooks_pre_planning(tier: RealTier, request: pytest.FixtureRequest) -> None:
    tier.show(request)


@mark.proves("python_hooks.post_planning@codex")
def test_python_hooks_post_planning(tier: RealTier, request: pytest.FixtureRequest) -> None:
    tier.show(request)


@mark.proves("python_hooks.pre_reasoning@codex")
def test_python_hooks_pre_reasoning(tier: RealTier, request: pytest.FixtureRequest) -> None:
    tier.show(request)


@mark.proves("python_hooks.post_reasoning@codex")
def test_python_hooks_post_reasoning(tier: RealTier, request: pytest.FixtureRequest) -> None:
    tier.show(request)


@mark.proves("python_hooks.on_rate_limit@codex")
def test_python_hooks_on_rate_limit(tier: RealTier, request: pytest.FixtureRequest) -> None:
    tier.show(request)


@mark.proves("python_hooks.on_confirmation@codex")
def test_python_hooks_on_confirmation(tier: RealTier, request: pytest.FixtureRequest) -> None:
    tier.show(request)


@mark.proves("python_hooks.intent_detection@codex")
def test_python_hooks_intent_detection(tier: RealTier, request: pytest.FixtureRequest) -> None:
    tier.show(request)


@mark.proves("python_hooks.pre_run_control@codex")
def test_python_hooks_pre_run_control(tier: RealTier, request: pytest.FixtureRequest) -> None:
    tier.show(request)


@mark.proves("python_hooks.post_run_control@codex")
def test_python_hooks_post_run_control(tier: RealTier, request: pytest.FixtureRequest) -> None:
    tier.show(request)


@mark.proves("python_hooks.permission_request@codex")
def test_python_hooks_permission_request(tier: RealTier, request: pytest.FixtureRequest) -> None:
    tier.show(request)


@mark.proves("python_hooks.permission_request.modified@codex")
def test_python_hooks_permission_request_modified(tier: RealTier, request: pytest.FixtureRequest) -> None:
    tier.show(request)


@mark.proves("python_hooks.pre_compact@codex")
def test_python_hooks_pre_compact(tier: RealTier, request: pytest.FixtureRequest) -> None:
    tier.show(request)


@mark.proves("python_hooks.post_compact@codex")
def test_python_hooks_post_compact(tier: RealTier, request: pytest.FixtureRequest) -> None:
    tier.show(request)
