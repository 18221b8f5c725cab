"""What a gate declares. Everything the engine, the generated registrations and the parity report
need to know about a gate is here, as data; the gate's own code is only `check`."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Callable, Literal, Mapping

import msgspec

from ..errors import GateError
from ..model.events import KNOWN_EVENTS
from .matcher import Matcher, compile_matcher

if TYPE_CHECKING:
    from ..model.events import Event
    from ..model.verdicts import Verdict
    from .context import Context
    from .loop import Decision

FailMode = Literal["open", "closed"]
Mode = Literal["enforce", "monitor"]

_STOP_EVENTS = frozenset({"Stop", "SubagentStop"})


class BlockLimit(msgspec.Struct, frozen=True):
    """Bounded blocking: after `limit` blocks in one scope the engine lets the action through,
    records it as `unverified` and tells the model why."""

    per: Literal["agent", "session"]
    limit: int


class Gate(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    events: tuple[str, ...]
    check: Callable[["Event", "Context"], "Verdict | None"]
    matcher: str = ""
    priority: int = 100
    timeout: float = 5.0
    may_block: bool = False
    fail_mode: FailMode = "open"
    mode: Mode = "enforce"  # monitor: decides and records `would_block`; the agent is not stopped
    block_limit: BlockLimit | None = None
    # runtime capabilities the gate relies on (see parity); e.g. "subagent_identity:PreToolUse"
    needs: tuple[str, ...] = ()
    description: str = ""

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[a-z][a-z0-9_.-]*", self.id):
            raise GateError("id must be lower case letters, digits, '_', '.', '-'", self.id)
        unknown = [name for name in self.events if name not in KNOWN_EVENTS]
        if unknown or not self.events:
            raise GateError(f"unknown or missing events {unknown}; known: {sorted(KNOWN_EVENTS)}", self.id)
        if self.fail_mode == "closed" and not self.may_block:
            raise GateError("fail_mode 'closed' turns failures into blocks, so the gate must be may_block", self.id)
        if self.block_limit is not None:
            if not self.may_block:
                raise GateError("block_limit without may_block", self.id)
            if self.block_limit.limit < 1:
                raise GateError("block_limit.limit must be at least 1", self.id)
        try:
            compile_matcher(self.matcher)
        except re.error as exc:
            raise GateError(f"invalid matcher {self.matcher!r}: {exc}", self.id) from None

    def compiled_matcher(self) -> Matcher:
        return compile_matcher(self.matcher)

    def check_stop_bound(self, stop_block_caps: Mapping[str, int]) -> None:
        """A runtime that ends a turn by itself after so many Stop blocks (its cap, keyed by the
        runtime's name) would release a stop gate silently: the gate's own bound must release
        first, so the release is recorded and explained."""
        if self.block_limit is None or not _STOP_EVENTS & set(self.events):
            return
        for runtime, cap in stop_block_caps.items():
            if self.block_limit.limit >= cap:
                raise GateError(f"a stop gate's block limit must stay below {runtime}'s own cap of {cap}", self.id)


class Observer(msgspec.Struct, frozen=True, kw_only=True):
    """Runs after the verdict is decided and sees it; records only, can never change the verdict."""

    id: str
    events: tuple[str, ...]
    observe: Callable[["Event", "Decision", "Context"], Any]
    matcher: str = ""
    description: str = ""
