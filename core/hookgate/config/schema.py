"""The shape of `.hookgate/config.toml` (over a preset). Unknown keys are errors, so a typo in a
rule is reported with its field path instead of silently allowing what it meant to forbid."""

from __future__ import annotations

from typing import Literal

import msgspec

FailMode = Literal["open", "closed"]


class _Strict(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    pass


class PathRule(_Strict, frozen=True):
    """Exactly one of `allow` / `deny`; a deny carries the reason the model is told."""

    allow: list[str] | None = None
    deny: list[str] | None = None
    reason: str = ""


class RuleSet(_Strict, frozen=True):
    rules: list[PathRule] = []
    # a path no rule matched: allowed when None, else denied with this reason
    otherwise: str | None = None


class Subagents(_Strict, frozen=True):
    always: list[PathRule] = []
    types: dict[str, RuleSet] = {}


class Pipeline(_Strict, frozen=True):
    worker_dispatch_roles: list[str] = []
    known_subagent_roles: list[str] = []
    worktree_markers: list[str] = []
    paths: dict[str, list[str]] = {}
    roles: dict[str, RuleSet] = {}
    subagents: Subagents = Subagents()


class GateSettings(_Strict, frozen=True):
    enabled: bool = True
    fail_mode: FailMode | None = None
    timeout: float | None = None
    priority: int | None = None
    block_limit: int | None = None


class Policies(_Strict, frozen=True):
    """Python policies that register hooks: importable modules, run before .hookgate/policies/*.py."""

    modules: list[str] = []


class Config(_Strict, frozen=True):
    preset: str = "godot"
    state_dir: str | None = None
    gates: dict[str, GateSettings] = {}
    pipeline: Pipeline = Pipeline()
    policies: Policies = Policies()
