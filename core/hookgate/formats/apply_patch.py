"""apply_patch text (Codex's tool, and OpenCode's for GPT-family models), read as the file
operations it performs: the one reader of the format. Codex's dialect, the RPC core (OpenCode's
plugin sends the raw patch) and the shell gate (`apply_patch` run from a shell) all use it, so a
patch is the same canonical events on every runtime.

    *** Begin Patch
    *** Add File: <path>          then "+line" lines: the new file's content
    *** Delete File: <path>
    *** Update File: <path>       then optionally "*** Move to: <path>", then chunks:
    @@ [context]                  " " context, "-" removed, "+" added lines; "*** End of File"
    *** End Patch

Each operation becomes the canonical file tool Claude would have used for it, so the same path
rules judge it: Add -> Write, Delete -> Delete, Update -> Edit (MultiEdit when it has several
chunks), Update + Move -> Delete of the source and an Edit of the destination. A text this parser
cannot read raises PatchError: hookgate never guesses which files a patch touches.
"""

from __future__ import annotations

import os
import re
from typing import Any

BEGIN, END = "*** Begin Patch", "*** End Patch"
ADD, DELETE, UPDATE, MOVE = "*** Add File: ", "*** Delete File: ", "*** Update File: ", "*** Move to: "
END_OF_FILE = "*** End of File"


class PatchError(ValueError):
    pass


def file_operations(patch: str) -> list[tuple[str, dict[str, Any]]]:
    """(canonical tool, tool_input) per file operation, in patch order; paths as written."""
    lines = patch.strip().splitlines()
    if not lines or lines[0].strip() != BEGIN:
        raise PatchError(f"apply_patch input does not start with {BEGIN!r}")
    body = lines[1:-1] if lines[-1].strip() == END else lines[1:]  # Codex tolerates a missing end
    operations: list[tuple[str, dict[str, Any]]] = []
    i = 0
    while i < len(body):
        line = body[i]
        i += 1
        if line.startswith(ADD):
            added, i = _take(body, i, lambda text: text.startswith("+"))
            content = "".join(text[1:] + "\n" for text in added)
            operations.append(("Write", {"file_path": _path(line, ADD), "content": content}))
        elif line.startswith(DELETE):
            operations.append(("Delete", {"file_path": _path(line, DELETE)}))
        elif line.startswith(UPDATE):
            source = _path(line, UPDATE)
            target = source
            if i < len(body) and body[i].startswith(MOVE):
                target = _path(body[i], MOVE)
                i += 1
            changes, i = _take(body, i, lambda text: not text.startswith("*** ") or text == END_OF_FILE)
            edit = _edit(target, _chunks(changes))
            if target != source:
                operations.append(("Delete", {"file_path": source}))
                edit[1]["moved_from"] = source
            operations.append(edit)
        elif line.strip():
            raise PatchError(f"unexpected line in apply_patch input: {line[:80]!r}")
    if not operations:
        raise PatchError("apply_patch input names no file")
    return operations


def _path(line: str, prefix: str) -> str:
    path = line[len(prefix):].strip()
    if not path:
        raise PatchError(f"{prefix.strip()} without a path")
    return path


def _take(lines: list[str], i: int, belongs: Any) -> tuple[list[str], int]:
    start = i
    while i < len(lines) and belongs(lines[i]):
        i += 1
    return lines[start:i], i


def _chunks(changes: list[str]) -> list[tuple[str, str]]:
    """(old text, new text) per `@@` chunk; context lines belong to both."""
    chunks: list[tuple[list[str], list[str]]] = []
    for line in changes:
        if line.startswith("@@") or not chunks:
            chunks.append(([], []))
            if line.startswith("@@"):
                continue
        if line == END_OF_FILE:
            continue
        old, new = chunks[-1]
        marker, text = (line[:1], line[1:]) if line[:1] in ("+", "-", " ") else (" ", line)
        if marker != "+":
            old.append(text)
        if marker != "-":
            new.append(text)
    return [("\n".join(old), "\n".join(new)) for old, new in chunks if old or new]


def _edit(path: str, chunks: list[tuple[str, str]]) -> tuple[str, dict[str, Any]]:
    if len(chunks) <= 1:  # a pure move has no chunk
        old, new = chunks[0] if chunks else ("", "")
        return "Edit", {"file_path": path, "old_string": old, "new_string": new}
    edits = [{"old_string": old, "new_string": new} for old, new in chunks]
    return "MultiEdit", {"file_path": path, "edits": edits}


def tool_calls(patch: str, cwd: str) -> list[tuple[str, dict[str, Any]]]:
    """(canonical tool, tool_input) per file of the patch, as the gates judge them: paths joined to
    `cwd`, and each input carrying the whole `patch` (the engine judges them as one call, so one
    forbidden file refuses the whole patch). Raises PatchError."""
    calls = []
    for tool, fields in file_operations(patch):
        fields["file_path"] = _absolute(fields["file_path"], cwd)
        if "moved_from" in fields:
            fields["moved_from"] = _absolute(fields["moved_from"], cwd)
        calls.append((tool, {**fields, "patch": patch}))
    return calls


def is_patch_file_input(tool_input: dict[str, Any]) -> bool:
    """Whether a canonical tool input is one file of an expanded patch (see tool_calls)."""
    return "patch" in tool_input and "file_path" in tool_input


_HEADER = re.compile(r"^(?:\*\*\* (?:Add File|Update File|Delete File|Move to): )(.+?)\s*$", re.MULTILINE)


def touched_files(patch: str) -> list[str]:
    """Every file the patch adds, updates, deletes or moves to (paths as written), in patch order.
    For a text the strict reading refuses, the files its header lines name: a gate judging a shell
    command cannot know that the tool will refuse the text too, so it judges every file named."""
    try:
        operations = file_operations(patch)
    except PatchError:
        return _HEADER.findall(patch)
    return list(dict.fromkeys(path for _, fields in operations
                              for path in (fields.get("moved_from"), fields["file_path"]) if path))


def _absolute(path: str, cwd: str) -> str:
    # joined, not normalised: the path rules judge both the named and the resolved reading
    return os.path.join(cwd, path) if cwd else path
