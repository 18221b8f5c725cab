"""`hookgate doctor [--project DIR]`: does every runtime really run hookgate, and if not, what
exactly fixes it.

The checks are a table (CHECKS): a name and the function that runs it, imported only when it
runs, so a runtime adapter keeps its own checks beside its installer. A check gets the Setup
(project folder, environment) and returns Findings: a status, what it found and, for a problem,
the exact command or edit that fixes it. Add a check by adding a line. A check that crashes is
reported as a failed check; the others still run.
"""

from __future__ import annotations

import argparse
import os
import shlex
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path
from typing import Callable, Iterable, Literal, Mapping

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

CHECKS: tuple[tuple[str, str], ...] = (
    ("python", "hookgate.cli.doctor:check_python"),
    ("node", "hookgate.cli.doctor:check_node"),
    ("config", "hookgate.cli.doctor:check_config"),
    ("versions", "hookgate.cli.doctor:check_runtime_versions"),
    ("claude", "hookgate.cli.doctor:check_claude"),
    ("codex hooks", "hookgate_codex.checks:check_registration"),
    ("codex feature", "hookgate_codex.checks:check_feature"),
    ("codex trust", "hookgate_codex.checks:check_trust"),
    ("codex shell", "hookgate_codex.checks:check_login_shell"),
    ("opencode", "hookgate.installers.opencode:doctor_check"),
    ("claude plugin", "hookgate_claude.plugin:doctor_check"),
    ("codex plugin", "hookgate_codex.plugin_trust:doctor_check"),
    ("decided once", "hookgate.cli.doctor:check_decided_once"),
    ("hooks.json", "hookgate.commandhooks.lint:doctor_check"),
    ("python policies", "hookgate.registry.lint:doctor_check"),
)


def main(args: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="hookgate doctor", description="check hookgate's installation")
    parser.add_argument("--project", type=Path, default=None, help="project directory (default: found from cwd)")
    ns = parser.parse_args(args[1:])
    from hookgate.store.project import Project

    root = ns.project.resolve() if ns.project else Project.find(None).root
    findings = run(Setup(project=root, env=os.environ))
    print(f"hookgate doctor: {root}")
    print(report(findings))
    failed = sum(1 for _, f in findings if f.status == "fail")
    print(f"\n{failed} problem(s) found" if failed else "\nno problems found")
    return 1 if failed else 0


def run(setup: Setup, checks: Iterable[tuple[str, str]] = CHECKS) -> list[tuple[str, Finding]]:
    results: list[tuple[str, Finding]] = []
    for name, target in checks:
        try:
            module, function = target.split(":")
            results += [(name, finding) for finding in getattr(import_module(module), function)(setup)]
        except Exception as exc:  # one broken check must not hide the others' findings
            results.append((name, Finding("fail", f"the check itself failed: {type(exc).__name__}: {exc}")))
    return results


def report(findings: list[tuple[str, Finding]]) -> str:
    width = max((len(name) for name, _ in findings), default=0)
    lines = []
    for name, finding in findings:
        lines.append(f"  {finding.status.upper() if finding.status == 'fail' else finding.status:<4}  "
                     f"{name:<{width}}  {finding.message}")
        if finding.fix:
            label = "fix" if finding.status == "fail" else "run"
            lines.append(f"  {'':<4}  {'':<{width}}  {label}: {finding.fix}")
    return "\n".join(lines)


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


# -- checks of the core and of Claude Code -------------------------------------------------------

def check_runtime_versions(setup: Setup) -> list[Finding]:
    """Each runtime on PATH against the versions the parity report proves (hookgate.parity.installed)."""
    from hookgate.parity.capabilities import proven
    from hookgate.parity.installed import all_installed

    found = []
    for runtime in all_installed(setup.env):
        if runtime.standing == "unsupported":
            pinned = proven(runtime.runtime)[0]
            found.append(Finding("fail", runtime.message, f"use {pinned.label} for hookgate to guard it "
                                                          f"(npm install -g {pinned.package}@{pinned.version})"))
        else:
            found.append(Finding("ok" if runtime.standing == "proven" else "info", runtime.message))
    return found


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
    from hookgate.config.load import open_project
    from hookgate.errors import ConfigError
    from hookgate.policy import build_engine
    from hookgate.store.project import HOOKGATE_DIR, Project

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


def check_claude(setup: Setup) -> list[Finding]:
    from hookgate_claude.settings import REGISTRATIONS, config_path, installed_events, stale_events

    findings = []
    for where, path in (("project", config_path(setup.project)), ("user", config_path(None))):
        try:
            events = installed_events(path)
        except ValueError as exc:
            findings.append(Finding("fail", str(exc), f"fix or move {path}"))
            continue
        if not events:
            continue
        missing = sorted({event for event, *_ in REGISTRATIONS} - events)
        broken = _claude_missing_commands(path)
        stale = stale_events(path)
        if missing or broken or stale:
            problem = (f"missing events {', '.join(missing)}" if missing else f"{broken} does not exist" if broken
                       else f"the registration of {', '.join(stale)} differs from the lifecycle matrix")
            findings.append(Finding("fail", f"{path}: {problem}", reinstall("claude", where, setup.project)))
        else:
            findings.append(Finding("ok", f"{path}: all {len(events)} events registered"))
    return findings or [Finding("info", "not installed for Claude Code",
                                reinstall("claude", "project", setup.project))]


def check_decided_once(setup: Setup) -> list[Finding]:
    """hookgate registered twice for one runtime (a project and a user install, or installs from
    two venvs) decides every call twice: each block then counts twice against its limit and every
    record is written twice. Claude Code runs an identical command once; Codex runs each handler
    (runtimes.md), and OpenCode loads both plugin files."""
    from hookgate.installers import opencode
    from hookgate_claude import settings
    from hookgate_codex import registration

    places = {
        "claude": (settings.installed_commands, True, settings.config_path(setup.project), settings.config_path(None)),
        "codex": (registration.installed_commands, False,
                  registration.config_path(setup.project, setup.env), registration.config_path(None, setup.env)),
        "opencode": (lambda path: [("plugin", str(path))] if opencode.installed(path) else [], False,
                     opencode.config_path(setup.project), opencode.config_path(None)),
    }
    findings = []
    for runtime, (commands, identical_once, project_file, user_file) in places.items():
        found: dict[str, list[tuple[str, str]]] = {}
        for where, path in (("project", project_file), ("user", user_file)):
            if where == "user" and path.resolve() == project_file.resolve():
                continue  # a project at $HOME: one file for both
            try:
                for event, command in commands(path):
                    found.setdefault(event, []).append((where, command))
            except ValueError:  # an unreadable file: the runtime's own check names it
                continue
        runs = {event: len({c for _, c in entries}) if identical_once else len(entries) for event, entries in found.items()}
        twice = sorted(event for event, count in runs.items() if count > 1)
        if not twice:
            continue
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


def _claude_missing_commands(path: Path) -> str | None:
    import json

    hooks = json.loads(path.read_text()).get("hooks", {})
    for groups in hooks.values():
        for group in groups if isinstance(groups, list) else []:
            for handler in group.get("hooks", []) if isinstance(group, dict) else []:
                command = str(handler.get("command", "")) if isinstance(handler, dict) else ""
                if "hook claude" in command and (program := missing_command(command)):
                    return program
    return None

