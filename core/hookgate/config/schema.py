"""The shape of `.hookgate/config.toml` (over a preset). Unknown keys are errors, so a typo in a
rule is reported with its field path instead of silently allowing what it meant to forbid."""

from typing import Literal

import msgspec

FailMode = Literal["open", "closed"]
Mode = Literal["enforce", "monitor"]

# The checks a stage schema and a report format may name. The pipeline pack implements them
# (pipeline/stage_checks.py STAGE_CHECKS, pipeline/report_checks.py REPORT_CHECKS; a test holds
# the two to the same names); the config names them, so it can refuse a typo without importing
# the pack it configures.
STAGE_CHECK_NAMES = ("plan_all_verified", "gap_archived", "evaluation_playable_unit", "tag_archived")
REPORT_CHECK_NAMES = ("test_substance", "resource_paths", "classname_conflicts")


class _Strict(msgspec.Struct, forbid_unknown_fields=True, kw_only=True, frozen=True):
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


class Protect(_Strict, frozen=True):
    """Self-protection, while a pipeline role is active: paths no agent may change whatever its
    role (tried before any role's or subagent's rules), and hookgate subcommands no agent may run
    from a shell. Off when `enabled` is false, or when no role is active."""

    enabled: bool = True
    rules: list[PathRule] = []
    commands: list[str] = []  # `hookgate <command>` refused in a shell command ("install", "uninstall")
    command_reason: str = ""  # "{command}" is the refused command
    # the runtimes' settings files whose commands (hooks, the status line, MCP servers) the runtime
    # runs by itself: the scripts they run fill the path class `runtime_scripts`
    # (config/runtime_scripts.py). Project-relative, or anchored at `~/` or `$NAME/`
    command_settings: list[str] = []
    # git config keys that name no program git runs (fnmatch patterns on `section.sub.key`,
    # lower case): a `git config` that sets or unsets only these, and a change of a protected git
    # config that touches only these, are let through (`git init`, `git remote add`, an identity)
    git_inert_keys: list[str] = []


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
    protect: Protect = Protect()


class GateSettings(_Strict, frozen=True):
    enabled: bool = True
    fail_mode: FailMode | None = None
    timeout: float | None = None
    priority: int | None = None
    block_limit: int | None = None
    mode: Mode | None = None  # None: the config's top-level `mode`


class Explain(_Strict, frozen=True):
    hint: bool = True  # a refusal's user message names the `hookgate explain` command for it


class Otel(_Strict, frozen=True):
    """OpenTelemetry export from the long-running cores; the OTEL_EXPORTER_OTLP_* variables win."""

    endpoint: str = ""  # OTLP/HTTP base URL, e.g. http://127.0.0.1:4318 ("" : only the environment's)
    queue: int = 2048  # decisions waiting for export; beyond it they are dropped and counted
    timeout: float = 2.0  # seconds one export may take


class Policies(_Strict, frozen=True):
    """Python policies that register hooks: importable modules, run before .hookgate/policies/*.py."""

    modules: list[str] = []


class Effect(_Strict, frozen=True):
    """The effect check (hookgate.effect): around each call that may write, the files its agent
    may not write are read before and after, and what the call changed among them is put back."""

    enabled: bool = True
    # canonical tool names the check wraps (a Claude matcher); a patch's file events always are.
    # Skill: Claude Code runs the !`command` lines of a skill's file when it loads, no Bash call
    tools: str = "Bash|NotebookEdit|Skill|apply_patch|mcp__.*"
    # folder names never scanned (their contents are neither watched nor put back)
    skip_dirs: list[str] = msgspec.field(default_factory=lambda: [".git", "node_modules", ".venv", "__pycache__"])
    # project paths in a skipped folder that are scanned all the same: what git runs by itself
    # (the programs its config names, its hooks) is a protected file like any other
    # (and a submodule's repository, a worktree's own folder: their config and hooks, which a git
    # command of the project runs too)
    skip_except: list[str] = msgspec.field(default_factory=lambda: [
        ".git/config", ".git/config.worktree", ".git/hooks", ".git/modules", ".git/worktrees"])
    # folder names not scanned below the paths of skip_except: git's own data in a submodule's repository
    skip_below_except: list[str] = msgspec.field(default_factory=lambda: [
        "objects", "refs", "logs", "lfs", "info", "branches", "rr-cache"])
    # the self-protection rules' places outside the project that are not read around a call (the
    # syntax gates alone keep them): what a runtime or hookgate writes itself, during calls too
    # (Claude Code's ~/.claude.json, its shell snapshots and session environments, the plugins
    # Claude Code and Codex update; hookgate's own state), and hookgate's install (its package,
    # its site-packages, the standard library: thousands of files, too many to list around every call)
    skip_outside: list[str] = msgspec.field(default_factory=lambda: [
        "~/.claude.json", "$CLAUDE_CONFIG_DIR/.claude.json", "~/.claude/session-env/*", "~/.claude/shell-snapshots/*",
        "$CLAUDE_CONFIG_DIR/session-env/*", "$CLAUDE_CONFIG_DIR/shell-snapshots/*", "~/.claude/plugins/*",
        "$CLAUDE_CONFIG_DIR/plugins/*", "~/.codex/plugins/*", "$CODEX_HOME/plugins/*", "~/.local/state/hookgate/*",
        "$XDG_STATE_HOME/hookgate/*", "$HOOKGATE_INSTALL/*", "$HOOKGATE_SITE/*", "$HOOKGATE_STDLIB/*"])
    # a protected folder outside the project with more files than this is not listed around a call
    # (the syntax gates alone keep it; hookgate doctor names it)
    outside_max_files: int = 2000
    max_file_bytes: int = 16 * 1024 * 1024  # a larger protected file is watched, but no copy is kept
    max_blobs: int = 50_000  # kept copies before those nothing refers to are removed
    # the settings a runtime writes itself when the user answers a permission prompt ("don't ask
    # again": Claude Code adds the rule to the project's settings), and the top-level keys it
    # writes there: a change of those keys alone, made while a call of the session was asked about
    # (its PermissionRequest), is the answer's and stands; any other change is put back
    answer_keys: dict[str, list[str]] = msgspec.field(default_factory=lambda: {
        ".claude/settings.local.json": ["permissions"], ".claude/settings.json": ["permissions"]})
    # how long a write hookgate allowed, or a running call, excuses changes when its after-event
    # never comes (a runtime killed mid-call)
    ledger_seconds: float = 600.0
    # a process that decides the calls of a session (the OpenCode core, a warm core for its forks)
    # follows a change feed of the project (Linux inotify, effect/feed.py) and looks again only at
    # what it saw touched
    feed: bool = True


class Config(_Strict, frozen=True):
    preset: str = "godot"
    # "godotmaker": keep the pipeline state in GodotMaker's `.godotmaker/`, in its formats
    # (store/layout.py); without it, a project with `.godotmaker/` and no `.hookgate/` is one too
    compat: Literal["godotmaker"] | None = None
    mode: Mode = "enforce"  # monitor: every gate decides and records, none stops the agent
    state_dir: str | None = None
    gates: dict[str, GateSettings] = {}
    pipeline: Pipeline = Pipeline()
    policies: Policies = Policies()
    effect: Effect = Effect()
    explain: Explain = Explain()
    otel: Otel = Otel()
