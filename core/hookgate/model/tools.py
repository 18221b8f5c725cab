"""Canonical tool names (Claude Code's) and where each file-changing tool names its file."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .events import Event

# tool -> the input field holding the path it changes; "Delete" comes from Codex patches
FILE_TOOLS: dict[str, str] = {
    "Write": "file_path",
    "Edit": "file_path",
    "MultiEdit": "file_path",
    "NotebookEdit": "notebook_path",
    "Delete": "file_path",
}
FILE_TOOL_MATCHER = "|".join(FILE_TOOLS)

# tools that run a shell command (their input's `command`): Claude Code's Monitor runs one and
# streams its output back, so it writes what a Bash call would
SHELL_TOOLS = ("Bash", "Monitor")
SHELL_TOOL_MATCHER = "|".join(SHELL_TOOLS)
# tools whose command always runs in the background: the call returns once it started
BACKGROUND_TOOLS = frozenset({"Monitor"})

# tools that start subagents: Claude Code's Workflow runs a script whose agent() calls each start
# one (agent_type "workflow-subagent"), with no Agent call of its own
DISPATCH_TOOLS = ("Agent", "Workflow")
DISPATCH_TOOL_MATCHER = "|".join(DISPATCH_TOOLS)

# older or other spellings of Claude's own tools
ALIASES: dict[str, str] = {"Task": "Agent"}


def canonical_tool(name: str) -> str:
    return ALIASES.get(name, name)


def changed_path(event: "Event") -> str | None:
    """The file a Write/Edit/MultiEdit/NotebookEdit/Delete call changes, or None."""
    # only tool events have a tool_name (no import of events here: every file gate asks this)
    if (field := FILE_TOOLS.get(getattr(event, "tool_name", None))) is None:  # type: ignore[arg-type]
        return None
    value = event.tool_input.get(field)  # type: ignore[attr-defined]
    return value if isinstance(value, str) and value else None
