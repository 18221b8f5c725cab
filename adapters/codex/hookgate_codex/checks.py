"""`hookgate doctor`'s Codex checks. Codex skips a hook without a word when the project is not
trusted, the hook is not trusted (or was edited since), it is disabled, or hooks are turned off;
each check names the file at fault and the command that fixes it."""

from __future__ import annotations

import subprocess
import tomllib
from pathlib import Path
from typing import Any

from hookgate.checks import (Finding, Installs, Registration, Setup, first_missing_program, registration_findings,
                             reinstall)
from hookgate.formats import hooksjson

from . import install, trust

CHECKS = (("codex hooks", "check_registration"), ("codex feature", "check_feature"), ("codex trust", "check_trust"),
          ("codex shell", "check_login_shell"), ("codex plugin", "check_plugin"))


def installs(setup: Setup) -> Installs:
    return Installs(install.config_path(setup.project, setup.env), install.config_path(None, setup.env),
                    install.installed_commands, identical_once=False)


def _locations(setup: Setup) -> list[tuple[str, Path]]:
    """(where, hooks.json) of both places hookgate installs to: the project's, the user's."""
    return [("project", install.config_path(setup.project, setup.env)),
            ("user", install.config_path(None, setup.env))]


def _installs(setup: Setup) -> list[tuple[str, Path]]:
    return [(where, path) for where, path in _locations(setup) if _events(path)]


def _events(path: Path) -> set[str]:
    try:
        return install.installed_events(path)
    except ValueError:
        return set()


def _read_toml(path: Path) -> dict[str, Any]:
    """The one way these checks read a Codex config.toml ({} when there is none). Raises
    tomllib.TOMLDecodeError or UnicodeDecodeError for a file Codex cannot read either."""
    return tomllib.loads(path.read_text()) if path.exists() else {}


def _toml(path: Path) -> dict[str, Any]:
    try:
        return _read_toml(path)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        return {}  # Codex refuses to start on such a file; check_feature reports it


def check_plugin(setup: Setup) -> list[Finding]:
    """The plugin channel (`codex plugin add hookgate@hookgate`): see plugin_trust.doctor_check."""
    from . import plugin_trust

    return list(plugin_trust.doctor_check(setup))


def check_registration(setup: Setup) -> list[Finding]:
    return registration_findings(setup, REGISTRATION, _locations(setup))


def _stale(path: Path) -> list[str]:
    return sorted({event for event, _, _, group, handler in _our_handlers(path)
                   if _expected(event, handler) != (group.get("matcher"), handler)})


REGISTRATION = Registration(
    runtime="codex", title="Codex", expected=frozenset(event for event, *_ in install.REGISTRATIONS),
    events=install.installed_events, stale=_stale,
    program=lambda path: first_missing_program(h[4]["command"] for h in _our_handlers(path)),
    why={"stale": " (and Codex no longer trusts an edited hook)",
         "program": "; Codex counts that as a failed hook and lets every action through"})


def check_feature(setup: Setup) -> list[Finding]:
    if not _installs(setup):
        return []
    user_path = trust.user_config(setup.env)
    layers = [user_path]
    if trust.project_trust(_toml(user_path), setup.project) == "trusted":
        layers.append(setup.project / ".codex" / "config.toml")
    findings, enabled, where = [], None, None
    for path in layers:
        try:
            features = _read_toml(path).get("features", {})
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            findings.append(Finding("fail", f"{path} is not valid TOML ({exc}); Codex will not start", f"fix {path}"))
            continue
        for key in ("codex_hooks", "hooks"):  # the deprecated alias first: `hooks` wins
            if isinstance(features, dict) and isinstance(features.get(key), bool):
                enabled, where = features[key], path
    if enabled is False:
        findings.append(Finding("fail", f"hooks are turned off ([features] in {where}); Codex runs none of them",
                                f"set `hooks = true` under [features] in {where}"))
    elif not findings:
        findings.append(Finding("ok", f"hooks enabled ({'[features] in ' + str(where) if where else 'default'})"))
    return findings


