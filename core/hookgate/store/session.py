"""One session's files under the state dir, where the project's layout puts them (hookgate's own
layout below; GodotMaker's keeps one session at a time in metrics_current.jsonl and state.json):

    sessions/<session_id>/metrics.jsonl   this session's records, one JSON object per line
    sessions/<session_id>/state.json      counters and the gates' session state
    sessions/<session_id>/notices.jsonl   warnings waiting for the next turn the model sees
    sessions/<session_id>/decisions.jsonl every decided event, for `hookgate explain` and `replay`
    metrics.jsonl                         every session's records, for the lifetime of the project
"""

from __future__ import annotations

import os
import re
import time
from functools import partial
from pathlib import Path
from typing import Any, Callable, Iterable, TypeVar

import msgspec

from ..digest import sha256_hex
from . import kept, locked
from .layout import HOOKGATE, Layout, layout as named_layout

T = TypeVar("T")

_SAFE_ID = re.compile(r"[A-Za-z0-9._-]{1,128}")
_encoder = msgspec.json.Encoder()
_state_decoder = msgspec.json.Decoder(dict[str, Any])


def safe_session_dir_name(session_id: str) -> str:
    """A session id becomes a directory name; anything that is not plainly safe is hashed."""
    if _SAFE_ID.fullmatch(session_id) and session_id not in {".", ".."}:
        return session_id
    if not session_id:
        return "no-session"
    return "id-" + sha256_hex(session_id.encode())[:24]


class SessionStore:
    def __init__(self, state_dir: Path, session_id: str, layout: Layout | None = None) -> None:
        self.state_dir = state_dir
        self.session_id = session_id
        self.layout = layout or named_layout(HOOKGATE)

        def at(template: str) -> Path:
            return state_dir / template.replace("{session}", safe_session_dir_name(session_id))

        self.metrics_path = at(self.layout.session_metrics)
        self.state_path = at(self.layout.session_state)
        self.notices_path = at(self.layout.notices)
        notices = str(self.notices_path)
        self._notices_look = (("exists", notices), partial(os.path.exists, notices), (notices,))  # made once: every decision asks
        self.decisions_path = at(self.layout.decisions)
        self.lifetime_path = at(self.layout.lifetime_metrics)
        self.dir = self.metrics_path.parent
        self._lock = self.state_path.with_name(f".{self.state_path.name}.lock")

    # -- state -----------------------------------------------------------------------------
    def read(self) -> dict[str, Any]:
        raw = locked.read(self.state_path)
        if not raw:
            return {}
        try:
            state = _state_decoder.decode(raw)
        except msgspec.DecodeError:
            return {}  # a hand-damaged state file must not wedge every later decision
        if self.layout.flat_counters:
            own = state.get(HOOKGATE)
            return own if isinstance(own, dict) else {}
        return state

    def update(self, change: Callable[[dict[str, Any]], T]) -> T:
        with locked.exclusive(self._lock):
            state = self.read()
            result = change(state)
            locked.replace(self.state_path, _encoder.encode(self._on_disk(state)))
        return result

    def _on_disk(self, state: dict[str, Any]) -> dict[str, Any]:
        """GodotMaker's state.json: its counters as flat keys (its Resume Checks and reporter
        read them), hookgate's whole state beside them."""
        if not self.layout.flat_counters:
            return state
        counters = state.get("counters", {})
        return {**{self.layout.counter_key(key): value for key, value in counters.items()}, HOOKGATE: state}

    def count(self, key: str) -> int:
        return int(self.read().get("counters", {}).get(key, 0))

    def bump(self, key: str) -> int:
        def increment(state: dict[str, Any]) -> int:
            counters = state.setdefault("counters", {})
            count = int(counters.get(key, 0)) + 1
            counters[key] = count
            return count

        return self.update(increment)

    def spend(self, key: str, budget: int) -> bool:
        """One locked step: below `budget`, count one more use and return True; at it, return False.
        The budget is for the whole scope (seed 000: per agent, per session); once spent, every
        later block in that scope is released, recorded and explained, so a session always ends."""

        def attempt(state: dict[str, Any]) -> bool:
            counters = state.setdefault("counters", {})
            used = int(counters.get(key, 0))
            if used >= budget:
                return False
            counters[key] = used + 1
            return True

        return self.update(attempt)

    def reset(self) -> None:
        """A new session starts from nothing (seed 000 session_start)."""
        with locked.exclusive(self._lock):
            locked.replace(self.state_path, b"{}")
            locked.replace(self.metrics_path, b"")
            self.notices_path.unlink(missing_ok=True)
            self.decisions_path.unlink(missing_ok=True)

    # -- notices ---------------------------------------------------------------------------
    def push_notice(self, text: str) -> None:
        locked.append(self.notices_path, _encoder.encode(text) + b"\n")

    def pop_notices(self) -> list[str]:
        if not kept.look(*self._notices_look):  # the common case
            return []
        with locked.exclusive(self._lock):
            raw = locked.read(self.notices_path)
            self.notices_path.unlink(missing_ok=True)
        return [msgspec.json.decode(line) for line in raw.splitlines() if line.strip()]

    # -- metrics ---------------------------------------------------------------------------
    def append(self, records: Iterable[dict[str, Any]]) -> None:
        """Append records to this session's log and the lifetime log, one line each."""
        aliases = self.layout.field_aliases
        if aliases:
            records = [{**r, **{alias: r[field] for field, alias in aliases.items() if field in r}} for r in records]
        data = b"".join(_encoder.encode(r) + b"\n" for r in records)
        if data:
            locked.append(self.metrics_path, data)
            locked.append(self.lifetime_path, data)

    def append_decisions(self, records: Iterable[dict[str, Any]]) -> None:
        """The session's recorded events (hookgate.recording); never in the lifetime log."""
        data = b"".join(_encoder.encode(r) + b"\n" for r in records)
        if data:
            locked.append(self.decisions_path, data)

    def decisions(self) -> list[dict[str, Any]]:
        return [msgspec.json.decode(line) for line in locked.read(self.decisions_path).splitlines() if line.strip()]

    def metrics(self) -> list[dict[str, Any]]:
        return [msgspec.json.decode(line) for line in locked.read(self.metrics_path).splitlines() if line.strip()]


def stamp(records: Iterable[dict[str, Any]], **common: Any) -> list[dict[str, Any]]:
    """Give each record the fields every metrics line carries (ts, session_id, runtime, ...)."""
    ts = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()) + f".{int(time.time() * 1000) % 1000:03d}Z"
    return [{"ts": ts, **common, **record} for record in records]
