"""The pipeline gate pack: seed 000 (GodotMaker's hooks) as gates over the `[pipeline]` config.

The gates are declared in declared.py and their checks imported on first use, so that importing
the pack (every hook call does) loads none of the check modules."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..engine.lazy import Lazy
from .declared import GATES, OBSERVERS

if TYPE_CHECKING:
    from ..config.schema import Config
    from ..engine.gate import Gate, Observer
    from ..store.project import Project


# what the pack's modules import inside the function that needs it (most calls need none of it)
ON_USE = ("glob", "shlex", "hookgate.formats.apply_patch")


def gates(config: "Config", project: "Project | None") -> "tuple[Gate, ...]":
    return GATES


def observers(config: "Config", project: "Project | None") -> "tuple[Observer, ...]":
    return OBSERVERS


def preload() -> None:
    """Every module of the pack, the checks and what they load on use (the warm core's)."""
    from importlib import import_module
    from pkgutil import iter_modules

    for module in iter_modules(__path__):
        import_module(f"{__name__}.{module.name}")
    for name in ON_USE:
        import_module(name)
    for check in (*(g.check for g in GATES), *(o.observe for o in OBSERVERS)):
        if isinstance(check, Lazy):
            check.resolve()
