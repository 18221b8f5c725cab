"""`hookgate doctor`'s checks of Claude Code: hookgate's handlers in the project's and the user's
settings.json, against what install writes today."""

from __future__ import annotations

from pathlib import Path

from hookgate.checks import Finding, Installs, Setup, missing_command, reinstall
from hookgate.formats import hooksjson

from . import install

CHECKS = (("claude", "check_claude"), ("claude plugin", "check_plugin"))


def installs(setup: Setup) -> Installs:
    return Installs(install.config_path(setup.project), install.config_path(None), install.installed_commands,
                    identical_once=True)


def check_claude(setup: Setup) -> list[Finding]:
    findings = []
    for where, path in (("project", install.config_path(setup.project)), ("user", install.config_path(None))):
        try:
            events = install.installed_events(path)
        except ValueError as exc:
            findings.append(Finding("fail", str(exc), f"fix or move {path}"))
            continue
        if not events:
            continue
        missing = sorted({event for event, *_ in install.REGISTRATIONS} - events)
        broken = _missing_command(path)
        stale = install.stale_events(path)
        if missing or broken or stale:
            problem = (f"missing events {', '.join(missing)}" if missing else f"{broken} does not exist" if broken
                       else f"the registration of {', '.join(stale)} differs from the lifecycle matrix")
            findings.append(Finding("fail", f"{path}: {problem}", reinstall("claude", where, setup.project)))
        else:
            findings.append(Finding("ok", f"{path}: all {len(events)} events registered"))
    return findings or [Finding("info", "not installed for Claude Code",
                                reinstall("claude", "project", setup.project))]


def check_plugin(setup: Setup) -> list[Finding]:
    """The plugin channel (`claude plugin install hookgate@hookgate`): see plugin.doctor_check."""
    from . import plugin

    return list(plugin.doctor_check(setup))


def _missing_command(path: Path) -> str | None:
    for _, command in install.installed_commands(path):
        if program := missing_command(command):
            return program
    return None
