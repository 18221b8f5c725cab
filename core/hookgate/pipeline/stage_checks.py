"""The programmatic checks a stage schema can name (seed 000 and upstream GodotMaker). Each takes
the project root and returns what is wrong, one line per problem; [] means it holds.

Checks that read the pipeline state take its folder (`state`: `.hookgate`, or `.godotmaker` in a
GodotMaker project)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Callable

STATE = ".hookgate"  # hookgate's own layout; store/layout.py

_LEFTOVER_STATES = ("pending", "in_progress", "completed")


def plan_all_verified(root: Path, state: str = STATE) -> list[str]:
    """build: every task row of PLAN.md is `verified` (none pending / in_progress / completed)."""
    text = _read(root / "PLAN.md")
    if text is None:
        return ["PLAN.md not found"]
    leftover = []
    for state in _LEFTOVER_STATES:
        count = len(re.findall(rf"\|\s*{state}\s*\|", text, re.IGNORECASE))
        if count:
            leftover.append(f"{count} {state}" + (" (not yet verified)" if state == "completed" else ""))
    return [f"PLAN.md has tasks not yet verified: {', '.join(leftover)}"] if leftover else []


def gap_archived(root: Path, state: str = STATE) -> list[str]:
    """fixgap: GAP.md was moved to <state>/gaps/<iteration>/GAP.md."""
    issues = []
    if (root / "GAP.md").is_file():
        issues.append(f"GAP.md is still at the project root: archive it to {state}/gaps/<iteration>/GAP.md "
                      "before completing fixgap")
    elif not any((root / state / "gaps").glob("*/GAP.md")):
        issues.append(f"no archived gap list: expected {state}/gaps/<iteration>/GAP.md")
    return issues


# -- evaluate: evaluation.json covers every Playable Unit row of PLAN.md -------------------------

_PLAYABLE_UNIT = re.compile(r"^##\s+Playable Unit\s*$", re.MULTILINE)
_NEXT_HEADING = re.compile(r"^##\s+", re.MULTILINE)
_UNIT_OUTCOME = re.compile(r"^-\s+\*\*Unit outcome:\*\*\s*(.+?)\s*$", re.MULTILINE)
_MECHANIC_ID = re.compile(r"v\d+\.\d+\.\d+-M\d+")
_SEPARATOR_CELL = re.compile(r":?-{3,}:?")


def evaluation_playable_unit(root: Path, state: str = STATE) -> list[str]:
    plan = _read(root / "PLAN.md")
    if plan is None:
        return ["PLAN.md not found"]
    section = _playable_unit_section(plan)
    rows, issues = _playable_unit_rows(section)
    if not rows:
        issues.append("PLAN.md Playable Unit table has no rows to evaluate")
    path = f"{state}/evaluation.json"
    evaluation, error = _read_json(root / path)
    if error:
        return issues + [f"{path} {error}"]
    if not isinstance(evaluation, dict):
        return issues + [f"{path} must contain a JSON object"]

    result = evaluation.get("result")
    if result not in ("approve", "reject"):
        issues.append('evaluation.json field "result" must be "approve" or "reject"')
    closed_loop = _object(evaluation, "playable_closed_loop", issues)
    row_results = _object(_object(evaluation, "playable_unit", issues), "rows", issues, "playable_unit.rows")

    failed_row = False
    for key in rows:
        value = row_results.get(key)
        if value is None:
            issues.append(f"Playable Unit row {key} missing from evaluation.json playable_unit.rows")
            continue
        if not isinstance(value, dict):
            issues.append(f"Playable Unit row {key} result must be an object")
            continue
        if value.get("result") not in ("pass", "fail"):
            issues.append(f"Playable Unit row {key} result must be pass or fail")
        failed_row |= value.get("result") == "fail"
        test = value.get("test")
        if not isinstance(test, str) or not test.strip():
            issues.append(f"Playable Unit row {key} must record a test path")
        elif not (root / test).is_file():
            issues.append(f"Playable Unit row {key} test file not found: {test}")
        if not isinstance(value.get("evidence"), list) or not value["evidence"]:
            issues.append(f"Playable Unit row {key} must record non-empty evidence")

    if result == "approve":
        if closed_loop.get("playable_unit_coverage") is not True:
            issues.append("approve requires playable_closed_loop.playable_unit_coverage == true")
        if _unit_outcome(section) and closed_loop.get("completion_fail_or_exit_reached") is not True:
            issues.append("approve requires playable_closed_loop.completion_fail_or_exit_reached == true")
        for key in rows:
            value = row_results.get(key)
            if isinstance(value, dict) and value.get("result") != "pass":
                issues.append(f"approve requires Playable Unit row {key} to pass")
    elif result == "reject":
        critical = evaluation.get("critical_issues")
        if not failed_row and not (isinstance(critical, list) and critical):
            issues.append("reject requires at least one failed Playable Unit row or critical issue")
    return issues


def _playable_unit_section(plan: str) -> str:
    heading = _PLAYABLE_UNIT.search(plan)
    if not heading:
        return ""
    following = _NEXT_HEADING.search(plan, heading.end())
    return plan[heading.end():following.start() if following else len(plan)]


def _playable_unit_rows(section: str) -> tuple[list[str], list[str]]:
    rows: list[str] = []
    issues: list[str] = []
    in_table = False
    for line in (line.strip() for line in section.splitlines()):
        if not (line.startswith("|") and line.endswith("|")):
            if in_table:
                break
            continue
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if len(cells) < 5:
            continue
        if all(_SEPARATOR_CELL.fullmatch(cell) for cell in cells) or cells[0].lower() == "mechanic":
            in_table = True
            continue
        if not in_table:
            continue
        key = cells[0][1:cells[0].index("]")].strip() if cells[0].startswith("[") and "]" in cells[0] else cells[0]
        if _MECHANIC_ID.fullmatch(key):
            rows.append(key)
        else:
            issues.append(f"Playable Unit table row must use a mechanic id in the Mechanic column: {cells[0]}")
    return rows, issues


def _unit_outcome(section: str) -> str:
    match = _UNIT_OUTCOME.search(section)
    value = match.group(1).strip() if match else ""
    placeholder = value.startswith("{") and value.endswith("}")
    if value.lower() in ("n/a", "none", "deferred", "not applicable") or placeholder:
        return ""
    return value


# -- finalize: the tag's documents are archived and sealed --------------------------------------

_TAG_HEADER = re.compile(r"^\*\*Tag:\*\*\s*(v\d+\.\d+\.\d+)\s*$", re.MULTILINE)
TAG_ARCHIVE_FILES = (
    "GDD-snapshot.md", "PLAN.md", "STRUCTURE.md", "STYLE.md", "SCENES.md", "MEMORY.md",
    "evaluation-final.json", "CHANGELOG.md", "README.md", "SUMMARY.md",
)


def current_tag(root: Path) -> str | None:
    """The tag PLAN.md's `**Tag:** vX.Y.Z` header names (GodotMaker's banner shows it)."""
    match = _TAG_HEADER.search(_read(root / "PLAN.md") or "")
    return match.group(1) if match else None


def tag_archived(root: Path, state: str = STATE) -> list[str]:
    tag = current_tag(root)
    if tag is None:
        return ["PLAN.md missing or has no `**Tag:** vX.Y.Z` header: finalize needs it to know which "
                "docs/tags/<tag>/ to verify"]
    archive = root / "docs" / "tags" / tag
    if not archive.is_dir():
        return [f"docs/tags/{tag}/ not created: finalize must archive the tag's working docs there"]
    missing = [name for name in TAG_ARCHIVE_FILES if not (archive / name).is_file()]
    if missing:
        return [f"docs/tags/{tag}/ missing required files: {', '.join(missing)}"]
    manifest, error = _read_json(archive / "evidence" / "manifest.json")
    if error:
        return [f"docs/tags/{tag}/evidence/manifest.json {error}: the archive was never sealed"]
    if not isinstance(manifest, dict) or manifest.get("sealed") is not True:
        return [f'docs/tags/{tag}/evidence/manifest.json does not say "sealed": true: '
                'the archive is a partial finalize']
    index = _read(root / "docs" / "tags" / "README.md")
    if index is None:
        return ["docs/tags/README.md not found: the parent tag index is written when sealing"]
    if f"({tag}/)" not in index:
        return [f"docs/tags/README.md does not list {tag}: the parent index is stale"]
    return []


# -- helpers ---------------------------------------------------------------------------------

def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def _read_json(path: Path) -> tuple[Any, str | None]:
    import json  # only a stage completion needs it, not every hook call that imports this module

    text = _read(path)
    if text is None:
        return None, "not found"
    try:
        return json.loads(text), None
    except ValueError as exc:
        return None, f"is not valid JSON: {exc}"


def _object(parent: dict[str, Any], key: str, issues: list[str], label: str | None = None) -> dict[str, Any]:
    value = parent.get(key)
    if isinstance(value, dict):
        return value
    issues.append(f'evaluation.json field "{label or key}" must be an object')
    return {}


STAGE_CHECKS: dict[str, Callable[[Path, str], list[str]]] = {
    "plan_all_verified": plan_all_verified,
    "gap_archived": gap_archived,
    "evaluation_playable_unit": evaluation_playable_unit,
    "tag_archived": tag_archived,
}
