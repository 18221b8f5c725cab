"""The pipeline gate pack: seed 000 (GodotMaker's hooks) as gates over the `[pipeline]` config."""

from __future__ import annotations

from ..engine.gate import Gate, Observer
from . import permissions

GATES: tuple[Gate, ...] = (*permissions.GATES,)
OBSERVERS: tuple[Observer, ...] = ()
