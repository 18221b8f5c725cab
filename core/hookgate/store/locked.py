"""File primitives that stay correct when many hook processes write at once: appends and
read-modify-writes happen under an exclusive flock, and whole-file writes replace atomically,
so a reader never sees a torn line or a half-written state file."""

from __future__ import annotations

import fcntl
import os
import stat
import time
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Callable, Generic, Iterator, TypeVar

from .. import waits
from . import kept

# File times are coarse (a few milliseconds): two writes within one tick can leave a file with
# the same identity. Nothing read from a file younger than this is remembered by its identity
# (config/cache.py, the active role in project.py).
RACY_SECONDS = 2.0


def identity(st: os.stat_result) -> tuple[int, int, int, int, int]:
    """What names a file's bytes to a reader that remembers them: device, inode, size, mtime, ctime."""
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def settled(st: os.stat_result) -> bool:
    """Whether the file is older than RACY_SECONDS, so that its identity can be trusted to name
    its bytes (a write within the same tick as the last one could keep it)."""
    return max(st.st_mtime_ns, st.st_ctime_ns) < time.time_ns() - int(RACY_SECONDS * 1e9)


T = TypeVar("T")


class Remembered(Generic[T]):
    """What was made of one file's bytes, kept by the file's identity: made again whenever the
    identity changed, and on every look while the file is younger than RACY_SECONDS (file times
    are coarse: two writes within one tick can leave the same identity)."""

    def __init__(self, path: Path, make: Callable[[bytes], T]) -> None:
        self.path = path
        self._make = make
        self._seen: tuple[tuple[int, int, int, int, int], T] | None = None

    def look(self, st: os.stat_result) -> T:
        """The value for the file as `st`, a stat of it the caller has just taken, describes it."""
        now = identity(st)
        seen = self._seen
        if seen is not None and seen[0] == now:
            return seen[1]
        value = self._make(read(self.path))
        self._seen = (now, value) if settled(st) else None
        return value


@contextmanager
def exclusive(lock_path: Path) -> Iterator[None]:
    fd = _open(lock_path, os.O_RDWR | os.O_CREAT)
    try:
        take(fd)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def take(fd: int) -> None:
    """Lock an open file exclusively; a wait for another process's lock is not the gate's time
    (hookgate.waits)."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        with waits.not_counted():
            fcntl.flock(fd, fcntl.LOCK_EX)


def append(path: Path | str, data: bytes) -> None:
    """Append whole lines; concurrent appenders never interleave inside a line."""
    if not data:
        return
    fd = _appender(path if type(path) is str else str(path))
    try:
        try:  # take() and write_all() without the calls around them, in the common case
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            take(fd)
        written = os.write(fd, data)
        if written < len(data):
            write_all(fd, data[written:])
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)


# The files this process appends to, kept open: a long-running core appends a few logs on every
# decision, and opening one costs more than the write. path -> (descriptor, the process that
# opened it, (device, inode), the kept look at what the path names: its key and its work). A
# descriptor is used only while the path still names its file (a session reset replaces the logs,
# a cleanup removes them) and only by the process that opened it: a fork shares the parent's open
# file, and with it the parent's lock, so it opens its own.
_appenders: dict[str, tuple[int, int, tuple[int, int], tuple[str, str], Callable[[], tuple[int, int] | None]]] = {}
_MAX_APPENDERS = 16
# this process's id, kept up to date across forks instead of asked on every append (a system call)
_pid = os.getpid()


def _forked() -> None:
    global _pid
    _pid = os.getpid()


os.register_at_fork(after_in_child=_forked)


def _appender(path: str) -> int:
    known = _appenders.get(path)
    pid = _pid
    if known is not None:
        fd, opener, identity, key, file_at = known
        if opener == pid:
            # kept across calls while no folder on the way changed: appends do not move the file
            if kept.look(key, file_at, route=path) == identity:
                return fd
            os.close(fd)
        del _appenders[path]
    if len(_appenders) >= _MAX_APPENDERS:
        for fd, opener, *_ in _appenders.values():
            if opener == pid:
                os.close(fd)
        _appenders.clear()
    fd = _open(Path(path), os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise NotAFile(f"{path} is not a regular file")
    _appenders[path] = (fd, pid, (st.st_dev, st.st_ino), ("file at", path), partial(_file_at, path))
    return fd


def _file_at(path: str) -> tuple[int, int] | None:
    """(device, inode) of the file `path` names; None when it names none."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def write_all(fd: int, data: bytes) -> None:
    """Write all of `data` to `fd`: a write may take less than it is given (to a regular file,
    only when the disk is full or a signal came, so the rest is sliced only when there is one)."""
    written = os.write(fd, data)
    view = memoryview(data)[written:] if written < len(data) else None
    while view:
        view = view[os.write(fd, view):]


def replace(path: Path, data: bytes) -> None:
    """Write a whole file so that readers see either the old or the new content."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = _open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    try:
        write_all(fd, data)
    finally:
        os.close(fd)
    os.replace(tmp, path)


class NotAFile(Exception):
    """One of hookgate's files is a FIFO, a device or a socket. Not an OSError, which some readers
    take for "no such file": a role file the agent replaced by a FIFO must fail its gates closed,
    not read as "no role"."""


def read(path: Path) -> bytes:
    """The file's bytes; b"" when there is none. Opened without blocking: the agent runs as the
    same user and could put a FIFO where the file was, whose open and read would wait for a
    writer, and a hook that never answers is let through by the runtime's timeout."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return b""
    with open(fd, "rb", buffering=0) as f:  # unbuffered: no tty probe and position seeks
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotAFile(f"{path} is not a regular file")
        return f.readall()


def _open(path: Path, flags: int) -> int:
    """O_NONBLOCK: a FIFO in place of a log or a lock (the agent runs as the same user) fails or
    is refused at once instead of waiting for a reader; on a regular file it changes nothing."""
    flags |= os.O_NONBLOCK
    try:
        return os.open(path, flags, 0o644)
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        return os.open(path, flags, 0o644)
