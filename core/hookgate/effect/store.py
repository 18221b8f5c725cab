"""Where the effect check keeps what it needs between a call's before and after: the state of the
protected files (one index per protection), the index as it was when each call started (its
manifest), a copy of each protected file's bytes, and the ledger of writes hookgate allowed.

    <state dir>/effect/index-<key>.msgpack   the latest reading for one protection (a tag, then msgpack)
    <state dir>/effect/calls/<call>.msgpack  the reading a call started from (a hard link to the
                                             index written before it; a copy when a concurrent
                                             save races the link)
    <state dir>/effect/blobs/<sha256>        file bytes, named by their digest, written once
    <state dir>/effect/ledger.jsonl          writes hookgate allowed (see ledger.py)
    <state dir>/effect/displaced/<ns>-<name> what a put-back replaced or removed (the newest,
                                             MAX_DISPLACED and MAX_DISPLACED_BYTES): a person's
                                             edit made during a call is not lost
    <state dir>/effect/root                  the project root this store is for

The store is hookgate's, but the agent runs as the same user and could write into it. A copy is
only ever restored after its bytes hash to the digest the manifest names, so a damaged or
replaced copy is refused, not written back; a manifest forged during the call (a new index and a
new copy with matching digests) is a limit the README names. Copies nothing refers to are removed
once the store holds more than `max_blobs` of them; manifests of calls whose after-hook never
came, and readings of rules no call used, after a day. Stores are kept by the project's path, so a
project deleted or moved leaves its store behind: when a project's store is first made, the stores
whose root is gone and that nothing used for a day are removed (prune_stores), as pins are when a
session is first pinned.
"""

import os
import time
from functools import lru_cache
from pathlib import Path
from typing import Mapping

import msgspec

from ..digest import sha256_hex
from ..environ import Variables
from ..store import locked
from ..store.pin import project_key, state_home
from ..store.project import HOOKGATE_DIR
from .tree import Index, plan_for, untrusted

_encoder = msgspec.msgpack.Encoder()
_decoder = msgspec.msgpack.Decoder(Index)
# Each reading file starts with MAGIC and a tag of TAG_BYTES random bytes drawn for that one write;
# readings decoded (or encoded) in this process are kept by their tag. The tag, not the file's
# identity, is the key: a call's manifest is a hard link to an index, and making the link (and
# the rename that claims the manifest) moves the inode's ctime, so an identity key decoded the
# same bytes again on every call. 16 random bytes are never drawn twice, so a tag names one
# write whatever inode it lands on (a freed inode number reused by a later write is a new tag);
# the store never rewrites a file in place (_write_new), and a file rewritten in place by
# someone else under the tag of an earlier write gets the reading hookgate knows for that write.
# A reading without the magic (written before tags) is decoded, not kept. The Index objects are
# shared: nothing changes one once read (every change builds a new one).
MAGIC = b"HGX1"
TAG_BYTES = 16
HEADER = len(MAGIC) + TAG_BYTES
_read: dict[bytes, Index] = {}
MAX_READ = 16
STALE_SECONDS = 86_400  # a call's manifest, a reading no call used (Store.prune)
ROOT_NOTE = "root"
# A store whose project folder is gone is kept this long after its last use: a folder moved back,
# a drive mounted again, finds its readings and ledger where they were.
GONE_ROOT_SECONDS = 86_400
MAX_DISPLACED = 200  # copies of what put-backs replaced, the newest kept
MAX_DISPLACED_BYTES = 64 * 1024 * 1024  # and no more bytes of them than this
# A store that names no root (made before stores noted theirs) is removed only once unused this long.
UNNAMED_IDLE_SECONDS = 30 * 86_400


class StoreError(Exception):
    pass


def store_for(root: "os.PathLike[str] | str", env: Mapping[str, str] | None = None) -> "Store":
    """The project's store, outside the project: a command run in the project (`git clean -fdx`,
    `rm -rf .hookgate`) cannot take away what its own check compares against. Without a home to
    keep it in, the project's `.hookgate/effect/`. `env`: os.environ as it is now when None."""
    if env is None:
        return _store(str(root), _PLACE.values())
    return _store(str(root), tuple(env.get(name) for name in _PLACE.names))


_PLACE = Variables(("XDG_STATE_HOME", "HOME"))  # what state_home reads


@lru_cache(maxsize=64)
def _store(root: str, place: tuple[object, ...]) -> "Store":
    """store_for, worked out once per root and the environment it reads (`place`: XDG_STATE_HOME
    and HOME, as str or as os.environ's bytes): a project root does not move under a running
    hookgate (as hookgate.paths assumes of its roots), and every decision that lets a write
    through asks for it."""
    resolved = Path(root).resolve()
    state = state_home({name: os.fsdecode(value) for name, value in zip(_PLACE.names, place)
                        if isinstance(value, (str, bytes))})
    if state is None:
        return Store(resolved / HOOKGATE_DIR / "effect")
    store = Store(state / "effect" / project_key(resolved))
    note = store.dir / ROOT_NOTE
    if not os.path.exists(note):  # a new store, or one made before stores noted their root
        _write_new(note, os.fsencode(str(resolved)) + b"\n")
        prune_stores(store.dir.parent)
    return store


