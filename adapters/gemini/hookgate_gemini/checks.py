"""`hookgate doctor`'s checks of Gemini CLI. It skips hookgate's hooks without a word when the
project folder is not trusted (its .gemini/settings.json is not read at all), when hooks are
turned off (`hooksConfig.enabled: false`) or when a hook is listed in `hooksConfig.disabled`;
each check names the file at fault and what fixes it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hookgate.checks import Finding, Installs, Registration, Setup, first_missing_program, registration_findings

from . import install

CHECKS = (("gemini hooks", "check_registration"), ("gemini trust", "check_trust"),
          ("gemini enabled", "check_enabled"), ("gemini extension", "check_extension"))


def installs(setup: Setup) -> Installs:
    return Installs(install.config_path(setup.project, setup.env), install.config_path(None, setup.env),
                    install.installed_commands, identical_once=True)  # measured: Gemini CLI runs one of them


def _locations(setup: Setup) -> list[tuple[str, Path]]:
    return [("project", install.config_path(setup.project, setup.env)), ("user", install.config_path(None, setup.env))]


def _installed(setup: Setup) -> list[tuple[str, Path]]:
    found = []
    for where, path in _locations(setup):
        try:
            if install.installed_events(path):
                found.append((where, path))
        except ValueError:
            continue
    return found


def check_registration(setup: Setup) -> list[Finding]:
    return registration_findings(setup, REGISTRATION, _locations(setup))


REGISTRATION = Registration(
    runtime="gemini", title="Gemini CLI", expected=frozenset(event for event, *_ in install.REGISTRATIONS),
    events=install.installed_events, stale=install.stale_events,
    program=lambda path: first_missing_program(command for _, command in install.installed_commands(path)))


def check_trust(setup: Setup) -> list[Finding]:
    findings = []
    for _, path in _installed(setup):
        project = install.project_of(path, setup.env)
        if project is None:
            continue
        level = install.folder_trust(project, setup.env)
        if level == "trusted":
            findings.append(Finding("ok", f"{project} is a trusted folder"))
        else:
            state = "is marked untrusted" if level == "untrusted" else "has never been trusted"
            findings.append(Finding("fail", f"{project} {state} in {install.trusted_folders_path(setup.env)}: "
                                            f"Gemini CLI reads none of {path} (hookgate's hooks included)",
                                    install.trust_project_command(project)))
    return findings


def check_enabled(setup: Setup) -> list[Finding]:
    """hooksConfig in the user's and the project's settings (the project's wins)."""
    installed = _installed(setup)
    if not installed:
        return []
    enabled, where, disabled = True, "default", set()
    for _, path in _locations(setup):
        config = _settings(path).get("hooksConfig")
        if not isinstance(config, dict):
            continue
        if isinstance(config.get("enabled"), bool):
            enabled, where = config["enabled"], str(path)
        if isinstance(config.get("disabled"), list):
            disabled |= {str(name) for name in config["disabled"]}
    if not enabled:
        return [Finding("fail", f"hooks are turned off (hooksConfig.enabled in {where}); Gemini CLI runs none",
                        f"set hooksConfig.enabled to true in {where}")]
    ours = {handler.get("name") for _, path in installed for _, _, handler in install.handlers(path)
            if install.is_ours(handler)} | {command for _, path in installed
                                            for _, command in install.installed_commands(path)}
    off = sorted(str(name) for name in disabled & ours)
    if off:
        return [Finding("fail", f"hookgate's hooks are disabled (hooksConfig.disabled): {', '.join(off)}",
                        "take them out of hooksConfig.disabled, or `/hooks enable-all` in Gemini CLI")]
    return [Finding("ok", f"hooks enabled ({where})")]


def check_extension(setup: Setup) -> list[Finding]:
    """The extension channel (`gemini extensions install`): see extension.doctor_check."""
    from . import extension

    return list(extension.doctor_check(setup))


def _settings(path: Path) -> dict[str, Any]:
    try:
        found = json.loads(path.read_text()) if path.exists() else {}
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}
