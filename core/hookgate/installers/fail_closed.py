"""The hook command for runtimes that have no fail-closed switch (Codex, Gemini CLI): a handler
that crashes or cannot start exits with something other than 0 or 2, which they count as a
warning or a failed hook, and the action goes ahead. For the gating events (lifecycle.toml's
`fail_closed`) the command therefore runs hookgate under `sh` (the runtime's own shell may not be
POSIX) and turns every such exit into exit 2 with a reason. `checks.missing_command` reads the
program back out of this form: `sh -c SCRIPT hookgate COMMAND...`."""

from __future__ import annotations

import shlex

from .. import lifecycle


def hook_command(command: str, runtime: str, event: str) -> str:
    direct = f"{command} hook {runtime} --event {event}"
    if event not in lifecycle.fail_closed_events():
        return direct
    script = (f'"$@" hook {runtime} --event {event}; s=$?; case $s in 0|2) exit $s;; esac; '
              f'echo "hookgate could not run (exit $s): {event} is blocked until it is repaired; '
              f'run: hookgate doctor" >&2; exit 2')
    return f"sh -c {shlex.quote(script)} hookgate {command}"
