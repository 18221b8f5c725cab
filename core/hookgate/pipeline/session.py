"""session_start (seed 000): a session starts from nothing, a pipeline role left over from an
earlier session is dropped, and the model is told which hookgate and preset guard it.

"Left over" needs a definition that also works when the role is set before the runtime starts
(`hookgate role set build`, then the agent): at SessionEnd the active role is marked as used
(the role file's mtime is noted); at the next SessionStart a role still carrying that mark is
stale and dropped, while a role set after that session ended is kept.

Compaction fires SessionStart inside a running session; it continues the session, so it keeps
the session's counters and role (resetting there would forget the workers already dispatched).
"""

from __future__ import annotations

import msgspec

from .. import __version__
from ..engine.context import Context
from ..engine.gate import Gate
from ..model.events import Event
from ..model.verdicts import Context as ContextVerdict, Verdict
from ..store import locked
from .stage_checks import current_tag

CONTINUING_SOURCES = frozenset({"compact"})
USED_ROLE_FILE = "used_role.json"


def session_start(event: Event, ctx: Context) -> Verdict | None:
    if event.name == "SessionEnd":
        _mark_role_used(ctx)
        return None
    source = getattr(event, "source", "startup")
    if source not in CONTINUING_SOURCES:
        ctx.session.reset()
        dropped = _drop_stale_role(ctx)
        ctx.record("session_start", source=source, dropped_role=dropped)
    text = banner(ctx)
    return ContextVerdict(context=text) if text else None


def banner(ctx: Context) -> str | None:
    """Who guards the session, in the layout's words: hookgate's version and preset, or
    GodotMaker's `[GodotMaker vX.Y.Z | tag: vA.B.C]` from its version file (none without one)."""
    layout = ctx.project.layout
    role = ctx.project.current_role()
    if layout.version_file is None:
        text = layout.banner.format(hookgate_version=__version__, preset=ctx.config.preset)
        return text + (f"; pipeline role: {role}" if role else "")
    try:
        version = (ctx.project.dir / layout.version_file).read_text(errors="replace").strip().removeprefix("v")
    except OSError:
        return None
    if not version:
        return None
    tag = current_tag(ctx.project.root)
    return layout.banner.format(version=version, tag=tag) if tag else layout.banner_untagged.format(version=version)


def _mark_role_used(ctx: Context) -> None:
    mtime = _role_mtime(ctx)
    if mtime is not None:
        mark = {"role": ctx.project.current_role(), "mtime_ns": mtime}
        locked.replace(ctx.project.state_dir / USED_ROLE_FILE, msgspec.json.encode(mark))


def _drop_stale_role(ctx: Context) -> str | None:
    mtime = _role_mtime(ctx)
    if mtime is None:
        return None
    try:
        mark = msgspec.json.decode(locked.read(ctx.project.state_dir / USED_ROLE_FILE) or b"{}")
    except msgspec.DecodeError:
        mark = {}
    if not isinstance(mark, dict) or mark.get("mtime_ns") != mtime:
        return None
    role = ctx.project.current_role()
    ctx.project.clear_role()
    return role


def _role_mtime(ctx: Context) -> int | None:
    try:
        return ctx.project.role_path.stat().st_mtime_ns
    except OSError:
        return None


GATES = (
    Gate(
        id="session_start",
        events=("SessionStart", "SessionEnd"),
        check=session_start,
        priority=0,
        needs=("fires:SessionStart", "context:SessionStart?"),
        description="resets the session, drops a stale pipeline role, names hookgate's version and preset",
    ),
)
