"""Command hooks (seed 002): the user's shell commands from `~/.hookgate/hooks.json` and
`.hookgate/hooks.json`, as gates of the one engine, so they behave the same on every runtime.

One gate per event that has handlers (`command_hooks.pre_tool_use`, ...): it runs that event's
matching handlers in parallel and folds what they say into one verdict (see gate.py). Only the
events seed 002 lets block are declared blockers; every gate fails open, so a failure of the
machinery never reaches the agent loop. Entries that cannot run are reported by one more gate,
`command_hooks.problems`, and by `hookgate doctor`.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from ..engine.gate import Gate, Observer
from ..model.events import KNOWN_EVENTS

if TYPE_CHECKING:
    from ..config.schema import Config
    from ..store.project import Project
    from .spec import Handler

GLOBAL_FILE = "~/.hookgate/hooks.json"

# beyond the slowest handler: starting the shell, and collecting a killed handler's pipes
TIMEOUT_SLACK = 5.0


def hook_files(project_hooks: Path) -> list[Path]:
    """The files in merge order: the global one, then the project's."""
    return [Path(os.path.expanduser(GLOBAL_FILE)), project_hooks]


def gates(config: "Config", project: "Project | None") -> tuple[Gate, ...]:
    if project is None:
        return ()
    # most projects: the reader and runner stay unloaded (strings: no Path built for the look)
    if not (_present(os.path.expanduser(GLOBAL_FILE)) or _present(project.hooks_file)):
        return ()
    from .gate import CommandHooks, ProblemNotice
    from .spec import EVENTS, load

    files = load(hook_files(project.hooks_path))
    by_event: dict[str, list[Handler]] = {}
    for handler in files.handlers:
        if handler.event in KNOWN_EVENTS:  # the others (GoalUpdate) are never emitted
            by_event.setdefault(handler.event, []).append(handler)
    found = [
        Gate(
            id=gate_id(event), events=(event,), check=CommandHooks(event, handlers),
            may_block=EVENTS[event], timeout=max(h.timeout for h in handlers) + TIMEOUT_SLACK,
            needs=(f"block:{event}",) if EVENTS[event] else (f"fires:{event}",),
            description=f"{len(handlers)} command hook(s) from hooks.json on {event}",
        )
        for event, handlers in by_event.items()
    ]
    if files.errors:
        found.append(Gate(
            id="command_hooks.problems", events=tuple(e for e in EVENTS if e in KNOWN_EVENTS),
            check=ProblemNotice(files.errors), description="reports hooks.json entries that cannot run",
        ))
    return tuple(found)


def observers(config: "Config", project: "Project | None") -> tuple[Observer, ...]:
    return ()


def preload() -> None:
    """The reader, the gate and the runner (the warm core's: its scratch project has no hooks.json)."""
    from . import gate, run, spec  # noqa: F401


def _present(path: str) -> bool:
    """False only when the file is not there at all, the one case the reader skips in silence
    (spec._Reader.read); any other failure to stat it is the reader's to report."""
    try:
        os.stat(path)
    except FileNotFoundError:
        return False
    except OSError:
        return True
    return True


def gate_id(event: str) -> str:
    """`PreToolUse` -> `command_hooks.pre_tool_use`."""
    return "command_hooks." + re.sub(r"(?<!^)(?=[A-Z])", "_", event).lower()
