"""check_shell_writes: a shell command that writes a file is judged like a Write of that file.

Seed 000's write rules only saw Write/Edit, so `echo x > e2e/t.gd`, `sed -i`, a heredoc or
`python -c` walked around them, and a Bash append to stage.jsonl skipped the stage validation.
Here every file a Bash command writes (read with a shell lexer, see shell.py) meets the same
rules as a Write (permissions.write_denial), and stage.jsonl is never written by a shell command:
completions go through `hookgate stage complete ROLE`, which validates first (and, like `hookgate
role set|clear`, counts as a write of the file it changes, so a subagent may not run it).

What stays unseen: targets known only at run time ($VAR, $(...), globs expanded from variables),
programs whose writes are not literal in the command (a script file, xargs, git, make), and
interpreters other than Python. Unseen targets are recorded as shell_write_unknown while a role
is active, so they show in the metrics.
"""

from __future__ import annotations

import os

from ..engine.context import Context
from ..engine.gate import Gate
from ..model.events import Event
from ..model.verdicts import Block, Verdict
from .paths import file_name
from .permissions import write_denial
from .shell import DEVICES, ShellSyntaxError, Write, shell_writes
from .stages import is_stage_log

# a recursive removal or move is judged on the files it would take with it, up to this many
MAX_TREE_FILES = 2000
_SKIPPED_DIRS = frozenset({".git", "node_modules", ".venv"})

STAGE_LOG_BY_SHELL = (
    "The stage log (.hookgate/stage.jsonl) is appended only through validation: run "
    "`hookgate stage complete {role}` (or Write the new line, which is validated). Shell writes to it are refused "
    "(via `{command}`)."
)


def check_shell_writes(event: Event, ctx: Context) -> Verdict | None:
    command = getattr(event, "tool_input", {}).get("command")
    if not isinstance(command, str) or not command.strip():
        return None
    cwd = event.cwd or str(ctx.project.root)
    try:
        writes, unknown = shell_writes(command, cwd)
    except ShellSyntaxError:
        return None  # the shell refuses to run it, so it writes nothing
    role = ctx.project.current_role()
    reasons: list[str] = []
    for write in writes:
        if write.path.startswith(DEVICES):
            continue
        ctx.record("file_write", file=file_name(write.path), path=write.path, is_subagent=event.in_subagent, via="Bash",
                   command=write.command)
        for path in _affected(write, str(ctx.project.root)):
            if is_stage_log(path, event, ctx) and not write.validated:
                reasons.append(STAGE_LOG_BY_SHELL.format(role=role or "ROLE", command=write.command))
                break
            reason = write_denial(path, event, role, ctx) if role is not None else None
            if reason:
                reasons.append(f"{reason.format(file=file_name(path), role=role)} (via `{write.command}`)")
                break
    if role is not None:
        for item in unknown:
            ctx.record("shell_write_unknown", target=item.target, command=item.command)
    if reasons:
        return Block(reason="\n".join(dict.fromkeys(reasons)))
    return None


GATES = (
    Gate(
        id="check_shell_writes",
        events=("PreToolUse",),
        matcher="Bash",
        check=check_shell_writes,
        may_block=True,
        fail_mode="closed",
        priority=10,
        needs=("block:PreToolUse", "subagent_identity:PreToolUse?"),  # without it: role rules only
        description="a shell command writing a file meets the write rules of a Write; stage.jsonl only via validation",
    ),
)


def _affected(write: Write, root: str) -> list[str]:
    """The paths a write changes: the path itself and, when it takes a whole tree (rm -r, mv of a
    folder), anything under it, `*` standing for what does not exist yet."""
    if not write.tree:
        return [write.path]
    paths = [write.path, os.path.join(write.path, "*")]
    # `rm -rf ..` takes the whole project with it: walk the project, not the filesystem above it
    start = root if (root + "/").startswith(write.path.rstrip("/") + "/") else write.path
    for folder, dirs, files in os.walk(start):
        dirs[:] = [d for d in dirs if d not in _SKIPPED_DIRS]
        paths.extend(os.path.join(folder, f) for f in files)
        if len(paths) > MAX_TREE_FILES:
            break
    return paths
