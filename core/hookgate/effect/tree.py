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

import os
import stat
from typing import TYPE_CHECKING, Iterable, NamedTuple

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

    def holds(self, st: os.stat_result, now: int) -> bool:
        """Whether `st`, read at `now`, is this signature: file_sig(st, now) equal to it, and one to
        trust (read, and held, more than RACY_NS after the file's last change)."""
        return (self.ctime_ns != 0 and self.ctime_ns == st.st_ctime_ns and self.ino == st.st_ino
                and self.size == st.st_size and self.mtime_ns == st.st_mtime_ns and self.mode == st.st_mode
                and st.st_ctime_ns < now - RACY_NS)


class Index(msgspec.Struct):
    key: str  # the protection it was built for (protection.Protection.key)
    t: int = 0  # when it was read (time.time_ns() at the start of the reading)
    agent: tuple[str, bool, str | None] = ("", False, None)
    dirs: dict[str, Dir] = {}
    files: dict[str, File] = {}
    outside: dict[str, File] = {}  # the protected files outside the project, by absolute path (check.py)
    feed: str = ""  # the change feed's token this reading is as of (effect/feed.py); "": none
    # the outside feed's token `outside` is as of, and the folders it watched whole for that
    # reading, each with its (device, inode) then, under the outside rules' key (protection.Outside)
    # (check.py, _outside_reading)
    outside_feed: str = ""
    outside_folders: dict[str, tuple[int, int]] = {}
    outside_key: str = ""
    # the folders below the outside places, each with its signature and names (check.listing)
    outside_dirs: dict[str, Dir] = {}


class Skip(msgspec.Struct, frozen=True):
    names: frozenset[str]  # folder names never scanned (.git)
    paths: frozenset[str]  # project-relative paths hookgate writes itself (its session logs, this store)
    # a skipped folder's name -> the names of its entries scanned all the same, in every folder of
    # that name at any depth (".git" -> "config", "hooks": a repository cloned inside the project too)
    within: dict[str, frozenset[str]] = {}
    # folder names not scanned below those entries (a submodule's objects and logs in .git/modules)
    inner: frozenset[str] = frozenset()
    kept: tuple[str, ...] = ()  # the entries, each as "/<folder>/<entry>/"

    def inner_skipped(self, rel: str, name: str) -> bool:
        """Whether folder `rel` (named `name`) is one of `inner` below an entry scanned all the same."""
        if name not in self.inner:
            return False
        path = "/" + rel
        return any(entry in path for entry in self.kept)


def skip_of(names: frozenset[str], paths: frozenset[str], kept: list[str],
            inner: frozenset[str] = frozenset()) -> Skip:
    """The Skip of folders named `names` and of `paths`, but for the `kept` entries in them
    (".git/config": the entry `config` of every folder named .git), below which the folders named
    `inner` are skipped again."""
    within: dict[str, set[str]] = {}
    for path in kept:
        parent, _, entry = path.rpartition("/")
        folder = parent.rpartition("/")[2]
        if folder in names:
            within.setdefault(folder, set()).add(entry)
    entries = tuple(sorted(f"/{folder}/{entry}/" for folder, in_it in within.items() for entry in in_it))
    return Skip(names, paths, {folder: frozenset(in_it) for folder, in_it in within.items()}, inner, entries)


def file_sig(st: os.stat_result, now: int, digest: str = "") -> File:
    ctime = st.st_ctime_ns if st.st_ctime_ns < now - RACY_NS else 0
    return File(st.st_ino, st.st_size, st.st_mtime_ns, ctime, st.st_mode, digest)


def dir_sig(st: os.stat_result, now: int) -> tuple[int, int, int]:
    racy = max(st.st_mtime_ns, st.st_ctime_ns) >= now - RACY_NS
    return (st.st_ino, st.st_mtime_ns, 0 if racy else st.st_ctime_ns)


def _join(rel: str, name: str) -> str:
    return f"{rel}/{name}" if rel else name


def _list(root: str, rel: str, st: os.stat_result, now: int, protection: "Protection", skip: Skip) -> Dir:
    files: list[str] = []
    dirs: list[str] = []
    name = rel.rpartition("/")[2]
    kept = skip.within.get(name) if name in skip.names else None  # a skipped folder: what is scanned in it all the same
    try:
        with os.scandir(os.path.join(root, rel) if rel else root) as entries:
            for entry in entries:
                if kept is not None and entry.name not in kept:
                    continue
                child = _join(rel, entry.name)
                try:
                    folder = entry.is_dir(follow_symlinks=False)
                except OSError:
                    continue
                if folder:
                    if (entry.name not in skip.names or entry.name in skip.within) and child not in skip.paths \
                            and not skip.inner_skipped(child, entry.name):
                        dirs.append(entry.name)
                elif child not in skip.paths and protection.reason(child):
                    files.append(entry.name)
    except OSError:
        pass
    return Dir(dir_sig(st, now), files, dirs)


