"""Environment variables read on every decision: the effect store's place (HOME, XDG_STATE_HOME)
and the anchored patterns of the rules (`~/...`, `$CODEX_HOME/...`) are worked out once and
kept by the values they were worked out from, which must be read afresh each time, since
os.environ may change between two decisions of a long-running core."""

from __future__ import annotations

import os
from typing import Callable

_POSIX = os.name == "posix"  # where os.environ's table maps bytes to bytes


class Variables:
    """The values of some environment variables now (`values()`): a key to keep what was worked
    out from them by, not the values to use (on POSIX they are os.environ's own encoded bytes).
    Read from os.environ's own table (bytes -> bytes, kept by every assignment to os.environ or
    os.environb) in one pass: os.environ.get encodes the name and decodes the value in Python, a
    microsecond per name on every decision. os.environ is looked up afresh, as it may be replaced."""

    __slots__ = ("names", "_read")

    def __init__(self, names: tuple[str, ...]) -> None:
        self.names = names
        # (table.get) -> the values, every name read in one expression, as dataclasses write their
        # methods: tuple(map(table.get, names)) costs twice as much, the map and the tuple built
        # for a length they do not know (a bytes literal's repr is the literal itself)
        self._read: Callable[[Callable[[bytes], object]], tuple[object, ...]] = eval(
            "lambda get: (" + "".join(f"get({os.fsencode(name)!r}), " for name in names) + ")")

    def values(self) -> tuple[object, ...]:
        if not self.names:  # most rule lists anchor no pattern on a variable
            return ()
        data = getattr(os.environ, "_data", None) if _POSIX else None
        if type(data) is not dict:
            return tuple(map(os.environ.get, self.names))
        return self._read(data.get)
