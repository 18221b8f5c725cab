"""The state of the files one agent may not write, read from the filesystem without walking it.

An index holds, per folder, its signature and the names under it that matter (its folders and
its protected files), and per protected file its signature and the digest of its bytes. Reading
the state again costs one lstat per folder and one per protected file: a folder whose signature
is unchanged still holds the same names (creating, removing or renaming an entry changes its
folder's mtime), so only changed folders are listed again, and a new folder is walked once.

A file's signature is (inode, size, mtime_ns, ctime_ns, mode). ctime is set by the kernel on every
change and cannot be set back, so `touch -r` cannot hide a write, and a write through a hard link
or a symlink from elsewhere (`/dev/shm/x -> PLAN.md`) changes the protected inode's ctime too.
Timestamps are coarse (one kernel tick), so a signature read within RACY_NS of its last change
is stored with ctime 0: the next reading cannot trust it and compares the bytes instead.
"""

from __future__ import annotations

import os
import stat
from typing import TYPE_CHECKING, Iterable

import msgspec

if TYPE_CHECKING:
    from .protection import Protection

RACY_NS = 100_000_000


class Dir(msgspec.Struct, array_like=True):
    sig: tuple[int, int, int]  # inode, mtime_ns, ctime_ns (0: list it again)
    files: list[str]  # the protected files directly in it
    dirs: list[str]  # the folders directly in it that are scanned


class File(msgspec.Struct, array_like=True):
    ino: int
    size: int
    mtime_ns: int
    ctime_ns: int  # 0: compare the bytes before trusting the rest
    mode: int
    digest: str = ""  # sha256 of the bytes kept in the store; "" = none kept (too large, not a file)

    def same(self, other: "File") -> bool:
        return (self.ctime_ns != 0 and self.ino == other.ino and self.size == other.size
                and self.mtime_ns == other.mtime_ns and self.ctime_ns == other.ctime_ns and self.mode == other.mode)


class Index(msgspec.Struct):
    key: str  # the protection it was built for (protection.Protection.key)
    t: int = 0  # when it was read (time.time_ns() at the start of the reading)
    agent: tuple[str, bool, str | None] = ("", False, None)
    dirs: dict[str, Dir] = {}
    files: dict[str, File] = {}


class Skip(msgspec.Struct, frozen=True):
    names: frozenset[str]  # folder names never scanned (.git)
    paths: frozenset[str]  # project-relative paths hookgate writes itself (its session logs, this store)


def file_sig(st: os.stat_result, now: int, digest: str = "") -> File:
    ctime = st.st_ctime_ns if st.st_ctime_ns < now - RACY_NS else 0
    return File(st.st_ino, st.st_size, st.st_mtime_ns, ctime, st.st_mode, digest)


def _dir_sig(st: os.stat_result, now: int) -> tuple[int, int, int]:
    racy = max(st.st_mtime_ns, st.st_ctime_ns) >= now - RACY_NS
    return (st.st_ino, st.st_mtime_ns, 0 if racy else st.st_ctime_ns)


def _join(rel: str, name: str) -> str:
    return f"{rel}/{name}" if rel else name


def _list(root: str, rel: str, st: os.stat_result, now: int, protection: "Protection", skip: Skip) -> Dir:
    files: list[str] = []
    dirs: list[str] = []
    try:
        with os.scandir(os.path.join(root, rel) if rel else root) as entries:
            for entry in entries:
                child = _join(rel, entry.name)
                try:
                    folder = entry.is_dir(follow_symlinks=False)
                except OSError:
                    continue
                if folder:
                    if entry.name not in skip.names and child not in skip.paths:
                        dirs.append(entry.name)
                elif child not in skip.paths and protection.reason(child):
                    files.append(entry.name)
    except OSError:
        pass
    return Dir(_dir_sig(st, now), files, dirs)


def read_dirs(old: dict[str, Dir], root: str, now: int, protection: "Protection", skip: Skip
              ) -> tuple[dict[str, Dir], bool]:
    """The folders of the project now, listing again only those whose signature changed; and
    whether any was listed again."""
    dirs: dict[str, Dir] = {}
    listed = False
    pending = [""]
    lstat = os.lstat
    while pending:
        rel = pending.pop()
        try:
            st = lstat(root + "/" + rel if rel else root)
        except OSError:
            listed = True
            continue
        if not stat.S_ISDIR(st.st_mode):
            listed = True
            continue
        prev = old.get(rel)
        if prev is None or prev.sig[2] == 0 or prev.sig != (st.st_ino, st.st_mtime_ns, st.st_ctime_ns):
            prev = _list(root, rel, st, now, protection, skip)
            listed = True
        dirs[rel] = prev
        if prev.dirs:
            prefix = rel + "/" if rel else ""
            pending.extend(prefix + name for name in prev.dirs)
    return dirs, listed


def changed_files(dirs: dict[str, Dir], known: dict[str, File], root: str
                  ) -> tuple[dict[str, os.stat_result], list[str]]:
    """The protected files the folders name whose lstat is not the one `known` holds (or that
    `known` does not hold), and the files of `known` that are gone. One lstat per file; nothing
    is built for a file that did not change, which is nearly all of them."""
    changed: dict[str, os.stat_result] = {}
    present = 0
    lstat = os.lstat
    get = known.get
    for rel, folder in dirs.items():
        if not folder.files:
            continue
        prefix = rel + "/" if rel else ""
        base = root + "/" + prefix
        for name in folder.files:
            try:
                st = lstat(base + name)
            except OSError:
                continue
            key = prefix + name
            old = get(key)
            if old is not None:
                present += 1
                if (old.ctime_ns == st.st_ctime_ns and old.ctime_ns != 0 and old.ino == st.st_ino
                        and old.size == st.st_size and old.mtime_ns == st.st_mtime_ns and old.mode == st.st_mode):
                    continue
            changed[key] = st
    gone: list[str] = []
    if present != len(known):
        here = set(protected_paths(dirs))
        gone = [rel for rel in known if rel not in here or not os.path.lexists(root + "/" + rel)]
    return changed, gone


def protected_paths(dirs: dict[str, Dir]) -> Iterable[str]:
    for rel, folder in dirs.items():
        for name in folder.files:
            yield _join(rel, name)
