"""Payload shapes captured from the real runtimes (parity-tests/payloads/<runtime>_*.jsonl): the
first payload of each event (and tool) a runtime sent, or, for OpenCode, the first call of each
plugin hook and bus event; captures of the pinned version first."""

from __future__ import annotations

import copy
import json
from functools import cache
from pathlib import Path
from typing import Any

PAYLOADS = Path(__file__).resolve().parents[1] / "payloads"


@cache
def _captured(runtime: str) -> tuple[dict[str, Any], ...]:
    found = []
    for path in sorted(PAYLOADS.glob(f"{runtime}_*.jsonl")):
        found += [line["payload"] for line in map(json.loads, path.read_text().splitlines()) if "payload" in line]
    return tuple(found)


def template(runtime: str, event: str, tool: str | None = None) -> dict[str, Any]:
    """A copy of the first captured `event` payload (of `tool`, if given) of `runtime`."""
    for payload in _captured(runtime):
        if payload.get("hook_event_name") == event and tool in (None, payload.get("tool_name")):
            return copy.deepcopy(payload)
    raise LookupError(f"no captured {runtime} {event} payload{f' of {tool}' if tool else ''} in {PAYLOADS}")


def plugin_call(runtime: str, kind: str, tool: str | None = None, child: bool | None = None) -> dict[str, Any]:
    """A copy of the first captured plugin hook call (`kind`: {input, output}) or bus event
    (`kind` = the event's type: the event) of a plugin runtime; `child`: a child session's event."""
    for captured in _calls(runtime):
        event = captured.get("event") or {}
        if captured["kind"] == kind and tool in (None, (captured.get("input") or {}).get("tool")):
            return copy.deepcopy({"input": captured.get("input"), "output": captured.get("output")})
        parent = bool(event.get("properties", {}).get("info", {}).get("parentID"))
        if event.get("type") == kind and child in (None, parent):
            return copy.deepcopy(event)
    raise LookupError(f"no captured {runtime} {kind}{f' of {tool}' if tool else ''} in {PAYLOADS}")


@cache
def _calls(runtime: str) -> tuple[dict[str, Any], ...]:
    found = []
    for path in sorted(PAYLOADS.glob(f"{runtime}_*.jsonl")):
        found += [line for line in map(json.loads, path.read_text().splitlines()) if "kind" in line]
    return tuple(found)
