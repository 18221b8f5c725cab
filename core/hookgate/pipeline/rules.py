"""Judging one project-relative path against a rule set of the config."""

from __future__ import annotations

from typing import Iterable, Mapping

from ..config.schema import PathRule, RuleSet
from .paths import matches


def expand(patterns: Iterable[str], classes: Mapping[str, list[str]]) -> list[str]:
    expanded: list[str] = []
    for pattern in patterns:
        expanded.extend(classes[pattern[1:]] if pattern.startswith("@") else [pattern])
    return expanded


def first_match(rules: Iterable[PathRule], rel: str, classes: Mapping[str, list[str]],
                root: str | None = None) -> PathRule | None:
    for rule in rules:
        if any(matches(rel, p, root) for p in expand(rule.allow or rule.deny or [], classes)):
            return rule
    return None


def denial(rule_set: RuleSet, rel: str, classes: Mapping[str, list[str]], root: str | None = None) -> str | None:
    """The deny reason for `rel` under `rule_set`, or None when it is allowed."""
    rule = first_match(rule_set.rules, rel, classes, root)
    if rule is None:
        return rule_set.otherwise
    return rule.reason if rule.deny is not None else None
