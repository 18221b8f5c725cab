"""The string tests of `*`-only path patterns (hookgate.pipeline.globs) say what fnmatch says.

Ground truth is fnmatch.fnmatchcase itself, on generated patterns and texts over an alphabet small
enough that the wildcard's hard cases (a part that fits in several places, parts that overlap,
the head and the tail sharing letters, empty parts from `**`) come up all the time; and on every
pattern of the shipped presets against paths near each of them."""

from __future__ import annotations

import tomllib
from fnmatch import fnmatchcase
from pathlib import Path

from hypothesis import example, given, settings
from hypothesis import strategies as st

from hookgate.pipeline import globs
from hookgate.pipeline.rules import _any_of

PRESETS = Path(__file__).resolve().parents[1] / "core" / "hookgate" / "presets"

texts = st.text(alphabet="ab/.*", max_size=12)
star_patterns = st.text(alphabet="ab/.*", max_size=8)
any_patterns = st.text(alphabet="ab/.*?[]!", max_size=8)


@settings(max_examples=3000, deadline=None)
@given(star_patterns, texts)
@example("ab*ba", "aba")  # the head and the tail would share a letter
@example("a*ab*b", "aab")  # the middle part would share the head's letter
@example("*a*a*", "a")  # one letter cannot be two parts
def test_one_pattern_matches_as_fnmatch(pattern, text):
    assert globs.plain(pattern)
    assert globs.any_of([pattern])(text) == fnmatchcase(text, pattern)


@settings(max_examples=2000, deadline=None)
@given(st.lists(star_patterns, max_size=5), texts)
def test_a_list_matches_when_one_of_its_patterns_does(patterns, text):
    assert globs.any_of(patterns)(text) == any(fnmatchcase(text, pattern) for pattern in patterns)


@settings(max_examples=2000, deadline=None)
@given(st.lists(any_patterns, max_size=5), texts)
def test_a_rule_with_any_wildcards_matches_as_fnmatch(patterns, text):
    """What rules.py builds for a rule: string tests for the plain patterns, fnmatch's regular
    expression for those with `?` or `[...]` (a `[` left open is a literal, as in fnmatch)."""
    match = _any_of(patterns)
    expected = any(fnmatchcase(text, pattern) for pattern in patterns)
    assert (bool(match(text)) if match else False) == expected


def test_the_presets_patterns_match_as_fnmatch():
    """Every pattern the shipped presets hold (lower-cased, as rules compare them), against paths
    made from each pattern: itself, its wildcards filled in several ways, and near misses."""
    patterns = sorted({pattern.lower() for preset in PRESETS.glob("*.toml")
                       for pattern in _strings(tomllib.loads(preset.read_text()))
                       if "/" in pattern or "*" in pattern or "." in pattern})
    assert len(patterns) > 40, patterns  # the presets' path classes were read
    plain = [pattern for pattern in patterns if globs.plain(pattern)]
    assert len(plain) > 0.9 * len(patterns)  # what the change is for: nearly every preset pattern
    texts = {fill for pattern in patterns for fill in _near(pattern)}
    judged = 0
    for pattern in plain:
        test = globs.any_of([pattern])
        for text in texts:
            assert test(text) == fnmatchcase(text, pattern), (pattern, text)
            judged += 1
    together = globs.any_of(plain)
    for text in texts:
        assert together(text) == any(fnmatchcase(text, pattern) for pattern in plain), text
    assert judged > 10_000


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _near(pattern: str) -> list[str]:
    filled = [pattern.replace("*", fill) for fill in ("", "x", "a/b", "/", ".gd")]
    return [*filled, *(text[1:] for text in filled), *(text + "x" for text in filled), *(text[:-1] for text in filled)]
