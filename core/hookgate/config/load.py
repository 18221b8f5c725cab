"""Config = the preset named in `.hookgate/config.toml`, with that file's tables merged over it
(tables merge key by key; any other value, lists included, replaces the preset's).

A valid config is cached (cache.py), keyed on the config file, the presets and the code that
reads and checks them: a hook call then decodes one small file instead of parsing TOML and
compiling every rule's regular expression again. Its class `runtime_scripts` is filled from the
runtimes' settings (runtime_scripts.py), cached the same way on those files."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Callable

import msgspec

from ..errors import ConfigError
from ..store.project import HOOKGATE_DIR, Project
from . import runtime_scripts
from .cache import FileCache
from .schema import (REPORT_CHECK_NAMES, STAGE_CHECK_NAMES, Config, GateSettings, PathRule, Pipeline, Prerequisite,
                     ReportFormat, RuleSet, StageSchema)

PRESETS = ("godot", "none")
PRESET_DIR = Path(__file__).resolve().parent.parent / "presets"
# what a valid config depends on besides the config file itself: the presets it reads, and the
# code that reads and checks it (an editable install changes without a new version)
_PACKAGE = PRESET_DIR.parent
PRESET_FILES = tuple(PRESET_DIR / f"{name}.toml" for name in PRESETS if name != "none")
CODE = tuple(_PACKAGE / module for module in ("config/load.py", "config/schema.py", "pipeline/report_checks.py",
                                              "pipeline/stage_checks.py"))
DEPENDS = (*PRESET_FILES, *CODE)
_configs = FileCache("config", Config)
# the scripts the commands of the settings files a config names run (runtime_scripts.py), and each
# config as load_config gives it, with them: (the config, the scripts, both), one object while
# neither changes
_scripts = FileCache("runtime-scripts", list[str])
SCRIPTS_CODE = (_PACKAGE / "config" / "runtime_scripts.py",)
_with_scripts: dict[str, tuple[Config, list[str], Config]] = {}
# the pipeline tables name the folder of the pipeline state `{state}`: `.hookgate` in hookgate's
# own layout, `.godotmaker` in GodotMaker's (store/layout.py), so one preset serves both
STATE_TOKEN = "{state}"
DEFAULT_STATE = ".hookgate"


def load_config(path: Path, state: str = DEFAULT_STATE) -> Config:
    """Raises ConfigError naming the file and the field."""
    key = str(path) if state == DEFAULT_STATE else f"{path}|{state}"
    config = _configs.get(key, (path, *PRESET_FILES), lambda: _load_config(path, state), CODE)
    root = path.parent.parent
    settings = _command_settings(config, root)
    if not settings:
        return config
    scripts = _scripts.get(f"{root}\0{os.environ.get('HOME')}", settings,
                           lambda: runtime_scripts.script_patterns(settings, root), SCRIPTS_CODE)
    held = _with_scripts.get(key)
    if held is None or held[0] is not config or held[1] is not scripts:
        held = _with_scripts[key] = (config, scripts, _with_runtime_scripts(config, scripts))
    return held[2]


def _with_runtime_scripts(config: Config, scripts: list[str]) -> Config:
    """`config` with its path class `runtime_scripts` holding the scripts its command settings run
    too (the config's own entries first): the rules that name the class protect them."""
    if not scripts:
        return config
    paths = config.pipeline.paths
    pipeline = msgspec.structs.replace(config.pipeline, paths={
        **paths, runtime_scripts.CLASS: [*paths.get(runtime_scripts.CLASS, []), *scripts]})
    return msgspec.structs.replace(config, pipeline=pipeline)


def open_project(root: Path) -> tuple[Project, Config]:
    """The project at `root` and its config, the layout decided once from both: the config may
    say `compat`, the layout says where the pipeline state lives, and the rules then name it."""
    config = load_config(root / HOOKGATE_DIR / "config.toml")
    project = Project.open(root, config.compat, config.state_dir)
    if project.layout.dir != DEFAULT_STATE:
        config = load_config(project.config_path, project.layout.dir)
    return project, config


def project_at(where: Path | None) -> Project:
    """For the commands a person runs (`role`, `stage`, `metrics`): the project at `where`, else
    the one found from the working directory, laid out as its config says; a config that cannot
    be read leaves the layout the folders show."""
    root = where.resolve() if where else Project.find(None).root
    try:
        return open_project(root)[0]
    except ConfigError:
        return Project.open(root)


def config_inputs(project: Project, config: Config) -> tuple[Path, ...]:
    """The files `config` was read from in `project`: its config file and the runtimes' settings
    whose commands fill the path class `runtime_scripts`."""
    return tuple(dict.fromkeys((project.config_path, *_command_settings(config, project.root))))


def config_as_read(project: Project, read: "Callable[[Path], bytes | None]") -> Config:
    """The config of `project` from the bytes `read` gives for each of its files (None: not
    there), as load_config reads it from disk: the config a call began under, from the copies the
    effect check kept (effect/begun.py). Not cached."""
    path = project.config_path
    data = read(path)
    config = _config_of(_toml(data, path) if data is not None else {}, path, project.layout.dir)
    settings = _command_settings(config, project.root)
    return _with_runtime_scripts(config, runtime_scripts.script_patterns(settings, project.root, read=read))


def _command_settings(config: Config, root: Path) -> tuple[Path, ...]:
    """The runtimes' settings files whose commands' scripts `config` protects (none with the
    protection off)."""
    protect = config.pipeline.protect
    return runtime_scripts.settings_files(protect.command_settings, root) if protect.enabled else ()


def _load_config(path: Path, state: str = DEFAULT_STATE) -> Config:
    return _config_of(_read_toml(path) if path.is_file() else {}, path, state)


def _config_of(user: dict[str, Any], path: Path, state: str) -> Config:
    preset = user.get("preset", "godot")
    if preset not in PRESETS:
        raise ConfigError(f"unknown preset {preset!r} at `$.preset`; known: {', '.join(PRESETS)}", str(path))
    merged = _merge(preset_data(preset), user)
    if "pipeline" in merged:
        merged["pipeline"] = _placed(merged["pipeline"], state)
    try:
        config = msgspec.convert(merged, Config)
    except msgspec.ValidationError as exc:
        raise ConfigError(_pinpoint(merged) or str(exc), str(path)) from None
    _check_references(config, str(path))
    return config


def preset_config(name: str = "godot", state: str = DEFAULT_STATE) -> Config:
    """A preset as it stands, with no project config over it."""
    data = preset_data(name)
    if "pipeline" in data:
        data["pipeline"] = _placed(data["pipeline"], state)
    return msgspec.convert(data, Config)


def _placed(value: Any, state: str) -> Any:
    """`value` with every `{state}` naming the folder the pipeline state lives in."""
    if isinstance(value, str):
        return value.replace(STATE_TOKEN, state)
    if isinstance(value, dict):
        return {key: _placed(item, state) for key, item in value.items()}
    if isinstance(value, list):
        return [_placed(item, state) for item in value]
    return value


def preset_data(name: str) -> dict[str, Any]:
    if name == "none":
        return {}
    return msgspec.toml.decode((PRESET_DIR / f"{name}.toml").read_bytes(), type=dict[str, Any])


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror}", str(path)) from None
    return _toml(data, path)


