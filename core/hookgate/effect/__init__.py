"""The effect check: what a call may not change is checked after the call and put back.

A command's text cannot tell everything it will write; its effect can. The shell gate reads the
command first (the fast first line); a target it cannot resolve is left to this check when the
check will see the call's effect (`covers`), and refused otherwise.

Gates (a gate source of policy.GATE_SOURCES):
  effect_snapshot  PreToolUse of a tool that may write (`[effect] tools`, a patch's files):
                   the state of the files this agent may not write, and a copy of their bytes;
  effect_restore   PostToolUse / PostToolUseFailure of that call: whatever of those files the
                   call changed, created or deleted is put back, the model is told which and why
                   (a block of the after-event), and `write_reverted` is recorded with where
                   what the put-back replaced is kept (a person's edit made meanwhile);
observers:
  effect_begin     once the PreToolUse is decided: a refused call's reading is dropped, an
                   allowed one is noted in the ledger as running;
  effect_ledger    writes hookgate allowed (a Write/Edit a PreToolUse let through) and their end,
                   so a concurrent call's check does not revert them (ledger.py).
  effect_asked     a PermissionRequest: the runtime asks the user, and writes a "don't ask
                   again" answer into its settings while the call runs ([effect] answer_keys).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING, Callable

import msgspec

from ..engine.gate import Gate, Observer
from ..engine.lazy import Lazy
from ..model.tools import BACKGROUND_TOOLS, FILE_TOOL_MATCHER, FILE_TOOLS

if TYPE_CHECKING:
    import os
    from typing import Iterable

    from ..config.schema import Config
    from ..engine.context import Context
    from ..engine.loop import Decision
    from ..model.events import Event
    from ..model.verdicts import Verdict
    from ..store.project import Project

__all__ = ["covers", "note_allowed", "follow_rewrite", "gates", "observers", "prepare"]


def note_allowed(paths: "Iterable[os.PathLike[str] | str]", root: "os.PathLike[str] | str") -> None:
    """ledger.note_allowed, for hookgate's own commands; the ledger, the store and the readings
    load only when a decision needs them (a refused Write, a Read, a Stop never do)."""
    from .ledger import note_allowed as note

    note(paths, root)


def prepare(config: "Config", project: "Project") -> None:
    """What the warm core keeps ready for the forks it makes, so that a call's check does not
    start from nothing: the check's modules imported, the runtimes' after-events read, the
    current role's rules compiled, the latest readings decoded and their plans built (each is
    a cache keyed so that a change is seen: see store.py, tree.plan_for, protection_for)."""
    from ..runtimes import STDIN
    from . import check, ledger  # noqa: F401 (imported once here, not in every fork)
    from .after import after_hooks
    from .protection import Agent, protection_for
    from .store import store_for

    for runtime in STDIN:
        after_hooks(runtime)
    root = project.root_text
    role = project.current_role()
    if role is not None:
        protection_for(Agent(role, False, None), config, root)
    store_for(root).preload(root)


def follow_rewrite(event: "Event", tool_use_id: str, root: "os.PathLike[str] | str") -> None:
    """The runtime will name this call's after-event `tool_use_id` (see check.rename_call)."""
    from .check import rename_call

    rename_call(event, tool_use_id, root)


def _matches(pattern: str, tool: str) -> bool:
    return bool(_tool_test(pattern)(tool))


@lru_cache(maxsize=64)
def _tool_test(pattern: str) -> Callable[[str], object]:
    """Whether a tool is one `pattern` names: every tool ("" or "*"), a "|"-separated list of
    names, or else a regular expression the whole name matches."""
    if pattern in ("", "*"):
        return _any_tool
    if re.fullmatch(r"[A-Za-z0-9_|]+", pattern):
        return frozenset(pattern.split("|")).__contains__
    return re.compile(pattern).fullmatch


def _any_tool(tool: str) -> bool:
    return True


def wrapped(event: "Event", ctx: "Context") -> bool:
    """Whether the check wraps this tool call: a tool of `[effect] tools`, or one file of a patch."""
    tool = getattr(event, "tool_name", "")
    # _matches without the call around it: two slots of every PreToolUse ask
    return bool(_tool_test(ctx.config.effect.tools)(tool)) or (
        tool in FILE_TOOLS and "patch" in (getattr(event, "tool_input", None) or {}))