def check_trust(setup: Setup) -> list[Finding]:
    user_path = trust.user_config(setup.env)
    user = _toml(user_path)
    states = user.get("hooks", {}).get("state", {}) if isinstance(user.get("hooks"), dict) else {}
    findings = []
    for where, path in _installs(setup):
        fix = reinstall("codex", where, setup.project)
        project = install.project_of(path, setup.env)
        if project is not None:
            level = trust.project_trust(user, project)
            if level != "trusted":
                state = "is marked untrusted" if level == "untrusted" else "has never been trusted"
                findings.append(Finding("fail", f"{project} {state} in {user_path}: Codex loads none of "
                                                f"{path.parent} (hookgate's hooks included)",
                                        install.trust_project_command(project)))
        problems: dict[str, list[str]] = {}
        handlers = _our_handlers(path)
        for event, g, h, group, handler in handlers:
            entry = states.get(trust.hook_key(path, event, g, h))
            entry = entry if isinstance(entry, dict) else {}
            if entry.get("enabled") is False:
                problems.setdefault("disabled (in Codex's /hooks)", []).append(event)
            elif entry.get("trusted_hash") is None:
                problems.setdefault("not trusted", []).append(event)
            elif entry["trusted_hash"] != trust.hook_hash(event, group, handler):
                problems.setdefault("changed since they were trusted", []).append(event)
        for problem, events in problems.items():
            findings.append(Finding("fail", f"{len(events)} of hookgate's {len(handlers)} hooks in {path} are "
                                            f"{problem}: {', '.join(events)}; Codex skips them without a word",
                                    fix if problem != "disabled (in Codex's /hooks)" else
                                    f"enable them in Codex's /hooks, or delete `enabled = false` from their "
                                    f"[hooks.state] entries in {user_path}"))
        if not problems:
            findings.append(Finding("ok", f"all {len(handlers)} hookgate hooks in {path} are trusted"))
    return findings


def check_login_shell(setup: Setup) -> list[Finding]:
    """Codex starts hooks with `$SHELL -lc`: what the login profile prints on stdout lands in front
    of hookgate's JSON answers, and Codex then ignores them (refusals still hold: they use exit 2)."""
    if not _installs(setup):
        return []
    shell = setup.env.get("SHELL") or "/bin/sh"
    try:
        done = subprocess.run([shell, "-lc", "true"], env=dict(setup.env), stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return [Finding("fail", f"Codex starts hooks with `{shell} -lc`, which does not run ({exc})",
                        "set SHELL to a working shell")]
    if done.stdout.strip():
        return [Finding("fail", f"`{shell} -lc` prints {done.stdout.strip()[:60]!r} on stdout; Codex then "
                                "ignores hookgate's context and rewrites (refusals still hold)",
                        "make your login profile print nothing when stdout is not a terminal "
                        "(wrap its output in `if [ -t 1 ]; then ...; fi`)")]
    return [Finding("ok", f"`{shell} -lc` prints nothing on stdout")]


def _expected(event: str, handler: dict[str, Any]) -> tuple[str | None, dict[str, Any]] | None:
    """(matcher, handler) as install writes them today for this event, with the installed command."""
    command = str(handler.get("command", ""))
    program = command.rsplit(" hookgate ", 1)[-1] if command.startswith("sh -c ") else command
    group = install.registrations(program.split(" hook codex", 1)[0]).get(event, [None])[0]
    return (group.get("matcher"), group["hooks"][0]) if group else None


def _our_handlers(path: Path) -> list[tuple[str, int, int, dict[str, Any], dict[str, Any]]]:
    try:
        hooks = hooksjson.read(path).get("hooks", {})
    except ValueError:
        return []
    return [entry for entry in trust.command_handlers(hooks) if install.is_ours(entry[4])]
