"""Stages (seed 000 stage_reminder and check_stage_prerequisites): a role's completion enters
`.hookgate/stage.jsonl` only after its outputs were validated, and a worker-dispatch role may not
dispatch before the role it builds on has completed.

Every way of appending meets the same validation: a Write/Edit of stage.jsonl (stage_reminder),
`hookgate stage complete ROLE` (which appends itself), and never a shell command (the shell-write
gate blocks those). A stage schema that cannot be read blocks: it never means "nothing to check".
"""

from __future__ import annotations

from typing import Any, Iterable

import msgspec

from ..config.schema import Pipeline, StageSchema
from ..engine.context import Context
from ..errors import ConfigError
from ..model.events import Event, ToolEvent
from ..model.tools import changed_path
from ..model.verdicts import Block, Context as ContextVerdict, Verdict
from ..store.project import Project
from .paths import event_readings

_override_decoder = msgspec.json.Decoder()


def stage_schemas(project: Project, pipeline: Pipeline) -> dict[str, StageSchema]:
    """The config's stage schemas, each role named in `.hookgate/stage_schemas.json` replaced by
    that file's entry. Raises ConfigError naming the file and the field."""
    from .stage_checks import STAGE_CHECKS  # loaded only when a stage completion is validated

    schemas = dict(pipeline.stage_schemas)
    path = project.schemas_path
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return schemas
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror}", str(path)) from None
    try:
        entries = _override_decoder.decode(raw)
    except msgspec.DecodeError as exc:
        raise ConfigError(f"not valid JSON: {exc}", str(path)) from None
    if not isinstance(entries, dict):
        raise ConfigError(f"expected an object of role -> {{files, checks}}, got {type(entries).__name__} - at `$`",
                          str(path))
    override: dict[str, StageSchema] = {}
    for role, value in entries.items():
        try:
            override[role] = msgspec.convert(value, StageSchema)
        except msgspec.ValidationError as exc:
            message = str(exc)
            raise ConfigError(message.replace("`$", f"`$.{role}") if "`$" in message else f"{message} - at `$.{role}`",
                              str(path)) from None
        for i, check in enumerate(override[role].checks):
            if check not in STAGE_CHECKS:
                raise ConfigError(f"unknown check {check!r} - at `$.{role}.checks[{i}]`; known: "
                                  f"{', '.join(STAGE_CHECKS)}", str(path))
    schemas.update(override)
    return schemas


def validate_stage(project: Project, schema: StageSchema) -> list[str]:
    """What keeps this role from being complete; [] when its files exist and its checks pass."""
    from .stage_checks import STAGE_CHECKS

    issues = [f"Required file missing: {name}" for name in schema.files if not project.path(name).exists()]
    for name in schema.checks:
        issues.extend(STAGE_CHECKS[name](project.root, project.layout.dir))
    return issues


def next_step(pipeline: Pipeline, role: str) -> str | None:
    step = pipeline.role_next.get(role)
    return f"[Role '{role}' complete] Next: {step}" if step else None


def stage_log_name(project: Project) -> str:
    """The stage log as its rules name it, relative to the root (`.hookgate/stage.jsonl`)."""
    return f"{project.layout.dir}/{project.layout.stage_log}"


def refusal(roles: list[str], issues: Iterable[str], stage_log: str) -> str:
    if roles:
        what = f"role '{roles[0]}'" if len(roles) == 1 else "roles " + ", ".join(f"'{r}'" for r in roles)
        what += " as complete"
    else:
        what = f"this change of {stage_log}"
    return f"Cannot mark {what} - validation failed:\n" + "\n".join(f"  - {issue}" for issue in issues)


# -- stage_reminder: a Write/Edit appending to stage.jsonl -----------------------------------

