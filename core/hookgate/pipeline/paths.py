"""Where a write lands, relative to the project, before any rule looks at it.

A path can name one place and land in another (`a/../e2e/x`, a symlinked folder, a worker's
worktree). Rules therefore judge two readings of every path, the one the caller named (`..`
folded lexically) and the one the filesystem resolves (symlinks followed), and a write is
blocked if either reading is blocked. Matching is case-insensitive on `/`-separated text.
"""

from __future__ import annotations

import os
from functools import lru_cache
from fnmatch import fnmatchcase
from typing import Iterable, Sequence


def readings(path: str, cwd: str, roots: Iterable[str], worktree_markers: Sequence[str] = ()) -> list[str]:
    """The distinct project-relative spellings of `path` (absolute when it lands outside)."""
    if "\x00" in path:
        raise ValueError("path contains a NUL byte")
    joined = os.path.join(cwd, path)
    lexical = os.path.normpath(joined)
    try:
        real = os.path.realpath(joined)
    except (OSError, ValueError):
        real = lexical
    root_forms = set().union(*(_root_forms(r) for r in roots))
    seen: list[str] = []
    for absolute in (lexical, real):
        rel = _relative(absolute, root_forms)
        rel = _strip_worktree(rel, worktree_markers).lower()
        if rel not in seen:
            seen.append(rel)
    return seen


def file_name(path: str) -> str:
    """The name a reason shows for a written path (its last component)."""
    return os.path.basename(path.rstrip("/\\")) or path


@lru_cache(maxsize=64)
def _root_forms(root: str) -> frozenset[str]:
    """A project root as named and as resolved; a root does not move under a running hookgate,
    so this is worked out once, not on every write judged."""
    return frozenset({os.path.normpath(root), os.path.realpath(root)})


def matches(rel: str, pattern: str) -> bool:
    """See presets/godot.toml for the pattern language."""
    pattern = pattern.lower()
    if pattern.startswith("/"):
        return fnmatchcase(rel, pattern[1:])
    if "/" in pattern:
        return fnmatchcase(rel, pattern)
    return fnmatchcase(rel.rsplit("/", 1)[-1], pattern)


def _relative(absolute: str, roots: set[str]) -> str:
    for root in sorted(roots, key=len, reverse=True):
        if absolute == root:
            return "."
        if absolute.startswith(root.rstrip("/") + "/"):
            return absolute[len(root.rstrip("/")) + 1:]
    return absolute


def _strip_worktree(rel: str, markers: Sequence[str]) -> str:
    """`.claude/worktrees/<agent>/src/x.gd` is `src/x.gd` of the project again."""
    if rel.startswith("/"):
        return rel
    parts = rel.split("/")
    for marker in markers:
        marker_parts = [p for p in marker.strip("/").split("/") if p]
        span = len(marker_parts)
        for i in range(len(parts) - span, -1, -1):
            if all(fnmatchcase(parts[i + k].lower(), marker_parts[k].lower()) for k in range(span)):
                return "/".join(parts[i + span:]) or "."
    return rel
