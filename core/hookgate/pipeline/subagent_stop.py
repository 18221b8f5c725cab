"""SubagentStop (seed 000 on_subagent_stop): evaluate -> log -> apply, in one process.

- evaluate: `check_worker_report`, a gate, judges the report (no side effects but its block);
- log: `log_subagent_stop`, an engine Observer, sees the final Decision (blocked? released by the
  bound?) and records the stop with its outcome_kind;
- apply: the edge renders the Decision to the runtime.

outcome_kind: `rejected_attempt` when the stop was blocked, `unverified` when it was let through
without the report being accepted (the bound released it, the outcome block is missing or names
another role), else `terminal`. Only a terminal stop writes the outcome event (worker_done,
verifier_pass, ...), once per agent, so a rejected or unverified report never reads as a result.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..config.schema import Pipeline
from ..engine.context import Context
from ..engine.loop import Decision
from ..model.events import Event
from ..model.verdicts import Block, Verdict
from .agents import UNKNOWN, assign_role, dispatched_role

if TYPE_CHECKING:
    from .reports import Report

# The report readers and checks are imported by the functions that use them, with the first
# SubagentStop: a hook process deciding any other event never pays for them.
TERMINAL, REJECTED, UNVERIFIED = "terminal", "rejected_attempt", "unverified"


# -- evaluate ---------------------------------------------------------------------------------

def check_worker_report(event: Event, ctx: Context) -> Verdict | None:
    message = getattr(event, "last_assistant_message", None) or ""
    if not message or ctx.current_role() is None:
        return None  # no pipeline role: an ordinary subagent conversation
    from .outcome import template
    from .report_checks import REPORT_CHECKS
    from .reports import format_hint, missing_sections, read_report, section

    pipeline = ctx.config.pipeline
    report = read_report(message, pipeline)
    declared = report.report_type if report.report_type in pipeline.known_subagent_roles else None
    role = dispatched_role(event, ctx) or declared  # the dispatched role outranks the report's claim
    fmt = pipeline.reports.get(role) if role else None
    if fmt is None or role is None:
        return None
    if declared is None:
        reason = (f"You are a {role} but your output does not contain a properly formatted report. You MUST end "
                  f"your response with a report in this format:\n\n{format_hint(fmt, role)}\n\n")
        if fmt.outcome_block:
            reason += f"followed by the machine outcome block:\n\n{template(role)}\n\n"
        if report.outcome_error:
            reason += f"Your outcome block was also rejected: {report.outcome_error}\n\n"
        return _refuse(reason + "Re-output your report now.", fmt.outcome_block)
    if report.outcome is not None and report.outcome["report_type"] != role:
        return _refuse(
            f"Your machine outcome block declares report_type '{report.outcome['report_type']}', but you were "
            f"dispatched as {role}. The block must declare the role you are running as.\n"
            f'Set "report_type": "{role}" and re-output your report.', fmt.outcome_block)
    if fmt.outcome_block and report.outcome is None:
        return _refuse(
            f"{role} report has no valid machine-readable outcome block: "
            f"{report.outcome_error or 'No machine outcome block found.'}\n"
            f"End your report with exactly one fenced JSON block in this shape:\n\n{template(role)}\n\n"
            "The markdown sections stay as the human-readable summary; this block is what hookgate, the metrics "
            "and the lead read the status from.", True)
    missing = missing_sections(message, fmt)
    if missing:
        return _refuse(
            f"{role.capitalize()} report missing required sections: {', '.join(missing)}. Must include: "
            f"{', '.join(s.name for s in fmt.sections)}.\nAdd each missing section as a ### heading with content "
            "underneath.", fmt.outcome_block)
    for name in fmt.checks:
        issue = REPORT_CHECKS[name](message, ctx)
        if issue:
            return _refuse(issue, fmt.outcome_block)
    for name in fmt.substantive_sections:
        content = section(message, name) or ""
        if len(content) < fmt.min_section_chars:
            return _refuse(
                f"{name} section has {len(content)} characters; a {role} must describe what was checked and what "
                f"was found (at least {fmt.min_section_chars} characters).", fmt.outcome_block)
    return None


def _refuse(reason: str, outcome_role: bool) -> Block:
    if outcome_role:
        reason += ("\nUntil a valid report is accepted this run is not a terminal result; if it is released "
                   "unverified, its outputs must not be registered.")
    return Block(reason=reason)


# -- log ---------------------------------------------------------------------------------------

def log_subagent_stop(event: Event, decision: Decision, ctx: Context) -> None:
    from .diagnostics import record_worker_error
    from .reports import files_changed, read_report

    pipeline = ctx.config.pipeline
    message = getattr(event, "last_assistant_message", None) or ""
    report = read_report(message, pipeline)
    agent_id = event.agent_id or ""
    role = dispatched_role(event, ctx) or UNKNOWN
    effective = role if role != UNKNOWN else (report.report_type or UNKNOWN)
    kind = outcome_kind(decision, report, effective, pipeline)
    files = files_changed(message)
    outcome = report.outcome or {}
    ctx.record("subagent_stop", agent_id=agent_id, agent_type=event.agent_type, role=role,
               report_type=report.report_type, status=report.status, files_changed=files, outcome_kind=kind,
               unit_id=outcome.get("unit_id"), blockers=outcome.get("blockers", []), outcome_error=report.outcome_error)
    if role == UNKNOWN and effective in pipeline.known_subagent_roles:
        assign_role(ctx, agent_id, effective, event.agent_type)  # it ran as what its report says
    if effective in pipeline.diagnosed_roles:
        record_worker_error(event, ctx, message=message, status=report.status, outcome_kind=kind, role=effective)
    if kind == TERMINAL:
        _record_outcome(ctx, agent_id, effective, report, files)


def outcome_kind(decision: Decision, report: Report, role: str, pipeline: Pipeline) -> str:
    if decision.verdict.refuses:
        return REJECTED
    if decision.forced:
        return UNVERIFIED  # released by the bound: the agent goes on, its report was never accepted
    if report.outcome is not None and report.outcome["report_type"] != role:
        return UNVERIFIED  # a block for another role verifies nothing here
    fmt = pipeline.reports.get(role)
    if fmt is not None and fmt.outcome_block and report.outcome is None:
        return UNVERIFIED  # the block is this role's status; without it there is none
    return TERMINAL


def _record_outcome(ctx: Context, agent_id: str, role: str, report: Report, files: list[str]) -> None:
    fmt = ctx.config.pipeline.reports.get(role)
    name = fmt.outcomes.get(report.status) if fmt else None
    if name is None:
        return

    def first_time(state: dict[str, Any]) -> bool:
        ours = state.setdefault("pipeline", {})
        done = ours.setdefault("outcomes", {})
        if agent_id in done:
            return False
        done[agent_id] = name
        return True

    if ctx.session.update(first_time):
        outcome = report.outcome or {}
        ctx.record(name, agent_id=agent_id, role=role, files=files, unit_id=outcome.get("unit_id"),
                   blockers=outcome.get("blockers", []))
        _remind_progress(ctx)


def _remind_progress(ctx: Context) -> None:
    """After an accepted report, tell the lead (on its next turn) where the worker round stands."""
    pipeline = ctx.config.pipeline
    role = ctx.current_role()
    completion = pipeline.completion
    if role not in pipeline.worker_dispatch_roles or not completion.dispatched:
        return
    state = ctx.session.read().get("pipeline", {})
    fmt = pipeline.reports.get(completion.dispatched)
    done_event = fmt.outcomes.get("DONE") if fmt else None
    done = sum(1 for name in state.get("outcomes", {}).values() if name == done_event)
    ran = state.get("roles", {})
    counts = " | ".join(f"{needed}: {ran.get(needed, 0)}" for needed in completion.requires)
    ctx.session.push_notice(
        f"[Progress] {completion.dispatched}: {done} done | {counts}. Every {completion.dispatched} needs "
        f"{' + '.join(completion.requires)} before {role} may stop.")
