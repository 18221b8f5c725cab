"""The ledger of writes hookgate allowed, so the effect check never reverts them.

Claude Code runs tool calls in parallel: while the lead's Bash call runs, a worker's Write of
src/player.gd (allowed for the worker, forbidden to the lead) may land, and the lead's after-hook
sees it changed. One line per fact, appended under a lock:

    {"t": ns, "call": id, "paths": [...]}        a write hookgate allowed (a Write/Edit/NotebookEdit
                                                 or patch file a PreToolUse let through)
    {"t": ns, "call": id, "agent": [role, sub, type]}   a checked call (Bash, ...) began: what its
                                                 agent may write is allowed while it runs
    {"t": ns, "end": id}                         that call's after-event came
    {"t": ns, "paths": [...], "by": "hookgate"}  `hookgate stage complete` / `hookgate role set`
                                                 wrote these files (note_allowed)
    {"t": ns, "asked": session}                  the runtime asked the user about a call of the
                                                 session (its PermissionRequest): what the answer
                                                 writes in its settings ([effect] answer_keys) stands

A change is excused when such a write, of another call, overlapped the checked call and covered
the changed file. A call whose after-event never came stays open for `ledger_seconds`. Writes of
hookgate's own commands excuse the calls of the main agent only: a subagent may not run them (the
shell gate refuses them), so one it slipped past the syntax gate is put back.
"""

import os
import time
from functools import lru_cache
from typing import TYPE_CHECKING, Callable, Iterable

import msgspec

from ..model.tools import FILE_TOOLS
from ..paths import at, below, resolved, root_forms
from ..store import locked
from .protection import Agent
from .store import Store, store_for

if TYPE_CHECKING:
    from ..engine.context import Context
    from ..engine.loop import Decision
    from ..model.events import Event

_MAX_BYTES = 512 * 1024


class Entry(msgspec.Struct, omit_defaults=True):
    t: int
    call: str | None = None
    paths: list[str] | None = None
    agent: tuple[str, bool, str | None] | None = None
    end: str | None = None
    by: str | None = None
    asked: str | None = None


_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(Entry)


def _append(store: Store, entry: Entry) -> None:
    locked.append(store.ledger_text, _encoder.encode(entry) + b"\n")


def note_allowed(paths: Iterable[os.PathLike[str] | str], root: os.PathLike[str] | str) -> None:
    """Record that hookgate itself wrote `paths` just now (its own commands call this), so no
    running call's effect check reverts them. Paths are absolute or relative to `root`."""
    rels = sorted({rel for path in paths for rel in relative_forms(str(path), str(root))})
    _append(store_for(root), Entry(t=time.time_ns(), paths=rels, by="hookgate"))


def open_write(store: Store, call: str | None, paths: list[str]) -> None:
    _append(store, Entry(t=time.time_ns(), call=call, paths=paths))


def open_call(store: Store, call: str, agent: Agent) -> None:
    _append(store, Entry(t=time.time_ns(), call=call, agent=tuple(agent)))  # type: ignore[arg-type]


def close(store: Store, call: str) -> None:
    _append(store, Entry(t=time.time_ns(), end=call))


def call_id(event: "Event") -> str | None:
    """What names a call in the ledger and the store: its session and its tool_use_id."""
    call = getattr(event, "tool_use_id", None)
    return f"{event.session_id}/{call}" if call else None


def note_write(event: "Event", decision: "Decision", ctx: "Context") -> None:
    """The effect_ledger observer: a Write/Edit hookgate let through, while a role is active, so
    that no concurrent check reverts it."""
    if decision.verdict.refuses or not ctx.config.effect.enabled or ctx.current_role() is None:
        return
    tool_input = getattr(event, "tool_input", None) or {}
    root = ctx.project.root_text
    cwd = event.cwd or root
    rels: set[str] = set()
    for name in (tool_input.get(FILE_TOOLS[event.tool_name]), tool_input.get("moved_from")):  # type: ignore[attr-defined]
        if isinstance(name, str) and name:
            rels.update(relative_forms(name, root, cwd, ctx.resolved))
    if rels:
        open_write(store_for(root), call_id(event), sorted(rels))


def note_asked(event: "Event", decision: "Decision", ctx: "Context") -> None:
    """The effect_asked observer: the runtime is about to ask the user about a call (a
    PermissionRequest), whose answer it may write into its settings while the call runs."""
    if ctx.config.effect.enabled and ctx.current_role() is not None:
        _append(store_for(ctx.project.root_text), Entry(t=time.time_ns(), asked=event.session_id))


