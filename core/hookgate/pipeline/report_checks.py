"""The deep checks a report format can name (seed 000, worker reports). Each takes the report
and the context and returns what is wrong with it, or None.

The .gd files a worker lists under Files Changed are read from the project, or from a worker's
worktree (worktree_markers) when the worker wrote there; only files inside those folders are read.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Callable

from ..engine.context import Context
from .reports import files_changed, section

_RES_PATH = re.compile(r"res://([^\"'`\s)]+)")
_CLASS_NAME = re.compile(r"^class_name\s+(\w+)", re.MULTILINE)


def check_test_substance(message: str, ctx: Context) -> str | None:
    """The Tests section shows real unit-test output, not a promise."""
    content = section(message, "Tests")
    if content is None:
        return None  # a missing section is reported by the required-sections check
    params = ctx.config.pipeline.report_checks
    if len(content) < 20:
        return "Tests section is empty - it must include the unit test results"
    if params.test_substance and not any(re.search(p, content, re.IGNORECASE) for p in params.test_substance):
        return "Tests section lacks substance - it must include the test file paths and pass/fail results"
    if params.unit_test and not re.search(params.unit_test, content, re.IGNORECASE):
        return ("Tests section is missing unit test results - every system must have unit tests. Include the test "
                "file name (e.g. test_movement.gd) and the run output (e.g. '5 tests -- 5 passed, 0 failed').")
    return None


def check_resource_paths(message: str, ctx: Context) -> str | None:
    """Every res:// path in the worker's .gd files exists (in the project or its worktree)."""
    if not ctx.project.path("project.godot").exists():
        return None  # not a Godot project (yet): res:// has no meaning
    roots = _search_roots(ctx)
    missing: list[str] = []
    for text in _gd_files(message, roots).values():
        for line in text.splitlines():
            if line.strip().startswith("#"):
                continue
            for res in _RES_PATH.findall(line):
                if _find(res, roots) is None and f"res://{res}" not in missing:
                    missing.append(f"res://{res}")
    if missing:
        return (f"Worker references non-existent resource: {', '.join(missing[:5])}. "
                "Fix the path or report it as missing in ASSETS.md.")
    return None


def check_classname_conflicts(message: str, ctx: Context) -> str | None:
    """No `class_name` of the worker's .gd files shadows a Godot built-in class."""
    reserved = set(ctx.config.pipeline.report_checks.reserved_class_names)
    for text in _gd_files(message, _search_roots(ctx)).values():
        match = _CLASS_NAME.search(text)
        if match and match.group(1) in reserved:
            name = match.group(1)
            return (f"class_name '{name}' conflicts with Godot built-in '{name}'. "
                    f"Rename it, e.g. '{name}Entity' or '{name}Comp'.")
    return None


def _search_roots(ctx: Context) -> list[Path]:
    root = ctx.project.root
    worktrees = [p for marker in ctx.config.pipeline.worktree_markers for p in sorted(root.glob(marker.strip("/")))
                 if p.is_dir()]
    return [root, *worktrees]


def _find(relative: str, roots: list[Path]) -> Path | None:
    for base in roots:
        candidate = (base / relative).resolve()
        if candidate.is_relative_to(base.resolve()) and candidate.is_file():
            return candidate
    return None


def _gd_files(message: str, roots: list[Path]) -> dict[str, str]:
    texts: dict[str, str] = {}
    for name in files_changed(message):
        if name.endswith(".gd"):
            path = _find(name, roots)
            if path is not None:
                try:
                    texts[name] = path.read_text(encoding="utf-8", errors="ignore")
                except OSError:
                    continue
    return texts


REPORT_CHECKS: dict[str, Callable[[str, Context], str | None]] = {
    "test_substance": check_test_substance,
    "resource_paths": check_resource_paths,
    "classname_conflicts": check_classname_conflicts,
}