def _toml(data: bytes, path: Path) -> dict[str, Any]:
    try:
        return msgspec.toml.decode(data, type=dict[str, Any])
    except (msgspec.DecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"not valid TOML: {exc}", str(path)) from None


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


# tables keyed by a name the user chose: msgspec reports an error in them as `[...]`
_NAMED_TABLES: tuple[tuple[tuple[str, ...], type], ...] = (
    (("gates",), GateSettings),
    (("pipeline", "roles"), RuleSet),
    (("pipeline", "subagents", "types"), RuleSet),
    (("pipeline", "paths"), list[str]),
    (("pipeline", "role_prefixes"), list[str]),
    (("pipeline", "stage_schemas"), StageSchema),
    (("pipeline", "role_next"), str),
    (("pipeline", "prerequisites"), Prerequisite),
    (("pipeline", "reports"), ReportFormat),
)


def _pinpoint(merged: dict[str, Any]) -> str | None:
    """Name the entry of a named table that fails, e.g. `$.gates.check_file_permissions.fail_mod`."""
    for keys, entry_type in _NAMED_TABLES:
        table: Any = merged
        for key in keys:
            table = table.get(key, {}) if isinstance(table, dict) else {}
        if not isinstance(table, dict):
            continue
        for name, entry in table.items():
            try:
                msgspec.convert(entry, entry_type)
            except msgspec.ValidationError as exc:
                where = "$." + ".".join(keys) + f".{name}"
                return str(exc).replace("`$", f"`{where}") if "`$" in str(exc) else f"{exc} - at `{where}`"
    return None


