"""The effect check: what a call may not change is checked after the call and put back.

A command's text cannot tell everything it will write; its effect can. The shell gate reads the
command first (the fast first line); a target it cannot resolve is left to this check when the
check will see the call's effect, and refused otherwise.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..engine.context import Context
    from ..model.events import Event


def covers(event: "Event", ctx: "Context") -> bool:
    """Whether this call's effect on the files its agent may not write will be checked after it
    ran (and anything changed put back). No effect check exists yet: nothing is covered."""
    return False
