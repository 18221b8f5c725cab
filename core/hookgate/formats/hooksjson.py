"""The three-level hooks document Claude Code's settings.json and Codex's hooks.json share:
`{"hooks": {Event: [{"matcher": ..., "hooks": [handler, ...]}, ...]}, ...}`. Both installers
read it, take out hookgate's own handlers and write it back through here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

from ..store import locked
from . import jsontext


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


def entries(hooks: Mapping[str, Any]) -> Iterator[tuple[str, int, int, dict[str, Any], dict[str, Any]]]:
    """(event, group index, handler index, group, handler) of every handler object in a `hooks`
    object, skipping what is not a list of groups with a list of handlers (the runtimes skip it
    too). The indices are positions, as Codex's trust keys name them."""
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            continue
        for g, group in enumerate(groups):
            handlers = group.get("hooks") if isinstance(group, dict) else None
            for h, handler in enumerate(handlers if isinstance(handlers, list) else []):
                if isinstance(handler, dict):
                    yield event, g, h, group, handler


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


def write(path: Path, document: dict[str, Any], is_ours: Callable[[Any], bool]) -> bool:
    """Make the file say `document`, whose only differences from the file are hookgate's handlers
    (`is_ours`) taken out or appended: edited in its text (jsontext), so every other byte stays as
    the user wrote it. A file that only differs in layout is left alone. Returns whether it wrote."""
    old = locked.read(path).decode() if path.exists() else None
    if document == (read(path) if old is not None else {}):
        return False
    text = _edited(old, document, is_ours)
    if text is None:
        path.unlink()  # hookgate created it, and it holds nothing else
        try:
            path.parent.rmdir()  # the folder install made for it (.claude/, .gemini/), if it is empty now
        except OSError:
            pass
        return True
    path.parent.mkdir(parents=True, exist_ok=True)
    locked.replace(path, text.encode())
    return True


def register(path: Path, registrations: Mapping[str, list[Any]], is_ours: Callable[[Any], bool]) -> bool:
    """Make the hookgate handlers of the document at `path` exactly `registrations` (event ->
    matcher groups): its own old ones (`is_ours`) out, these appended, every other byte kept."""
    document = read(path)
    hooks = document.setdefault("hooks", {})
    remove_handlers(hooks, is_ours)
    for event, groups in registrations.items():
        hooks.setdefault(event, []).extend(groups)
    return write(path, document, is_ours)


def unregister(path: Path, picked: Callable[[Any], bool]) -> bool:
    """Take the handlers `picked` chooses out of the document at `path` (hookgate's own on
    uninstall, another guard's on `hookgate migrate`), keeping everything else."""
    if not path.exists():
        return False
    document = read(path)
    hooks = document.get("hooks", {})
    if remove_handlers(hooks, picked) and not hooks:
        del document["hooks"]  # it held only what was taken out
    return write(path, document, picked)


def _edited(old: str | None, document: dict[str, Any], is_ours: Callable[[Any], bool]) -> str | None:
    try:
        text = jsontext.remove(old, is_ours) if old is not None else None
        for event, groups in (document.get("hooks") or {}).items():
            for group in groups:
                handlers = group.get("hooks") if isinstance(group, dict) else None
                if not (isinstance(handlers, list) and handlers and all(is_ours(h) for h in handlers)):
                    continue
                text = jsontext.append(text, event, group) if text is not None else \
                    jsontext.new_file({"hooks": {event: [group]}})
        if _normal(json.loads(text) if text is not None else {}) == _normal(document):
            return text
    except ValueError:  # a layout the text edit does not know: say it the plain way
        pass
    return jsontext.new_file(document)


def _normal(document: dict[str, Any]) -> dict[str, Any]:
    """The document as the runtimes read it: an empty event list or `hooks` object is none."""
    hooks = document.get("hooks")
    if not isinstance(hooks, dict):
        return document
    hooks = {event: groups for event, groups in hooks.items() if groups != []}
    rest = {key: value for key, value in document.items() if key != "hooks"}
    return {**rest, "hooks": hooks} if hooks else rest
