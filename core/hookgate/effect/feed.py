"""A change feed of a project tree, for a process that lives across calls (the OpenCode core, a
warm core for its forks): its effect readings then look again only at what changed since the
reading before, instead of one lstat per folder and per protected file of the whole project.

Linux inotify watches every folder a reading walked (entries created, deleted or moved; its own
attributes) and the inode of every protected file (written, truncated, opened, closed after a
write, attributes or links changed, deleted, moved). A watch is on the inode, not the path: a
write through a hard link made outside the project is reported, and so is one made through
another mount of the same filesystem. A writable mapping (`mmap`) needs an open of the file,
which is reported, and the pages written through it move the times the next lstat compares.

What no event reports is a write through a mapping that a process made before the reading and
still holds at the next one (letting it go closes the file, an event): a process left running in
the background, which the effect check does not reach anyway (what it writes after a call
returns is kept as the new state). Within that,
a reading through the feed is the full reading (tests/test_effect_feed.py holds the two equal
after each of a corpus of real writes, each run by a real shell).

A reading asks which paths were touched after the reading its index was made by (`since`, of
the token that reading took before its first lstat), where touched means an event came for it,
or it is watched only since then (a change between its lstat and its watch would otherwise go
unseen). The answer is None, and the tree is read
whole, for a token of another feed or older than the feed keeps, after the kernel's queue
overflowed, a folder moved (the watches name folders by path), or a watch could not be added
(the per-user limit): the feed is then started afresh.

The protected folders outside the projects (~/.claude/skills, ...) have one feed of their own in
a process, rooted at "/" (OUTSIDE): effect/check.py lists such a folder only when this feed saw
something below it touched.
"""

from __future__ import annotations

import os
import struct
import sys
from collections import deque
from typing import TYPE_CHECKING, Any, Callable, Iterable

import msgspec

if TYPE_CHECKING:
    import socket

IN_MODIFY, IN_ATTRIB, IN_CLOSE_WRITE, IN_OPEN = 0x2, 0x4, 0x8, 0x20
IN_MOVED_FROM, IN_MOVED_TO, IN_CREATE, IN_DELETE = 0x40, 0x80, 0x100, 0x200
IN_DELETE_SELF, IN_MOVE_SELF, IN_UNMOUNT, IN_Q_OVERFLOW, IN_IGNORED = 0x400, 0x800, 0x2000, 0x4000, 0x8000
IN_ONLYDIR, IN_DONT_FOLLOW, IN_ISDIR = 0x01000000, 0x02000000, 0x40000000
IN_NONBLOCK, IN_CLOEXEC = 0o4000, 0o2000000
FOLDER_EVENTS = (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF
                 | IN_ONLYDIR | IN_DONT_FOLLOW)
FILE_EVENTS = IN_MODIFY | IN_ATTRIB | IN_OPEN | IN_CLOSE_WRITE | IN_DELETE_SELF | IN_MOVE_SELF | IN_DONT_FOLLOW
# what makes the feed unable to vouch for the tree: read it whole and start a new feed
_LOST = IN_Q_OVERFLOW | IN_UNMOUNT
_HEADER = struct.Struct("iIII")  # struct inotify_event: wd, mask, cookie, len (then the name)
MAX_TOUCHED = 200_000  # paths the feed keeps touched-at marks for; older tokens read the tree whole
MAX_FEEDS = 5  # project roots one process keeps a feed of, and the feed of the folders outside them (OUTSIDE)
MAX_CONFIRMED = 64  # unchanged readings (one per agent's protection) a feed remembers the token of

Watch = Callable[[bytes, int], int]  # (path, mask) -> the wd, or -1 with errno set
# The root of the feed of the protected folders outside the projects (effect/check.py): its paths
# are absolute paths without their first "/", as a feed's are relative to its root.
OUTSIDE = ""


