"""The capability tables: what each runtime version lets a hook do, per canonical event (data in
runtimes/<runtime>-<version>.toml, one file per runtime version). A table may also name a version
line hookgate does not support yet (`unsupported`: why); its cells are not computed."""

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


class Runtime(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    runtime: str
    version: str
    package: str
    command: str  # what users run: `<command> --version` tells which version they have
    events: dict[str, EventCapabilities] = {}
    limits: dict[str, int | str] = {}
    unsupported: str = ""  # why hookgate does not run on this version line yet ("" = supported)

    @property
    def key(self) -> str:
        """The table's name, unique across versions: the matrix's column."""
        return f"{self.runtime}-{self.version}"

    @property
    def label(self) -> str:
        return f"{self.runtime} {self.version}" + ("" if not self.unsupported else ".x")

    def covers(self, version: str) -> bool:
        """A supported table describes exactly its version; an unsupported one its whole line
        (version "2" is every 2.x)."""
        if not self.unsupported:
            return version == self.version
        return version_key(version)[:len(version_key(self.version))] == version_key(self.version)

    def capability(self, name: str, event: str) -> Capability:
        caps = self.events.get(event)
        return getattr(caps, name) if caps is not None else Capability(level="none", note=f"no {event} event")


def version_key(version: str) -> tuple[int, ...]:
    """"2.1.332" -> (2, 1, 332), for ordering versions (non-numeric parts are dropped)."""
    return tuple(int(part) for part in version.split(".") if part.isdigit())


@cache
def tables() -> tuple[Runtime, ...]:
    """Every capability table: by runtime (claude, codex, opencode), newest version first."""
    found = []
    for path in TABLES.glob("*.toml"):
        table = msgspec.toml.decode(path.read_bytes(), type=Runtime)
        if path.stem != table.key:
            raise ValueError(f"{path.name}: a table is named <runtime>-<version>.toml ({table.key}.toml)")
        unknown = set(table.events) - set(KNOWN_EVENTS)
        if unknown:
            raise ValueError(f"{path.name}: unknown events {sorted(unknown)}")
        found.append(table)
    newest_first = sorted(found, key=lambda t: version_key(t.version), reverse=True)
    return tuple(sorted(newest_first, key=lambda t: t.runtime))


def runtimes() -> tuple[Runtime, ...]:
    """The tables of the versions hookgate supports: the matrix's columns."""
    return tuple(t for t in tables() if not t.unsupported)


def unsupported() -> tuple[Runtime, ...]:
    return tuple(t for t in tables() if t.unsupported)


def proven(runtime: str) -> tuple[Runtime, ...]:
    """The supported versions of one runtime, newest first (the first is the pinned one)."""
    return tuple(t for t in runtimes() if t.runtime == runtime)


def table(key: str) -> Runtime:
    """A table by its key ("claude-2.1.332"), or by a runtime's name for its newest version."""
    for candidate in tables():
        if key == candidate.key:
            return candidate
    newest = proven(key)
    if newest:
        return newest[0]
    raise KeyError(f"no capability table {key!r}; known: {', '.join(t.key for t in tables())}")
