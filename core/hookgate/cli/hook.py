"""`hookgate hook claude|codex [--event NAME]`: the stdin adapter.

Argument parsing is by hand: this runs on every tool call, and argparse costs more than the
decision itself. `--event` names the event the registration is for, so that a payload that cannot
be read still gets the fail mode of that event's gates.
"""

from __future__ import annotations

import os
import sys
from importlib import import_module

DIALECTS = {"claude": "hookgate_claude.dialect", "codex": "hookgate_codex.dialect"}
USAGE = "usage: hookgate hook claude|codex [--event EVENT_NAME] < payload.json\n"


def main(args: list[str]) -> int:
    rest = args[1:]
    if not rest or rest[0] not in DIALECTS:
        sys.stderr.write(USAGE)
        return 2
    runtime, options = rest[0], rest[1:]
    event_hint = ""
    if options[:1] == ["--event"] and len(options) == 2:
        event_hint = options[1]
    elif options:
        sys.stderr.write(USAGE)
        return 2
    if sys.stdin.isatty():
        sys.stderr.write("hookgate: reading a hook payload from stdin (this command is run by the runtime)\n")
    raw = sys.stdin.buffer.read()
    try:
        from hookgate.hookcall import handle

        answer = handle(import_module(DIALECTS[runtime]), raw, os.environ, event_hint)
    except Exception as exc:  # hookgate cannot even start: answer without it
        return _last_resort(event_hint, exc)
    if answer.stdout:
        sys.stdout.buffer.write(answer.stdout)
        sys.stdout.flush()
    if answer.stderr:
        sys.stderr.write(answer.stderr.rstrip("\n") + "\n")
    return answer.exit_code


def _last_resort(event_hint: str, exc: Exception) -> int:
    """hookgate cannot even import its core (a damaged install): the same answer as hookcall's
    last resort, written out here because that module is what failed to load."""
    error = f"hookgate failed to start ({type(exc).__name__}: {exc})"
    if event_hint in ("PreToolUse", "PermissionRequest"):
        sys.stderr.write(f"{error}; blocking {event_hint} until it is repaired (see `hookgate doctor`)\n")
        return 2
    sys.stderr.write(f"{error}; allowing\n")
    return 0
