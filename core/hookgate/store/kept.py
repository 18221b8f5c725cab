"""What the filesystem answered, kept across decisions for as long as the kernel reports no change
where the answer came from (Linux inotify). For the processes that decide event after event (the
RPC core, the in-process benchmark): a decision then asks the kernel one question, "is anything
queued?" (a poll), instead of a stat per state file and four calls per written path.

Why a kept answer is never stale: inotify queues a change's event inside the system call that
makes the change, before that call returns. Every look polls the queue first, and any event drops
every kept answer. A change made before the call being decided was sent (a symlink the agent's
last Bash made, a role set in a terminal, the role file a gate of this decision removed) is
therefore seen; a change racing the decision is a race with or without this store. The places an
answer depends on are watched before it is worked out, so a change in between is queued too.

What is watched: every folder on the way to a path the answer read, from `/` down (its entries:
a name created, removed or moved, attributes changed), and the files whose contents it read. An
answer is kept only if each of them could be watched as a real folder: a symlink on the way is
refused (its target's folders are not on the path, so a change there would not be seen), and the
answer is worked out on every decision, as without this store. A folder that does not exist
yet needs no watch of its own: its creation is an event in its parent.

Nothing is kept: without inotify; in a forked child (the parent's queue is not the child's to
drain: it starts empty); for changes another machine makes to a network filesystem (they raise
no event here; the agents hookgate judges run on this machine, and their changes do).
"""

from __future__ import annotations

import errno
import os
from typing import Any, Callable, TypeVar

T = TypeVar("T")

# inotify(7)
_ATTRIB, _MODIFY, _CLOSE_WRITE = 0x4, 0x2, 0x8
_MOVED_FROM, _MOVED_TO, _CREATE, _DELETE = 0x40, 0x80, 0x100, 0x200
_DELETE_SELF, _MOVE_SELF = 0x400, 0x800
_ONLYDIR, _DONT_FOLLOW, _MASK_ADD = 0x01000000, 0x02000000, 0x20000000
ENTRIES = _ATTRIB | _MOVED_FROM | _MOVED_TO | _CREATE | _DELETE | _DELETE_SELF | _MOVE_SELF
CONTENTS = _MODIFY | _CLOSE_WRITE | _ATTRIB | _DELETE_SELF | _MOVE_SELF
MAX_ANSWERS = 4096
MAX_WATCHES = 1024  # kernel watches added before the queue is opened afresh (replaced folders leave theirs)
_MISSING = object()
_POLLIN = 0x1


class Kept:
    """The answers of one process and the watches that vouch for them."""

    def __init__(self, init: Callable[[], int], add_watch: Callable[[int, bytes, int], int]) -> None:
        """`init()`: a new non-blocking inotify descriptor (or -1); `add_watch(fd, path, mask)`:
        0, or the errno of inotify_add_watch's failure."""
        import select  # here, not at the top: the hook path imports this module, and never keeps

        self._init = init
        self._add_watch = add_watch
        self._fd = init()
        if self._fd < 0:
            raise OSError("inotify_init1 failed")
        self._queued = select.poll()
        self._queued.register(self._fd, _POLLIN)
        self._answers: dict[Any, Any] = {}
        self._watched: dict[str, int] = {}  # path -> the events watched there since the last change
        self._added = 0
    def look(self, key: Any, work: Callable[[], T], files: tuple[str, ...] = (), route: str | None = None,
             keep_if: Callable[[T], bool] | None = None) -> T:
        """`work()`, kept under `key` while no folder on the way to `files` and `route` (and no file
        of `files`) changed. `keep_if`: whether this answer may be kept (e.g. no symlink in it)."""
        if self._queued.poll(0):
            self._forget()
        found = self._answers.get(key, _MISSING)
        if found is not _MISSING:
            return found  # type: ignore[no-any-return]
        watched = all([self._watch_route(os.path.dirname(path)) and self._watch(path, CONTENTS, False)
                       for path in files]) and (route is None or self._watch_route(os.path.dirname(route)))
        value = work()
        if watched and (keep_if is None or keep_if(value)):
            if len(self._answers) >= MAX_ANSWERS:
                self._answers.clear()
            self._answers[key] = value
        return value

    def _watch_route(self, folder: str) -> bool:
        """Watch the entries of every folder from `/` down to `folder` (stops, watched, where the
        next one does not exist yet). False if one is not a real folder or cannot be watched."""
        if not folder.startswith("/") or os.path.normpath(folder) != folder:
            return False
        path = ""
        for name in folder.split("/")[1:] if folder != "/" else ():
            if not self._watch(path or "/", ENTRIES, True):
                return False
            path += "/" + name
        return self._watch(path or "/", ENTRIES, True)

    def _watch(self, path: str, mask: int, folder: bool) -> bool:
        """Watch `path` for `mask` (a name that does not exist needs none: see the module)."""
        if self._watched.get(path, 0) & mask == mask:
            return True
        flags = mask | _DONT_FOLLOW | _MASK_ADD | (_ONLYDIR if folder else 0)
        error = self._add_watch(self._fd, os.fsencode(path), flags)
        if error:
            return error == errno.ENOENT
        if not folder and os.path.islink(path):  # the watch is on the link, not on what it reads
            return False
        self._watched[path] = self._watched.get(path, 0) | mask
        self._added += 1
        return True

    def _forget(self) -> None:
        """Something changed: drop every answer, and the watches' names (a folder may be another now)."""
        try:
            while os.read(self._fd, 65536):
                pass
        except BlockingIOError:
            pass
        self._answers.clear()
        self._watched.clear()
        if self._added > MAX_WATCHES:
            self._reopen()

    def _reopen(self) -> None:
        fd = self._init()
        if fd < 0:
            return  # keep the old queue: it still reports every change it watches
        self._queued.unregister(self._fd)
        os.close(self._fd)
        self._fd, self._added = fd, 0
        self._queued.register(fd, _POLLIN)

    def close(self) -> None:
        os.close(self._fd)


_kept: Kept | None = None
_forks_watched = False


def keep_answers() -> Kept | None:
    """Keep answers from now on in this process (the cores that decide many events). None where
    the kernel offers no inotify; hookgate then asks the filesystem on every decision."""
    global _kept, _forks_watched
    if _kept is None:
        try:
            import ctypes  # only in the long-running cores: the hook path never loads it

            libc = ctypes.CDLL(None, use_errno=True)
            init, inotify_add_watch = libc.inotify_init1, libc.inotify_add_watch
            inotify_add_watch.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32)

            def add_watch(fd: int, path: bytes, mask: int) -> int:
                return 0 if inotify_add_watch(fd, path, mask) >= 0 else ctypes.get_errno()

            _kept = Kept(lambda: int(init(os.O_NONBLOCK | os.O_CLOEXEC)), add_watch)
        except (OSError, AttributeError, ImportError):
            return None
    if not _forks_watched:
        os.register_at_fork(after_in_child=_not_inherited)
        _forks_watched = True
    return _kept


def current() -> Kept | None:
    """This process's kept answers; None when it keeps none (a hook process, or no inotify)."""
    return _kept


def look(key: Any, work: Callable[[], T], files: tuple[str, ...] = (), route: str | None = None,
         keep_if: Callable[[T], bool] | None = None) -> T:
    """Kept.look in a process that keeps answers; `work()` in one that does not."""
    kept = _kept
    return work() if kept is None else kept.look(key, work, files, route, keep_if)


def _not_inherited() -> None:
    global _kept
    if _kept is not None:
        _kept.close()
        _kept = None
