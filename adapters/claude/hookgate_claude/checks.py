"""`hookgate doctor`'s checks of Claude Code: hookgate's handlers in the project's and the user's
settings.json, against what install writes today."""

from __future__ import annotations

from hookgate.checks import Finding, Installs, Registration, Setup, first_missing_program, registration_findings
from hookgate.formats import hooksjson

from . import install

CHECKS = (("claude", "check_claude"), ("claude plugin", "check_plugin"))


def installs(setup: Setup) -> Installs:
    return Installs(install.config_path(setup.project), install.config_path(None), install.installed_commands,
                    identical_once=True)


def check_claude(setup: Setup) -> list[Finding]:
    locations = (("project", install.config_path(setup.project)), ("user", install.config_path(None)))
    return registration_findings(setup, REGISTRATION, locations)


REGISTRATION = Registration(
    runtime="claude", title="Claude Code", expected=frozenset(event for event, *_ in install.REGISTRATIONS),
    events=install.installed_events, stale=install.stale_events,
    program=lambda path: first_missing_program(command for _, command in install.installed_commands(path)))


def check_plugin(setup: Setup) -> list[Finding]:
    """The plugin channel (`claude plugin install hookgate@hookgate`): see plugin.doctor_check."""
    from . import plugin

    return list(plugin.doctor_check(setup))


