"""Path patterns tested with string operations, for the patterns whose only wildcard is `*`.

A rule list used to be one regular expression; Python parses one slowly enough that compiling
the self-protection rules cost a cold hook call more than the rest of its decision. The preset's
patterns are literal paths, `prefix*`, `*suffix`, `*part*` or `a*b*c`, which string operations
decide alike: a literal is a set lookup, prefixes and suffixes are one startswith/endswith, a
`*part*` is `in`, and `a*b*c` is the head, the tail and each middle part found in turn (the
first place a part fits is always right, as fnmatch's own regular expression takes it).
Patterns with `?` or `[...]` still go through fnmatch's translation (pipeline/rules.py).
tests/test_globs.py holds these tests equal to fnmatch.fnmatchcase on generated patterns and texts.
"""

from __future__ import annotations

from operator import methodcaller
from typing import Callable

Test = Callable[[str], bool]


def plain(pattern: str) -> bool:
    """Whether `pattern` uses no wildcard but `*`."""
    return "?" not in pattern and "[" not in pattern


def any_of(patterns: list[str]) -> Test:
    """Whether a text matches any of `patterns` (each `plain`), as fnmatchcase would say."""
    exact: set[str] = set()
    prefixes: list[str] = []
    suffixes: list[str] = []
    inside: list[str] = []
    others: list[Test] = []
    for pattern in patterns:
        parts = pattern.split("*")
        if len(parts) == 1:
            exact.add(pattern)
        elif len(parts) == 2 and not parts[1]:
            prefixes.append(parts[0])
        elif len(parts) == 2 and not parts[0]:
            suffixes.append(parts[1])
        elif len(parts) == 3 and not parts[0] and not parts[2]:
            inside.append(parts[1])
        else:
            others.append(_spans(parts))
    # each kind one C-level call where it can be (a method, a methodcaller): a Python frame per
    # rule would cost more than the regular expression did in a long-running core
    tests: list[Test] = [exact.__contains__] if exact else []
    tests += [methodcaller(name, tuple(parts))
              for name, parts in (("startswith", prefixes), ("endswith", suffixes)) if parts]
    tests += [methodcaller("__contains__", part) for part in inside] + others
    if len(tests) == 1:
        return tests[0]

    def test(text: str) -> bool:  # a loop, not any(): a generator costs more than these tests
        for one in tests:
            if one(text):
                return True
        return False

    return test


def _spans(parts: list[str]) -> Test:
    """`head*middle*...*tail`: the head at the start, the tail at the end, not overlapping, and
    each middle part in order between them."""
    head, *middle, tail = parts
    least = sum(map(len, parts))

    def test(text: str) -> bool:
        if len(text) < least or not text.startswith(head) or not text.endswith(tail):
            return False
        at, end = len(head), len(text) - len(tail)
        for part in middle:
            at = text.find(part, at, end)
            if at < 0:
                return False
            at += len(part)
        return True

    return test
