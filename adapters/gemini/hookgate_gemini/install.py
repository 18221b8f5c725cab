"""hookgate's registrations in Gemini CLI's settings.json (`hooks` -> event -> matcher groups): the
project's `.gemini/settings.json` or the user's (`$GEMINI_CLI_HOME/.gemini/settings.json`, the home
directory by default).

Install merges into what is there (every other key and hook is kept) and is idempotent;
uninstall removes exactly the handlers that run `hookgate hook gemini`, giving back the bytes.

Gemini CLI reads a project's settings, hooks included, only in a folder the user trusts
(~/.gemini/trustedFolders.json): install never trusts one (that is the user's call, see `notes`).
"""

from __future__ import annotations

import json
import os
import re
import shlex
from pathlib import Path
from typing import Any, Mapping

from hookgate import lifecycle
from hookgate.formats import hooksjson
from hookgate.installers import fail_closed

# canonical event, Gemini's event, matcher (None: the event takes none), timeout (s), fail closed
# when hookgate itself cannot run; generated from the lifecycle matrix (core/hookgate/lifecycle.toml)
REGISTRATIONS: tuple[tuple[str, str, str | None, int, bool], ...] = tuple(
    (r.event, str(r.on("gemini")), r.matcher, r.timeout_for("gemini"), r.fail_closed)
    for r in lifecycle.for_runtime("gemini")
)

_OURS = re.compile(r"hook gemini --event [A-Za-z]+")


def gemini_home(env: Mapping[str, str] = os.environ) -> Path:
    return Path(env.get("GEMINI_CLI_HOME") or Path.home()) / ".gemini"


def config_path(project: Path | None, env: Mapping[str, str] = os.environ) -> Path:
    if project is not None:
        return project / ".gemini" / "settings.json"
    return gemini_home(env) / "settings.json"


def hook_command(command: str, event: str) -> str:
    """The handler command. Gemini CLI counts a hook that exits 1, what a crashed Python
    exits with, as a warning and lets the action go ahead, so the gating events' command is exit-2
    wrapped (installers/fail_closed.py)."""
    return fail_closed.hook_command(command, "gemini", event)


def registrations(command: str) -> dict[str, list[dict[str, Any]]]:
    hooks: dict[str, list[dict[str, Any]]] = {}
    for event, theirs, matcher, timeout, _ in REGISTRATIONS:
        handler = {"type": "command", "name": f"hookgate-{event}", "command": hook_command(command, event),
                   "timeout": timeout * 1000}  # Gemini CLI's timeouts are milliseconds
        hooks[theirs] = [{"matcher": matcher, "hooks": [handler]} if matcher else {"hooks": [handler]}]
    return hooks


def install(path: Path, command: str) -> bool:
    return hooksjson.register(path, registrations(command), is_ours)


def uninstall(path: Path) -> bool:
    return hooksjson.unregister(path, is_ours)


def notes(path: Path, env: Mapping[str, str] = os.environ) -> list[str]:
    """What the user must still do for Gemini CLI to run the hooks at `path` (after install)."""
    project = project_of(path, env)
    if project is None:
        return [f"gemini: {len(installed_events(path))} hooks in the user's settings, run in every folder"]
    if folder_trust(project, env) == "trusted":
        return [f"gemini: {project} is a trusted folder: Gemini CLI runs the hooks in {path}"]
    return [f"gemini: Gemini CLI reads {path} only in a trusted folder: {trust_project_command(project)}"]


def project_of(path: Path, env: Mapping[str, str] = os.environ) -> Path | None:
    """The project whose `.gemini/settings.json` this is; None for the user's own."""
    return None if path.parent == gemini_home(env) else path.parent.parent


def trusted_folders_path(env: Mapping[str, str] = os.environ) -> Path:
    given = env.get("GEMINI_CLI_TRUSTED_FOLDERS_PATH")
    return Path(given) if given else gemini_home(env) / "trustedFolders.json"


def folder_trust(project: Path, env: Mapping[str, str] = os.environ) -> str:
    """"trusted", "untrusted" or "unknown", as Gemini CLI reads trustedFolders.json: the deepest
    rule over the project wins; TRUST_PARENT trusts the folder's parent and all below it."""
    try:
        rules = json.loads(trusted_folders_path(env).read_text())
    except (OSError, ValueError):
        return "unknown"
    best, level = -1, "unknown"
    target = project.resolve()
    for folder, rule in rules.items() if isinstance(rules, dict) else ():
        base = Path(folder).parent if rule == "TRUST_PARENT" else Path(folder)
        if (target == base or base in target.parents) and len(base.parts) > best:
            best, level = len(base.parts), "untrusted" if rule == "DO_NOT_TRUST" else "trusted"
    return level


def trust_project_command(project: Path) -> str:
    return (f"run `gemini` once in {shlex.quote(str(project))} and choose \"Trust folder\" "
            f"(or add \"{project}\": \"TRUST_FOLDER\" to ~/.gemini/trustedFolders.json)")


def installed_events(path: Path) -> set[str]:
    """The canonical events whose hookgate registration is present (for doctor)."""
    return {event for event, _ in installed_commands(path)}


def installed_commands(path: Path) -> list[tuple[str, str]]:
    """(canonical event, command) of every hookgate handler in the file (for doctor)."""
    return [(_event_of(str(handler.get("command"))), str(handler.get("command")))
            for _, _, handler in handlers(path) if is_ours(handler)]


def stale_events(path: Path) -> list[str]:
    """The events whose installed handler differs from what install writes today (the lifecycle
    matrix changed since: a timeout, a matcher, the wrapper), for doctor."""
    stale = []
    for theirs, group, handler in handlers(path):
        if not is_ours(handler):
            continue
        command = str(handler.get("command", ""))
        program = command.rsplit(" hookgate ", 1)[-1] if command.startswith("sh -c ") else command
        expected = registrations(program.split(" hook gemini", 1)[0]).get(theirs)
        if expected is None or {k: v for k, v in group.items() if k != "hooks"} != \
                {k: v for k, v in expected[0].items() if k != "hooks"} or handler != expected[0]["hooks"][0]:
            stale.append(_event_of(command))
    return sorted(set(stale))


def handlers(path: Path) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    hooks = hooksjson.read(path).get("hooks", {}) if path.exists() else {}
    return [(event, group, handler) for event, _, _, group, handler in hooksjson.entries(hooks)]


def _event_of(command: str) -> str:
    found = re.search(r"hook gemini --event ([A-Za-z]+)", command)
    return found.group(1) if found else ""


def is_ours(handler: Any) -> bool:
    command = str(handler.get("command", "")) if isinstance(handler, dict) else ""
    return "hookgate" in command and bool(_OURS.search(command))

