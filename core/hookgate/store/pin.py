"""Which project governs a session: the root chosen at the session's first event, kept for all
of the session's later events.

Finding the project anew on every call (the nearest `.hookgate/` at or above the call's cwd) lets
the agent move its own rules: `mkdir -p src/.hookgate; cd src` and every later call belonged to a
project with no role and no rules. So the first event of a session picks the root, in this order:

  1. HOOKGATE_PROJECT_DIR (set by whoever started the runtime; never pinned, it is fixed already);
  2. the runtime's project directory (its dialect's `project_dir(env)`, e.g. Claude Code's), or
     else the event's cwd; from there, the nearest directory at or above that is a project (has a
     `.hookgate/` or a `.godotmaker/`), else that directory itself;

and records it. Every later event of the session, in any hook process, in the warm core's forks
or in `hookgate serve`, is governed by the recorded root, whatever its cwd and whatever
`.hookgate/` folders appeared since. A session that *starts* inside a nested project with its own
`.hookgate/` is governed by that one: a real sub-project keeps working.

The record: one small file per session, `<state home>/hookgate/pins/<runtime>-<session key>`
(state home = $XDG_STATE_HOME, else ~/.local/state), holding the root's path. It lives outside
every project (a project cannot hold the record of which project governs), and the self-protection
rules guard it. The first writer wins: a complete temporary file is hard-linked into place, and
link(2) fails for every later writer, who then reads the winner's root. Bounded: when a session is
pinned, pins older than MAX_AGE and, past MAX_PINS, the least recently used are removed; a pin in
use is touched at most once a day, so a long session is not the one that goes.
"""

from __future__ import annotations

import os
import re
import _thread
import time
from pathlib import Path
from typing import Mapping

from ..private import fnv1a64

MAX_PINS = 1000
MAX_AGE = 30 * 86400.0
_TOUCH_AFTER = 86400.0
_PLAIN_KEY = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}")


def state_home(env: Mapping[str, str]) -> Path | None:
    """hookgate's state outside every project (`$XDG_STATE_HOME/hookgate`, else
    `~/.local/state/hookgate`); None when the environment names no home to keep it in."""
    state = env.get("XDG_STATE_HOME", "")
    if state.startswith("/"):
        return Path(state) / "hookgate"
    home = env.get("HOME", "")
    return Path(home) / ".local" / "state" / "hookgate" if home.startswith("/") else None


def pins_dir(env: Mapping[str, str]) -> Path | None:
    """Where this user's pins live."""
    folder = _pins_folder(env)
    return Path(folder) if folder is not None else None


def _pins_folder(env: Mapping[str, str]) -> str | None:
    """pins_dir as text: what every hook call looks up, without building a Path for it."""
    state = env.get("XDG_STATE_HOME", "")
    if state.startswith("/"):
        return f"{state.rstrip('/')}/hookgate/pins"
    home = env.get("HOME", "")
    return f"{home.rstrip('/')}/.local/state/hookgate/pins" if home.startswith("/") else None


def project_key(root: Path) -> str:
    """A stable name for a project root, for what hookgate keeps of it outside the project."""
    return f"{fnv1a64(str(root).encode(errors='surrogateescape')):016x}"


def record_path(directory: Path, runtime: str, session_id: str) -> Path:
    return directory / _record_name(runtime, session_id)


def _record_name(runtime: str, session_id: str) -> str:
    if _PLAIN_KEY.fullmatch(session_id):
        key = session_id
    else:  # an id no file name can hold as it is: a stable hash of it
        key = f"h{fnv1a64(session_id.encode(errors='surrogateescape')):016x}"
    return f"{runtime}-{key}"


def pinned(directory: Path | str, runtime: str, session_id: str) -> Path | None:
    """The root this session was pinned to, or None (not pinned yet, or its root is gone)."""
    path = os.path.join(directory, _record_name(runtime, session_id))
    try:
        # not open(): no buffered file built on every call; O_NONBLOCK: a FIFO planted as a pin by the
        # agent (the same user) reads as empty instead of hanging every hook of the session
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        text = os.read(fd, 8192).decode(errors="surrogateescape").strip()
        age = time.time() - os.fstat(fd).st_mtime
    except OSError:
        return None
    finally:
        os.close(fd)
    if not text.startswith("/") or not os.path.isdir(text):
        return None
    root = Path(text)
    if age > _TOUCH_AFTER:
        try:
            os.utime(path)
        except OSError:
            pass
    return root


def pin(directory: Path, runtime: str, session_id: str, root: Path) -> Path:
    """Record `root` for this session unless another event of it got there first; the root that
    governs the session either way."""
    path = record_path(directory, runtime, session_id)
    try:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = _write_tmp(directory, path, root)
        try:
            os.link(tmp, path)
            linked = True
        except FileExistsError:
            linked = False
        if not linked and pinned(directory, runtime, session_id) is None:
            os.replace(tmp, path)  # a pin whose root is gone: the session starts over where it is now
            return root
        tmp.unlink(missing_ok=True)
    except OSError:  # nowhere to keep pins (read-only home): this call is governed by what it found
        return root
    if linked:
        prune(directory)
        return root
    return pinned(directory, runtime, session_id) or root


def _write_tmp(directory: Path, path: Path, root: Path) -> Path:
    tmp = directory / f".{path.name}.{os.getpid()}.{_thread.get_ident()}.tmp"  # one per writer
    tmp.write_bytes(str(root).encode(errors="surrogateescape") + b"\n")
    return tmp


def prune(directory: Path, now: float | None = None) -> int:
    """Remove pins older than MAX_AGE and, past MAX_PINS, the least recently used; how many went."""
    now = time.time() if now is None else now
    entries: list[tuple[float, str]] = []
    try:
        with os.scandir(directory) as it:
            for entry in it:
                try:
                    entries.append((entry.stat(follow_symlinks=False).st_mtime, entry.path))
                except OSError:
                    continue
    except OSError:
        return 0
    entries.sort(reverse=True)
    doomed = [p for i, (mtime, p) in enumerate(entries) if i >= MAX_PINS or now - mtime > MAX_AGE]
    for p in doomed:
        try:
            os.unlink(p)
        except OSError:
            pass
    return len(doomed)


def governing_root(cwd: str | None, env: Mapping[str, str], runtime: str, session_id: str,
                   project_dir: str | None = None) -> Path:
    """The project root that governs this event of this session (see the module's docstring)."""
    from .project import Project

    if env.get("HOOKGATE_PROJECT_DIR"):
        return Path(env["HOOKGATE_PROJECT_DIR"]).resolve()
    directory = _pins_folder(env) if session_id else None
    if directory is not None:
        root = pinned(directory, runtime, session_id)
        if root is not None:
            return root
    found = Project.locate(project_dir or cwd)
    return pin(Path(directory), runtime, session_id, found) if directory is not None else found
