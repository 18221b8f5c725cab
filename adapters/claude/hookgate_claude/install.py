"""hookgate's registrations in Claude Code's settings.json (`hooks` -> event -> matcher groups).

Install merges into what is there (every other key and hook is kept) and is idempotent;
uninstall removes exactly the handlers that run `hookgate hook claude`, in either form below.

Each handler is in exec form (`command` and `args`: Claude Code starts the program itself, with
no shell in between), not shell form (`command` alone, which Claude Code hands to a shell): a
shell's start is about a sixth of a warm hook call. Both pinned versions take it (the schema's
`args`, and the real tier runs them); a handler an older hookgate wrote in shell form is still
recognised, and doctor calls it stale.
"""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path
from typing import Any, Callable

from hookgate import lifecycle
from hookgate.formats import hooksjson

# event, matcher (None: the event takes none), timeout (s), fail closed when hookgate itself cannot
# run; generated from the lifecycle matrix (core/hookgate/lifecycle.toml), the one source of truth
REGISTRATIONS: tuple[tuple[str, str | None, int, bool], ...] = tuple(
    (r.event, r.matcher, r.timeout_for("claude"), r.fail_closed) for r in lifecycle.for_runtime("claude")
)

# `.../hookgate hook claude`, or the command line that calls hookgate.client.launched (hook_command)
_OURS = re.compile(r"(?:hookgate|launched\(\))['\"]?\s+hook\s+claude\b")


def config_path(project: Path | None) -> Path:
    if project is not None:
        return project / ".claude" / "settings.json"
    home = os.environ.get("CLAUDE_CONFIG_DIR") or str(Path.home() / ".claude")
    return Path(home) / "settings.json"


def exec_form(line: str) -> dict[str, Any]:
    """A command line (shell words) as an exec-form handler's `command` and `args`."""
    program, *args = shlex.split(line)
    return {"command": program, "args": args}


def command_line(handler: dict[str, Any]) -> str:
    """What a handler runs, as one command line, in either form."""
    args = handler.get("args")
    command = str(handler.get("command", ""))
    return shlex.join([command, *map(str, args)]) if isinstance(args, list) else command


def registrations(command: str) -> dict[str, list[dict[str, Any]]]:
    """`command`: how to start hookgate, as shell words (hookgate.cli.install.hook_command)."""
    hooks: dict[str, list[dict[str, Any]]] = {}
    for event, matcher, timeout, fail_closed in REGISTRATIONS:
        handler: dict[str, Any] = {"type": "command", **exec_form(f"{command} hook claude --event {event}"),
                                   "timeout": timeout}
        if fail_closed:
            handler["onFailure"] = "block"  # a crash or timeout of hookgate blocks instead of allowing
        hooks[event] = [{"matcher": matcher, "hooks": [handler]} if matcher else {"hooks": [handler]}]
    return hooks


def install(path: Path, command: str) -> bool:
    return hooksjson.register(path, registrations(command), _is_ours)


def uninstall(path: Path) -> bool:
    return remove_handlers(path, _is_ours)


def remove_handlers(path: Path, picked: Callable[[Any], bool]) -> bool:
    """Take the handlers `picked` chooses out of the settings (hookgate's own on uninstall,
    another guard's on `hookgate migrate`), keeping everything else."""
    return hooksjson.unregister(path, picked)


def installed_events(path: Path) -> set[str]:
    """The events whose hookgate registration is present (for doctor)."""
    return {event for event, _ in installed_commands(path)}


def installed_commands(path: Path) -> list[tuple[str, str]]:
    """(event, command) of every hookgate handler in the file (for doctor)."""
    hooks = hooksjson.read(path).get("hooks", {}) if path.exists() else {}
    return [(event, command_line(handler)) for event, _, _, _, handler in hooksjson.entries(hooks)
            if _is_ours(handler)]


def stale_events(path: Path) -> list[str]:
    """The events whose installed hookgate handler differs from what install writes today (the
    lifecycle matrix changed since: a timeout, onFailure, a matcher), for doctor."""
    hooks = hooksjson.read(path).get("hooks", {}) if path.exists() else {}
    stale = []
    for event, _, _, group, handler in hooksjson.entries(hooks):
        if not _is_ours(handler):
            continue
        command = command_line(handler).split(" hook claude", 1)[0]
        expected = registrations(command).get(event)
        if expected is None or {k: v for k, v in group.items() if k != "hooks"} != \
                {k: v for k, v in expected[0].items() if k != "hooks"} or handler != expected[0]["hooks"][0]:
            stale.append(event)
    return sorted(set(stale))


def _is_ours(handler: Any) -> bool:
    return isinstance(handler, dict) and bool(_OURS.search(command_line(handler)))
