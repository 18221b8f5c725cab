"""One stdin hook call (Claude Code, Codex), decided in this process: (stdout, stderr, exit code).

Both ways a call is decided run this: the `hookgate hook` command when no warm core answers, and
each fork of the warm core (hookgate.warm.server). It imports the decision path only when called,
so that a hookgate that cannot even load its core still answers the runtime (`_last_resort`).
"""

import os

from hookgate.runtimes import STDIN, plug


def evaluate(runtime: str, raw: bytes, event_hint: str) -> tuple[bytes, bytes, int]:
    """One hook call of `runtime` (one of hookgate.runtimes.STDIN), in this process."""
    try:
        from typing import cast

        from hookgate.hookcall import Dialect, handle

        if runtime not in STDIN:
            raise KeyError(f"{runtime!r} does not call hookgate as a stdin command")
        answer = handle(cast(Dialect, plug(runtime).module("dialect")), raw, os.environ, event_hint)
    except Exception as exc:  # hookgate cannot even start: answer without it
        return _last_resort(event_hint, exc)
    stderr = answer.stderr.rstrip("\n") + "\n" if answer.stderr else ""
    return answer.stdout, stderr.encode(errors="backslashreplace"), answer.exit_code


def _last_resort(event_hint: str, exc: Exception) -> tuple[bytes, bytes, int]:
    """hookgate cannot even import its core (a damaged install): the same answer as hookcall's
    last resort, written out here because that module is what failed to load."""
    error = f"hookgate failed to start ({type(exc).__name__}: {exc})"
    if event_hint in ("PreToolUse", "PermissionRequest"):
        return b"", f"{error}; blocking {event_hint} until it is repaired (see `hookgate doctor`)\n".encode(), 2
    return b"", f"{error}; allowing\n".encode(), 0
