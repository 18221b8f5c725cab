"""What a `hookgate doctor` check gets and returns, and the checks of the core itself.

A check gets the Setup (project folder, environment) and returns Findings: a status, what it
found and, for a problem, the exact command or edit that fixes it. Each runtime's plug keeps its
own checks beside its installer (`hookgate_<runtime>.checks`: CHECKS, and `installs` for the
check that hookgate is registered once); `hookgate doctor` (cli/doctor.py) runs them all.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass, field
from importlib import import_module
from pathlib import Path
from typing import Callable, Iterable, Literal, Mapping

from .runtimes import PLUGS

Status = Literal["ok", "fail", "info"]


@dataclass(frozen=True)
class Setup:
    project: Path
    env: Mapping[str, str]


@dataclass(frozen=True)
class Finding:
    status: Status
    message: str
    fix: str = ""


Check = Callable[[Setup], Iterable[Finding]]


@dataclass(frozen=True)
class Installs:
    """Where a runtime's hookgate registration can be (the project's and the user's file), how to
    read the (event, command) pairs registered there, and whether the runtime runs an identical
    command once (Claude Code) or every handler it finds (Codex, OpenCode's plugin files)."""

    project_file: Path
    user_file: Path
    commands: Callable[[Path], list[tuple[str, str]]]
    identical_once: bool


def reinstall(runtime: str, where: str, project: Path) -> str:
    return f"hookgate install {runtime} " + ("--user" if where == "user" else f"--project {shlex.quote(str(project))}")


def missing_command(command: str) -> str | None:
    """The program a registered hook command starts, when it no longer exists (a moved venv)."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if words[:2] == ["sh", "-c"] and len(words) > 4:  # hookgate's fail-closed wrapper: sh -c SCRIPT hookgate CMD...
        words = words[4:]
    program = words[0] if words else ""
    return program if program.startswith("/") and not os.access(program, os.X_OK) else None


@dataclass(frozen=True)
class Registration:
    """How a stdin runtime's plug reads its hookgate registration in one file, for the check every
    such plug runs (registration_findings): the events present, the events whose handler differs from
    what install writes today, and the program its hooks start when that no longer exists. `why`
    adds what the runtime does about a problem ("stale", "program": e.g. Codex lets every action
    through when a hook's program is gone)."""

    runtime: str
    title: str
    expected: frozenset[str]
    events: Callable[[Path], set[str]]
    stale: Callable[[Path], list[str]]
    program: Callable[[Path], str | None]
    why: Mapping[str, str] = field(default_factory=dict)


def registration_findings(setup: Setup, registration: Registration,
                       locations: Iterable[tuple[str, Path]]) -> list[Finding]:
    """One finding per file (the project's, the user's) that holds a hookgate registration: every
    expected event there, none stale, its program present; an info when there is none at all."""
    findings = []
    for where, path in locations:
        try:
            events = registration.events(path)
        except ValueError as exc:
            findings.append(Finding("fail", str(exc), f"fix or move {path}"))
            continue
        if not events:
            continue
        fix = reinstall(registration.runtime, where, setup.project)
        missing = sorted(registration.expected - events)
        stale = [] if missing else registration.stale(path)
        program = None if missing or stale else registration.program(path)
        if missing:
            findings.append(Finding("fail", f"{path}: no hookgate hook for {', '.join(missing)}", fix))
        elif stale:
            findings.append(Finding("fail", f"{path}: the registration of {', '.join(stale)} differs from the "
                                            f"lifecycle matrix{registration.why.get('stale', '')}", fix))
        elif program:
            findings.append(Finding("fail", f"{path}: the hooks start {program}, which does not exist"
                                            f"{registration.why.get('program', '')}", fix))
        else:
            findings.append(Finding("ok", f"{path}: all {len(events)} events registered"))
    return findings or [Finding("info", f"not installed for {registration.title}",
                                reinstall(registration.runtime, "project", setup.project))]


def first_missing_program(commands: Iterable[str]) -> str | None:
    return next((program for command in commands if (program := missing_command(command))), None)


# -- checks of the core ----------------------------------------------------------------------------

MIN_PYTHON, MIN_NODE = (3, 11), 20


def check_python(setup: Setup) -> list[Finding]:
    import sys
    from importlib.metadata import PackageNotFoundError, version

    found = []
    here = ".".join(map(str, sys.version_info[:3]))
    if sys.version_info[:2] < MIN_PYTHON:
        found.append(Finding("fail", f"Python {here} at {sys.executable}; hookgate needs {'.'.join(map(str, MIN_PYTHON))} or newer",
                             "reinstall hookgate with a newer Python"))
    else:
        found.append(Finding("ok", f"Python {here} at {sys.executable}"))
    for package, needed_for in (("msgspec", "every decision"), ("watchfiles", "`hookgate serve`'s hot reload (OpenCode)")):
        try:
            found.append(Finding("ok", f"{package} {version(package)}"))
        except PackageNotFoundError:
            found.append(Finding("fail", f"{package} is not installed; it is needed for {needed_for}",
                                 f"{shlex.quote(sys.executable)} -m pip install {package}"))
    return found


def check_bytecode(setup: Setup, packages: Iterable[Path] | None = None) -> list[Finding]:
    """A cold hook call imports some sixty of hookgate's modules. An install without their
    compiled bytecode (`pip install --no-compile`; `uv pip install` without --compile-bytecode) in
    an environment that does not write it (PYTHONDONTWRITEBYTECODE, common in container images; a
    read-only install) compiles them all from source on every cold call: about twice its time.
    `packages`: the folders to look in (default: hookgate's and its runtime plugs')."""
    import sys
    from importlib.util import cache_from_source

    folders = list(packages) if packages is not None else _package_folders()
    uncompiled = [source for folder in folders for source in folder.rglob("*.py")
                  if not os.path.exists(cache_from_source(str(source)))]
    if not uncompiled:
        return [Finding("ok", "hookgate's modules are compiled to bytecode")]
    compile_all = f"{shlex.quote(sys.executable)} -m compileall -q " + " ".join(shlex.quote(str(f)) for f in folders)
    if setup.env.get("PYTHONDONTWRITEBYTECODE"):
        why = "PYTHONDONTWRITEBYTECODE is set"
    elif not all(os.access(folder, os.W_OK) for folder in {source.parent for source in uncompiled}):
        why = "the install is read-only"
    else:
        return [Finding("info", f"{len(uncompiled)} of hookgate's modules are not compiled to bytecode yet: the first "
                                "call that imports each one writes it", compile_all)]
    return [Finding("info", f"{len(uncompiled)} of hookgate's modules have no compiled bytecode and none is written "
                            f"({why}): every hook call without a warm core compiles them from source, about "
                            "twice its time", compile_all)]


def _package_folders() -> list[Path]:
    from importlib.util import find_spec

    from .runtimes import PACKAGES

    folders = []
    for name in ("hookgate", *PACKAGES):
        spec = find_spec(name)
        folders += [Path(folder) for folder in (spec.submodule_search_locations or [])] if spec else []
    return folders


def check_node(setup: Setup) -> list[Finding]:
    """OpenCode runs the plugin under its own Bun; Node is for the plugin's tests and `hookgate demo`."""
    import shutil
    import subprocess

    node = shutil.which("node", path=setup.env.get("PATH"))
    if node is None:
        return [Finding("info", "Node.js is not on PATH: OpenCode does not need it, but `hookgate demo`'s OpenCode "
                                "leg and the plugin's tests do", f"install Node.js {MIN_NODE} or newer")]
    done = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=10)
    text = done.stdout.strip()
    try:
        major = int(text.lstrip("v").split(".")[0])
    except ValueError:
        return [Finding("fail", f"{node} --version printed {text!r}", f"reinstall Node.js {MIN_NODE} or newer")]
    if major < MIN_NODE:
        return [Finding("fail", f"Node.js {text} at {node}; the plugin's tests need {MIN_NODE} or newer",
                        f"install Node.js {MIN_NODE} or newer")]
    return [Finding("ok", f"Node.js {text} at {node}")]


def check_config(setup: Setup) -> list[Finding]:
    from .config.load import open_project
    from .engine_builder import build_engine
    from .errors import ConfigError
    from .store.project import HOOKGATE_DIR, Project

    try:
        project, config = open_project(Path(setup.project))
        engine = build_engine(config, project)
    except ConfigError as exc:
        return [Finding("fail", f"{exc} (hooks then run the preset's gates and refuse what fails closed)",
                        f"edit {Project(Path(setup.project)).config_path}")]
    where = project.config_path if project.config_path.exists() else f"no {HOOKGATE_DIR}/config.toml"
    count = len(engine.gates)
    layout = f"; GodotMaker's files in place ({project.layout.dir}/)" if project.godotmaker else ""
    return [Finding("ok", f"{where}: preset {config.preset}, {count} gate{'' if count == 1 else 's'}{layout}")]


def check_nested_projects(setup: Setup) -> list[Finding]:
    """A .hookgate/ below the project: a sub-project of its own, or one an agent made (while a
    role is active that is refused, and it never changes which root governs a running session)."""
    from hookgate.store.project import Project

    nested, stopped = Project(setup.project).nested_projects()
    found = [Finding("info", f"{marker.relative_to(setup.project)}: a project of its own, governing only "
                             "the sessions that start inside it", f"if you did not make it: rm -r {shlex.quote(str(marker))}")
             for marker in nested]
    if stopped:
        found.append(Finding("info", "the project is too large to look for every nested .hookgate/; the ones listed were found first"))
    return found or [Finding("ok", "no .hookgate/ below the project")]


def check_outside_folders(setup: Setup) -> list[Finding]:
    """The protected folders outside the project (~/.claude/skills, an OpenCode plugin folder) the
    effect check lists around each call: how many files, and which hold too many to list."""
    from .config.load import open_project
    from .effect.check import files_below
    from .effect.protection import outside_places
    from .errors import ConfigError

    try:
        project, config = open_project(Path(setup.project))
    except ConfigError:
        return []  # the config check reports it
    limit = config.effect.outside_max_files
    folders = outside_places(config, str(project.root)).folders
    listed = {folder: files_below(folder, limit) for folder in folders if os.path.isdir(folder)}
    found = [Finding("info", f"{folder} holds more than {limit} files: the effect check does not list it around a "
                             "call, only the syntax gates keep it", "raise [effect] outside_max_files to have it listed")
             for folder, files in listed.items() if files is None]
    return found + [Finding("ok", f"{len(folders)} protected folders outside the project are listed around each "
                                  f"checked call; {len(listed)} exist, {sum(len(files or ()) for files in listed.values())} files in them")]


def check_monitor_mode(setup: Setup) -> list[Finding]:
    """Monitor mode lets every refusal through, a fail-closed gate's failures included: say so."""
    from .config.load import open_project
    from .engine_builder import build_engine
    from .errors import ConfigError

    try:
        project, config = open_project(Path(setup.project))
        engine = build_engine(config, project)
    except ConfigError:
        return []  # the config check reports it
    watched = [gate for gate in engine.gates if gate.mode == "monitor"]
    if not watched:
        return [Finding("ok", "every gate enforces (no monitor mode)")]
    findings = [Finding("info", f"monitor mode: {', '.join(g.id for g in watched)} decide and record `would_block`; "
                                "the agent is never stopped by them (`hookgate metrics report` shows what they would have blocked)")]
    closed = [gate.id for gate in watched if gate.fail_mode == "closed"]
    if closed:
        findings.append(Finding(
            "info", f"{', '.join(closed)} fail closed, and monitor mode makes them open: a crash, a timeout or an "
                    "unreadable payload of theirs now lets the call through (recorded as would_block)",
            f"set mode = \"enforce\" for them in {project.config_path} once their would_block records look right"))
    return findings


def check_runtime_versions(setup: Setup) -> list[Finding]:
    """Each runtime on PATH against the versions the parity report proves (hookgate.parity.installed)."""
    from .parity.capabilities import proven
    from .parity.installed import all_installed

    found = []
    for runtime in all_installed(setup.env):
        if runtime.standing == "unsupported":
            pinned = proven(runtime.runtime)[0]
            found.append(Finding("fail", runtime.message, f"use {pinned.label} for hookgate to guard it "
                                                          f"(npm install -g {pinned.package}@{pinned.version})"))
        else:
            found.append(Finding("ok" if runtime.standing == "proven" else "info", runtime.message))
    return found


def check_decided_once(setup: Setup) -> list[Finding]:
    """hookgate registered twice for one runtime (a project and a user install, or installs from
    two venvs) decides every call twice: each block then counts twice against its limit and every
    record is written twice. Claude Code runs an identical command once; Codex runs each handler
    (runtimes.md), and OpenCode loads both plugin files."""
    findings = []
    for plug in PLUGS:
        places: Installs = getattr(plug.module("checks"), "installs")(setup)
        found: dict[str, list[tuple[str, str]]] = {}
        for where, path in (("project", places.project_file), ("user", places.user_file)):
            if where == "user" and path.resolve() == places.project_file.resolve():
                continue  # a project at $HOME: one file for both
            try:
                for event, command in places.commands(path):
                    found.setdefault(event, []).append((where, command))
            except ValueError:  # an unreadable file: the runtime's own check names it
                continue
        runs = {event: len({c for _, c in entries}) if places.identical_once else len(entries)
                for event, entries in found.items()}
        twice = sorted(event for event, count in runs.items() if count > 1)
        if not twice:
            continue
        runtime = plug.name
        times = max(runs.values())
        wheres = sorted({where for event in twice for where, _ in found[event]})
        what = "" if len(twice) == len(found) else f" for {', '.join(twice)}"
        where_text = "in the project's and the user's configuration" if len(wheres) > 1 else f"in the {wheres[0]}'s configuration"
        fix = (f"keep one: hookgate uninstall {runtime} --user (or --project {shlex.quote(str(setup.project))})"
               if len(wheres) > 1 else reinstall(runtime, wheres[0], setup.project))
        findings.append(Finding("fail", f"{runtime}: hookgate is registered {times} times{what} {where_text}: every "
                                        f"call is decided {times} times, so each block counts {times} times against "
                                        f"its limit and every record is written {times} times", fix))
    return findings or [Finding("ok", "each runtime runs hookgate at most once per event")]


def run(setup: Setup, checks: Iterable[tuple[str, str]]) -> list[tuple[str, Finding]]:
    """Run checks named (name, "module:function"), each imported only when it runs. A check that
    crashes is reported as a failed check; the others still run."""
    results: list[tuple[str, Finding]] = []
    for name, target in checks:
        try:
            module, function = target.split(":")
            results += [(name, finding) for finding in getattr(import_module(module), function)(setup)]
        except Exception as exc:  # one broken check must not hide the others' findings
            results.append((name, Finding("fail", f"the check itself failed: {type(exc).__name__}: {exc}")))
    return results
