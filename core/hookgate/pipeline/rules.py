"""Judging one project-relative path against a rule set of the config.

Every write is judged against every pattern of the self-protection rules and of a role's rules,
so a rule list is compiled once into one test per rule (its patterns on the whole path, and
those without `/` on the last component; string operations where fnmatch's `*` is the only
wildcard, globs.py, a regular expression for the rest), keyed on what the compiled form depends on:
the rule list and path classes themselves (the config cache hands out the same objects until a
file they come from changes), the project root, and the environment variables its anchored
patterns name (`~/...` moves with HOME). Anything else gives a new compilation, never an old answer.
"""

from __future__ import annotations

import re
from fnmatch import translate
from typing import Callable, Iterable, Mapping, Sequence

from ..config.schema import PathRule, Pipeline
from ..environ import Variables
from ..paths import anchor_names, root_relative_pattern
from . import globs

Test = Callable[[str, str], bool]  # (the relative path, its last component) -> does the rule match
MAX_COMPILED = 256  # rule lists x roots x environments kept; past it the cache starts over
MAX_ANSWERS = 4096  # paths whose first matching rule a compiled rule list remembers


def expand(patterns: Iterable[str], classes: Mapping[str, list[str]]) -> list[str]:
    expanded: list[str] = []
    for pattern in patterns:
        expanded.extend(classes[pattern[1:]] if pattern.startswith("@") else [pattern])
    return expanded


def denial(rules: Sequence[PathRule], rel: str, classes: Mapping[str, list[str]], root: str | None = None,
           otherwise: str | None = None) -> str | None:
    """The deny reason for `rel` under `rules` (a rule set's, with its `otherwise` for a path no rule
    matches), or None when it is allowed. The first rule that matches decides."""
    tests, answers = _entry(rules, classes, root)
    try:
        rule = answers[rel]
    except KeyError:
        name = rel.rsplit("/", 1)[-1]
        rule = next((rule for rule, test in tests if test(rel, name)), None)
        if len(answers) >= MAX_ANSWERS:
            answers.clear()
        answers[rel] = rule
    if rule is None:
        return otherwise
    return rule.reason if rule.deny is not None else None


# (id(rules), id(classes), root) -> the rule list compiled for that root and for the environment
# it was compiled in: (rules, classes, the environment variables its anchored patterns read, their
# values then, the compiled rules, the first rule each path judged so far matched). The answers
# are a pure function of the path once all the rest is fixed, so they live and die with their
# entry; a change of those variables compiles the list again. The entries hold the objects whose
# ids they are keyed on, so an id cannot be reused while its entry lives.
_compiled: dict[tuple[int, int, str | None], tuple[object, object, Variables, tuple[object, ...],
                                                   list[tuple[PathRule, Test]], dict[str, PathRule | None]]] = {}


def compiled(rules: Sequence[PathRule], classes: Mapping[str, list[str]],
             root: str | None) -> list[tuple[PathRule, Test]]:
    return _entry(rules, classes, root)[0]


def _entry(rules: Sequence[PathRule], classes: Mapping[str, list[str]],
           root: str | None) -> tuple[list[tuple[PathRule, Test]], dict[str, PathRule | None]]:
    key = (id(rules), id(classes), root)
    entry = _compiled.get(key)
    if entry is None or entry[0] is not rules or entry[1] is not classes or entry[2].values() != entry[3]:
        names = {name for rule in rules for pattern in expand(rule.allow or rule.deny or [], classes)
                 for name in anchor_names(pattern)}
        variables = Variables(tuple(sorted(names)))
        values = variables.values()
        if len(_compiled) >= MAX_COMPILED:
            _compiled.clear()
        entry = _compiled[key] = (rules, classes, variables, values,
                                  [(rule, rule_test(rule, classes, root)) for rule in rules], {})
    return entry[4], entry[5]


def rule_test(rule: PathRule, classes: Mapping[str, list[str]], root: str | None) -> Test:
    """One rule's patterns as one test (effect/protection.py judges the project's files with it too)."""
    on_path: list[str] = []
    on_name: list[str] = []
    for pattern in expand(rule.allow or rule.deny or [], classes):
        plan = root_relative_pattern(pattern, root)
        if plan is not None:
            (on_name if plan[0] else on_path).append(plan[1])
    path_match, name_match = matcher(on_path), matcher(on_name)

    def test(rel: str, name: str) -> bool:
        return bool((path_match and path_match(rel)) or (name_match and name_match(name)))

    return test


def matcher(patterns: list[str]) -> Callable[[str], object] | None:
    """One matcher for fnmatch patterns: those whose only wildcard is `*` by string operations
    (globs.py: no regular expression to compile), the others by fnmatch's translation."""
    plain = [pattern for pattern in patterns if globs.plain(pattern)]
    tests: list[Callable[[str], object]] = [globs.any_of(plain)] if plain else []
    if len(plain) < len(patterns):
        tests.append(_translated([translate(pattern) for pattern in patterns if not globs.plain(pattern)]))
    if len(tests) < 2:
        return tests[0] if tests else None
    return lambda text: any(test(text) for test in tests)


def _translated(regexes: list[str]) -> Callable[[str], object]:
    """One matcher for fnmatch.translate's expressions: their alternation (each is anchored at
    both ends, so any one matching the whole text is the answer), or each in turn if a Python's
    translate ever names groups, which an alternation of two of them could not hold."""
    try:
        return re.compile("|".join(regexes)).match
    except re.error:
        each = [re.compile(regex).match for regex in regexes]
        return lambda text: any(match(text) for match in each)


def prepare(pipeline: Pipeline, root: str) -> None:
    """Compile every rule list of a pipeline config for the project at `root` in the current
    environment: the warm core does, so each call's fork finds them compiled."""
    compiled(pipeline.protect.rules, pipeline.paths, root)
    compiled(pipeline.subagents.always, pipeline.paths, None)
    for rule_set in [*pipeline.roles.values(), *pipeline.subagents.types.values()]:
        compiled(rule_set.rules, pipeline.paths, None)
