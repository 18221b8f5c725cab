"""check_shell_writes: a shell command that writes a file is judged like a Write of that file.

Seed 000's write rules only saw Write/Edit, so `echo x > e2e/t.gd`, `sed -i`, a heredoc or
`python -c` walked around them, and a Bash append to stage.jsonl skipped the stage validation.
Here every file a Bash command writes (read as bash would run it, see shell.py) meets the same
rules as a Write (permissions.write_denial), and stage.jsonl is never written by a shell command:
completions go through `hookgate stage complete ROLE`, which validates first (and, like `hookgate
role set|clear`, counts as a write of the file it changes, so a subagent may not run it).

What a command's text cannot tell (a variable set outside it, `git checkout`, `make`, a script,
code piped into an interpreter, a command this reader cannot read, a tree too large to walk) is
*unknown*, never harmless. While a role is active, an unknown target may run only when the effect
check covers the call (effect.covers: it will put back any protected file the call changed); it
is recorded as shell_write_unknown. Where nothing checks the effect, it is refused with a reason
that names the allowed way. With no role active nothing is refused on that ground.

Files outside the project are not judged by their name: a write is judged on where it lands
(its lexical and its resolved path), and only a landing inside the project meets the rules.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from .. import effect
from ..config.load import STATE_TOKEN as STATE_FOLDER
from ..engine.context import Context
from ..model.events import Event
from ..model.verdicts import Block, Verdict
from .agents import agent_type_of
from .paths import event_readings, file_name
from .permissions import protect_denial, rule_sets_for, write_denial
from .stages import is_stage_log, stage_log_name

if TYPE_CHECKING:
    from .shell import Write

# a recursive removal or move is judged on every file it would take with it; a tree larger than
# this is not walked on a hook call, and the write is unknown (never judged on a part of it)
MAX_TREE_FILES = 20000

STAGE_LOG_BY_SHELL = (
    "The stage log ({stage_log}) is appended only through validation: run "
    "`hookgate stage complete {role}` (or Write the new line, which is validated). Shell writes to it are refused "
    "(via `{command}`)."
)
UNKNOWN_REFUSED = (
    "hookgate cannot tell before it runs which files this command writes ({target}, via `{command}`), and no check "
    "after the call covers it while the {role} role is active. Write or edit files with the Write/Edit tool (each "
    "file meets the role's rules), record a stage with `hookgate stage complete ROLE`, or name each written file "
    "literally in the command."
)
UNKNOWN_OUTLIVES = (
    "hookgate cannot tell before it runs which files this command writes ({target}, via `{command}`), and it "
    "leaves work running after the call returned ({outlives}), past the check after the call, while the {role} "
    "role is active. Run it in the foreground (no `&` without a `wait` after it, no `setsid`, `at`, `screen`, "
    "`tmux` or background call) so that what it wrote is checked when it ends, or write the files with the "
    "Write/Edit tool."
)
BACKGROUND_CALL = "the call itself, run in the background"


def check_shell_writes(event: Event, ctx: Context) -> Verdict | None:
    command = getattr(event, "tool_input", {}).get("command")
    if not isinstance(command, str) or not command.strip():
        return None
    # the shell reader (a few dozen milliseconds of imports) loads with the first command judged:
    # a hook process deciding a Write never pays for it
    from ..formats import gitconfig
    from .shell import DEVICES, Unknown, shell_writes

    root = ctx.project.root_text
    cwd = event.cwd or root
    writes, unknown = shell_writes(command, cwd)
    writes = [placed(write, ctx) for write in writes]
    role = ctx.current_role()
    protect = ctx.config.pipeline.protect
    reasons: list[str] = []
    for write in writes:
        if write.path.startswith(DEVICES):
            continue
        ctx.record("file_write", file=file_name(write.path), path=write.path, is_subagent=event.in_subagent, via="Bash",
                   command=write.command)
        if role is not None and write.settings and gitconfig.inert(write.settings, protect.git_inert_keys):
            continue  # `git config user.email ...`: a key that names no program git runs
        if role is not None and not write.tree and _shared_inode(write.path):
            unknown.append(Unknown(f"{file_name(write.path)}, a file with more than one name (a hard link)",
                                   write.command))
        affected = _affected(write, root, event, ctx)
        if affected == [] and role is not None:  # outside the project: only hookgate's own files there
            reason = protect_denial(write.path, event, ctx)
            if reason:
                reasons.append(f"{reason.format(file=file_name(write.path), role=role)} (via `{write.command}`)")
            continue
        if affected is None:
            unknown.append(Unknown(f"everything under {write.path} (too many files to judge)", write.command))
            continue
        for path in affected:
            if is_stage_log(path, event, ctx) and not write.validated:
                reasons.append(STAGE_LOG_BY_SHELL.format(stage_log=stage_log_name(ctx.project), role=role or "ROLE",
                                                         command=write.command))
                break
            reason = write_denial(path, event, role, ctx) if role is not None else None
            if reason:
                reasons.append(f"{reason.format(file=file_name(path), role=role)} (via `{write.command}`)")
                break
    if role is not None and unknown and _protects_anything(event, role, ctx):
        if effect.in_background(event):
            unknown = [item._replace(outlives=BACKGROUND_CALL) for item in unknown]
        covered = effect.covers(event, ctx)
        for item in unknown:
            ctx.record("shell_write_unknown", target=item.target, command=item.command,
                       checked_after=covered and not item.outlives)
        refused = next((item for item in unknown if item.outlives or not covered), None)
        if refused is not None:
            text = UNKNOWN_OUTLIVES if refused.outlives else UNKNOWN_REFUSED
            reasons.append(text.format(target=refused.target, command=refused.command[:120], role=role,
                                       outlives=refused.outlives))
    if reasons:
        return Block(reason="\n".join(dict.fromkeys(reasons)))
    return None


def placed(write: Write, ctx: Context) -> Write:
    """A write into the project's state folder (`hookgate role set`, `stage complete`), named where
    this project's layout keeps it."""
    token = f"{os.sep}{STATE_FOLDER}{os.sep}"
    if token not in write.path:
        return write
    return write._replace(path=write.path.replace(token, f"{os.sep}{ctx.project.layout.dir}{os.sep}"))