def covers(event: "Event", ctx: "Context") -> bool:
    """Whether this call's effect on the files its agent may not write will be checked after it
    ran (and anything changed put back): a role is active, the check is enabled, the call names
    itself (tool_use_id, to pair its after-event), it does not run in the background, and the
    runtime sends an after-event for this tool on success and on failure (its capability table's
    [after])."""
    if not ctx.config.effect.enabled or not getattr(event, "tool_use_id", None) or in_background(event):
        return False
    if ctx.current_role() is None:
        return False
    from .after import after_hooks

    after = after_hooks(event.runtime)
    return after.complete and _matches(after.tools, getattr(event, "tool_name", ""))


def in_background(event: "Event") -> bool:
    """A call the runtime runs in the background (Claude Code's Bash `run_in_background` and its
    Monitor tool; Gemini CLI's `is_background`, the same key in the canonical input): its
    after-event comes once it started, not once it ended, so no check after it sees what it writes."""
    return (getattr(event, "tool_name", None) in BACKGROUND_TOOLS
            or (getattr(event, "tool_input", None) or {}).get("run_in_background") is True)


def _snapshot(event: "Event", ctx: "Context") -> "Verdict | None":
    if not wrapped(event, ctx) or not covers(event, ctx):
        return None
    from .check import snapshot

    snapshot(event, ctx, ctx.current_role())  # type: ignore[arg-type]
    return None


def _restore(event: "Event", ctx: "Context") -> "Verdict | None":
    if not getattr(event, "tool_use_id", None):
        return None
    from .check import check_after

    return check_after(event, ctx)  # None for a call the check did not read before


def _begin(event: "Event", decision: "Decision", ctx: "Context") -> None:
    if not wrapped(event, ctx) or ctx.current_role() is None or not getattr(event, "tool_use_id", None):
        return
    from .check import begin

    begin(event, ctx, decision.verdict.refuses)


GATES = (
    Gate(
        id="effect_snapshot",
        events=("PreToolUse",),
        check=_snapshot,
        may_block=True,
        fail_mode="closed",  # a call let through on the promise of this check is not run unchecked
        priority=900,
        timeout=60.0,  # the first reading of a large project keeps a copy of every protected file
        needs=("fires:PostToolUse",),
        description="the state of the files this agent may not write, before a call that may write",
    ),
    Gate(
        id="effect_restore",
        events=("PostToolUse", "PostToolUseFailure"),
        check=_restore,
        may_block=True,
        priority=10,
        timeout=60.0,
        # the failure half: Codex folds failures into PostToolUse, OpenCode's plugin reconstructs it
        needs=("fires:PostToolUse", "fires:PostToolUseFailure?", "block:PostToolUse?", "context:PostToolUse?"),
        description="effect check: a protected file a call changed, created or deleted is put back, the model told",
    ),
)
OBSERVERS = (
    Observer(id="effect_begin", events=("PreToolUse",), observe=_begin,
             description="a refused call's reading is dropped; an allowed one is noted as running"),
    # in the ledger's module, imported on the first write judged (its imports at its top, not in
    # each call: the observer runs on every Write, Edit and patch file)
    Observer(id="effect_ledger", events=("PreToolUse",), matcher=FILE_TOOL_MATCHER,
             observe=Lazy("hookgate.effect.ledger:note_write"),
             description="writes hookgate allowed, which no concurrent effect check reverts"),
    Observer(id="effect_ledger_end", events=("PostToolUse", "PostToolUseFailure"), matcher=FILE_TOOL_MATCHER,
             observe=Lazy("hookgate.effect.ledger:note_end"), description="the end of an allowed write"),
    Observer(id="effect_asked", events=("PermissionRequest",), observe=Lazy("hookgate.effect.ledger:note_asked"),
             description="the runtime asks the user about a call: the answer it writes in its settings stands"),
)


def gates(config: "Config", project: "Project | None") -> tuple[Gate, ...]:
    if not config.effect.enabled:
        return ()
    return _gates_for(config.effect.tools)


@lru_cache(maxsize=16)
def _gates_for(tools: str) -> tuple[Gate, ...]:
    """The same gates for the same tools: an unchanged config keeps its engine (engine_builder)."""
    snapshot, restore = GATES
    # the snapshot fails closed: only for the tools it wraps (and a patch's files), so a failure
    # of its own never refuses a call it would not have checked (a web fetch, a read)
    wrapped_tools = f"^(?:{tools}|{FILE_TOOL_MATCHER})$"
    return (msgspec.structs.replace(snapshot, matcher=wrapped_tools), restore)


def observers(config: "Config", project: "Project | None") -> tuple[Observer, ...]:
    return OBSERVERS if config.effect.enabled else ()