def prune_stores(folder: Path, now: float | None = None) -> int:
    """Remove the stores in `folder` whose project root is gone and that nothing used for
    GONE_ROOT_SECONDS, and those that name no root and went unused for UNNAMED_IDLE_SECONDS; how
    many went. A store's last use is the latest change of its folder (a reading saved, a call
    begun) or its ledger (an allowed write noted). Called once per project, so shutil is imported
    here, off the hook path."""
    now = time.time() if now is None else now
    gone = 0
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return 0
    for entry in entries:
        try:
            if not entry.is_dir(follow_symlinks=False):
                continue
            used = entry.stat(follow_symlinks=False).st_mtime
            try:
                used = max(used, os.stat(os.path.join(entry.path, "ledger.jsonl")).st_mtime)
            except FileNotFoundError:
                pass
            root = _noted_root(entry.path)
            if root is None:
                doomed = now - used > UNNAMED_IDLE_SECONDS
            else:
                doomed = now - used > GONE_ROOT_SECONDS and not os.path.isdir(root)
        except OSError:
            continue
        if doomed:
            import shutil

            shutil.rmtree(entry.path, ignore_errors=True)
            gone += 1
    return gone


def _noted_root(store_dir: str) -> str | None:
    """The root a store names; None when it names none (a FIFO planted as the note included)."""
    try:
        text = os.fsdecode(locked.read(Path(store_dir, ROOT_NOTE)).strip())
    except (locked.NotAFile, OSError):
        return None
    return text if text.startswith("/") else None


