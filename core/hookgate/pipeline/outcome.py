"""The machine outcome block (seed 000): the status protocol of a subagent report. Markdown
headings are for people; a role that must carry a block (asset-producer) ends its report with
exactly one fenced JSON object carrying `gm_outcome_version`, and the report gate, the metrics
and the lead all read the status from it.

Validation fails closed: anything missing, unknown or of the wrong type is an OutcomeError that
names the field, so a malformed block is a diagnosable rejection, never a silent UNKNOWN.
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Iterator

VERSION_KEY = "gm_outcome_version"
VERSION = 1
FIELDS = (VERSION_KEY, "report_type", "status", "unit_id", "outputs", "validation", "blockers")
STATUSES = ("DONE", "PARTIAL", "FAILED")
OUTPUT_CATEGORIES = ("sources", "runtime", "prompts", "reports", "request", "result")
VALIDATION_KEYS = ("passed", "levels", "notes")
LEVELS = ("L0", "L1", "L2", "L3", "L4", "L5")


class OutcomeError(ValueError):
    """A block claims to be an outcome block but breaks the contract; the message names the field."""


def template(role: str) -> str:
    return (
        "```json\n{\n"
        f'  "{VERSION_KEY}": {VERSION},\n'
        f'  "report_type": "{role}",\n'
        '  "status": "DONE | PARTIAL | FAILED",\n'
        '  "unit_id": "<unit id>",\n'
        '  "outputs": {"sources": [], "runtime": [], "prompts": [], "reports": [], "request": [], "result": []},\n'
        '  "validation": {"passed": true, "notes": "short note"},\n'
        '  "blockers": []\n'
        "}\n```"
    )


def find_outcome(message: str, roles: Iterable[str]) -> tuple[dict[str, Any] | None, str | None, bool]:
    """(the validated block or None, why it was rejected or None, whether any block claims to be one).

    A fenced block claims to be an outcome block by mentioning the version key, so an unrelated
    JSON sample in a report is not mistaken for one while a typo inside a real one is reported."""
    payloads: list[Any] = []
    errors: list[str] = []
    for body in _fenced_blocks(message):
        text = body.strip()
        if VERSION_KEY not in text:
            continue
        try:
            data = json.loads(text)
        except ValueError as exc:
            errors.append(f"outcome block is not valid JSON: {exc}")
            continue
        if isinstance(data, dict) and VERSION_KEY in data:
            payloads.append(data)
        else:
            errors.append(f"outcome block must be a JSON object carrying '{VERSION_KEY}'")
    if not payloads and not errors:
        return None, None, False
    if errors:
        return None, "; ".join(errors), True
    if len(payloads) > 1:
        return None, f"report carries {len(payloads)} outcome blocks; exactly one is allowed", True
    try:
        return validate(payloads[0], roles), None, True
    except OutcomeError as exc:
        return None, str(exc), True


def validate(block: dict[str, Any], roles: Iterable[str]) -> dict[str, Any]:
    """The block, normalised; raises OutcomeError naming the first field at fault."""
    unknown = sorted(set(block) - set(FIELDS))
    if unknown:
        raise OutcomeError(f"outcome block has unknown fields: {', '.join(unknown)}. Allowed: {', '.join(FIELDS)}")
    missing = [name for name in FIELDS if name not in block]
    if missing:
        raise OutcomeError(f"outcome block is missing fields: {', '.join(missing)}")
    if type(block[VERSION_KEY]) is not int or block[VERSION_KEY] != VERSION:
        raise OutcomeError(f"'{VERSION_KEY}' must be {VERSION}, got {block[VERSION_KEY]!r}")
    roles = sorted(roles)
    report_type = _text(block["report_type"], "report_type")
    if report_type not in roles:
        raise OutcomeError(f"'report_type' must be one of: {', '.join(roles)}")
    status = block["status"].strip().upper() if isinstance(block["status"], str) else None
    if status not in STATUSES:
        raise OutcomeError(f"'status' must be one of: {', '.join(STATUSES)}")
    outcome: dict[str, Any] = {
        VERSION_KEY: VERSION,
        "report_type": report_type,
        "status": status,
        "unit_id": _text(block["unit_id"], "unit_id"),
        "outputs": _outputs(block["outputs"]),
        "validation": _validation(block["validation"]),
        "blockers": _texts(block["blockers"], "blockers", "'blockers' must be an array of strings"),
    }
    # DONE is the only status that claims success; any other status must say what stopped it
    if status == "DONE":
        if not outcome["validation"]["passed"]:
            raise OutcomeError("'status' DONE requires 'validation.passed' true; report PARTIAL or FAILED instead")
        if outcome["blockers"]:
            raise OutcomeError("'status' DONE requires an empty 'blockers' array; report PARTIAL or FAILED instead")
    elif not outcome["blockers"]:
        raise OutcomeError(f"'status' {status} requires at least one entry in 'blockers'")
    return outcome


def _outputs(value: Any) -> dict[str, list[str]]:
    if not isinstance(value, dict):
        raise OutcomeError("'outputs' must be an object of path lists")
    unknown = sorted(set(value) - set(OUTPUT_CATEGORIES))
    if unknown:
        raise OutcomeError(f"'outputs' has unknown categories: {', '.join(unknown)}. "
                           f"Allowed: {', '.join(OUTPUT_CATEGORIES)}")
    return {name: _texts(value.get(name, []), f"outputs.{name}", f"'outputs.{name}' must be an array of paths")
            for name in OUTPUT_CATEGORIES}


def _validation(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise OutcomeError("'validation' must be an object with a 'passed' boolean")
    unknown = sorted(set(value) - set(VALIDATION_KEYS))
    if unknown:
        raise OutcomeError(f"'validation' has unknown keys: {', '.join(unknown)}. "
                           f"Allowed: {', '.join(VALIDATION_KEYS)}")
    if not isinstance(value.get("passed"), bool):
        raise OutcomeError("'validation.passed' must be true or false")
    result: dict[str, Any] = {"passed": value["passed"]}
    if "levels" in value:
        levels = value["levels"]
        if not isinstance(levels, dict):
            raise OutcomeError(f"'validation.levels' must be an object of {LEVELS[0]}-{LEVELS[-1]} booleans")
        unknown = sorted(set(levels) - set(LEVELS))
        if unknown:
            raise OutcomeError(f"'validation.levels' has unknown levels: {', '.join(unknown)}")
        for name, passed in levels.items():
            if not isinstance(passed, bool):
                raise OutcomeError(f"'validation.levels.{name}' must be true or false")
        result["levels"] = dict(levels)
    if "notes" in value:
        if not isinstance(value["notes"], str):
            raise OutcomeError("'validation.notes' must be a string")
        result["notes"] = value["notes"].strip()
    return result


def _text(value: Any, field: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise OutcomeError(f"'{field}' must be a non-empty string")
    return value.strip()


def _texts(value: Any, field: str, shape: str) -> list[str]:
    if not isinstance(value, list):
        raise OutcomeError(shape)
    if not all(isinstance(item, str) and item.strip() for item in value):
        raise OutcomeError(f"'{field}' entries must be non-empty strings")
    return [item.strip() for item in value]


def _fenced_blocks(message: str) -> Iterator[str]:
    """The body of every closed ``` or ~~~ fenced block."""
    fence: str | None = None
    body: list[str] = []
    for line in message.splitlines():
        stripped = line.strip()
        if fence is None:
            if stripped.startswith(("```", "~~~")):
                fence, body = stripped[:3], []
            continue
        if stripped.startswith(fence) and not stripped.strip(fence[0]):
            yield "\n".join(body)
            fence = None
            continue
        body.append(line)
