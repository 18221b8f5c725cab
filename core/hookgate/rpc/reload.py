"""Hot reload: the policy in force is rebuilt whenever one of the files it is made of changes.

Watched (the project files of DESIGN.md): `.hookgate/config.toml`, `current_role`,
`stage_schemas.json`, `hooks.json`, `.hookgate/policies/*.py`, the user's
`~/.hookgate/hooks.json`, and the runtimes' settings whose commands' scripts the config protects
(config/runtime_scripts.py), as the policy in force names them: taken again after each reload. A
directory that does not exist yet is watched through its nearest existing parent, so creating
`.hookgate/policies/` later is noticed too.

A reload that fails keeps the last good policy. The error is logged and handed once to the next
verdict's user message, so a typo shows where the user looks and never turns into a silent allow.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable

from ..hookcall import Policy
from ..store.project import Project

if TYPE_CHECKING:
    from ..store.kept import Kept

# how long a burst of saves is gathered before one reload (an editor writes a file in steps)
STEP_MS = 30
DEBOUNCE_MS = 500
STOP_CHECK_S = 1.0  # how often a quiet watch looks whether the core is stopping


def defects(policy: Policy) -> str | None:
    """Why a freshly loaded policy is not a good one: its config is invalid, a Python policy does
    not load (its gate sources then stand in a blocker), or hooks.json has entries that cannot run
    (they are left out). Either way, rules the user wrote would silently change."""
    if policy.error:
        return policy.error
    from ..commandhooks.gate import ProblemNotice
    from ..python_hooks import LOAD_ERROR_GATE, loaded

    found: list[str] = []
    for gate in policy.engine.gates:
        if gate.id == LOAD_ERROR_GATE:
            found += loaded(policy.config, policy.project)[1]
        elif isinstance(gate.check, ProblemNotice):
            found.append(gate.check.text.removeprefix("hookgate: "))
    return "; ".join(found) or None


class PolicyHolder:
    """The policy in force. Decisions read `policy` from any thread; reloads replace it whole."""

    def __init__(self, load: Callable[[], Policy], log: Callable[[str], None]) -> None:
        self._load = load
        self._log = log
        self._lock = threading.Lock()
        self._notice: str | None = None
        self.policy = load()
        self.generation = 1
        error = defects(self.policy)
        self._good = error is None
        if error:
            log(f"{error}; the policy stands as loaded (there is no earlier one to keep) until it is fixed")

    def reload(self) -> str | None:
        """Rebuild the policy; on failure keep the one in force. Returns the error, if any."""
        try:
            policy = self._load()
            error = defects(policy)
        except Exception as exc:  # a broken policy file may raise anything; the core must not go down
            error = f"{type(exc).__name__}: {exc}"
        with self._lock:
            if error:
                kept = "the last good policy" if self._good else "the policy in force"
                self._notice = f"hookgate: reload failed, keeping {kept}: {error}"
                self._log(self._notice)
                return error
            self.policy = policy
            self._good = True
            self.generation += 1
            self._notice = None  # fixed before anyone saw it
        self._log(f"policy reloaded (generation {self.generation})")
        return None

    def take_notice(self) -> str | None:
        """The undelivered reload error, once."""
        with self._lock:
            notice, self._notice = self._notice, None
        return notice


class WatchSet:
    """The files a policy is made of, and the directories to watch to see them change."""

    def __init__(self, project: Project, home: Path, settings: Callable[[], Iterable[Path]] = tuple) -> None:
        """`settings()`: the runtimes' settings whose commands' scripts the config protects (its
        class `runtime_scripts`, config/runtime_scripts.py), as the policy in force names them."""
        self._own = (project.config_path, project.role_path, project.schemas_path, project.hooks_path,
                     home / ".hookgate" / "hooks.json")
        self._settings = settings
        self.policy_dir = project.policy_dir
        self.files: frozenset[Path] = frozenset()
        self.dirs: frozenset[Path] = frozenset()
        self.refresh()

    def refresh(self) -> bool:
        """Take the settings files again, after a reload (the config names them); True when the
        files to watch changed."""
        files = frozenset({*self._own, *self._settings()})
        if files == self.files:
            return False
        self.files = files
        self.dirs = frozenset({*(path.parent for path in files), self.policy_dir})
        return True

    def roots(self) -> frozenset[Path]:
        """Existing directories, watched non-recursively, that see every target change."""
        return frozenset(_nearest_existing(directory) for directory in self.dirs)

    def matters(self, path: Path) -> bool:
        if path in self.files or (path.parent == self.policy_dir and path.suffix == ".py"):
            return True
        # a directory on the way to a target appeared or went: the watched roots change
        return any(path == directory or path in directory.parents for directory in self.dirs)


def _nearest_existing(directory: Path) -> Path:
    while not directory.is_dir() and directory.parent != directory:
        directory = directory.parent
    return directory


def watch(targets: WatchSet, on_change: Callable[[], None], stop: threading.Event,
          ready: threading.Event | None = None) -> None:
    """Call `on_change` after each burst of changes to the targets, until `stop` is set; `ready` is
    set once the watches are live. Blocks: run it on a thread of its own.

    Where the kernel has inotify, the thread sleeps until a policy file, or a folder on the way to
    one, changes (`_watch_queued`): the logs appended to beside config.toml never wake it, and it
    takes the interpreter lock the decisions need once a second, to look whether it should stop.
    watchfiles' watch (below) takes it every 30 ms and after every record: 33 wake-ups a second of
    an idle core against 1. Elsewhere, or where a policy file cannot be watched that way (a symlink
    on its way), watchfiles watches."""
    from ..store.kept import new_store

    store = new_store()
    if store is not None:
        try:
            if _watch_queued(store, targets, on_change, stop, ready):
                return
        finally:
            store.close()
    _watch_with_watchfiles(targets, on_change, stop, ready)


def _watch_queued(store: Kept, targets: WatchSet, on_change: Callable[[], None], stop: threading.Event,
                  ready: threading.Event | None) -> bool:
    """`watch` on an inotify store of this thread's own. False when a policy file or a folder on its
    way cannot be watched: at the start, or once a change made it so (after its reload)."""
    if not _watch_targets(store, targets):
        return False
    if ready is not None:
        ready.set()
    while not stop.is_set():
        if not any(targets.matters(Path(path)) for path in store.wait(STOP_CHECK_S)):
            continue
        burst_ends = time.monotonic() + DEBOUNCE_MS / 1000
        while store.wait(STEP_MS / 1000) and time.monotonic() < burst_ends:
            pass
        # watched again before the reload reads them: a file saved in between raises an event
        watching = _watch_targets(store, targets)
        on_change()
        if watching and targets.refresh():  # the reloaded config names other settings files:
            watching = _watch_targets(store, targets)  # read them once more, now that they are watched
            on_change()
        if not watching:
            return False
    return True


def _watch_targets(store: Kept, targets: WatchSet) -> bool:
    """Watch every policy file as it is now (the policies folder's Python files included) and every
    folder on the way to them; a file replaced or created since is watched as what its name names."""
    policies = targets.policy_dir
    found = tuple(sorted(str(path) for path in policies.glob("*.py"))) if policies.is_dir() else ()
    return store.watch((*sorted(map(str, targets.files)), *found), route=str(policies / "*.py"))


def _watch_with_watchfiles(targets: WatchSet, on_change: Callable[[], None], stop: threading.Event,
                           ready: threading.Event | None) -> None:
    """`watch` by watchfiles' documented low-level backend (RustNotify) rather than `awatch`, because
    a change of the watched directories must be followed by a reload only once the new watches are
    live: a file saved in between would otherwise go unseen."""
    from watchfiles._rust_notify import RustNotify

    moved = False
    while not stop.is_set():
        roots = targets.roots()
        with RustNotify(sorted(map(str, roots)), False, False, 300, False, True) as notifier:
            if ready is not None:
                ready.set()
            if moved:  # the directories changed: reload now that their contents are watched
                on_change()
            while True:
                raw = notifier.watch(DEBOUNCE_MS, STEP_MS, 0, stop)
                if raw == "stop":
                    return
                if isinstance(raw, str) or not any(targets.matters(Path(path)) for _, path in raw):
                    continue
                moved = targets.roots() != roots
                if moved:
                    break
                on_change()
                # the reloaded config names other settings files: read them once more, once watched
                moved = targets.refresh() and targets.roots() != roots
                if moved:
                    break
