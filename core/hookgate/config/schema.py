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


class Completion(_Strict, frozen=True):
    """check_completion: once a `dispatched` subagent ran in a worker-dispatch role, every role
    in `requires` must have run too before the session may stop."""

    dispatched: str = ""
    requires: list[str] = []


class StageSchema(_Strict, frozen=True):
    """What must hold before a role's completion may enter stage.jsonl: files that exist and
    named programmatic checks (see hookgate.pipeline.stage_checks)."""

    files: list[str] = []
    checks: list[str] = []


class Prerequisite(_Strict, frozen=True):
    """Before a worker-dispatch role dispatches: `after` is in stage.jsonl and its stage schema's
    files are still there, and so are `files`."""

    after: str
    files: list[str] = []


class Section(_Strict, frozen=True):
    name: str
    pattern: str  # a regular expression the report must contain


class ReportFormat(_Strict, frozen=True):
    """How one subagent role reports (seed 000 check_worker_report). A report is recognised by
    its `marker` (exact text), else its `pattern`, else its `fallback` (regular expressions),
    trying every role at one layer before the next."""

    marker: str = ""
    pattern: str = ""
    fallback: str = ""
    sections: list[Section] = []
    # sections whose content must be at least `min_section_chars` long (reviewers)
    substantive_sections: list[str] = []
    min_section_chars: int = 0
    outcome_block: bool = False  # the report must end with a valid machine outcome block
    checks: list[str] = []  # deep checks by name (see hookgate.pipeline.report_checks)
    outcomes: dict[str, str] = {}  # report status -> the metrics event of a terminal stop


class ReportChecks(_Strict, frozen=True):
    """Parameters of the worker deep checks."""

    test_substance: list[str] = []  # the Tests section must match one of these
    unit_test: str = ""  # ... and this one
    reserved_class_names: list[str] = []


class AssetRead(_Strict, frozen=True):
    """check_asset_access: files under `folders` with one of `extensions` may not be read by
    the main agent while a role is active."""

    folders: list[str] = []
    extensions: list[str] = []
    reason: str = ""


class Pipeline(_Strict, frozen=True):
    worker_dispatch_roles: list[str] = []
    known_subagent_roles: list[str] = []
    # subagent role -> description prefixes that name it when the runtime's agent_type does not
    role_prefixes: dict[str, list[str]] = {}
    completion: Completion = Completion()
    stage_schemas: dict[str, StageSchema] = {}
    role_next: dict[str, str] = {}  # completed role -> what to run next ("" = the pipeline ends)
    prerequisites: dict[str, Prerequisite] = {}
    reports: dict[str, ReportFormat] = {}
    report_checks: ReportChecks = ReportChecks()
    diagnosed_roles: list[str] = []  # subagent roles whose failed handoffs are recorded as worker_error
    asset_read: AssetRead = AssetRead()
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
    # "godotmaker": keep the pipeline state in GodotMaker's `.godotmaker/`, in its formats
    # (store/layout.py); without it, a project with `.godotmaker/` and no `.hookgate/` is one too
    compat: Literal["godotmaker"] | None = None
    state_dir: str | None = None
    gates: dict[str, GateSettings] = {}
    pipeline: Pipeline = Pipeline()
    policies: Policies = Policies()
