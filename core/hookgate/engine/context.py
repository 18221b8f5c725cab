"""What one decision can see and note down. The edge (an adapter or the RPC server) builds it with
the real store; unit tests build it with an in-memory one. Gates never write files themselves:
they note records here and the edge appends them after the verdict, in one locked write."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any, Callable, Protocol, TypeVar

from ..paths import resolved
from ..store import kept

if TYPE_CHECKING:
    from ..config.schema import Config
    from ..store.project import Project

T = TypeVar("T")
_UNSEEN = object()  # Context.look: nothing in the memo under that key yet


class SessionState(Protocol):
    """One session's durable state; every method is safe across concurrent hook processes."""

    def read(self) -> dict[str, Any]: ...
    def update(self, change: Callable[[dict[str, Any]], T]) -> T: ...
    def count(self, key: str) -> int: ...
    def bump(self, key: str) -> int: ...
    def spend(self, key: str, budget: int) -> bool: ...  # see SessionStore.spend
    def push_notice(self, text: str) -> None: ...
    def pop_notices(self) -> list[str]: ...
    def reset(self) -> None: ...  # a new session starts from nothing (state, log, notices)


class Context:
    __slots__ = ("project", "session", "config", "records", "warnings", "memo")  # one is made per decision

    def __init__(self, *, project: "Project", session: SessionState, config: "Config") -> None:
        self.project = project
        self.session = session
        self.config = config
        self.records: list[dict[str, Any]] = []
        self.warnings: list[str] = []
        # what gates read from the filesystem, once per decision: every gate of one decision
        # judges the same filesystem, and two gates resolving one path pay for it once
        self.memo: dict[Any, Any] = {}

    def look(self, key: Any, work: Callable[[], T], files: tuple[str, ...] = (), route: str | None = None,
             keep_if: Callable[[T], bool] | None = None) -> T:
        """What the filesystem says (`work()`), in `memo` once per decision, a None answer (an
        unreadable owner note) included. Where the process keeps answers, kept across decisions too
        while nothing at `files` or on the way to them and to `route` changed (Kept.look)."""
        found = self.memo.get(key, _UNSEEN)
        if found is _UNSEEN:
            found = self.memo[key] = kept.look(key, work, files, route, keep_if)
        return found  # type: ignore[no-any-return]

    def role_state(self) -> "tuple[str | None, int | None]":
        """The active role and its file's mtime (Project.role_state), looked at once per decision:
        every gate and the decision's record see the same role. A gate that changes the role file
        says so with `role_changed()`."""
        look = self.project.role_look
        found = self.memo.get(look[0], _UNSEEN)  # every gate but the first asks a role already looked at
        return self.look(*look) if found is _UNSEEN else found

    def current_role(self) -> str | None:
        return self.role_state()[0]

    def role_changed(self) -> None:
        self.memo.pop(self.project.role_look[0], None)

    def resolved(self, path: str) -> str:
        """Where `path` lands, symlinks followed (paths.resolved), once per decision: the
        permission check and the effect ledger judge and note the same place. Kept across
        decisions only when no symlink is on the way (the answer is the path itself)."""
        key = ("resolved", path)
        found = self.memo.get(key)  # the second reading of a decision (the ledger's) builds no work
        if found is None:
            found = self.look(key, partial(resolved, path), route=path, keep_if=path.__eq__)
        return found

    def record(self, event: str, **fields: Any) -> None:
        """Note a metrics line (`event` in lower snake case, as seed 000 names them)."""
        self.records.append({"event": event, **fields})

    def warn(self, line: str) -> None:
        """Note one line for stderr (the runtime's hook log), never a traceback."""
        self.warnings.append(line)
