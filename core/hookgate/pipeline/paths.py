"""The pipeline's readings of the paths an event names (hookgate.paths, with the project root and
the pipeline's worktree markers), and how a reason names a file."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..paths import matches, readings

if TYPE_CHECKING:
    from ..engine.context import Context
    from ..model.events import Event

__all__ = ["event_readings", "file_name", "matches", "readings"]


def event_readings(path: str, event: Event, ctx: Context) -> tuple[str, ...]:
    """`readings` of a path an event names, in the event's project, resolved once per decision."""
    key = ("readings", path, event.cwd)
    found: tuple[str, ...] | None = ctx.memo.get(key)
    if found is None:
        root = ctx.project.root_text
        found = ctx.memo[key] = readings(path, event.cwd or root, [root], ctx.config.pipeline.worktree_markers,
                                         ctx.resolved)
    return found


def file_name(path: str) -> str:
    """The name a reason shows for a written path (its last component)."""
    return path.rstrip("/\\").rpartition("/")[2] or path  # os.path.basename, without its Python
