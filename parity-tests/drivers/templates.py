"""Payload shapes captured from the real runtimes (parity-tests/payloads/<runtime>_*.jsonl): the
first payload of each event (and tool) a runtime sent, captures of the pinned version first."""

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
        found += [json.loads(line)["payload"] for line in path.read_text().splitlines() if line.strip()]
    return tuple(found)


def template(runtime: str, event: str, tool: str | None = None) -> dict[str, Any]:
    """A copy of the first captured `event` payload (of `tool`, if given) of `runtime`."""
    for payload in _captured(runtime):
        if payload.get("hook_event_name") == event and tool in (None, payload.get("tool_name")):
            return copy.deepcopy(payload)
    raise LookupError(f"no captured {runtime} {event} payload{f' of {tool}' if tool else ''} in {PAYLOADS}")
