"""worker_error (seed 000): one bounded, machine-readable record when a worker's handoff went
wrong (failed, partial, rejected report, released unverified); nothing for a clean success, and
nothing here is ever fed back into a prompt.

- Bounded: summary 200 characters, 5 evidence paths, large Tests/Build output kept only as
  sha256 + size + a 400-character tail.
- Each field is read from the report section that owns it; what a report does not say stays empty.
- Deduplicated: one record per (agent_id, error_fingerprint), however often SubagentStop fires.
  The fingerprint folds digit runs, so line numbers and durations do not make a new failure.
  Attempts and repeats are counted in the session state, not by re-reading the log.
"""

from __future__ import annotations

import re
from typing import Any

from ..digest import sha256_hex
from ..engine.context import Context
from ..model.events import Event

ERROR_VERSION = 1
MAX_SUMMARY = 200
MAX_EVIDENCE_PATHS = 5
MAX_EVIDENCE_PATH = 200
MAX_TAIL = 400
MAX_TASK_ID = 48

# a handoff condition the report states outranks its status; these are worth a plain retry
HANDOFF_ERRORS = ("timeout", "forced_handoff", "tool_or_environment_error")
RETRYABLE = frozenset({*HANDOFF_ERRORS, "report_rejected", "unverified_handoff"})
CLASSIFICATIONS = frozenset({"verified_success", "effective_repair_candidate", "incomplete_handoff",
                             "orchestration_failure"})
EVIDENCE_PREFIXES = (".hookgate/", ".godotmaker/", "reports/", "e2e/", "docs/tags/")


def _section(*names: str) -> re.Pattern[str]:
    # a `####` sub-heading stays inside its parent section
    return re.compile(r"^#{1,3}\s*(?:" + "|".join(names) + r")\s*$\n(.*?)(?=\n#{1,3}\s|\Z)",
                      re.IGNORECASE | re.MULTILINE | re.DOTALL)


_OUTPUT = _section("Tests", "Build")
_REPAIR = _section(r"Repair\s+Attempt\s+Evidence")
_SELF_REPORT = _section(r"Repair\s+Attempt\s+Evidence", "Notes")
_NOTES = _section("Notes")
_REPAIR_FIELD = re.compile(r"^[-*\s]*(Handoff condition|Suggested classification)\s*[:：]\s*(.+)$",
                           re.IGNORECASE | re.MULTILINE)
_EXIT_CODE = re.compile(r"exit(?:ed with|ed|\s*code)?\s*[:=]?\s*(-?\d{1,3})\b", re.IGNORECASE)
_BLOCKER = re.compile(r"^[-*\s]*(?:Blocker|Error|Failure|Reason)\s*[:：]\s*(.+)$", re.IGNORECASE | re.MULTILINE)
_HEADING = re.compile(r"^#{1,4}\s*(?:Report|Verification Report|Asset Producer Report|Analyst Report)\s*[:：]\s*(.+)$",
                      re.IGNORECASE | re.MULTILINE)
_TASK_ID = re.compile(r"^[\[(]?\s*([A-Z]{1,3}\d{1,3})\b")
_PATH = re.compile(r"[\w./\\-]+")
_SPACE = re.compile(r"\s+")


def error_type(status: str, outcome_kind: str, handoff: str) -> str | None:
    """The one error type of a worker stop, or None when the run is clean."""
    if outcome_kind == "rejected_attempt":
        return "report_rejected"
    if handoff in HANDOFF_ERRORS:
        return handoff
    if outcome_kind == "unverified":
        return "unverified_handoff"
    return {"FAILED": "task_failed", "PARTIAL": "task_partial"}.get(status.upper())


