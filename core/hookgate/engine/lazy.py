"""A gate's check (or an observer's callback) named by "module:function" and imported on its first
call, so that declaring a gate costs nothing for the events it never matches: a Write does not
import the shell reader, a Read not the report checks.

Two references to the same function are equal and hash alike (a frozen struct of one string), so
an engine built from declared gates is reused as one built from the functions themselves is."""

from __future__ import annotations

from importlib import import_module
from typing import Any, Callable

import msgspec

_RESOLVED: dict[str, Callable[..., Any]] = {}


class Lazy(msgspec.Struct, frozen=True):
    ref: str  # "package.module:function"

    def resolve(self) -> Callable[..., Any]:
        function = _RESOLVED.get(self.ref)
        if function is None:
            module, _, name = self.ref.partition(":")
            function = getattr(import_module(module), name)
            _RESOLVED[self.ref] = function
        return function

    def __call__(self, *args: Any) -> Any:
        return self.resolve()(*args)
