"""Where a write lands, relative to the project, before any rule looks at it.

A path can name one place and land in another (`a/../e2e/x`, a symlinked folder, a worker's
worktree). Rules therefore judge two readings of every path, the one the caller named (`..`
folded lexically) and the one the filesystem resolves (symlinks followed), and a write is
blocked if either reading is blocked. Matching is case-insensitive on `/`-separated text.
"""

from __future__ import annotations

import os
from fnmatch import fnmatchcase
from functools import lru_cache
from typing import Iterable, Sequence


def readings(path: str, cwd: str, roots: Iterable[str], worktree_markers: Sequence[str] = ()) -> tuple[str, ...]:
    """The distinct project-relative spellings of `path` (absolute when it lands outside)."""
    if "\x00" in path:
        raise ValueError("path contains a NUL byte")
    joined = os.path.join(cwd, path)
    lexical = os.path.normpath(joined)
    try:
        real = os.path.realpath(joined)
    except (OSError, ValueError):
        real = lexical
    root_forms = _longest_first(tuple(roots))
    markers = _marker_parts(tuple(worktree_markers))
    spellings = (_strip_worktree(_relative(absolute, root_forms).lower(), markers) for absolute in (lexical, real))
    return tuple(dict.fromkeys(spellings))


@lru_cache(maxsize=64)
def _longest_first(roots: tuple[str, ...]) -> tuple[str, ...]:
    """Each project root as named and as resolved, longest first, each ending in `/`. A root does
    not move under a running hookgate, so this is worked out once, not on every write judged."""
    forms = {form.rstrip("/") + "/" for root in roots for form in (os.path.normpath(root), os.path.realpath(root))}
    return tuple(sorted(forms, key=len, reverse=True))


@lru_cache(maxsize=64)
def _marker_parts(markers: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(part.lower() for part in marker.strip("/").split("/") if part) for marker in markers)


def matches(rel: str, pattern: str) -> bool:
    """See presets/godot.toml for the pattern language."""
    pattern = pattern.lower()
    if pattern.startswith("/"):
        return fnmatchcase(rel, pattern[1:])
    if "/" in pattern:
        return fnmatchcase(rel, pattern)
    return fnmatchcase(rel.rsplit("/", 1)[-1], pattern)


def _relative(absolute: str, roots: tuple[str, ...]) -> str:
    for root in roots:
        if absolute.rstrip("/") + "/" == root:
            return "."
        if absolute.startswith(root):
            return absolute[len(root):]
    return absolute


def _strip_worktree(rel: str, markers: tuple[tuple[str, ...], ...]) -> str:
    """`.claude/worktrees/<agent>/src/x.gd` is `src/x.gd` of the project again."""
    if rel.startswith("/") or not markers:
        return rel
    parts = rel.split("/")
    for marker in markers:
        span = len(marker)
        for i in range(len(parts) - span, -1, -1):
            if all(fnmatchcase(parts[i + k], marker[k]) for k in range(span)):
                return "/".join(parts[i + span:]) or "."
    return rel
