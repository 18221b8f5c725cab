"""The pipeline gate pack: seed 000 (GodotMaker's hooks) as gates over the `[pipeline]` config."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..config.schema import Config
from ..engine.gate import Gate, Observer
from . import agents, assets, completion, permissions, self_protect, session, shell_writes, stages, subagent_stop

if TYPE_CHECKING:
    from ..store.project import Project

GATES: tuple[Gate, ...] = (
    *session.GATES, *permissions.GATES, *shell_writes.GATES, *self_protect.GATES, *stages.GATES, *assets.GATES, *agents.GATES,
    *subagent_stop.GATES, *completion.GATES,
)
OBSERVERS: tuple[Observer, ...] = (*agents.OBSERVERS, *subagent_stop.OBSERVERS)


def gates(config: Config, project: "Project | None") -> tuple[Gate, ...]:
    return GATES


def observers(config: Config, project: "Project | None") -> tuple[Observer, ...]:
    return OBSERVERS
