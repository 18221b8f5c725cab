"""Claude Code's matcher semantics, shared by gates, command hooks and generated registrations.

    ""  or "*"                        every value
    only letters, digits, "_", "|"    an exact name or a "|"-separated list of exact names
    anything else                     a regular expression, unanchored (re.search)
"""

from __future__ import annotations

import re
from typing import Callable

Matcher = Callable[[str | None], bool]

_EXACT_LIST = re.compile(r"[A-Za-z0-9_|]+")


def compile_matcher(pattern: str | None) -> Matcher:
    """Raises re.error for an invalid regular expression."""
    if not pattern or pattern == "*":
        return _match_all
    if _EXACT_LIST.fullmatch(pattern):
        names = frozenset(name for name in pattern.split("|") if name)
        return lambda value: value in names
    regex = re.compile(pattern)
    return lambda value: regex.search(value or "") is not None


def _match_all(value: str | None) -> bool:
    return True
