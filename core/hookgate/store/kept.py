"""What the filesystem answered, kept across decisions for as long as the kernel reports no change
where the answer came from (Linux inotify). For the processes that decide event after event (the
RPC core, the in-process benchmark): a look then asks the kernel one question, "is anything
queued?" (a poll), instead of a stat per state file and four calls per written path, and on the
main thread none at all until the kernel signals that something was.
A store of a thread's own, keeping no answer, wakes the RPC core's reload watch when a policy
file changes (`new_store`, `watch`, `wait`).

Why a kept answer is never stale: inotify queues a change's event inside the system call that
makes the change, before that call returns, and every look reads the queue first (on the main
thread, every look after the kernel said that something was queued: `told_of_changes`). A change made
before the call being decided was sent (a symlink the agent's last Bash made, a role set in a
terminal, the role file a gate of this decision removed) is therefore seen; a change racing the
decision is a race with or without this store. The places an answer depends on are watched
before it is worked out, so a change in between is queued too.

What an answer depends on, and is watched: the path it read (its contents, for `files`) and
every folder on the way to it from `/` (their entries: a name created, removed or moved,
attributes changed). An event drops the answers read from the path it names or from below it;
a new file beside the way (the agent's last Write) drops none. An answer is kept only if every
folder on its way could be watched as a real folder: a symlink on the way is refused (its
target's folders are not on the path, so a change there would not be seen), and the answer is
worked out on every decision, as without this store. A folder that does not exist needs no watch
of its own: its creation is an event in its parent. A path whose name may now be another file's
or folder's (created, removed, moved) is watched again as what it names now; a queue that
overflowed starts over.

Nothing is kept: without inotify; in a forked child (the parent's queue is not the child's to
drain: it starts empty); for changes another machine makes to a network filesystem (they raise
no event here; the agents hookgate judges run on this machine, and their changes do); across a
mount made over a folder on the way (a mount raises no event; nor does hookgate's resolution of
a path see one, kept or not).
"""

from __future__ import annotations

import _thread
import errno
import os
import struct
import sys
from typing import TYPE_CHECKING, Any, Callable, TypeVar

if TYPE_CHECKING:  # the C module has no stubs; it is `signal` without the enums (engine/deadline.py)
    import signal as _signal
else:
    import _signal

T = TypeVar("T")

# inotify(7)
_ATTRIB, _MODIFY, _CLOSE_WRITE = 0x4, 0x2, 0x8
_MOVED_FROM, _MOVED_TO, _CREATE, _DELETE = 0x40, 0x80, 0x100, 0x200
_DELETE_SELF, _MOVE_SELF = 0x400, 0x800
_Q_OVERFLOW, _IGNORED = 0x4000, 0x8000
_ONLYDIR, _DONT_FOLLOW, _MASK_ADD = 0x01000000, 0x02000000, 0x20000000
ENTRIES = _ATTRIB | _MOVED_FROM | _MOVED_TO | _CREATE | _DELETE | _DELETE_SELF | _MOVE_SELF
CONTENTS = _MODIFY | _CLOSE_WRITE | _ATTRIB | _DELETE_SELF | _MOVE_SELF
MAX_ANSWERS = 4096
_MISSING = object()
_POLLIN = 0x1
_EVENT = struct.Struct("iIII")  # struct inotify_event: wd, mask, cookie, len; then len bytes of name
_READ = 65536
_LONGEST_EVENT = _EVENT.size + 256  # a name is at most NAME_MAX (255) bytes and a NUL
_ABSENT = -1  # in place of a watch: the path named nothing
_RENAMING = _MOVED_FROM | _MOVED_TO | _CREATE | _DELETE | _DELETE_SELF | _MOVE_SELF
_FS_ENCODING = (sys.getfilesystemencoding(), sys.getfilesystemencodeerrors())  # os.fsdecode's
_SIGURG = getattr(_signal, "SIGURG", 0)  # ignored by default: a signal nobody handles ends nothing
_getsignal = _signal.getsignal
_F_SETOWN_EX, _F_OWNER_TID = 15, 0  # fcntl(2), Linux: the signal goes to one thread, not the process
_OWNER_TID = struct.Struct("ii")  # struct f_owner_ex: type, pid