def _check_references(config: Config, source: str) -> None:
    """Every "@name" must name a path class, and every rule must say allow or deny."""
    pipeline = config.pipeline

    def check_rules(rules: list[PathRule], where: str) -> None:
        for i, rule in enumerate(rules):
            at = f"{where}[{i}]"
            if (rule.allow is None) == (rule.deny is None):
                raise ConfigError(f"a rule needs exactly one of `allow` or `deny` - at `{at}`", source)
            if rule.deny is not None and not rule.reason:
                raise ConfigError(f"a deny rule needs a `reason` - at `{at}`", source)
            for pattern in rule.allow or rule.deny or []:
                if pattern.startswith("@") and pattern[1:] not in pipeline.paths:
                    raise ConfigError(
                        f"unknown path class {pattern!r} - at `{at}`; known: {', '.join(sorted(pipeline.paths))}",
                        source,
                    )

    def check_set(rule_set: RuleSet, where: str) -> None:
        check_rules(rule_set.rules, f"{where}.rules")

    for role, rule_set in pipeline.roles.items():
        check_set(rule_set, f"$.pipeline.roles.{role}")
    check_rules(pipeline.subagents.always, "$.pipeline.subagents.always")
    check_rules(pipeline.protect.rules, "$.pipeline.protect.rules")
    for kind, rule_set in pipeline.subagents.types.items():
        check_set(rule_set, f"$.pipeline.subagents.types.{kind}")
    _check_pipeline_names(pipeline, source)


def _check_pipeline_names(pipeline: Pipeline, source: str) -> None:
    """Every name the pipeline tables use must exist where it points: roles, checks, path classes.
    Paired tables must name the same roles (a role without its next step is a drift)."""
    def fail(message: str, where: str) -> None:
        raise ConfigError(f"{message} - at `{where}`", source)

    def known(names: Any, allowed: Any, what: str, where: str) -> None:
        for name in names:
            if name not in allowed:
                fail(f"unknown {what} {name!r}; known: {', '.join(sorted(allowed)) or '(none)'}", where)

    subagent_roles = pipeline.known_subagent_roles
    known(pipeline.role_prefixes, subagent_roles, "subagent role", "$.pipeline.role_prefixes")
    known(pipeline.reports, subagent_roles, "subagent role", "$.pipeline.reports")
    known(pipeline.diagnosed_roles, subagent_roles, "subagent role", "$.pipeline.diagnosed_roles")
    for role, fmt in pipeline.reports.items():
        where = f"$.pipeline.reports.{role}"
        for i, name in enumerate(fmt.checks):
            known([name], REPORT_CHECK_NAMES, "report check", f"{where}.checks[{i}]")
        regexes = [("pattern", fmt.pattern), ("fallback", fmt.fallback)]
        regexes += [(f"sections[{i}].pattern", s.pattern) for i, s in enumerate(fmt.sections)]
        for field, regex in regexes:
            _check_regex(regex, f"{where}.{field}", source)
        known(fmt.substantive_sections, [s.name for s in fmt.sections], "section", f"{where}.substantive_sections")
    checks = pipeline.report_checks
    for i, regex in enumerate(checks.test_substance):
        _check_regex(regex, f"$.pipeline.report_checks.test_substance[{i}]", source)
    _check_regex(checks.unit_test, "$.pipeline.report_checks.unit_test", source)
    if pipeline.completion.dispatched:
        known([pipeline.completion.dispatched, *pipeline.completion.requires], subagent_roles,
              "subagent role", "$.pipeline.completion")
    known([f[1:] for f in pipeline.asset_read.folders if f.startswith("@")], pipeline.paths, "path class",
          "$.pipeline.asset_read.folders")
    for role, schema in pipeline.stage_schemas.items():
        for i, check in enumerate(schema.checks):
            known([check], STAGE_CHECK_NAMES, "check", f"$.pipeline.stage_schemas.{role}.checks[{i}]")
    if set(pipeline.role_next) != set(pipeline.stage_schemas):
        missing = sorted(set(pipeline.stage_schemas) - set(pipeline.role_next))
        extra = sorted(set(pipeline.role_next) - set(pipeline.stage_schemas))
        fail(f"must name exactly the roles of stage_schemas (missing: {missing or 'none'}, "
             f"not a stage role: {extra or 'none'})", "$.pipeline.role_next")
    if pipeline.prerequisites and set(pipeline.prerequisites) != set(pipeline.worker_dispatch_roles):
        fail(f"must name exactly the worker_dispatch_roles {pipeline.worker_dispatch_roles}",
             "$.pipeline.prerequisites")
    for role, prerequisite in pipeline.prerequisites.items():
        known([prerequisite.after], pipeline.stage_schemas, "stage role", f"$.pipeline.prerequisites.{role}.after")


def _check_regex(regex: str, where: str, source: str) -> None:
    try:
        re.compile(regex)
    except re.error as exc:
        raise ConfigError(f"invalid regular expression {regex!r} ({exc}) - at `{where}`", source) from None