class Feed:
    """One inotify instance over one project root. Not thread-safe: one process's readings, in turn."""

    def __init__(self, root: str, fd: int, add_watch: Watch) -> None:
        self.root = root
        self.fd = fd
        self._add_watch = add_watch
        self.id = os.urandom(8).hex()
        self.seq = 0  # goes up with each drain that found events and each batch of new watches
        self.floor = 0  # a token below it is older than what `_history` keeps
        self.broken = False
        self.refused = False  # the kernel refused a watch: a new feed of this root would be refused too
        self._history: deque[tuple[int, frozenset[str]]] = deque()
        self._kept = 0  # paths in _history
        self._paths: dict[int, set[str]] = {}  # wd -> the project-relative paths it watches ("" the root)
        self._wd: dict[str, int] = {}  # path -> its wd
        self._folders: set[int] = set()  # the wds of folders
        self._confirmed: dict[str, str] = {}  # an index's mark -> the latest token it was found true at

    def token(self) -> str:
        return f"{self.id}:{self.seq}"

    def reading(self, token: str, mark: str) -> tuple[str, set[str] | None]:
        """`since` for a reading against the index `mark` names (its key and time) written as of
        `token`: from the latest token a reading found that index true at (settle), if later."""
        return self.since(self._confirmed.get(mark, token))

    def settle(self, mark: str, token: str, unchanged: bool, folders: Iterable[str], files: Iterable[str]) -> bool:
        """After a reading as of `token` against the index `mark` names: watch what it read for
        the first time or saw touched (`watch`), and when it found the tree as that index holds
        it, remember the index true as of `token` (the check does not write an unchanged reading
        again, so the next reading asks the feed from here). False: see `watch`."""
        if unchanged:
            if len(self._confirmed) >= MAX_CONFIRMED:
                self._confirmed.clear()
            self._confirmed[mark] = token
        return self.watch(folders, files)

    def since(self, token: str) -> tuple[str, set[str] | None]:
        """(this moment's token, the paths touched after `token`; None: read the tree whole)."""
        self._drain()
        now = self.token()
        feed, _, seq = token.partition(":")
        if self.broken or feed != self.id or not seq.isdigit() or int(seq) < self.floor:
            return now, None
        after = int(seq)
        touched: set[str] = set()
        for at, paths in reversed(self._history):
            if at <= after:
                break
            touched |= paths
        return now, touched

    def untouched(self, token: str, paths: frozenset[str], folders: frozenset[str]) -> bool:
        """None of `paths` was touched after `token`, and each of `folders` is watched as a folder:
        what is known of them as of `token` still holds."""
        _, touched = self.since(token)
        return touched is not None and touched.isdisjoint(paths) and all(
            self._wd.get(rel) in self._folders for rel in folders)

    def watch(self, folders: Iterable[str], files: Iterable[str]) -> bool:
        """Watch these folders and protected files (project-relative), as they are now. A path
        not watched before, or whose inode is new, counts as touched from now on. False: the feed
        can no longer vouch for the tree (a reading must not be kept as of its token)."""
        added: set[str] = set()
        for paths, mask in ((folders, FOLDER_EVENTS), (files, FILE_EVENTS)):
            for rel in paths:
                path = f"{self.root}/{rel}" if rel else self.root
                wd = self._add_watch(os.fsencode(path), mask)
                if wd < 0:
                    if _errno() != _ENOENT:  # the watch limit, a folder we may not read: cannot vouch
                        self.broken = self.refused = True
                        return False
                    added.add(rel)  # gone since it was read: the next reading looks again
                    continue
                if self._wd.get(rel) == wd:
                    continue
                self._wd[rel] = wd
                self._paths.setdefault(wd, set()).add(rel)
                if mask == FOLDER_EVENTS:
                    self._folders.add(wd)
                added.add(rel)
        self._note(added)
        return not self.broken

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
            self.broken = True

    def _drain(self) -> None:
        touched: set[str] = set()
        while not self.broken:
            try:
                data = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                break
            at = 0
            while at < len(data):
                wd, mask, _, length = _HEADER.unpack_from(data, at)
                name = data[at + 16:at + 16 + length].rstrip(b"\0")
                at += 16 + length
                self._event(wd, mask, os.fsdecode(name), touched)
        self._note(touched)

    def _event(self, wd: int, mask: int, name: str, touched: set[str]) -> None:
        if mask & _LOST:
            self.broken = True
            return
        paths = self._paths.get(wd, ())
        if mask & IN_IGNORED:  # the watch is gone (its inode deleted): forget the wd
            for rel in self._paths.pop(wd, ()):
                if self._wd.get(rel) == wd:
                    del self._wd[rel]
                touched.add(rel)
            self._folders.discard(wd)
            return
        folder = wd in self._folders
        if folder and mask & IN_MOVE_SELF or mask & IN_ISDIR and mask & (IN_MOVED_FROM | IN_MOVED_TO):
            self.broken = True  # a folder moved: the watches below it now name other paths
            return
        for rel in paths:
            touched.add(rel)
            if folder and name:
                touched.add(f"{rel}/{name}" if rel else name)

    def _note(self, paths: set[str]) -> None:
        if not paths:
            return
        self.seq += 1
        self._history.append((self.seq, frozenset(paths)))
        self._kept += len(paths)
        while self._kept > MAX_TOUCHED and len(self._history) > 1:
            at, old = self._history.popleft()
            self._kept -= len(old)
            self.floor = at + 1