class Kept:
    """The answers of one process and the watches that vouch for them."""

    def __init__(self, init: Callable[[], int], add_watch: Callable[[int, bytes, int], int],
                 rm_watch: Callable[[int, int], object]) -> None:
        """`init()`: a new non-blocking inotify descriptor (or -1); `add_watch(fd, path, mask)`: the
        watch descriptor, or minus the errno of inotify_add_watch's failure; `rm_watch(fd, wd)`."""
        import select  # here, not at the top: the hook path imports this module, and never keeps

        self._init, self._add_watch, self._rm_watch = init, add_watch, rm_watch
        self.thread = _thread.get_ident()  # the one thread that looks through this store
        self._queued = select.poll()
        # told_of_changes(): the SIGURG handler the queue raises, and whether nothing was queued
        # since the last look asked (the handler clears it); a store not told asks at every look
        self._told: Callable[[int, Any], None] | None = None
        self._quiet = False
        self._open()

    def _open(self) -> None:
        fd = self._init()
        if fd < 0:
            raise OSError("inotify_init1 failed")
        self._fd = fd
        self._queued.register(fd, _POLLIN)
        if self._told is not None and not _raise_on_queue(fd):
            self._told = None
        self._watched: dict[str, tuple[int, int]] = {}  # path -> (its watch, the events watched)
        self._paths: dict[int, str] = {}  # watch -> the path it was added for
        self._ready: set[Any] = set()  # the keys whose answers' watches are all in place
        self._answers: dict[Any, Any] = {}
        self._dependents: dict[str, set[Any]] = {}  # a path an answer read -> the keys of those answers

    def look(self, key: Any, work: Callable[[], T], files: tuple[str, ...] = (), route: str | None = None,
             keep_if: Callable[[T], bool] | None = None) -> T:
        """`work()`, kept under `key` while no folder on the way to `files` and `route` (and no file
        of `files`) changed. `keep_if`: whether this answer may be kept (e.g. no symlink in it)."""
        if not self._quiet or _getsignal(_SIGURG) is not self._told:
            self._ask()
        found = self._answers.get(key, _MISSING)
        if found is not _MISSING:
            return found  # type: ignore[no-any-return]
        watched = key in self._ready or self._watch_all(key, files, route)
        value = work()
        if watched and (keep_if is None or keep_if(value)):
            if len(self._answers) >= MAX_ANSWERS:
                self._answers.clear()
                self._dependents.clear()
            self._answers[key] = value
            for path in (*files, route) if route is not None else files:
                self._dependents.setdefault(path, set()).add(key)
        return value

    def told_of_changes(self) -> bool:
        """Have the kernel tell this store of a change instead of being asked at every look: the
        queue raises SIGURG on this thread as it queues an event (O_ASYNC, F_SETSIG, owned by the
        thread), whose handler marks the store as no longer quiet, and a look asks the queue only
        then (a poll is a system call; an allowed Write made five). As safe as asking: the kernel
        raises the signal inside the system call that makes the change, as it queues the event,
        and delivers it to this thread the next time the thread returns from the kernel, at the
        latest with the call that brings it the event to decide (a read, or the thread's own
        write); Python runs the handler at the next function call on the main thread, the look
        itself. Only on the main thread (the one Python runs handlers on), where SIGURG has no
        handler of the program's; a look asks every time while another handler holds SIGURG.
        False where the store keeps asking."""
        if self._told is not None:
            return True
        handler = self._heard  # one bound method, so that a look can tell it is still the handler
        try:
            if _getsignal(_SIGURG) not in (_signal.SIG_DFL, _signal.SIG_IGN) or self.thread != _thread.get_ident():
                return False
            _signal.signal(_SIGURG, handler)
        except ValueError:  # not the main thread
            return False
        if not _raise_on_queue(self._fd):
            _signal.signal(_SIGURG, _signal.SIG_DFL)
            return False
        self._told = handler
        return True

    def _heard(self, signum: int, frame: object) -> None:
        self._quiet = False

    def _ask(self) -> None:
        """Read what the queue holds. A told store is quiet from before the poll, so an event
        queued after it raises the signal that unquiets it again."""
        if self._told is not None:
            self._quiet = True
        if self._queued.poll(0):
            self._changed()

    def watch(self, files: tuple[str, ...], route: str | None = None) -> bool:
        """Watch `files` and the way to them and to `route`, as for an answer, without keeping one:
        for a thread that waits on a store of its own (`wait`). False if one cannot be watched (a
        symlink on the way, no watch left): its changes would raise no event."""
        return self._watch_all(("watched", files, route), files, route)

    def wait(self, timeout: float) -> set[str]:
        """Block until the kernel queues a change where this store watches, for at most `timeout`
        seconds; then drop what it changed and say which paths it named (empty: nothing came).
        Events that were lost name `/`, below which every path is."""
        if not self._queued.poll(timeout * 1000):
            return set()
        return self._changed()

    def _watch_all(self, key: Any, files: tuple[str, ...], route: str | None) -> bool:
        """Watch what the answer under `key` depends on; noted in `_ready` until a watch is dropped."""
        if all([self._watch_route(os.path.dirname(path)) and self._watch(path, CONTENTS, False) is not False
                for path in files]) and (route is None or self._watch_route(os.path.dirname(route))):
            self._ready.add(key)
            return True
        return False

    def _watch_route(self, folder: str) -> bool:
        """Watch the entries of every folder from `/` down to `folder`, or down to the first that
        does not exist (its creation is an event in its parent). False if one is not a real folder
        or cannot be watched."""
        if not folder.startswith("/") or os.path.normpath(folder) != folder:
            return False
        names = folder.split("/")[1:] if folder != "/" else []
        for path in ["/"] + ["/" + "/".join(names[:depth]) for depth in range(1, len(names) + 1)]:
            watched = self._watch(path, ENTRIES, True)
            if watched is False:
                return False
            if watched is None:
                break
        return True

    def _watch(self, path: str, mask: int, folder: bool) -> bool | None:
        """Watch `path` for `mask`: True; None when nothing is there (noted: its creation is an
        event in its folder, which drops the note); False when it cannot be watched as it should
        (not a folder, a symlink, no watch left)."""
        known = self._watched.get(path)
        if known is not None and (known[0] == _ABSENT or known[1] & mask == mask):
            return None if known[0] == _ABSENT else True
        wd = self._add_watch(self._fd, os.fsencode(path), mask | _DONT_FOLLOW | _MASK_ADD | (_ONLYDIR if folder else 0))
        if wd == -errno.ENOENT:
            self._watched[path] = (_ABSENT, 0)
            return None
        if wd < 0 or self._paths.get(wd, path) != path:  # (one inode under two paths: a bind mount)
            return False
        if not folder and os.path.islink(path):  # the watch is on the link, not on what it reads
            self._drop(path, wd)
            return False
        self._watched[path] = (wd, mask | (known[1] if known else 0))
        self._paths[wd] = path
        return True

    def _changed(self) -> set[str]:
        """Something changed: drop the answers read from the paths the events name or from below
        them (an answer depends on the path it read and on every folder on the way to it), and the
        watches of the paths whose name may now be another folder or file's. Returns those paths."""
        events = chunk = os.read(self._fd, _READ)
        while len(chunk) > _READ - _LONGEST_EVENT:  # the buffer may have held no more
            try:
                chunk = os.read(self._fd, _READ)
            except BlockingIOError:
                break
            events += chunk
        changed: set[str] = set()  # paths whose state changed
        moved: set[str] = set()  # and those whose name may now be another's
        offset = 0
        while offset + _EVENT.size <= len(events):
            wd, mask, _, length = _EVENT.unpack_from(events, offset)
            name = events[offset + _EVENT.size:offset + _EVENT.size + length].rstrip(b"\0")
            offset += _EVENT.size + length
            if mask & _Q_OVERFLOW:  # events were lost: what any path names is unknown
                self._queued.unregister(self._fd)
                os.close(self._fd)
                self._open()
                return {"/"}
            path = self._paths.get(wd)
            if path is None:
                continue
            if name:
                path = (path if path != "/" else "") + "/" + name.decode(*_FS_ENCODING)
            elif mask & _IGNORED:  # the kernel took the watch away (its file or folder is gone)
                del self._paths[wd]
                mask |= _DELETE_SELF
            changed.add(path)
            if mask & _RENAMING:
                moved.add(path)
        self._forget(changed, self._dependents, lambda leaf: [self._answers.pop(key, None)
                                                               for key in self._dependents.pop(leaf, ())])
        self._forget(moved, self._watched, lambda path: self._drop(path, self._watched[path][0]))
        return changed

    def _forget(self, paths: set[str], known: dict[str, Any], drop: Callable[[str], object]) -> None:
        """`drop` each path of `known` that is one of `paths` or below one of them. Only a folder on
        a watched way can have anything known below it, and those are all in `_watched`."""
        exact = [path for path in paths if path in known]
        folders = tuple(path + "/" for path in paths if path in self._watched)
        below = [path for path in known if path.startswith(folders)] if folders else []
        for path in exact + below:
            if path in known:
                drop(path)

    def _drop(self, path: str, wd: int) -> None:
        self._ready.clear()
        self._watched.pop(path, None)
        if wd >= 0 and self._paths.pop(wd, None) is not None:
            self._rm_watch(self._fd, wd)

    def close(self) -> None:
        told, self._told, self._quiet = self._told, None, False
        if told is not None and _getsignal(_SIGURG) is told:
            try:
                _signal.signal(_SIGURG, _signal.SIG_DFL)
            except ValueError:  # not the main thread: the handler stays, and only unquiets a closed store
                pass
        os.close(self._fd)


