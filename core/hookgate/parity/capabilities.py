"""The capability tables: what each runtime version lets a hook do, per canonical event (data in
runtimes/*.toml, one file per runtime version; each runtime's line in hookgate.runtimes names its
table). A runtime's own limits the engine is handed (its plug's `limits`) join the table's."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Literal

import msgspec

from ..model.events import KNOWN_EVENTS
from ..runtimes import PLUGS, stop_block_caps

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


class Runtime(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    runtime: str
    version: str
    package: str
    events: dict[str, EventCapabilities]
    limits: dict[str, int | str] = {}

    @property
    def label(self) -> str:
        return f"{self.runtime} {self.version}"

    def capability(self, name: str, event: str) -> Capability:
        caps = self.events.get(event)
        return getattr(caps, name) if caps is not None else Capability(level="none", note=f"no {event} event")


@cache
def runtimes() -> tuple[Runtime, ...]:
    """Every runtime's capability table, in the registry's order (claude, codex, opencode)."""
    tables = []
    caps = stop_block_caps()
    for plug in PLUGS:
        path = TABLES / plug.capabilities
        table = msgspec.toml.decode(path.read_bytes(), type=Runtime)
        unknown = set(table.events) - set(KNOWN_EVENTS)
        if unknown:
            raise ValueError(f"{path.name}: unknown events {sorted(unknown)}")
        if table.runtime != plug.name:
            raise ValueError(f"{path.name}: runtime {table.runtime!r}, but hookgate.runtimes names it for {plug.name!r}")
        if plug.title in caps:
            table = msgspec.structs.replace(table, limits={"stop_block_cap": caps[plug.title], **table.limits})
        tables.append(table)
    return tuple(tables)
