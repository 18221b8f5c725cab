"""The input schema of each canonical tool, as data: what a rewritten tool input must still be.

A hook may replace a tool's input before the tool runs (Claude's `updatedInput`). The replacement
is checked against these schemas before any side effect, so a rewrite cannot smuggle in a call the
tool would misread: required fields present, every field of the right type, no field the tool does
not know. Fields the runtime itself sent in the original input are accepted even when unknown
here: runtimes add fields (Claude's Bash grew `dangerouslyDisableSandbox`), and a hook that copies
the original input and changes one field must not be refused for that.

Tools with no schema here (MCP tools, runtime-specific tools) are only required to be an object.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec


class _Input(msgspec.Struct, frozen=True, kw_only=True):
    pass


class Bash(_Input, frozen=True, kw_only=True):
    command: str
    description: str | None = None
    timeout: int | None = None
    run_in_background: bool | None = None


class MonitorSocket(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    url: str
    protocols: list[str] | None = None


class Monitor(_Input, frozen=True, kw_only=True):
    """Claude Code's Monitor: a command (or a WebSocket) run in the background, its output lines
    streamed back as notices."""

    description: str
    timeout_ms: float
    command: str | None = None
    ws: MonitorSocket | None = None


class Write(_Input, frozen=True, kw_only=True):
    file_path: str
    content: str


class Edit(_Input, frozen=True, kw_only=True):
    file_path: str
    old_string: str
    new_string: str
    replace_all: bool | None = None


class EditOperation(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    old_string: str
    new_string: str
    replace_all: bool | None = None


class MultiEdit(_Input, frozen=True, kw_only=True):
    file_path: str
    edits: list[EditOperation]


class Delete(_Input, frozen=True, kw_only=True):
    """Codex patches that delete a file."""

    file_path: str


class Read(_Input, frozen=True, kw_only=True):
    file_path: str
    offset: int | None = None
    limit: int | None = None


class NotebookEdit(_Input, frozen=True, kw_only=True):
    notebook_path: str
    new_source: str
    cell_id: str | None = None
    cell_type: Literal["code", "markdown"] | None = None
    edit_mode: Literal["replace", "insert", "delete"] | None = None


class Glob(_Input, frozen=True, kw_only=True):
    pattern: str
    path: str | None = None


class Grep(_Input, frozen=True, kw_only=True):
    pattern: str
    path: str | None = None
    glob: str | None = None
    type: str | None = None
    output_mode: Literal["content", "files_with_matches", "count"] | None = None
    case_insensitive: bool | None = msgspec.field(default=None, name="-i")
    line_numbers: bool | None = msgspec.field(default=None, name="-n")
    after: int | None = msgspec.field(default=None, name="-A")
    before: int | None = msgspec.field(default=None, name="-B")
    around: int | None = msgspec.field(default=None, name="-C")
    head_limit: int | None = None
    multiline: bool | None = None


class WebFetch(_Input, frozen=True, kw_only=True):
    url: str
    prompt: str


class WebSearch(_Input, frozen=True, kw_only=True):
    query: str
    allowed_domains: list[str] | None = None
    blocked_domains: list[str] | None = None


class Agent(_Input, frozen=True, kw_only=True):
    description: str
    prompt: str
    subagent_type: str | None = None
    model: str | None = None


class Skill(_Input, frozen=True, kw_only=True):
    skill: str
    args: str | None = None


TOOL_INPUTS: dict[str, type[_Input]] = {
    cls.__name__: cls
    for cls in (Bash, Monitor, Write, Edit, MultiEdit, Delete, Read, NotebookEdit, Glob, Grep, WebFetch, WebSearch, Agent, Skill)
}

# the input field that names the file or folder a tool works on
PATH_FIELDS = ("file_path", "notebook_path", "path")


def field_names(schema: type[_Input]) -> tuple[str, ...]:
    return schema.__struct_encode_fields__


def input_error(tool: str, updated: Any, original: dict[str, Any] | None = None) -> str | None:
    """Why `updated` is not a valid input for `tool` (None when it is). `original` is the input the
    runtime sent; its own fields are accepted even when the schema does not list them."""
    if not isinstance(updated, dict):
        return f"a {tool} input must be an object, not {type(updated).__name__}"
    schema = TOOL_INPUTS.get(tool)
    if schema is None:
        return None
    known = field_names(schema)
    unknown = sorted(k for k in updated if k not in known and k not in (original or {}))
    if unknown:
        return f"unknown field(s) {unknown} for {tool}; known: {', '.join(known)}"
    try:
        msgspec.convert({k: v for k, v in updated.items() if k in known}, schema)
    except msgspec.ValidationError as exc:
        return f"invalid {tool} input: {exc}"
    return None
