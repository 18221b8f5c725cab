"""One decided call as the flat fields an exported span carries. Runs inside a decision's process
(a warm core's fork, `hookgate serve`), so stdlib and msgspec only."""

from __future__ import annotations

import hashlib
import time
from typing import Any, Sequence

import msgspec


def summary(events: Sequence[Any], decisions: Sequence[Any], verdict: Any, seconds: float) -> dict[str, Any]:
    event = events[0]
    end = time.time_ns()
    blocked = [g for d in decisions for g in d.blocked_by]
    monitored = [g for d in decisions for g in d.monitored]
    ran = [g for d in decisions for g, _, _ in d.ran]
    digest = hashlib.sha256()
    for each in events:
        digest.update(msgspec.json.encode(each))
    return {
        "runtime": event.runtime,
        "session_id": event.session_id,
        "agent": event.agent_id or "main",
        "agent_type": event.agent_type or "",
        "identity": event.identity,
        "event": event.name,
        "tool": getattr(event, "tool_name", "") or "",
        "tool_use_id": getattr(event, "tool_use_id", "") or "",
        "verdict": verdict.kind,
        "gate": (blocked or monitored or [""])[0],
        "gates": ran,
        "would_block": monitored,
        "duration_ms": round(seconds * 1000, 3),
        "input_sha256": digest.hexdigest(),
        "end_ns": end,
        "start_ns": end - int(seconds * 1e9),
    }
