"""The three-level hooks document Claude Code's settings.json and Codex's hooks.json share:
`{"hooks": {Event: [{"matcher": ..., "hooks": [handler, ...]}, ...]}, ...}`. Both installers
read it, take out hookgate's own handlers and write it back through here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

from ..store import locked


def read(path: Path) -> dict[str, Any]:
    """The document, {} when the file does not exist. Raises ValueError (and nothing is changed)
    when it is not an object with a `hooks` object."""
    if not path.exists():
        return {}
    try:
        document = json.loads(path.read_text() or "{}")
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path} is not valid JSON ({exc}); fix or move it, nothing was changed") from None
    if not isinstance(document, dict) or not isinstance(document.get("hooks", {}), dict):
        raise ValueError(f"{path}: expected an object with a `hooks` object; nothing was changed")
    return document


def remove_handlers(hooks: dict[str, Any], is_ours: Callable[[Any], bool]) -> bool:
    """Take out the handlers `is_ours` picks. A group or an event list goes too when it became
    empty by that removal (an empty list and a missing one read alike); what the user had, even
    empty, stays. Returns whether anything was removed."""
    removed = False
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        kept = []
        for group in groups:
            handlers = group.get("hooks") if isinstance(group, dict) else None
            if isinstance(handlers, list) and any(is_ours(h) for h in handlers):
                removed = True
                remaining = [h for h in handlers if not is_ours(h)]
                if not remaining:
                    continue
                group = {**group, "hooks": remaining}
            kept.append(group)
        if kept or not groups:
            hooks[event] = kept
        else:
            del hooks[event]
    return removed


def write(path: Path, document: dict[str, Any]) -> bool:
    """Write the document (atomically) when it says something else than the file; a file that
    only differs in layout is left as the user wrote it. Returns whether it wrote."""
    if document == (read(path) if path.exists() else {}):
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    locked.replace(path, (json.dumps(document, indent=2) + "\n").encode())
    return True