_kept: Kept | None = None
_forks_watched = False


def keep_answers() -> Kept | None:
    """Keep answers from now on in this process (the cores that decide many events), on the
    calling thread. None where the kernel offers no inotify; hookgate then asks the filesystem on
    every decision."""
    global _kept, _forks_watched
    if _kept is None:
        _kept = new_store()
        if _kept is None:
            return None
        _kept.told_of_changes()
    if not _forks_watched:
        os.register_at_fork(after_in_child=_not_inherited)
        _forks_watched = True
    return _kept


def new_store() -> Kept | None:
    """A store of the calling thread's own (the process's kept answers are one; the policy watch of
    `hookgate serve` is another); None where the kernel offers no inotify."""
    try:
        import ctypes  # only in the long-running cores: the hook path never loads it

        libc = ctypes.CDLL(None, use_errno=True)
        init, inotify_add_watch, rm_watch = libc.inotify_init1, libc.inotify_add_watch, libc.inotify_rm_watch
        inotify_add_watch.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32)

        def add_watch(fd: int, path: bytes, mask: int) -> int:
            wd: int = inotify_add_watch(fd, path, mask)
            return wd if wd >= 0 else -ctypes.get_errno()

        return Kept(lambda: int(init(os.O_NONBLOCK | os.O_CLOEXEC)), add_watch, rm_watch)
    except (OSError, AttributeError, ImportError):
        return None


def _raise_on_queue(fd: int) -> bool:
    """Have the inotify queue `fd` raise SIGURG on the calling thread as it queues an event."""
    import fcntl

    try:
        fcntl.fcntl(fd, _F_SETOWN_EX, _OWNER_TID.pack(_F_OWNER_TID, _thread.get_native_id()))
        fcntl.fcntl(fd, fcntl.F_SETSIG, _SIGURG)  # not SIGIO, the default, which ends a process it finds unhandled
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_ASYNC)
    except (OSError, AttributeError):
        return False
    return True


def current() -> Kept | None:
    """This process's kept answers; None when it keeps none (a hook process, or no inotify)."""
    return _kept


def look(key: Any, work: Callable[[], T], files: tuple[str, ...] = (), route: str | None = None,
         keep_if: Callable[[T], bool] | None = None) -> T:
    """Kept.look on the thread that keeps answers (the one that decides); `work()` elsewhere, and
    in a process that keeps none: the store is one thread's, as its queue and its answers are."""
    kept = _kept
    if kept is None or kept.thread != _thread.get_ident():
        return work()
    return kept.look(key, work, files, route, keep_if)


def _not_inherited() -> None:
    global _kept
    if _kept is not None:
        _kept.close()
        _kept = None
