"""Which after-events each runtime sends for a finished tool call: the `[after]` table of its
capability tables (core/hookgate/parity/runtimes/*.toml), read here as data so the check does not
depend on the parity report above it.

Every wrapped call of a cold hook process asks, and reading TOML would load tomllib and parse the
tables (several milliseconds, more than the rest of the check's first reading of a small
project): the answer is kept in hookgate's file cache (config/cache.py), keyed on the tables and
this module, and read back from there."""

from functools import cache
from pathlib import Path

import msgspec

from ..config.cache import FileCache

TABLES = Path(__file__).resolve().parents[1] / "parity" / "runtimes"


class AfterHooks(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Where a runtime tells hookgate that a tool call is over, so its effect can be checked and
    put back: the event for a call that succeeded and for one that failed, and the tools (a
    matcher on canonical names) those events fire for. "" = no such event."""

    success: str = ""
    failure: str = ""
    tools: str = ""
    note: str = ""

    @property
    def complete(self) -> bool:
        return bool(self.success and self.failure and self.tools)


class _Table(msgspec.Struct, frozen=True):
    runtime: str
    version: str
    unsupported: str = ""
    after: AfterHooks = AfterHooks()


def _version(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split(".") if part.isdigit())


_cached: FileCache[AfterHooks] = FileCache("after", AfterHooks)


@cache
def after_hooks(runtime: str) -> AfterHooks:
    """The newest supported version's after-events of `runtime` (none for an unknown runtime)."""
    paths = sorted(TABLES.glob(f"{runtime}-*.toml"))
    return _cached.get(f"{TABLES}|{runtime}", paths, lambda: _newest(runtime, paths), (Path(__file__),))


def _newest(runtime: str, paths: list[Path]) -> AfterHooks:
    tables = [msgspec.toml.decode(path.read_bytes(), type=_Table) for path in paths]
    supported = sorted((t for t in tables if t.runtime == runtime and not t.unsupported),
                       key=lambda t: _version(t.version), reverse=True)
    return supported[0].after if supported else AfterHooks()
