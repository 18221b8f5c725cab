"""The lifecycle matrix (lifecycle.toml): every registration hookgate makes, per runtime, and the
generators that turn it into each runtime's own registration format.

    python -m hookgate.lifecycle > adapters/opencode-plugin/lib/lifecycle.js   # regenerate the plugin's table
"""

from __future__ import annotations

import sys
from functools import cache
from pathlib import Path
from typing import Any

import msgspec

from .model.events import KNOWN_EVENTS
from .runtimes import NAMES as RUNTIMES

SOURCE = Path(__file__).resolve().with_name("lifecycle.toml")


class Registration(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One row of the matrix. Each runtime of hookgate.runtimes has a column: `<runtime> = "its own
    hook name"` (absent: it has none) and, where it gives hookgate another time, `<runtime>_timeout`;
    `registration.<runtime>` reads the column."""

    id: str
    event: str
    timeout: int
    contract_test: str
    hooks: dict[str, str] = {}  # runtime -> the runtime's own name for this hook
    timeouts: dict[str, int] = {}  # runtime -> seconds, where it differs from `timeout`
    may_block: bool = False
    fail_closed: bool = False

    def on(self, runtime: str) -> str | None:
        """The runtime's own name for this registration's hook, or None where it has none."""
        return self.hooks.get(runtime)

    def timeout_for(self, runtime: str) -> int:
        return self.timeouts.get(runtime) or self.timeout

    def __getattr__(self, name: str) -> str | None:
        if name in RUNTIMES:
            return self.hooks.get(name)
        raise AttributeError(name)

    @property
    def matcher(self) -> str | None:
        """Every value of the event's match field ("*"), or None for events that take no matcher."""
        return "*" if KNOWN_EVENTS[self.event].match_field else None


class _Matrix(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    registration: list[dict[str, Any]]


@cache
def registrations() -> tuple[Registration, ...]:
    entries = [_registration(row) for row in msgspec.toml.decode(SOURCE.read_bytes(), type=_Matrix).registration]
    for entry in entries:
        if entry.event not in KNOWN_EVENTS:
            raise ValueError(f"{SOURCE.name}: {entry.id}: unknown event {entry.event!r}")
    return tuple(entries)


def _registration(row: dict[str, Any]) -> Registration:
    """A row with its runtime columns gathered; an unknown column is refused (forbid_unknown_fields)."""
    fields = dict(row)
    hooks = {runtime: fields.pop(runtime) for runtime in RUNTIMES if runtime in fields}
    timeouts = {runtime: fields.pop(f"{runtime}_timeout") for runtime in RUNTIMES if f"{runtime}_timeout" in fields}
    try:
        return msgspec.convert({**fields, "hooks": hooks, "timeouts": timeouts}, Registration)
    except msgspec.ValidationError as exc:
        raise ValueError(f"{SOURCE.name}: {row.get('id', '?')}: {exc}") from None


def for_runtime(runtime: str) -> tuple[Registration, ...]:
    return tuple(r for r in registrations() if r.on(runtime))


def fail_closed_events() -> frozenset[str]:
    return frozenset(r.event for r in registrations() if r.fail_closed)


def opencode_table() -> str:
    """adapters/opencode-plugin/lib/lifecycle.js: what the plugin needs to know before the core has
    ever answered (which events fail closed, and the field each one's matchers test); deadlines
    come from the core itself."""
    lines = [
        "// Generated from core/hookgate/lifecycle.toml by `python -m hookgate.lifecycle`; do not edit.",
        "// Per canonical event the plugin delivers: the OpenCode hook it comes from, whether it fails",
        "// closed when the core cannot answer, and the field its gates' matchers test.",
        "",
        "export const LIFECYCLE = {",
    ]
    for r in for_runtime("opencode"):
        field = KNOWN_EVENTS[r.event].match_field
        match_field = f'"{field}"' if field else "null"
        lines.append(f'  {r.event}: {{ hook: "{r.opencode}", failClosed: {str(r.fail_closed).lower()}, '
                     f"matchField: {match_field} }},")
    lines.append("}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(opencode_table())
