"""A project's `.hookgate/` files (the layout is fixed by DESIGN.md):

    .hookgate/config.toml         policy config
    .hookgate/current_role        the active pipeline role, one word; absent = none
    .hookgate/stage.jsonl         {"role", "ts"} per completed role, appended only after validation
    .hookgate/stage_schemas.json  role -> {files, checks}; the preset's when absent
    .hookgate/hooks.json          project command hooks
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path
from typing import Any, Mapping

import msgspec

from . import locked
from .session import SessionStore

HOOKGATE_DIR = ".hookgate"
_NOT_PROJECTS = frozenset({".git", "node_modules", ".venv"})
_ROLE = re.compile(r"[a-z][a-z0-9_-]{0,63}")


class Project:
    def __init__(self, root: Path, state_dir: Path | None = None) -> None:
        self.root = root
        self.dir = root / HOOKGATE_DIR
        self.state_dir = state_dir or self.dir
        self.config_path = self.dir / "config.toml"
        self.role_path = self.dir / "current_role"
        self.stage_path = self.dir / "stage.jsonl"
        self.schemas_path = self.dir / "stage_schemas.json"
        self.hooks_path = self.dir / "hooks.json"

    @classmethod
    def find(cls, cwd: str | os.PathLike[str] | None, env: Mapping[str, str] = os.environ) -> "Project":
        """The project a command run in `cwd` belongs to: HOOKGATE_PROJECT_DIR, else `locate`.
        A hook call is governed by its session's pinned root instead (store/pin.py)."""
        if env.get("HOOKGATE_PROJECT_DIR"):
            return cls(Path(env["HOOKGATE_PROJECT_DIR"]).resolve())
        return cls(cls.locate(cwd))

    @staticmethod
    def locate(start: str | os.PathLike[str] | None) -> Path:
        """The nearest directory at or above `start` that has a .hookgate/, else `start` itself."""
        try:
            where = Path(start or os.getcwd()).resolve()
        except (OSError, ValueError):  # a cwd no filesystem can hold (NUL byte, too long)
            where = Path(os.getcwd()).resolve()
        for directory in (where, *where.parents):
            if (directory / HOOKGATE_DIR).is_dir():
                return directory
        return where

    def nested_projects(self, max_dirs: int = 50_000) -> tuple[list[Path], bool]:
        """The folders below the root that have a .hookgate/ of their own (each governs only the
        sessions that start inside it), and whether the walk stopped at `max_dirs` folders."""
        found: list[Path] = []
        seen = 0
        for folder, dirs, _ in os.walk(self.root):
            seen += 1
            if seen > max_dirs:
                return found, True
            if HOOKGATE_DIR in dirs:
                if Path(folder) != self.root:
                    found.append(Path(folder))
                dirs.remove(HOOKGATE_DIR)  # nothing of a project's own state is a project
            dirs[:] = [d for d in dirs if d not in _NOT_PROJECTS]
        return found, False

    def session(self, session_id: str) -> SessionStore:
        return SessionStore(self.state_dir, session_id)

    def path(self, relative: str) -> Path:
        return self.root / relative

    # -- the active role -------------------------------------------------------------------
    def current_role(self) -> str | None:
        text = locked.read(self.role_path).decode(errors="replace").strip()
        return text if _ROLE.fullmatch(text) else None

    def set_role(self, role: str) -> None:
        if not _ROLE.fullmatch(role):
            raise ValueError(f"invalid role {role!r}: one lower-case word (letters, digits, '-', '_')")
        self.dir.mkdir(parents=True, exist_ok=True)
        locked.replace(self.role_path, role.encode() + b"\n")

    def clear_role(self) -> bool:
        try:
            self.role_path.unlink()
            return True
        except FileNotFoundError:
            return False

    # -- completed stages ------------------------------------------------------------------
    def stage_log(self) -> list[dict[str, Any]]:
        entries = []
        for line in locked.read(self.stage_path).splitlines():
            try:
                entry = msgspec.json.decode(line)
            except msgspec.DecodeError:
                continue  # a damaged line is skipped, the rest of the log still counts
            if isinstance(entry, dict) and isinstance(entry.get("role"), str):
                entries.append(entry)
        return entries

    def completed_roles(self) -> set[str]:
        return {entry["role"] for entry in self.stage_log()}

    def append_stage(self, role: str) -> dict[str, Any]:
        entry = {"role": role, "ts": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        locked.append(self.stage_path, msgspec.json.encode(entry) + b"\n")
        return entry
