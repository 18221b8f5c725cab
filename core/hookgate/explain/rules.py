"""Which rule of the policy a refusal came from, by file and key, and what it would allow instead.

One finder per gate family, chosen by gate id (FINDERS); a gate with none is named by its own
settings (`[gates.ID]`). Config entries are attributed to the file that sets them: the project's
config.toml when it has the key (its tables merge over the preset key by key, lists replace),
else the preset file.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import msgspec

from ..config.load import PRESET_DIR, open_project, preset_config
from ..config.schema import Config, PathRule, RuleSet
from ..errors import ConfigError
from ..pipeline.paths import matches
from ..pipeline.rules import expand
from ..store.project import Project

if TYPE_CHECKING:
    from . import Call


@dataclass
class Rule:
    what: str  # e.g. "the write rule of role build", "hooks.json handler `sh check.sh`"
    file: str  # the file that holds it, relative to the project where it is inside
    key: str = ""  # its key in that file (a TOML path, a JSON path, a hook id)
    detail: str = ""  # the entry itself, as written
    instead: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if k != "instead"}


class PolicyFiles:
    """The project's policy files (its config, its stage schemas, the preset), read once for one
    explanation, to name the file and key a rule comes from."""

    def __init__(self, root: Path) -> None:
        self.root = root
        where = Project.open(root)  # where the files are, also when the config does not load
        self.config_path = where.config_path
        self.schemas_path = where.schemas_path
        try:
            self.user: dict[str, Any] = msgspec.toml.decode(self.config_path.read_bytes()) if self.config_path.is_file() else {}
        except (OSError, msgspec.DecodeError):
            self.user = {}
        try:
            project, self.config = open_project(root)
            self.schemas_path = project.schemas_path
        except ConfigError:
            self.config = preset_config()
        self.preset = str(self.user.get("preset", "godot"))

    def file_of(self, key: str) -> str:
        """config.toml when the project sets `key` (or a table above the list it is in), else the preset."""
        node: Any = self.user
        for part in re.findall(r"[^.\[\]]+", key.split("[")[0]):
            if not isinstance(node, dict) or part not in node:
                return self._preset_file()
            node = node[part]
        return self._rel(self.config_path)

    def _preset_file(self) -> str:
        return f"preset {self.preset} ({PRESET_DIR / f'{self.preset}.toml'})"

    def _rel(self, path: Path) -> str:
        try:
            return str(path.relative_to(self.root))
        except ValueError:
            return str(path)


def find_rule(gate_id: str, call: "Call", root: Path, subagent_role: str | None) -> Rule:
    policy = PolicyFiles(root)
    decision = call.decision
    if gate_id in decision.get("failed", []):
        return _gate_settings(policy, gate_id, f"gate {gate_id} failed and fails closed")
    if gate_id in decision.get("forced", []):
        return _gate_settings(policy, gate_id, f"the block limit of {gate_id} (spent: released unverified)")
    for prefix, finder in FINDERS:
        if gate_id == prefix or gate_id.startswith(prefix + "."):
            found = finder(policy, gate_id, call, subagent_role)
            if found is not None:
                return found
    return _gate_settings(policy, gate_id, f"gate {gate_id}")


def _gate_settings(policy: PolicyFiles, gate_id: str, what: str) -> Rule:
    key = f"gates.{gate_id}"
    return Rule(what=what, file=policy.file_of(key), key=key)


# -- the pipeline's write rules ------------------------------------------------------------------

def _write_rules(policy: PolicyFiles, gate_id: str, call: "Call", subagent_role: str | None) -> Rule | None:
    event = call.decision.get("call", {})
    role = call.decision.get("role")
    pipeline = policy.config.pipeline
    # what the call wrote (Write, Edit, a shell write), or what the effect check put back after it
    paths = [r["path"] for r in call.records if r.get("event") in ("file_write", "file_edit", "file_delete",
                                                                     "write_reverted") and r.get("path")]
    if not paths:
        given = (event.get("tool_input") or {}).get("file_path")
        paths = [given] if isinstance(given, str) else []
    cwd = event.get("cwd") or str(policy.root)
    for path in paths:
        rel = _project_relative(path, cwd, policy.root)
        for key, rule_set in _rule_sets(pipeline, role, event, subagent_role):
            for index, rule in enumerate(rule_set.rules):
                patterns = expand(rule.allow or rule.deny or [], pipeline.paths)
                if any(matches(rel, p) for p in patterns):
                    if rule.deny is None:
                        break  # allowed by this rule set; a later one refused
                    listed = key if key == _ALWAYS else f"{key}.rules"  # `always` is a list of rules itself
                    entry = f"{listed}[{index}]"
                    return Rule(what=f"the write rule {entry} (path {rel})", file=policy.file_of(listed),
                                key=entry, detail=_rule_text(rule), instead=_allowed(rule_set, pipeline.paths, key))
            else:
                if rule_set.otherwise is not None:
                    entry = f"{key}.otherwise"
                    return Rule(what=f"the rule for paths no rule of {key} names (path {rel})",
                                file=policy.file_of(entry), key=entry, detail=repr(rule_set.otherwise),
                                instead=_allowed(rule_set, pipeline.paths, key))
    return None


_ALWAYS = "pipeline.subagents.always"


def _rule_sets(pipeline: Any, role: str | None, event: dict[str, Any], subagent_role: str | None) -> list[tuple[str, RuleSet]]:
    if not event.get("agent_id"):
        if role in pipeline.roles:
            return [(f"pipeline.roles.{role}", pipeline.roles[role])]
        return [("pipeline.roles.*", pipeline.roles["*"])] if "*" in pipeline.roles else []
    kind = subagent_role or event.get("agent_type") or ""
    sets = [(_ALWAYS, RuleSet(rules=pipeline.subagents.always))]
    if kind in pipeline.subagents.types:
        sets.append((f"pipeline.subagents.types.{kind}", pipeline.subagents.types[kind]))
    elif "*" in pipeline.subagents.types:
        sets.append(("pipeline.subagents.types.*", pipeline.subagents.types["*"]))
    return sets


def _rule_text(rule: PathRule) -> str:
    side = "deny" if rule.deny is not None else "allow"
    return json.dumps({side: rule.deny if rule.deny is not None else rule.allow, "reason": rule.reason})


def _allowed(rule_set: RuleSet, classes: dict[str, list[str]], key: str) -> list[str]:
    allows = [p for rule in rule_set.rules if rule.allow for p in expand(rule.allow, classes)]
    out = [f"writes to paths {key} allows: {', '.join(allows)}"] if allows else []
    if rule_set.otherwise is None:
        out.append(f"writes to any path no deny rule of {key} names")
    if key.startswith("pipeline.roles."):
        out.append("the same write from a subagent of a role its rules allow (dispatch one)")
    return out


def _project_relative(path: str, cwd: str, root: Path) -> str:
    absolute = os.path.normpath(os.path.join(cwd, path))
    prefix = str(root) + os.sep
    return absolute[len(prefix):].lower() if absolute.startswith(prefix) else absolute.lower()


# -- the other pipeline gates ---------------------------------------------------------------------

def _asset_rule(policy: PolicyFiles, gate_id: str, call: "Call", subagent_role: str | None) -> Rule:
    asset = policy.config.pipeline.asset_read
    key = "pipeline.asset_read"
    return Rule(what="the asset read rule (the lead may not read these while a role is active)",
                file=policy.file_of(key), key=key,
                detail=json.dumps({"folders": asset.folders, "extensions": asset.extensions}),
                instead=["reading the file from a subagent (e.g. an analyst)",
                         "reading it with no pipeline role active (`hookgate role clear`)",
                         f"reading files outside {', '.join(asset.folders)} or with other extensions"])


def _prerequisite_rule(policy: PolicyFiles, gate_id: str, call: "Call", subagent_role: str | None) -> Rule | None:
    role = call.decision.get("role") or ""
    prerequisite = policy.config.pipeline.prerequisites.get(role)
    if prerequisite is None:
        return None
    key = f"pipeline.prerequisites.{role}"
    schema = policy.config.pipeline.stage_schemas.get(prerequisite.after)
    files = [*prerequisite.files, *(schema.files if schema else [])]
    return Rule(what=f"the prerequisites of role {role}", file=policy.file_of(key), key=key,
                detail=json.dumps({"after": prerequisite.after, "files": prerequisite.files}),
                instead=[f"the dispatch once `{prerequisite.after}` is complete (`hookgate stage complete "
                         f"{prerequisite.after}`) and these files exist: {', '.join(files) or '-'}"])


_STAGE_ROLE = re.compile(r'"role"\s*:\s*"([^"]+)"')


def _stage_rule(policy: PolicyFiles, gate_id: str, call: "Call", subagent_role: str | None) -> Rule | None:
    content = ((call.decision.get("call") or {}).get("tool_input") or {})
    text = " ".join(v for v in content.values() if isinstance(v, str))
    named = _STAGE_ROLE.findall(text)
    checks = [r for r in call.records if r.get("event") == "gate_check"]
    role = named[-1] if named else (checks[-1]["gate"].removeprefix("role_") if checks else None)
    if role is None:
        return None
    schemas = policy.schemas_path
    key = f"pipeline.stage_schemas.{role}"
    where = policy.file_of(key)
    try:
        if role in json.loads(schemas.read_text()):
            where, key = policy._rel(schemas), role
    except (OSError, ValueError, TypeError):
        pass
    schema = policy.config.pipeline.stage_schemas.get(role)
    issues = [i for r in checks for i in (r.get("issues") or [])]
    return Rule(what=f"the stage schema of role {role}", file=where, key=key,
                detail=json.dumps({"files": schema.files, "checks": schema.checks}) if schema else "",
                instead=[f"the completion of {role} once its schema holds"
                         + (f" (still failing: {'; '.join(map(str, issues))})" if issues else ""),
                         f"`hookgate stage complete {role}`, which validates and appends it"])


def _report_rule(policy: PolicyFiles, gate_id: str, call: "Call", subagent_role: str | None) -> Rule | None:
    reports = policy.config.pipeline.reports
    role = subagent_role or (call.decision.get("call") or {}).get("agent_type") or ""
    if role not in reports:
        return None
    key = f"pipeline.reports.{role}"
    fmt = reports[role]
    sections = [s.name for s in fmt.sections]
    return Rule(what=f"the report format of subagent role {role}", file=policy.file_of(key), key=key,
                detail=json.dumps({"sections": sections, "outcome_block": fmt.outcome_block, "checks": fmt.checks}),
                instead=[f"a report with the sections {', '.join(sections)}"
                         + (" and a machine outcome block" if fmt.outcome_block else "")])


def _completion_rule(policy: PolicyFiles, gate_id: str, call: "Call", subagent_role: str | None) -> Rule:
    completion = policy.config.pipeline.completion
    key = "pipeline.completion"
    return Rule(what="the completion rule of worker-dispatch roles", file=policy.file_of(key), key=key,
                detail=json.dumps({"dispatched": completion.dispatched, "requires": completion.requires}),
                instead=[f"stopping once these roles ran after the {completion.dispatched}: "
                         f"{', '.join(completion.requires)}"])


# -- the user's own hooks -----------------------------------------------------------------------

def _command_hook(policy: PolicyFiles, gate_id: str, call: "Call", subagent_role: str | None) -> Rule | None:
    blocks = [r for r in call.records if r.get("event") == "command_hook_block"]
    if not blocks:
        return None
    block = blocks[0]
    file = block.get("file") or ""
    try:
        file = str(Path(file).relative_to(policy.root))
    except ValueError:
        pass
    return Rule(what=f"hooks.json handler `{block.get('command')}`", file=file, key=block.get("where", ""),
                detail=json.dumps({"matcher": block.get("matcher"), "command": block.get("command")}),
                instead=[f"a call its matcher {block.get('matcher')!r} does not match, or one the command lets through"])


def _python_hook(policy: PolicyFiles, gate_id: str, call: "Call", subagent_role: str | None) -> Rule | None:
    denied = [r for r in call.records if r.get("event") == "hook_denied"]
    if not denied:
        return None
    hook = str(denied[0].get("hook"))
    file, line = _registration(policy.root, hook)
    return Rule(what=f"Python hook `{hook}` ({denied[0].get('hook_event')})", file=file, key=hook,
                detail=f"line {line}" if line else "",
                instead=[f"a call the matcher of `{hook}` does not match (see its register_hook call)"])


def _registration(root: Path, hook: str) -> tuple[str, int | None]:
    """The policy file (and line) whose register_hook names this id."""
    quoted = re.compile(rf"""register_hook\(\s*(?:f?["']){re.escape(hook)}["']""")
    for path in sorted((root / ".hookgate" / "policies").glob("*.py")):
        try:
            for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
                if quoted.search(line):
                    return str(path.relative_to(root)), number
        except OSError:
            continue
    return "a module of [policies] modules, or a policy file", None


def _protected_command(policy: PolicyFiles, gate_id: str, call: "Call", subagent_role: str | None) -> Rule:
    key = "pipeline.protect.commands"
    commands = ", ".join(f"hookgate {name}" for name in policy.config.pipeline.protect.commands)
    return Rule(what=f"self-protection: no agent runs {commands} while a role is active", file=policy.file_of(key),
                key=key, detail=policy.config.pipeline.protect.command_reason)


FINDERS: tuple[tuple[str, Callable[..., Rule | None]], ...] = (
    ("check_file_permissions", _write_rules),
    ("check_shell_writes", _write_rules),
    ("effect_restore", _write_rules),
    ("check_hookgate_commands", _protected_command),
    ("check_asset_access", _asset_rule),
    ("check_stage_prerequisites", _prerequisite_rule),
    ("stage_reminder", _stage_rule),
    ("check_worker_report", _report_rule),
    ("check_completion", _completion_rule),
    ("command_hooks", _command_hook),
    ("python_hooks", _python_hook),
)
