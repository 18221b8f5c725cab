"""check_asset_access (seed 000): while a pipeline role is active, the lead may not read image
files under assets/ itself; it dispatches an Analyst, whose reading is allowed. Ordinary
conversations (no role) and every subagent read freely; so do non-image files (.json, .ogg)."""

from __future__ import annotations

import os

from ..engine.context import Context
from ..model.events import Event, ToolEvent
from ..model.verdicts import Block, Verdict
from .paths import event_readings, file_name, matches
from .rules import expand


def check_asset_access(event: Event, ctx: Context) -> Verdict | None:
    path = (event.tool_input if isinstance(event, ToolEvent) else {}).get("file_path")
    if event.in_subagent or not isinstance(path, str) or not path or ctx.current_role() is None:
        return None
    pipeline = ctx.config.pipeline
    rule = pipeline.asset_read
    extensions = {ext.lower() for ext in rule.extensions}
    folders = expand(rule.folders, pipeline.paths)
    for rel in event_readings(path, event, ctx):
        if os.path.splitext(rel)[1] in extensions and any(matches(rel, folder) for folder in folders):
            return Block(reason=rule.reason.format(file=file_name(path)))
    return None
