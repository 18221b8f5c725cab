"""The pipeline pack's gates and observers, declared here and nowhere else: what the engine,
explain, doctor and parity need to know of each, and the "module:function" of its check, imported
on the first event it matches (engine/lazy.py). A cold hook call then imports only the checks of
its own event: a Write loads neither the shell reader nor the subagent report checks."""

from __future__ import annotations

from ..engine.gate import BlockLimit, Gate, Observer
from ..engine.lazy import Lazy
from ..model.tools import DISPATCH_TOOL_MATCHER, FILE_TOOL_MATCHER, SHELL_TOOL_MATCHER

_PACK = "hookgate.pipeline."
# the events on which a session claims its role (session.CLAIMING_EVENTS)
_CLAIMING_EVENTS = ("UserPromptSubmit", "PreToolUse", "PermissionRequest", "PostToolUse", "PostToolUseFailure")


def _check(ref: str) -> Lazy:
    return Lazy(_PACK + ref)


# in the order pipeline/__init__ has always listed them (the engine sorts by priority, then id)
GATES: tuple[Gate, ...] = (
    Gate(
        id="session_start", events=("SessionStart", *_CLAIMING_EVENTS), check=_check("session:session_start"),
        priority=0, needs=("fires:SessionStart", "context:SessionStart?"),
        description="resets the session, drops a pipeline role another session owns, names hookgate's version and preset",
    ),
    Gate(
        id="check_file_permissions", events=("PreToolUse",), matcher=FILE_TOOL_MATCHER,
        check=_check("permissions:check_file_permissions"), may_block=True, fail_mode="closed", priority=10,
        needs=("block:PreToolUse", "subagent_identity:PreToolUse?"),  # without it: role rules only
        description="role and subagent write rules, driven by .hookgate/current_role",
    ),
    Gate(
        id="check_shell_writes", events=("PreToolUse",), matcher=SHELL_TOOL_MATCHER,
        check=_check("shell_writes:check_shell_writes"), may_block=True, fail_mode="closed", priority=10,
        needs=("block:PreToolUse", "subagent_identity:PreToolUse?"),  # without it: role rules only
        description="a shell command writing a file meets the write rules of a Write; stage.jsonl only via validation",
    ),
    Gate(
        id="check_hookgate_commands", events=("PreToolUse",), matcher=SHELL_TOOL_MATCHER,
        check=_check("self_protect:check_hookgate_commands"), may_block=True, fail_mode="closed", priority=10,
        needs=("block:PreToolUse",),
        description="no agent runs `hookgate install|uninstall` while a pipeline role is active",
    ),
    Gate(
        id="stage_reminder", events=("PreToolUse",), matcher="Write|Edit|MultiEdit",
        check=_check("stages:stage_reminder"), may_block=True, fail_mode="closed", priority=20,
        needs=("block:PreToolUse", "context:PreToolUse?"),  # the context: the next-role hint
        description="validates a role's outputs before its completion enters stage.jsonl; names the next role",
    ),
    Gate(
        id="check_stage_prerequisites", events=("PreToolUse",), matcher=DISPATCH_TOOL_MATCHER,
        check=_check("stages:check_stage_prerequisites"), may_block=True, fail_mode="closed", priority=20,
        needs=("block:PreToolUse",),
        description="build/fixgap may dispatch only after gdd/evaluate completed and their outputs exist",
    ),
    Gate(
        id="check_asset_access", events=("PreToolUse",), matcher="Read",
        check=_check("assets:check_asset_access"), may_block=True, fail_mode="closed", priority=20,
        needs=("block:PreToolUse", "subagent_identity:PreToolUse?"),  # without it subagents are held too
        description="the lead may not read images under assets/ while a role is active; it dispatches an analyst",
    ),
    Gate(
        id="log_subagent", events=("SubagentStart",), check=_check("agents:log_subagent_start"), priority=10,
        needs=("fires:SubagentStart",),
        description="detects a subagent's role when it starts and records subagent_start",
    ),
    Gate(
        id="check_worker_report", events=("SubagentStop",), check=_check("subagent_stop:check_worker_report"),
        may_block=True, fail_mode="closed", block_limit=BlockLimit(per="agent", limit=2),
        needs=("block:SubagentStop", "fires:SubagentStart?"),  # without it: the stop's agent_type or report
        description="a pipeline subagent's report has its role's sections, outcome block and substance",
    ),
    Gate(
        id="check_completion", events=("Stop",), check=_check("completion:check_completion"),
        may_block=True, fail_mode="open", block_limit=BlockLimit(per="session", limit=5),
        needs=("block:Stop", "fires:SubagentStart"),
        description="build/fixgap may not stop with workers dispatched but no verifier or reviewer run",
    ),
)

OBSERVERS: tuple[Observer, ...] = (
    Observer(id="note_dispatch", events=("PreToolUse",), matcher="Agent", observe=_check("agents:note_dispatch"),
             description="notes each dispatch the engine let through, so its SubagentStart can be paired with it"),
    Observer(id="log_subagent_stop", events=("SubagentStop",), observe=_check("subagent_stop:log_subagent_stop"),
             description="records subagent_stop with the final outcome_kind (terminal, rejected_attempt, unverified)"),
)
