"""session_start (seed 000): a session starts from nothing, a pipeline role left over from an
earlier session is dropped, and the model is told which hookgate and preset guard it.

"Left over from an earlier session" is decided by who owns the role. A role belongs to the session
that was running when the role file was written: hookgate notes that session as the owner (in
`role_owner.json` of the state dir, with the role file's mtime) at the first event after the write
that only a live, working session sends (a prompt, a tool call: the PostToolUse of the very Write
or `hookgate role set` that set it), or at a SessionStart. A role file written since the note (its
mtime differs) has no owner yet.

At a session's SessionStart (startup, clear, resume):
  - a role with no owner was set outside any session (`hookgate role set build` in a terminal,
    then the agent): this session inherits it and owns it from now on;
  - a role owned by this session (the one that set it, resumed under the same id) is kept;
  - a role owned by another session is left over, whether that session ended or was killed
    without a SessionEnd (a killed Claude Code, a killed OpenCode): it is dropped.
Compaction fires SessionStart inside a running session; it continues the session, so it keeps
the session's counters and role (resetting there would forget the workers already dispatched).
Stop, SessionEnd, Notification and subagent events never claim a role: a session that is only
idling or closing when the user sets a role for the next one does not take it.
"""

from __future__ import annotations

import os
from functools import lru_cache, partial
from pathlib import Path
from typing import Callable

import msgspec

from .. import __version__
from ..engine.context import Context
from ..model.events import Event
from ..model.verdicts import Context as ContextVerdict, Verdict
from ..store import locked

CONTINUING_SOURCES = frozenset({"compact"})
# events only a live session that is working sends: the role was there while it worked
CLAIMING_EVENTS = ("UserPromptSubmit", "PreToolUse", "PermissionRequest", "PostToolUse", "PostToolUseFailure")


def session_start(event: Event, ctx: Context) -> Verdict | None:
    if event.name != "SessionStart":
        _claim_role(event, ctx)
        return None
    source = getattr(event, "source", "startup")
    if source not in CONTINUING_SOURCES:
        ctx.session.reset()
        dropped = _drop_stale_role(event, ctx)
        ctx.record("session_start", source=source, dropped_role=dropped)
    _claim_role(event, ctx)
    text = banner(ctx)
    return ContextVerdict(context=text) if text else None


def banner(ctx: Context) -> str | None:
    """Who guards the session, in the layout's words: hookgate's version and preset, or
    GodotMaker's `[GodotMaker vX.Y.Z | tag: vA.B.C]` from its version file (none without one)."""
    layout = ctx.project.layout
    role = ctx.current_role()
    if layout.version_file is None:
        text = layout.banner.format(hookgate_version=__version__, preset=ctx.config.preset)
        return text + (f"; pipeline role: {role}" if role else "")
    try:
        version = (ctx.project.dir / layout.version_file).read_text(errors="replace").strip().removeprefix("v")
    except OSError:
        return None
    if not version:
        return None
    from .stage_checks import current_tag  # only a layout with a version file shows the tag

    tag = current_tag(ctx.project.root)
    return layout.banner.format(version=version, tag=tag) if tag else layout.banner_untagged.format(version=version)


def role_owner(ctx: Context, mtime: int | None = None) -> str | None:
    """The session that owns the active role file as it is now (`mtime`: its mtime, when the
    caller has just read it); None when nobody does yet."""
    mtime = _role_mtime(ctx) if mtime is None else mtime
    if mtime is None:
        return None
    note = ctx.look(*_owner_look(ctx.project.role_owner_path))
    if not isinstance(note, dict) or note.get("mtime_ns") != mtime or not isinstance(note.get("session_id"), str):
        return None
    session_id: str = note["session_id"]
    return session_id


@lru_cache(maxsize=64)
def _owner_look(path: str) -> tuple[tuple[str, str], Callable[[], object], tuple[str]]:
    """A decision's look at the owner note (Context.look: key, work, the file it reads), made once
    per note: every tool call's session gate asks."""
    return ("role owner", path), partial(_owner_note, path), (path,)


# The owner note of each project as last read in this process, read again when its file changed
# (locked.Remembered; every claim replaces the note, a new inode).
_notes: dict[str, locked.Remembered[object]] = {}


def _owner_note(path: str) -> object:
    try:
        st = os.stat(path)
    except OSError:
        return {}
    note = _notes.get(path)
    if note is None:
        if len(_notes) >= 64:
            _notes.clear()
        note = _notes[path] = locked.Remembered(Path(path), _decoded_note)
    return note.look(st)


def _decoded_note(text: bytes) -> object:
    try:
        return msgspec.json.decode(text or b"{}")
    except msgspec.DecodeError:
        return None


def _claim_role(event: Event, ctx: Context) -> None:
    try:
        role, mtime = ctx.role_state()
    except OSError:
        return
    if mtime is None or not event.session_id or role_owner(ctx, mtime) is not None:
        return
    note = {"session_id": event.session_id, "runtime": event.runtime, "role": role, "mtime_ns": mtime}
    locked.replace(Path(ctx.project.role_owner_path), msgspec.json.encode(note))


def _drop_stale_role(event: Event, ctx: Context) -> str | None:
    owner = role_owner(ctx)
    if owner is None or owner == event.session_id:
        return None
    role = ctx.current_role()
    ctx.project.clear_role()
    ctx.role_changed()
    return role


def _role_mtime(ctx: Context) -> int | None:
    try:
        return ctx.role_state()[1]
    except OSError:
        return None