def read_dirs(old: dict[str, Dir], root: str, now: int, protection: "Protection", skip: Skip,
              start: str = "") -> tuple[dict[str, Dir], bool]:
    """The folders of the project now (of `start` and below), listing again only those whose
    signature changed; and whether any was listed again."""
    dirs: dict[str, Dir] = {}
    listed = False
    pending = [start]
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


Reading = tuple[dict[str, Dir], bool, dict[str, os.stat_result], list[str]]


def read(index: Index, root: str, now: int, protection: "Protection", skip: Skip,
         touched: set[str] | None = None) -> Reading:
    """read_dirs and changed_files against `index`: its folders, whether any was listed again, the
    files changed since and those gone. With `touched`, the paths a change feed saw touched since
    the index was read (effect/feed.py), only those are looked at again (read_touched). Else,
    while no folder moved (nearly every call) the lstats run over the index's plan (_Plan) where
    it has one worth building, not over the folders' names."""
    if touched is not None and index.dirs:
        return read_touched(index, root, now, protection, skip, touched)
    plan = plan_for(index, root) if _worth_a_plan(index, root) else None
    if plan is not None and plan.folders_unchanged():
        changed, gone = plan.changed_files()
        return index.dirs, False, changed, gone
    dirs, listed = read_dirs(index.dirs, root, now, protection, skip)
    changed, gone = changed_files(dirs, index.files, root)
    return dirs, listed, changed, gone


def read_touched(index: Index, root: str, now: int, protection: "Protection", skip: Skip, touched: set[str]
                 ) -> Reading:
    """What `read` finds, looking only at the folders and files in `touched` and at those whose
    signature the index could not trust (read within RACY_NS of a change): a folder whose
    signature moved is listed again, one that appeared under it is walked whole, one that went
    takes the folders below it along; a file is looked at when touched or when its folder was
    listed again."""
    old = index.dirs
    dirs = dict(old)
    listed = False
    relisted: list[str] = []
    racy_folders, racy_files = untrusted(index)
    look = {rel for rel in touched if rel in old} | racy_folders
    for rel in sorted(look, key=len):  # a folder before the ones below it
        prev = dirs.get(rel)
        if prev is None:
            continue  # went with a folder above it
        try:
            st = os.lstat(root + "/" + rel if rel else root)
        except OSError:
            st = None
        if st is None or not stat.S_ISDIR(st.st_mode):
            _drop(dirs, rel)
            listed = True
            continue
        if prev.sig[2] != 0 and prev.sig == (st.st_ino, st.st_mtime_ns, st.st_ctime_ns):
            continue
        now_listed = dirs[rel] = _list(root, rel, st, now, protection, skip)
        listed = True
        relisted.append(rel)
        for name in set(prev.dirs) - set(now_listed.dirs):
            _drop(dirs, _join(rel, name))
        for name in now_listed.dirs:
            if _join(rel, name) not in dirs:
                below, _ = read_dirs({}, root, now, protection, skip, _join(rel, name))
                dirs.update(below)
                relisted.extend(below)
    candidates = {rel for rel in touched if rel not in dirs} | racy_files
    for rel in relisted:
        folder = dirs.get(rel)
        if folder is not None:
            candidates.update(_join(rel, name) for name in folder.files)
    changed: dict[str, os.stat_result] = {}
    gone: list[str] = []
    known = index.files
    lstat = os.lstat
    for rel in candidates:
        parent, _, name = rel.rpartition("/")
        folder = dirs.get(parent)
        if folder is None or name not in folder.files:
            if rel in known:
                gone.append(rel)
            continue
        try:
            st = lstat(root + "/" + rel)
        except OSError:
            if rel in known and not os.path.lexists(root + "/" + rel):
                gone.append(rel)
            continue
        prev_file = known.get(rel)
        if (prev_file is not None and prev_file.ctime_ns == st.st_ctime_ns and prev_file.ctime_ns != 0
                and prev_file.ino == st.st_ino and prev_file.size == st.st_size
                and prev_file.mtime_ns == st.st_mtime_ns and prev_file.mode == st.st_mode):
            continue
        changed[rel] = st
    if len(dirs) != len(old) or relisted:  # files of a folder that went, or that its new listing drops
        named = set(protected_paths(dirs))
        gone.extend(rel for rel in known if rel not in named and rel not in candidates)
    return dirs, listed, changed, gone


def untrusted(index: Index) -> tuple[set[str], set[str]]:
    """The folders and files whose signatures `index` holds untrusted (read within RACY_NS of a
    change), which every reading looks at again: found once per index (a core reads the same one
    again and again while nothing changes), not by a pass over all of it on every reading."""
    hit = _untrusted_of.get(id(index))
    if hit is not None and hit[0] is index:
        return hit[1], hit[2]
    folders = {rel for rel, folder in index.dirs.items() if folder.sig[2] == 0}
    files = {rel for rel, sig in index.files.items() if sig.ctime_ns == 0}
    if len(_untrusted_of) >= MAX_PLANS:
        _untrusted_of.clear()
    _untrusted_of[id(index)] = (index, folders, files)  # the entry holds the index: its id is not reused
    return folders, files