class CoreFeed:
    """The feed of `root` that a warm core keeps for its forks (hookgate.warm.server), asked over
    the socket the core made for this fork: each fork is a process of its own, and events one
    of them drained from an inotify queue would be gone for the others, so the core alone reads
    it. The same two questions as a Feed; any failure to ask makes the fork read whole."""

    def __init__(self, channel: "socket.socket", root: str) -> None:
        self._channel = channel
        self._root = root

    def reading(self, token: str, mark: str) -> tuple[str, set[str] | None]:
        reply = self._ask(["reading", self._root, token, mark])
        if not reply:
            return "", None
        return str(reply[0]), None if reply[1] is None else set(reply[1])

    def settle(self, mark: str, token: str, unchanged: bool, folders: Iterable[str], files: Iterable[str]) -> bool:
        reply = self._ask(["settle", self._root, mark, token, unchanged, list(folders), list(files)])
        return bool(reply and reply[0])

    def _ask(self, request: list[Any]) -> list[Any] | None:
        global _core
        try:
            send_frame(self._channel, request)
            return receive_frame(self._channel)
        except (OSError, ValueError, msgspec.DecodeError):
            _core = None  # the core is gone or broken: this fork reads whole from now on
            return None


def answer(request: list[Any]) -> list[Any]:
    """The core's answer to a fork's question (CoreFeed), from its own feed of that root."""
    verb, root, *args = request
    feed = for_root(root)
    if feed is None:
        return ["", None]
    if verb == "reading":
        token, touched = feed.reading(*args)
        return [token, sorted(touched) if touched is not None else None]
    if verb == "settle":
        return [feed.settle(*args)]
    raise ValueError(f"unknown feed request {verb!r}")


def send_frame(channel: "socket.socket", message: list[Any]) -> None:
    data = msgspec.msgpack.encode(message)
    channel.sendall(len(data).to_bytes(4, "big") + data)


def receive_frame(channel: "socket.socket") -> list[Any]:
    """One frame; ValueError when the peer left (EOF) or sent something else."""
    head = _exactly(channel, 4)
    message = msgspec.msgpack.decode(_exactly(channel, int.from_bytes(head, "big")))
    if not isinstance(message, list):
        raise ValueError("a feed frame is a list")
    return message


def _exactly(channel: "socket.socket", size: int) -> bytes:
    data = bytearray()
    while len(data) < size:
        chunk = channel.recv(size - len(data))
        if not chunk:
            raise ValueError("the other end left")
        data += chunk
    return bytes(data)


_ENOENT = 2
_feeds: dict[str, Feed] = {}
_refused: set[str] = set()  # roots the kernel refused a watch in (fs.inotify.max_user_watches)
_live = False
_core: "socket.socket | None" = None  # in a fork of a warm core: its socket to the core's feeds
REPLY_SECONDS = 5.0  # a fork waits this long for its core's answer, then reads whole


def enable() -> None:
    """This process lives across calls (the OpenCode core, a warm core): keep a feed of each
    project it reads."""
    global _live
    _live = True


def use_core(channel: "socket.socket") -> None:
    """This process is a fork of a warm core: ask the core's feeds, over `channel`, and keep none
    of its own (what it inherited of the core's is the core's to read)."""
    global _core, _live
    channel.settimeout(REPLY_SECONDS)
    _core = channel
    _live = False
    _feeds.clear()


def for_root(root: str) -> "Feed | CoreFeed | None":
    """The feed of `root` for this process: its core's (a fork of a warm core), else its own once
    enable() was called, on Linux with inotify; a broken feed is replaced by a new one (whose
    first reading is whole). None: read the tree whole."""
    if _core is not None:
        return CoreFeed(_core, root)
    if not _live or root in _refused:
        return None
    feed = _feeds.get(root)
    if feed is not None and not feed.broken:
        return feed
    if feed is not None:
        feed.close()
        del _feeds[root]
        if feed.refused:  # each new feed would add watches until refused again: read whole from now on
            _refused.add(root)
            return None
    made = _start(root)
    if made is None:
        return None
    if len(_feeds) >= MAX_FEEDS:
        for old in _feeds.values():
            old.close()
        _feeds.clear()
    _feeds[root] = made
    return made


def _start(root: str) -> Feed | None:
    libc = _libc()
    if libc is None:
        return None
    fd = libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
    if fd < 0:
        return None  # the per-user instance limit: read the tree whole, as without a feed
    add = libc.inotify_add_watch
    return Feed(root, fd, lambda path, mask: int(add(fd, path, mask)))


_errno: Callable[[], int] = lambda: 0  # noqa: E731 (ctypes.get_errno once libc is loaded)
_loaded: Any = None


def _libc() -> Any:
    """libc's inotify functions through ctypes, loaded once (only a long-lived core pays for ctypes)."""
    global _loaded, _errno
    if _loaded is None:
        _loaded = False
        if sys.platform.startswith("linux"):
            try:
                import ctypes

                libc = ctypes.CDLL(None, use_errno=True)
                libc.inotify_init1.argtypes = [ctypes.c_int]
                libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
                _errno = ctypes.get_errno
                _loaded = libc
            except (OSError, AttributeError):
                pass
    return _loaded or None