def stage_reminder(event: Event, ctx: Context) -> Verdict | None:
    path = changed_path(event)
    if path is None or not is_stage_log(path, event, ctx):
        return None
    try:
        schemas = stage_schemas(ctx.project, ctx.config.pipeline)
    except ConfigError as exc:
        return Block(reason=f"hookgate cannot validate stage completions: {exc}")
    entries, issues = _new_entries(event, ctx.project)
    roles: list[str] = []
    for entry in entries:
        role = entry["role"]
        if role not in schemas:
            issues.append(f"unknown role {role!r}; stage roles: {', '.join(schemas)}")
        elif role not in roles:
            roles.append(role)
    for role in roles:
        role_issues = validate_stage(ctx.project, schemas[role])
        ctx.record("gate_check", gate=f"role_{role}", result="fail" if role_issues else "complete",
                   issues=role_issues or None)
        issues.extend(role_issues)
    if issues:
        return Block(reason=refusal(roles, issues, stage_log_name(ctx.project)))
    for role in roles:
        ctx.record("stage_complete", role=role, via=getattr(event, "tool_name", None))
    hint = next_step(ctx.config.pipeline, roles[-1]) if roles else None
    return ContextVerdict(context=hint) if hint else None


def is_stage_log(path: str, event: Event, ctx: Context) -> bool:
    return stage_log_name(ctx.project) in event_readings(path, event, ctx)


def _new_entries(event: Event, project: Project) -> tuple[list[dict[str, Any]], list[str]]:
    """The stage entries this call adds (lines not already in the log or the replaced text),
    and what is malformed about them. Every added line must be one {"role", "ts"} object."""
    tool_input = event.tool_input if isinstance(event, ToolEvent) else {}
    edits: list[Any] = tool_input["edits"] if isinstance(tool_input.get("edits"), list) else [tool_input]
    known = {line.strip() for line in project.stage_path.read_text(errors="replace").splitlines()} \
        if project.stage_path.exists() else set()
    entries: list[dict[str, Any]] = []
    issues: list[str] = []
    for edit in edits:
        if not isinstance(edit, dict):
            continue
        added = edit.get("content") if "content" in edit else edit.get("new_string")
        replaced = edit.get("old_string") or ""
        old_lines = known | {line.strip() for line in replaced.splitlines()}
        for line in str(added or "").splitlines():
            line = line.strip()
            if not line or line in old_lines:
                continue
            try:
                entry = msgspec.json.decode(line)
            except msgspec.DecodeError:
                entry = None
            if isinstance(entry, dict) and isinstance(entry.get("role"), str) and isinstance(entry.get("ts"), str):
                entries.append(entry)
            else:
                issues.append(f'not a stage entry {{"role": ..., "ts": ...}}: {line[:120]}')
    return entries, issues


# -- check_stage_prerequisites: an Agent dispatch by a worker-dispatch role -------------------

def check_stage_prerequisites(event: Event, ctx: Context) -> Verdict | None:
    if event.in_subagent:
        return None  # only the lead's own dispatches; a subagent's subagents are its business
    pipeline = ctx.config.pipeline
    role = ctx.current_role()
    prerequisite = pipeline.prerequisites.get(role or "")
    if prerequisite is None:
        return None
    try:
        schemas = stage_schemas(ctx.project, pipeline)
    except ConfigError as exc:
        return Block(reason=f"hookgate cannot check the prerequisites of '{role}': {exc}")
    after = prerequisite.after
    issues = [f"{name} not found" for name in prerequisite.files if not ctx.project.path(name).exists()]
    if after not in ctx.project.completed_roles():
        issues.append(f"Role '{after}' has not completed yet (no '{after}' entry in {stage_log_name(ctx.project)})")
    issues += [f"{after} output missing: {name}" for name in schemas.get(after, StageSchema()).files
               if not ctx.project.path(name).exists()]
    if not issues:
        return None
    return Block(reason=f"Cannot dispatch worker - '{role}' role prerequisites missing:\n"
                 + "\n".join(f"  - {issue}" for issue in issues))