def record_worker_error(event: Event, ctx: Context, *, message: str, status: str, outcome_kind: str,
                        role: str) -> dict[str, Any] | None:
    """Note the worker_error of this stop, unless it is clean or already noted for this agent."""
    repair = _repair_fields(message)
    kind = error_type(status, outcome_kind, repair.get("handoff_condition", ""))
    if kind is None:
        return None
    task_id = _task_id(message)
    stage = ctx.current_role() or ""
    summary = _clip(_summary(message, kind), MAX_SUMMARY)
    fingerprint = fingerprint_of(task_id, stage, kind, summary)
    agent_id = event.agent_id or ""

    def count(state: dict[str, Any]) -> tuple[int, int] | None:
        ours = state.setdefault("pipeline", {})
        seen = ours.setdefault("error_keys", [])
        if f"{agent_id}|{fingerprint}" in seen:
            return None
        seen.append(f"{agent_id}|{fingerprint}")
        prior = ours.setdefault("errors", {}).setdefault(f"{task_id}|{stage}", [])
        attempt, repeats = len(prior) + 1, prior.count(fingerprint)
        prior.append(fingerprint)
        return attempt, repeats

    counted = ctx.session.update(count)
    if counted is None:
        return None
    classification = repair.get("suggested_classification")
    record: dict[str, Any] = {
        "gm_error_version": ERROR_VERSION,
        "task_id": task_id,
        "attempt": counted[0],
        "stage": stage,
        "runtime": event.runtime,
        "role": role,
        "agent_id": agent_id,
        "run_id": event.session_id,
        "trace_id": getattr(event, "agent_transcript_path", None),
        "error_type": kind,
        "classification": classification if classification in CLASSIFICATIONS else None,
        "status": status.upper(),
        "outcome_kind": outcome_kind,
        "summary": summary,
        "exit_code": _exit_code(message),
        "error_fingerprint": fingerprint,
        "evidence_paths": _evidence_paths(message),
        "retryable": kind in RETRYABLE,
        "repeat_count": counted[1],
    }
    output = "\n".join(m.group(1) for m in _OUTPUT.finditer(message))
    if len(output) > MAX_TAIL:
        raw = output.encode("utf-8", errors="replace")
        record.update(output_digest=sha256_hex(raw), output_bytes=len(raw), output_tail=output[-MAX_TAIL:])
    ctx.record("worker_error", **record)
    return record


def fingerprint_of(task_id: str, stage: str, kind: str, summary: str) -> str:
    normalized = re.sub(r"\d+", "#", _SPACE.sub(" ", summary.lower()).strip())
    return sha256_hex("|".join((task_id, stage, kind, normalized)).encode())[:16]


def _repair_fields(message: str) -> dict[str, str]:
    """`Handoff condition` / `Suggested classification`, from `### Repair Attempt Evidence` only:
    a pasted log line elsewhere must not claim them."""
    found = _REPAIR.search(message)
    fields: dict[str, str] = {}
    for label, value in _REPAIR_FIELD.findall(found.group(1) if found else ""):
        key = label.strip().lower().replace(" ", "_")
        cleaned = value.strip().strip("*_`{}").strip().lower().replace(" ", "_")
        if cleaned:
            fields.setdefault(key, cleaned)
    return fields


def _task_id(message: str) -> str:
    """The PLAN/GAP task id the report's heading starts with (M01, R2), else a slug of the name."""
    match = _HEADING.search(message)
    name = match.group(1).strip().strip("*_`").strip() if match else ""
    if not name:
        return "unknown"
    task = _TASK_ID.match(name)
    if task:
        return task.group(1)
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:MAX_TASK_ID] or "unknown"


def _summary(message: str, kind: str) -> str:
    own = "\n".join(m.group(1) for m in _SELF_REPORT.finditer(message))
    blocker = _BLOCKER.search(own)
    if blocker:
        return blocker.group(1)
    notes = _NOTES.search(message)
    for line in (notes.group(1).splitlines() if notes else []):
        if line.strip():
            return line
    return kind.replace("_", " ")


def _exit_code(message: str) -> int | None:
    """From Tests/Build only (where command output is pasted); a non-zero code wins over a zero."""
    codes = [int(code) for m in _OUTPUT.finditer(message) for code in _EXIT_CODE.findall(m.group(1))]
    failing = [code for code in codes if code != 0]
    return failing[0] if failing else (codes[0] if codes else None)


def _evidence_paths(message: str) -> list[str]:
    paths: list[str] = []
    for token in _PATH.findall(message):
        candidate = token.replace("\\", "/").rstrip(".,;:)]}")
        if candidate.startswith(EVIDENCE_PREFIXES) and len(candidate) <= MAX_EVIDENCE_PATH and candidate not in paths:
            paths.append(candidate)
            if len(paths) == MAX_EVIDENCE_PATHS:
                break
    return paths


def _clip(text: str, limit: int) -> str:
    text = _SPACE.sub(" ", text.strip())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