class Store:
    def __init__(self, directory: Path) -> None:
        self.dir = directory
        self.blobs = self.dir / "blobs"
        self.calls = self.dir / "calls"
        self.displaced = self.dir / "displaced"
        self.ledger_path = self.dir / "ledger.jsonl"
        self.ledger_text = str(self.ledger_path)  # what every allowed write's note appends to

    # -- readings ---------------------------------------------------------------------------
    def index_path(self, key: str) -> Path:
        return self.dir / f"index-{key}.msgpack"

    def load_index(self, key: str) -> Index | None:
        return self._load(self.index_path(key))

    def save_index(self, index: Index, call: str | None = None) -> None:
        """Write the latest reading; with `call`, it is also the reading that call starts from."""
        link = Path(self.call_path(call)) if call is not None else None
        tag = os.urandom(TAG_BYTES)
        _write_new(self.index_path(index.key), MAGIC + tag + _encoder.encode(index), link=link)
        _keep_read(tag, index)

    def _load(self, path: "Path | str") -> Index | None:
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            return None
        try:
            head = os.read(fd, HEADER)
            tag = head[len(MAGIC):] if len(head) == HEADER and head.startswith(MAGIC) else None
            if tag is not None:
                known = _read.get(tag)
                if known is not None:
                    return known
            chunks = [] if tag is not None else [head]
            while chunk := os.read(fd, 1 << 20):
                chunks.append(chunk)
            index = _decoder.decode(b"".join(chunks))
        except (msgspec.DecodeError, OSError):
            return None  # a damaged reading is read again from the files
        finally:
            os.close(fd)
        if tag is not None:
            _keep_read(tag, index)
        return index

    def preload(self, root: str | None = None) -> None:
        """Read every latest reading now, and with the project's `root` the plan of reading it
        again (tree.plan_for) and its untrusted signatures (tree.untrusted, what a reading through
        a change feed looks at besides the touched paths): the warm core does, so that its forks
        start with them."""
        for path in self.dir.glob("index-*.msgpack"):
            index = self._load(path)
            if index is not None and root is not None:
                plan_for(index, root)
                untrusted(index)

    # -- manifests ----------------------------------------------------------------------------
    def call_path(self, call: str) -> str:
        return f"{self.calls}/{sha256_hex(call.encode())[:32]}.msgpack"

    def link_call(self, key: str, call: str) -> None:
        """The latest reading, unchanged, is the one `call` starts from."""
        target = self.call_path(call)
        tmp = f"{self.calls}/.{os.path.basename(target)}.{os.getpid()}.tmp"
        index = self.index_path(key)
        try:
            self._link(index, tmp)
        except FileNotFoundError:
            # link(2) fails so when another process's save renames a new index over the path
            # between the lookup and the link (the inode found has no name left), and a retry can
            # lose that race again under a busy saver. open(2) never does (the rename replaces
            # the name at once), so the reading is copied from the one opened; only a path that
            # names no index fails.
            with open(index, "rb") as reading:
                _write_new(Path(target), reading.read())
            return
        os.replace(tmp, target)

    def _link(self, index: Path, tmp: str) -> None:
        """link(2) of `index` as `tmp`, trying the two calls a first call or a dead process needs
        only when the link says so: the calls folder made, a `tmp` left by a process of this pid
        that died before its rename removed."""
        try:
            os.link(index, tmp)
        except FileExistsError:
            os.unlink(tmp)
            os.link(index, tmp)
        except FileNotFoundError:
            if os.path.isdir(self.calls):
                raise
            self.calls.mkdir(parents=True, exist_ok=True)
            os.link(index, tmp)

    def has_call(self, call: str) -> bool:
        return os.path.exists(self.call_path(call))

    def peek(self, call: str) -> Index | None:
        """The reading a call started from, left for its after-event's check to take."""
        return self._load(self.call_path(call))

    def take(self, call: str) -> Index | None:
        """The reading a call started from, removed so that it is used once (the several events
        of one Codex patch, a runtime that repeats an after-event)."""
        path = self.call_path(call)
        claimed = f"{path.removesuffix('.msgpack')}.{os.getpid()}.taken"
        try:
            os.rename(path, claimed)
        except FileNotFoundError:
            return None
        try:
            return self._load(claimed)
        finally:
            try:
                os.unlink(claimed)
            except FileNotFoundError:
                pass

    def rename_call(self, old: str, new: str) -> Index | None:
        """The reading `old` started from, now the one `new` starts from; None when there is none."""
        try:
            os.rename(self.call_path(old), self.call_path(new))
        except FileNotFoundError:
            return None
        return self._load(self.call_path(new))

    def prune(self, key: str, now: float | None = None) -> None:
        """Remove the manifests of calls whose after-event never came, and the readings of other
        rules than `key`'s (each role, subagent type and edit of the rules has its own) that no
        call used, for STALE_SECONDS: what the warm core preloads, and what keeps copies from
        being pruned, is the readings in use. A reading's use is its inode's change time: a call
        that starts from it links it, and a save writes a new one."""
        limit = (now or time.time()) - STALE_SECONDS
        unused = [entry for entry in _entries(self.calls) if _older(entry, "st_mtime", limit)]
        unused += [entry for entry in _entries(self.dir) if entry.name.startswith("index-")
                   and entry.name != self.index_path(key).name and _older(entry, "st_ctime", limit)]
        for entry in unused:
            try:
                os.unlink(entry.path)
            except OSError:
                continue

    # -- copies -------------------------------------------------------------------------------
    def put(self, data: bytes) -> str:
        digest = sha256_hex(data)
        path = self.blobs / digest
        if not path.exists():
            self.blobs.mkdir(parents=True, exist_ok=True)
            _write_new(path, data, mode=0o600)
        return digest

    def get(self, digest: str) -> bytes:
        """The bytes kept under `digest`, only if they still hash to it."""
        try:
            data = (self.blobs / digest).read_bytes()
        except OSError as exc:
            raise StoreError(f"the kept copy is gone ({exc.__class__.__name__})") from None
        if sha256_hex(data) != digest:
            raise StoreError("the kept copy was altered (its digest does not match)")
        return data

    def keep_displaced(self, name: str, data: bytes) -> str:
        """Keep the bytes a put-back is about to replace or remove (of the file named `name`);
        returns where. Only the newest are kept: MAX_DISPLACED of them, MAX_DISPLACED_BYTES in all."""
        path = self.displaced / f"{time.time_ns()}-{name}"
        _write_new(path, data, mode=0o600)
        kept, total = 0, 0
        for entry in sorted(os.scandir(self.displaced), key=lambda entry: entry.name, reverse=True):
            try:
                total += entry.stat(follow_symlinks=False).st_size
                kept += 1
                if kept > MAX_DISPLACED or (total > MAX_DISPLACED_BYTES and entry.path != str(path)):
                    os.unlink(entry.path)
            except OSError:
                continue
        return str(path)

    def prune_blobs(self, max_blobs: int) -> None:
        try:
            names = os.listdir(self.blobs)
        except FileNotFoundError:
            return
        if len(names) <= max_blobs:
            return
        wanted: set[str] = set()
        paths = list(self.dir.glob("index-*.msgpack")) + list(self.calls.glob("*.msgpack"))
        for path in paths:
            index = self._load(path)
            if index is not None:
                wanted.update(f.digest for files in (index.files, index.outside) for f in files.values() if f.digest)
        for name in names:
            if name not in wanted:
                try:
                    os.unlink(self.blobs / name)
                except OSError:
                    continue


def _entries(folder: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as entries:
            return list(entries)
    except FileNotFoundError:
        return []


def _older(entry: os.DirEntry[str], field: str, limit: float) -> bool:
    try:
        return bool(getattr(entry.stat(follow_symlinks=False), field) < limit)
    except OSError:
        return False


def _keep_read(tag: bytes, index: Index) -> None:
    if len(_read) >= MAX_READ:
        _read.clear()
    _read[tag] = index


def _write_new(path: Path, data: bytes, mode: int = 0o644, link: Path | None = None) -> None:
    """Write a whole file under a fresh inode (renamed into place), so a hard link to the old one
    (a call's manifest) keeps the old bytes; `link` names the new one a second time."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{time.monotonic_ns()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        locked.write_all(fd, data)
    finally:
        os.close(fd)
    if link is not None:
        link.parent.mkdir(parents=True, exist_ok=True)
        link.unlink(missing_ok=True)
        os.link(tmp, link)
    os.replace(tmp, path)