def _affected(write: Write, root: str, event: Event, ctx: Context) -> list[str] | None:
    """The paths of the project a write changes: none when it lands outside the project; the path
    itself and, when it takes a whole tree (rm -r, mv of a folder), every file under it, `*`
    standing for what does not exist yet. None when the tree is too large to walk."""
    if all(reading.startswith("/") for reading in event_readings(write.path, event, ctx)):
        return []  # outside the project, also once symlinks are followed: not the project's rules
    if not write.tree:
        return [write.path]
    paths = [write.path, os.path.join(write.path, "*")]
    # `rm -rf ..` takes the whole project with it: walk the project, not the filesystem above it
    start = root if (root + "/").startswith(write.path.rstrip("/") + "/") else write.path
    if os.path.islink(start):
        return paths  # removing a link removes the link, not what it points at
    for folder, dirs, files in os.walk(start):
        paths.extend(os.path.join(folder, name) for name in dirs + files)
        if len(paths) > MAX_TREE_FILES:
            return None
    return paths


def _shared_inode(path: str) -> bool:
    """A regular file with another name elsewhere: writing it writes that other name too."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return info.st_nlink > 1 and not os.path.isdir(path)


def _protects_anything(event: Event, role: str, ctx: Context) -> bool:
    """Whether the acting agent has any file it may not write under this role (with self-protection
    off, the lead of a role without rules may write everything: nothing it runs needs checking)."""
    pipeline = ctx.config.pipeline
    if pipeline.protect.enabled:  # hookgate's own files are every agent's to leave alone
        return True
    subagent = event.in_subagent
    return any(rule_set.otherwise or any(rule.deny for rule in rule_set.rules)
               for rule_set in rule_sets_for(pipeline, role, subagent, agent_type_of(event, ctx) if subagent else None))
