"""The config an after-event is decided by: the one its call began under.

A call may rewrite the files the config is read from: `.hookgate/config.toml` (an obfuscated
command that turns the protection or the effect check off while it writes a protected file), or
a runtime's settings, whose commands name the scripts the path class `runtime_scripts` protects
(the command removed and its script rewritten in one call). Decided by the config read after the
call, the call's own after-event judged its writes by the rules it wrote, and they stood. The
reading the call started from holds those files as they were, their bytes kept by digest: where
one of them moved, the after-event's config is read from those bytes. It protects the files it is
read from, and the after-event puts them back.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from ..config.load import config_as_read, config_inputs
from ..errors import ConfigError
from .check import lstat_or_none, unchanged
from .ledger import call_id
from .protection import Agent, protection_for
from .store import StoreError, store_for

if TYPE_CHECKING:
    from ..config.schema import Config
    from ..model.events import Event
    from ..store.project import Project
    from .tree import File, Index


def config_begun(event: "Event", project: "Project", config: "Config") -> "Config | None":
    """The config `event`'s call began under, where a file `config` was read from moved since the
    call's reading (None: `config` is that one, or the call has no reading). It must give the
    reading's own rules (their key): a config it cannot rebuild so (a preset or a variable moved,
    a file the reading kept no bytes of) leaves `config` in force."""
    call = call_id(event)
    if call is None:
        return None
    store = store_for(project.root_text)
    before = store.peek(call)
    if before is None:
        return None
    base = project.root_text.rstrip("/") + "/"
    if not _inputs_moved(before, project, config, base):
        return None

    def read(path: Path) -> bytes | None:
        file = _kept(before, str(path), base)
        if file is None:
            return None  # not there when the call began
        if not file.digest:
            raise StoreError("no copy of it was kept")
        return store.get(file.digest)

    try:
        begun = config_as_read(project, read)
    except (StoreError, ConfigError):  # a copy gone or altered
        return None
    if protection_for(Agent(*before.agent), begun, project.root_text).key != before.key:
        return None
    return begun


def _inputs_moved(before: "Index", project: "Project", config: "Config", base: str) -> bool:
    """Whether a file `config` was read from is no longer as the call's reading had it. A settings
    file made since is not looked at: it adds scripts to protect, and takes none away."""
    now = time.time_ns()
    for path in config_inputs(project, config):
        text = str(path)
        file = _kept(before, text, base)
        if (file is not None or path == project.config_path) and _moved(file, text, before.t, now):
            return True
    return False


def _kept(before: "Index", path: str, base: str) -> "File | None":
    """The file at `path` as the call's reading has it (None: not there, or not protected then)."""
    if path.startswith(base):
        return before.files.get(path[len(base):])
    return before.outside.get(path)


def _moved(file: "File | None", path: str, read_at: int, now: int) -> bool:
    """Whether the file at `path` is no longer as the reading taken at `read_at` had it: changed,
    removed, or made since (one the reading does not name was not there, or not protected: one
    older than the reading is the latter)."""
    st = lstat_or_none(path)
    if file is None:
        return st is not None and st.st_ctime_ns >= read_at
    return st is None or not unchanged(file, st, path, now)
