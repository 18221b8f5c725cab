"""A project's files (the layout is fixed by DESIGN.md):

    .hookgate/config.toml         policy config
    .hookgate/hooks.json          project command hooks
    .hookgate/policies/*.py       Python policies
    .hookgate/current_role        the active pipeline role, one word; absent = none
    .hookgate/stage.jsonl         {"role", "ts"} per completed role, appended only after validation
    .hookgate/stage_schemas.json  role -> {files, checks}; the preset's when absent

hookgate's own files (config, hooks, policies) always live in `.hookgate/`; the pipeline state
(role, stage log, schemas, sessions) lives where the project's layout says (store/layout.py):
`.hookgate/`, or `.godotmaker/` in GodotMaker's own formats.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path
from typing import Any, Mapping

import msgspec

from . import kept, locked
from .layout import GODOTMAKER, HOOKGATE, Layout, choose, layout as named_layout
from .session import SessionStore

HOOKGATE_DIR = ".hookgate"
# a folder that makes the directory holding it a project
PROJECT_MARKERS = (HOOKGATE_DIR, named_layout(GODOTMAKER).dir)
_NOT_PROJECTS = frozenset({".git", "node_modules", ".venv"})
ROLE_NAME = re.compile(r"[a-z][a-z0-9_-]{0,63}")
MAX_OPENED = 64  # projects (root x layout x state folder) one process keeps opened (Project.open)
_opened: dict[tuple[str, str, str | None], "Project"] = {}


class Project:
    def __init__(self, root: Path, state_dir: Path | None = None, *, layout: Layout | None = None) -> None:
        self.root = root
        self.root_text = str(root)  # as every decision's rules and ledger compare it (Path.__str__ is Python)
        self.layout = layout or named_layout(HOOKGATE)
        self.config_dir = root / HOOKGATE_DIR
        self.config_path = self.config_dir / "config.toml"
        self.hooks_path = self.config_dir / "hooks.json"
        self.hooks_file = str(self.hooks_path)
        self.policy_dir = self.config_dir / "policies"
        self.dir = root / self.layout.dir  # the pipeline state
        self.state_dir = state_dir or self.dir
        self.role_path = self.dir / self.layout.role
        self.role_file = str(self.role_path)
        self._role = locked.Remembered(self.role_path, _role_named)
        self.role_owner_path = str(self.state_dir / self.layout.role_owner)
        self._sessions: dict[str, SessionStore] = {}
        self.stage_path = self.dir / self.layout.stage_log
        self._stage_file = str(self.stage_path)
        self._stages = locked.Remembered(self.stage_path, _stage_entries)
        # the looks at the role file and the stage log, as a decision makes them (Context.look,
        # store/kept.py: key, work, the files they read), made once: a decision looks several times
        self.role_look = (("role", self.role_file), self.role_state, (self.role_file,))
        self._stage_look = (("stage log", self._stage_file), self._read_stage_log, (self._stage_file,))
        self.schemas_path = self.dir / self.layout.stage_schemas

    @classmethod
    def open(cls, root: Path, compat: str | None = None, state_dir: str | None = None) -> "Project":
        """The project at `root` as its config lays it out: decided once, before any state is read.
        The layout and the state folder are decided afresh on every call (from the folders as
        they are now); the same answers give back the same Project, whose own memory is only
        paths and readings checked against the files' identity, so a long-running core keeps
        its session stores and its reading of the role file from call to call."""
        layout = choose(root, compat)
        state = (root / state_dir).resolve() if state_dir else None
        key = (str(root), layout.name, str(state) if state else None)
        project = _opened.get(key)
        if project is None:
            if len(_opened) >= MAX_OPENED:
                _opened.clear()
            project = _opened[key] = cls(root, state, layout=layout)
        return project

    @property
    def godotmaker(self) -> bool:
        return self.layout.name == GODOTMAKER

    @classmethod
    def find(cls, cwd: str | os.PathLike[str] | None, env: Mapping[str, str] = os.environ) -> "Project":
        """The project a command run in `cwd` belongs to: HOOKGATE_PROJECT_DIR, else `locate`.
        A hook call is governed by its session's pinned root instead (store/pin.py)."""
        if env.get("HOOKGATE_PROJECT_DIR"):
            return cls(Path(env["HOOKGATE_PROJECT_DIR"]).resolve())
        return cls(cls.locate(cwd))

    @staticmethod
    def locate(start: str | os.PathLike[str] | None) -> Path:
        """The nearest directory at or above `start` that is a project (PROJECT_MARKERS), else
        `start` itself."""
        try:
            where = Path(start or os.getcwd()).resolve()
        except (OSError, ValueError):  # a cwd no filesystem can hold (NUL byte, too long)
            where = Path(os.getcwd()).resolve()
        for directory in (where, *where.parents):
            if any((directory / marker).is_dir() for marker in PROJECT_MARKERS):
                return directory
        return where

    def nested_projects(self, max_dirs: int = 50_000) -> tuple[list[Path], bool]:
        """The folders below the root that are projects of their own (a .hookgate/ or a
        .godotmaker/: each governs only the sessions that start inside it), and whether the walk
        stopped at `max_dirs` folders."""
        found: list[Path] = []
        seen = 0
        for folder, dirs, _ in os.walk(self.root):
            seen += 1
            if seen > max_dirs:
                return found, True
            markers = [d for d in dirs if d in PROJECT_MARKERS]
            if markers and Path(folder) != self.root:
                found.extend(Path(folder) / marker for marker in markers)
            dirs[:] = [d for d in dirs if d not in _NOT_PROJECTS and d not in PROJECT_MARKERS]
        return found, False

    def session(self, session_id: str) -> SessionStore:
        """The store of one session. A store is only where that session's files are (it reads
        them afresh on every call), so a project keeps the few it has handed out: a long-running
        core does not work the same paths out again on every decision."""
        store = self._sessions.get(session_id)
        if store is None:
            if len(self._sessions) >= 64:
                self._sessions.clear()
            store = self._sessions[session_id] = SessionStore(self.state_dir, session_id, self.layout)
        return store

    def sessions(self) -> list[SessionStore]:
        """The sessions with records, the latest first (a GodotMaker layout keeps only the current one)."""
        if "{session}" not in self.layout.session_metrics:
            current = SessionStore(self.state_dir, "", self.layout)
            records = current.metrics()
            if not records:
                return []
            return [SessionStore(self.state_dir, str(records[0].get("session_id", "")), self.layout)]
        pattern = self.layout.session_metrics.replace("{session}", "*")
        logs = sorted(self.state_dir.glob(pattern), key=lambda p: p.stat().st_mtime_ns, reverse=True)
        return [SessionStore(self.state_dir, log.parent.name, self.layout) for log in logs]

    def path(self, relative: str) -> Path:
        return self.root / relative

    # -- the active role -------------------------------------------------------------------
    def current_role(self) -> str | None:
        return self.role_state()[0]

    def role_state(self) -> tuple[str | None, int | None]:
        """(the active role, the role file's mtime) from one look at the file; its text is read
        again only when the file changed (locked.Remembered)."""
        try:
            st = os.stat(self.role_file)
        except (FileNotFoundError, NotADirectoryError):
            return None, None
        return self._role.look(st), st.st_mtime_ns

    def set_role(self, role: str) -> None:
        if not ROLE_NAME.fullmatch(role):
            raise ValueError(f"invalid role {role!r}: one lower-case word (letters, digits, '-', '_')")
        self.role_path.parent.mkdir(parents=True, exist_ok=True)
        locked.replace(self.role_path, role.encode() + b"\n")

    def clear_role(self) -> bool:
        try:
            self.role_path.unlink()
            return True
        except FileNotFoundError:
            return False

    # -- completed stages ------------------------------------------------------------------
    def stage_log(self) -> list[dict[str, Any]]:
        """The completed stages, in order. Every decision's record counts them, so the log is
        read again only when it changed (locked.Remembered), and not even looked at by a core
        that keeps answers while nothing changed there (store/kept.py)."""
        return list(kept.look(*self._stage_look))

    def _read_stage_log(self) -> tuple[dict[str, Any], ...]:
        try:
            st = os.stat(self._stage_file)
        except (FileNotFoundError, NotADirectoryError):
            return ()
        return self._stages.look(st)

    def completed_roles(self) -> set[str]:
        return {entry["role"] for entry in self.stage_log()}

    def append_stage(self, role: str) -> dict[str, Any]:
        entry = {"role": role, "ts": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        locked.append(self.stage_path, msgspec.json.encode(entry) + b"\n")
        return entry


def _role_named(text: bytes) -> str | None:
    """The role a role file names: one word, else none."""
    role = text.decode(errors="replace").strip()
    return role if ROLE_NAME.fullmatch(role) else None


def _stage_entries(text: bytes) -> tuple[dict[str, Any], ...]:
    entries = []
    for line in text.splitlines():
        try:
            entry = msgspec.json.decode(line)
        except msgspec.DecodeError:
            continue  # a damaged line is skipped, the rest of the log still counts
        if isinstance(entry, dict) and isinstance(entry.get("role"), str):
            entries.append(entry)
    return tuple(entries)
