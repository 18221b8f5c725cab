"""Reading a subagent's report (seed 000): one parser for the report gate and the metrics, so they
can never disagree about what a report says.

The report's type comes from its machine outcome block when it carries a valid one, else from
layered Markdown detection over the config's report formats: every exact marker first, then
every flexible pattern, then every fallback heading. The status comes the same way (the block's,
else a `Status:` / `Overall:` heading)."""

from __future__ import annotations

import re
from typing import Any

import msgspec

from ..config.schema import Pipeline, ReportFormat
from .outcome import find_outcome

UNKNOWN_STATUS = "UNKNOWN"
_STATUS = re.compile(r"#{1,6}\s*\*{0,2}Status\*{0,2}\s*[:：]\s*\*{0,2}\s*(DONE|PARTIAL|FAILED)", re.IGNORECASE)
_OVERALL = re.compile(r"#{1,6}\s*\*{0,2}Overall\*{0,2}\s*[:：]\s*\*{0,2}\s*(PASS|FAIL|PARTIAL)", re.IGNORECASE)
_BACKTICK_PATH = re.compile(r"`([^`]+\.\w+)`")
_BULLET_PATH = re.compile(r"^[-*]\s+(\S+\.\w+)", re.MULTILINE)


class Report(msgspec.Struct, frozen=True):
    report_type: str | None
    status: str
    outcome: dict[str, Any] | None = None
    outcome_error: str | None = None
    has_outcome_block: bool = False


def read_report(message: str, pipeline: Pipeline) -> Report:
    message = message or ""
    markdown_type = detect_type(message, pipeline.reports)
    status = markdown_status(message)
    outcome, error, claimed = find_outcome(message, pipeline.known_subagent_roles)
    if outcome is not None:
        return Report(outcome["report_type"], outcome["status"], outcome, None, True)
    return Report(markdown_type, status, None, error, claimed)


def detect_type(message: str, formats: dict[str, ReportFormat]) -> str | None:
    if not message:
        return None
    for role, fmt in formats.items():
        if fmt.marker and fmt.marker in message:
            return role
    for layer in ("pattern", "fallback"):
        for role, fmt in formats.items():
            regex = getattr(fmt, layer)
            if regex and re.search(regex, message, re.IGNORECASE):
                return role
    return None


def markdown_status(message: str) -> str:
    match = _STATUS.search(message) or _OVERALL.search(message)
    return match.group(1).upper() if match else UNKNOWN_STATUS


def section(message: str, heading: str) -> str | None:
    """The text under a `### heading`, up to the next `### X` or `## ` heading; None if absent."""
    pattern = rf"### {re.escape(heading)}\s*\n(.*?)(?=\n### [A-Z]|\n## |\Z)"
    match = re.search(pattern, message, re.DOTALL | re.IGNORECASE)
    return match.group(1).strip() if match else None


def missing_sections(message: str, fmt: ReportFormat) -> list[str]:
    return [s.name for s in fmt.sections if not re.search(s.pattern, message, re.IGNORECASE)]


def format_hint(fmt: ReportFormat, role: str) -> str:
    heading = fmt.marker or f"## {role.capitalize()} Report:"
    return "\n".join([heading] + [f"### {s.name}" for s in fmt.sections])


def files_changed(message: str) -> list[str]:
    """The paths listed under `### Files Changed` (backticked or bulleted), `res://` dropped."""
    text = section(message or "", "Files Changed")
    if text is None:
        return []
    found: list[str] = []
    for path in _BACKTICK_PATH.findall(text) + _BULLET_PATH.findall(text):
        path = path.strip("`").strip().removeprefix("res://")
        if path not in found:
            found.append(path)
    return found
