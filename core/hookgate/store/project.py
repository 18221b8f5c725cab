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
ROLE_NAME = re.compile(r"[a-z][a-z0-9_-]{0,63}")


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
        """The project a hook call belongs to: HOOKGATE_PROJECT_DIR, else the nearest directory
        at or above cwd that has a .hookgate/, else the runtime's project dir, else cwd."""
        if env.get("HOOKGATE_PROJECT_DIR"):
            return cls(Path(env["HOOKGATE_PROJECT_DIR"]).resolve())
        try:
            start = Path(cwd or os.getcwd()).resolve()
        except (OSError, ValueError):  # a cwd no filesystem can hold (NUL byte, too long)
            start = Path(os.getcwd()).resolve()
        for directory in (start, *start.parents):
            if (directory / HOOKGATE_DIR).is_dir():
                return cls(directory)
        for var in ("CLAUDE_PROJECT_DIR",):
            if env.get(var):
                return cls(Path(env[var]).resolve())
        return cls(start)

    def session(self, session_id: str) -> SessionStore:
        return SessionStore(self.state_dir, session_id)

    def path(self, relative: str) -> Path:
        return self.root / relative

    # -- the active role -------------------------------------------------------------------
    def current_role(self) -> str | None:
        text = locked.read(self.role_path).decode(errors="replace").strip()
        return text if ROLE_NAME.fullmatch(text) else None

    def set_role(self, role: str) -> None:
        if not ROLE_NAME.fullmatch(role):
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
