"""What one decision can see and note down. The edge (an adapter or the RPC server) builds it with
the real store; unit tests build it with an in-memory one. Gates never write files themselves:
they note records here and the edge appends them after the verdict, in one locked write."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Protocol, TypeVar

if TYPE_CHECKING:
    from ..config.schema import Config
    from ..store.project import Project

T = TypeVar("T")
_ROLE = ("role",)  # Context.memo's key of the decision's look at the role file


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
    def __init__(self, *, project: "Project", session: SessionState, config: "Config") -> None:
        self.project = project
        self.session = session
        self.config = config
        self.records: list[dict[str, Any]] = []
        self.warnings: list[str] = []
        # what gates read from the filesystem, once per decision: every gate of one decision
        # judges the same filesystem, and two gates resolving one path pay for it once
        self.memo: dict[Any, Any] = {}

    def role_state(self) -> "tuple[str | None, int | None]":
        """The active role and its file's mtime (Project.role_state), looked at once per decision:
        every gate and the decision's record see the same role. A gate that changes the role file
        says so with `role_changed()`."""
        found: tuple[str | None, int | None] | None = self.memo.get(_ROLE)
        if found is None:
            found = self.memo[_ROLE] = self.project.role_state()
        return found

    def current_role(self) -> str | None:
        return self.role_state()[0]

    def role_changed(self) -> None:
        self.memo.pop(_ROLE, None)

    def record(self, event: str, **fields: Any) -> None:
        """Note a metrics line (`event` in lower snake case, as seed 000 names them)."""
        self.records.append({"event": event, **fields})

    def warn(self, line: str) -> None:
        """Note one line for stderr (the runtime's hook log), never a traceback."""
        self.warnings.append(line)
