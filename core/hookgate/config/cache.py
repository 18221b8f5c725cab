"""A cache for a value computed from files (the config over its preset), so a hook call does not
parse TOML and recheck every rule it checked a moment ago.

Two levels: in memory for the life of a process (the warm core fills it; each call's fork
inherits it), and on disk for the next process (`$XDG_CACHE_HOME/hookgate`, else
`~/.cache/hookgate`, a private directory of the user). An entry is keyed on hookgate's version and
the identity of every file the value depends on, its own code included: device, inode, size,
mtime and ctime, so an edit, a replacement, a copy or a restore of any of them is a miss.

File times are coarse (a few milliseconds): two writes within one tick can leave the same key.
So nothing is cached while one of its files is younger than RACY_SECONDS: an entry only ever
describes files that had stopped changing, and any later write moves a time past that key.
Disk entries are replaced atomically; concurrent processes at worst compute the same value twice.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Callable, Generic, Iterable, TypeVar

import msgspec

from .. import __version__
from ..store import locked
from ..store.locked import RACY_SECONDS as RACY_SECONDS  # (named here too: where the cache's rule is told)
from ..private import fnv1a64, owned_private_dir

T = TypeVar("T")
MAX_ENTRIES = 256  # per cache: past this, a write drops the least recently written half
Key = bytes


def file_key(paths: Iterable[Path]) -> Key | None:
    """The key of a value computed from `paths` (a missing file is part of the key), or None
    when one of them is too young to be trusted, or cannot be looked at."""
    young = time.time_ns() - int(RACY_SECONDS * 1e9)
    identities: list[object] = [__version__]
    for path in paths:
        try:
            st = os.stat(path)
        except FileNotFoundError:
            identities.append(None)
            continue
        except OSError:
            return None
        if st.st_mtime_ns > young or st.st_ctime_ns > young:
            return None
        identities.append(locked.identity(st))
    return msgspec.msgpack.encode(identities)


class FileCache(Generic[T]):
    def __init__(self, name: str, value_type: type[T]) -> None:
        self.name = name
        self.value_type = value_type
        self._memo: dict[str, tuple[Key, T]] = {}
        self._decoder: msgspec.msgpack.Decoder[T] | None = None

    def get(self, ident: str, sources: Iterable[Path], compute: Callable[[], T], code: Iterable[Path] = ()) -> T:
        """The value for `ident` (e.g. the config's path) computed from `sources` (the files
        `compute` reads) by `code` (the modules that compute and check it). The code is part of
        the key on disk, for the next process; in memory it is the code this process has loaded
        already, which an edit of its files does not change, so only the sources are looked at."""
        key = file_key(sources)
        if key is None:
            return compute()
        memo = self._memo.get(ident)
        if memo is not None and memo[0] == key:
            return memo[1]
        value = self._stored(ident, key, code, compute)
        self._memo[ident] = (key, value)
        return value

    def _stored(self, ident: str, sources_key: Key, code: Iterable[Path], compute: Callable[[], T]) -> T:
        code_key = file_key(code)
        if code_key is None:
            return compute()
        key = sources_key + code_key
        path = self._path(ident)
        value = self._read(path, key) if path else None
        if value is None:
            value = compute()
            if path:
                self._write(path, key, value)
        return value

    def _path(self, ident: str) -> Path | None:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        directory = Path(base) / "hookgate"
        if not owned_private_dir(str(directory)):
            try:
                directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            except OSError:
                return None
            if not owned_private_dir(str(directory)):
                return None  # someone else could plant entries here
        return directory / f"{self.name}-{fnv1a64(ident.encode()):016x}.msgpack"

    def _read(self, path: Path, key: Key) -> T | None:
        blob = locked.read(path)
        if not blob:
            return None
        try:
            stored_key, value = msgspec.msgpack.decode(blob, type=tuple[bytes, msgspec.Raw])
            if stored_key != key:
                return None
            if self._decoder is None:
                self._decoder = msgspec.msgpack.Decoder(self.value_type)
            return self._decoder.decode(value)
        except (msgspec.DecodeError, msgspec.ValidationError):
            return None  # damaged, or of an older shape: computed afresh and replaced

    def _write(self, path: Path, key: Key, value: T) -> None:
        try:
            locked.replace(path, msgspec.msgpack.encode((key, msgspec.Raw(msgspec.msgpack.encode(value)))))
            entries = list(path.parent.glob(f"{self.name}-*.msgpack"))
            if len(entries) > MAX_ENTRIES:  # one entry per project ever seen: forget the oldest
                entries.sort(key=lambda entry: entry.stat().st_mtime_ns)
                for entry in entries[:len(entries) - MAX_ENTRIES // 2]:
                    entry.unlink(missing_ok=True)
        except OSError:
            pass  # a cache that cannot be written is only a slower call