def note_end(event: "Event", decision: "Decision", ctx: "Context") -> None:
    """The effect_ledger_end observer: the write's after-event came."""
    call = call_id(event)
    if call is not None and ctx.current_role() is not None:
        close(store_for(ctx.project.root_text), call)


def relative_forms(path: str, root: str, cwd: str | None = None,
                   resolve: Callable[[str], str] = resolved) -> tuple[str, ...]:
    """A written path as the scan names files: project-relative, as named and as resolved,
    lower-cased (the rules match case-insensitively). `resolve`: `resolved`, or a decision's
    `Context.resolved`, so the ledger notes the place the rules judged."""
    joined = at(cwd or root, path)
    return _below_root(joined, resolve(joined), root)


@lru_cache(maxsize=4096)
def _below_root(joined: str, real: str, root: str) -> tuple[str, ...]:
    """relative_forms once the filesystem has answered: a pure function of the three texts (the
    path as named, `..` not yet folded, and as resolved), so the folding is done once per path."""
    forms = []
    for absolute in (os.path.normpath(joined), real):
        for base in root_forms((root,)):
            rel = below(absolute, base)
            if rel is not None:
                forms.append(rel.lower())
    return tuple(dict.fromkeys(forms))


class Ledger:
    def __init__(self, entries: list[Entry], window: float) -> None:
        self.window_ns = int(window * 1e9)
        self.ends = {e.end: e.t for e in entries if e.end}
        self.entries = [e for e in entries if not e.end]

    @classmethod
    def load(cls, store: Store, window: float) -> "Ledger":
        entries = []
        for line in locked.read(store.ledger_path).splitlines():
            try:
                entries.append(_decoder.decode(line))
            except msgspec.DecodeError:
                continue
        return cls(entries, window)

    def started(self, call: str, default: int) -> int:
        """When the checked call began (its PreToolUse), as the ledger has it."""
        return next((e.t for e in self.entries if e.call == call and e.agent is not None), default)

    def asked(self, session: str, since: int, now: int) -> bool:
        """Whether the runtime asked the user about a call of `session` between `since` and `now`."""
        return any(entry.asked == session and since <= entry.t <= now for entry in self.entries)

    def ran_since(self, since: int, own_call: str) -> bool:
        """Whether a checked call other than `own_call` was running at some moment from `since` on
        (begun, its after-event not come before `since`, within the window)."""
        return any(entry.agent is not None and entry.call is not None and entry.call != own_call
                   and since - entry.t < self.window_ns and self.ends.get(entry.call, since) >= since
                   for entry in self.entries)

    def excusing(self, rel: str, since: int, now: int, own_call: str, main_agent: bool,
                 allows: "Callable[[Agent, str], bool]") -> bool:
        """Whether a write hookgate allowed, other than the checked call, covered `rel` at some
        time between `since` (the checked call began) and `now`. `allows(agent, rel)` tells
        whether another running call's agent may write `rel`."""
        low = rel.lower()
        for entry in self.entries:
            if entry.call == own_call or entry.t > now:
                continue
            end = self.ends.get(entry.call) if entry.call else entry.t
            if end is None:
                end = entry.t + self.window_ns if entry.by is None else entry.t
            if end < since:
                continue
            if entry.paths is not None and low in entry.paths:
                if entry.by == "hookgate" and not main_agent:
                    continue
                return True
            if entry.agent is not None and allows(Agent(*entry.agent), rel):
                return True
        return False


def prune(store: Store, window: float) -> None:
    """Keep the ledger small: once it passes _MAX_BYTES, drop what no running call can need."""
    try:
        if store.ledger_path.stat().st_size < _MAX_BYTES:
            return
    except FileNotFoundError:
        return
    keep_after = time.time_ns() - int(2 * window * 1e9)
    # rewritten in place under the appenders' own lock (locked.append flocks the file), so no
    # line appended meanwhile lands in a replaced inode
    fd = os.open(store.ledger_path, os.O_RDWR)
    try:
        locked.take(fd)
        with os.fdopen(os.dup(fd), "rb") as f:
            lines = f.read().splitlines()
        kept = []
        for line in lines:
            try:
                if _decoder.decode(line).t >= keep_after:
                    kept.append(line + b"\n")
            except msgspec.DecodeError:
                continue
        os.ftruncate(fd, 0)
        os.pwrite(fd, b"".join(kept), 0)
    finally:
        os.close(fd)