_untrusted_of: dict[int, tuple[Index, set[str], set[str]]] = {}


def _drop(dirs: dict[str, Dir], rel: str) -> None:
    """A folder and every folder below it, out of `dirs`."""
    prefix = rel + "/" if rel else ""
    for key in [key for key in dirs if key == rel or key.startswith(prefix)]:
        del dirs[key]


class _Plan(NamedTuple):
    """One index's folders and protected files as full paths with the signature each had, so that
    reading them again is an lstat and a few integer comparisons per path. A signature that cannot
    be trusted (racy, or a file the index holds none for) has ctime -1, which no lstat matches: it
    is always reported, as changed_files would."""

    folders: list[tuple[str, int, int, int]]  # path, inode, mtime_ns, ctime_ns
    files: list[tuple[str, str, int, int, int, int, int]]  # path, rel, ctime_ns, inode, mtime_ns, size, mode
    stray: list[str]  # files the index holds that no folder names (gone)
    known: dict[str, File]

    def folders_unchanged(self) -> bool:
        """Whether every folder is as the index read it: then each still holds the same names
        (read_dirs would list none again) and the same folders are reached."""
        if not self.folders:
            return False  # no reading yet (or one kept without its folders): walk the project
        lstat = os.lstat
        try:
            for path, ino, mtime, ctime in self.folders:
                st = lstat(path)
                if st.st_ctime_ns != ctime or st.st_ino != ino or st.st_mtime_ns != mtime:
                    return False
        except OSError:
            return False
        return True

    def changed_files(self) -> tuple[dict[str, os.stat_result], list[str]]:
        """changed_files over the index's own folders (none of them moved)."""
        changed: dict[str, os.stat_result] = {}
        missing: list[tuple[str, str]] = []
        lstat = os.lstat
        for path, rel, ctime, ino, mtime, size, mode in self.files:
            try:
                st = lstat(path)
            except OSError:
                missing.append((path, rel))
                continue
            # ctime first: the kernel moves it on every change of the others
            if (st.st_ctime_ns != ctime or st.st_ino != ino or st.st_mtime_ns != mtime or st.st_size != size
                    or st.st_mode != mode):
                changed[rel] = st
        gone = self.stray + [rel for path, rel in missing if rel in self.known and not os.path.lexists(path)]
        return changed, gone


# each index this process read, by id (the entry holds the index, so its id is not reused): the
# root it was read in, and its plan once one was worth building (None until then)
_seen: dict[int, tuple[Index, str, _Plan | None]] = {}
MAX_PLANS = 16


def _worth_a_plan(index: Index, root: str) -> bool:
    """Building a plan costs about what it saves in two readings, so one is built for an index
    read a second time in this process (a long-lived core: OpenCode's), or ahead of time (the warm
    core builds the latest readings' for its forks, each of which reads once)."""
    if _known(index, root) is not None:
        return True
    _remember(index, root, None)
    return False


def _known(index: Index, root: str) -> "tuple[Index, str, _Plan | None] | None":
    hit = _seen.get(id(index))
    return hit if hit is not None and hit[0] is index and hit[1] == root else None


def _remember(index: Index, root: str, plan: "_Plan | None") -> None:
    if len(_seen) >= MAX_PLANS and id(index) not in _seen:
        _seen.clear()
    _seen[id(index)] = (index, root, plan)


def plan_for(index: Index, root: str) -> _Plan:
    """The index's plan, built once per index and root (the warm core builds it for the latest
    readings, so that its forks start with it)."""
    hit = _known(index, root)
    if hit is not None and hit[2] is not None:
        return hit[2]
    folders = []
    for rel, folder in index.dirs.items():
        ino, mtime, ctime = folder.sig
        folders.append((root + "/" + rel if rel else root, ino, mtime, ctime or -1))
    files = []
    named = set()
    get = index.files.get
    for rel in protected_paths(index.dirs):
        named.add(rel)
        old = get(rel)
        if old is None:
            files.append((root + "/" + rel, rel, -1, 0, 0, 0, 0))
        else:
            files.append((root + "/" + rel, rel, old.ctime_ns or -1, old.ino, old.mtime_ns, old.size, old.mode))
    stray = [rel for rel in index.files if rel not in named]
    plan = _Plan(folders, files, stray, index.files)
    _remember(index, root, plan)
    return plan


def protected_paths(dirs: dict[str, Dir]) -> Iterable[str]:
    for rel, folder in dirs.items():
        for name in folder.files:
            yield _join(rel, name)
