"""The string tests of `*`-only path patterns (hookgate.pipeline.globs) say what fnmatch says.

Ground truth is fnmatch.fnmatchcase itself, on generated patterns and texts over an alphabet small
enough that the wildcard's hard cases (a part that fits in several places, parts that overlap,
the head and the tail sharing letters, empty parts from `**`) come up all the time; and on every
pattern the shipped preset's rules use against paths near each of them."""

from __future__ import annotations

from fnmatch import fnmatchcase

from hypothesis import example, given, settings
from hypothesis import strategies as st

from hookgate.config.load import open_project
from hookgate.pipeline import globs
from hookgate.pipeline.rules import matcher, expand

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
    match = matcher(patterns)
    expected = any(fnmatchcase(text, pattern) for pattern in patterns)
    assert (bool(match(text)) if match else False) == expected


def test_the_presets_patterns_match_as_fnmatch(tmp_path):
    """Every pattern the shipped preset's rules use (their path classes expanded, lower-cased as
    rules compare them), against paths made from each pattern: itself, its wildcards filled in
    several ways, and near misses."""
    pipeline = open_project(tmp_path)[1].pipeline
    rules = [*pipeline.protect.rules, *pipeline.subagents.always,
             *(rule for rule_set in [*pipeline.roles.values(), *pipeline.subagents.types.values()]
               for rule in rule_set.rules)]
    patterns = sorted({pattern.lower() for rule in rules for pattern in expand(rule.allow or rule.deny or [],
                                                                                 pipeline.paths)})
    assert len(patterns) > 40, patterns  # the preset's rules were read
    plain = [pattern for pattern in patterns if globs.plain(pattern)]
    assert plain == patterns  # what the change is for: every preset pattern skips the regex parser
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


def _near(pattern: str) -> list[str]:
    filled = [pattern.replace("*", fill) for fill in ("", "x", "a/b", "/", ".gd")]
    return [*filled, *(text[1:] for text in filled), *(text + "x" for text in filled), *(text[:-1] for text in filled)]
