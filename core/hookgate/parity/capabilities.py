"""The capability tables: what each runtime version lets a hook do, per canonical event (data in
runtimes/*.toml, one file per runtime version)."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Literal

import msgspec

from ..model.events import KNOWN_EVENTS

Level = Literal["native", "degraded", "none"]
CAPABILITIES = ("fires", "subagent_identity", "block", "modify", "context", "ask")
TABLES = Path(__file__).resolve().parent / "runtimes"


class Capability(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    level: Level
    note: str = ""


NONE = Capability(level="none", note="not offered")


class EventCapabilities(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    fires: Capability = NONE
    subagent_identity: Capability = NONE
    block: Capability = NONE
    modify: Capability = NONE
    context: Capability = NONE
    ask: Capability = NONE


class AfterHooks(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Where a runtime tells hookgate that a tool call is over, so its effect can be checked and
    put back (hookgate.effect): the event for a call that succeeded and for one that failed, and
    the tools (a matcher on canonical names) those events fire for. "" = no such event."""

    success: str = ""
    failure: str = ""
    tools: str = ""
    note: str = ""

    @property
    def complete(self) -> bool:
        return bool(self.success and self.failure and self.tools)


class Runtime(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    runtime: str
    version: str
    package: str
    events: dict[str, EventCapabilities]
    limits: dict[str, int | str] = {}
    after: AfterHooks = AfterHooks()

    @property
    def label(self) -> str:
        return f"{self.runtime} {self.version}"

    def capability(self, name: str, event: str) -> Capability:
        caps = self.events.get(event)
        return getattr(caps, name) if caps is not None else Capability(level="none", note=f"no {event} event")


def runtime_table(name: str) -> Runtime | None:
    """The capability table of a runtime by name (the newest version when several are held)."""
    found = [table for table in runtimes() if table.runtime == name]
    return found[-1] if found else None


@cache
def runtimes() -> tuple[Runtime, ...]:
    """Every capability table, in a stable order (claude, codex, opencode)."""
    tables = []
    for path in sorted(TABLES.glob("*.toml")):
        table = msgspec.toml.decode(path.read_bytes(), type=Runtime)
        unknown = set(table.events) - set(KNOWN_EVENTS)
        if unknown:
            raise ValueError(f"{path.name}: unknown events {sorted(unknown)}")
        tables.append(table)
    return tuple(tables)
