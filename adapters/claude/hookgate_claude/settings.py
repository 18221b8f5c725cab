"""hookgate's registrations in Claude Code's settings.json (`hooks` -> event -> matcher groups).

Install merges into what is there (every other key and hook is kept) and is idempotent;
uninstall removes exactly the handlers that run `hookgate hook claude`.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from hookgate import lifecycle

# event, matcher (None: the event takes none), timeout (s), fail closed when hookgate itself cannot
# run; generated from the lifecycle matrix (core/hookgate/lifecycle.toml), the one source of truth
REGISTRATIONS: tuple[tuple[str, str | None, int, bool], ...] = tuple(
    (r.event, r.matcher, r.timeout_for("claude"), r.fail_closed) for r in lifecycle.for_runtime("claude")
)

_OURS = re.compile(r"hookgate['\"]?\s+hook\s+claude\b")


def config_path(project: Path | None) -> Path:
    if project is not None:
        return project / ".claude" / "settings.json"
    home = os.environ.get("CLAUDE_CONFIG_DIR") or str(Path.home() / ".claude")
    return Path(home) / "settings.json"


def registrations(command: str) -> dict[str, list[dict[str, Any]]]:
    hooks: dict[str, list[dict[str, Any]]] = {}
    for event, matcher, timeout, fail_closed in REGISTRATIONS:
        handler: dict[str, Any] = {"type": "command", "command": f"{command} hook claude --event {event}", "timeout": timeout}
        if fail_closed:
            handler["onFailure"] = "block"  # a crash or timeout of hookgate blocks instead of allowing
        hooks[event] = [{"matcher": matcher, "hooks": [handler]} if matcher else {"hooks": [handler]}]
    return hooks


def install(path: Path, command: str) -> bool:
    settings = _read(path)
    before = json.dumps(settings, sort_keys=True)
    _remove_ours(settings)
    hooks = settings.setdefault("hooks", {})
    for event, groups in registrations(command).items():
        hooks.setdefault(event, []).extend(groups)
    return _write_if_changed(path, settings, before)


def uninstall(path: Path) -> bool:
    if not path.exists():
        return False
    settings = _read(path)
    before = json.dumps(settings, sort_keys=True)
    _remove_ours(settings)
    return _write_if_changed(path, settings, before)


def installed_events(path: Path) -> set[str]:
    """The events whose hookgate registration is present (for doctor)."""
    hooks = _read(path).get("hooks", {}) if path.exists() else {}
    return {
        event for event, groups in hooks.items()
        for group in groups if isinstance(group, dict)
        for handler in group.get("hooks", []) if _is_ours(handler)
    }


def stale_events(path: Path) -> list[str]:
    """The events whose installed hookgate handler differs from what install writes today (the
    lifecycle matrix changed since: a timeout, onFailure, a matcher), for doctor."""
    hooks = _read(path).get("hooks", {}) if path.exists() else {}
    stale = []
    for event, groups in hooks.items():
        for group in groups if isinstance(groups, list) else []:
            for handler in group.get("hooks", []) if isinstance(group, dict) else []:
                if not _is_ours(handler):
                    continue
                command = str(handler.get("command", "")).split(" hook claude", 1)[0]
                expected = registrations(command).get(event)
                if expected is None or {k: v for k, v in group.items() if k != "hooks"} != \
                        {k: v for k, v in expected[0].items() if k != "hooks"} or handler != expected[0]["hooks"][0]:
                    stale.append(event)
    return sorted(set(stale))


def _read(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        settings = json.loads(path.read_text() or "{}")
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path} is not valid JSON ({exc}); fix or move it, nothing was changed") from None
    if not isinstance(settings, dict) or not isinstance(settings.get("hooks", {}), dict):
        raise ValueError(f"{path}: expected an object with a `hooks` object; nothing was changed")
    return settings


def _is_ours(handler: Any) -> bool:
    return isinstance(handler, dict) and bool(_OURS.search(str(handler.get("command", ""))))


def _remove_ours(settings: dict[str, Any]) -> None:
    """Remove hookgate's handlers; a group, event or `hooks` table is dropped only when it
    became empty by that removal (an event list that held only hookgate's group goes with it:
    Claude reads an empty list and a missing one alike)."""
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict):
        return
    removed = False
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        kept = []
        for group in groups:
            handlers = group.get("hooks") if isinstance(group, dict) else None
            if isinstance(handlers, list) and any(_is_ours(h) for h in handlers):
                removed = True
                remaining = [h for h in handlers if not _is_ours(h)]
                if not remaining:
                    continue
                group = {**group, "hooks": remaining}
            kept.append(group)
        if kept or not groups or len(kept) == len(groups):
            hooks[event] = kept
        else:
            del hooks[event]
    if removed and not hooks:
        del settings["hooks"]


def _write_if_changed(path: Path, settings: dict[str, Any], before: str) -> bool:
    if json.dumps(settings, sort_keys=True) == before:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.hookgate.tmp")
    tmp.write_text(json.dumps(settings, indent=2) + "\n")
    tmp.replace(path)
    return True
