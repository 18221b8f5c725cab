"""The effect check's two halves, run as gates: before a call that may write, read the state of
the files its agent may not write (and keep a copy of any whose bytes are new); after it, read
them again and put back what the call changed, created or deleted.

Unlike the other gates these do file I/O themselves: putting a file back is the check's verdict,
and it has to happen in the after-hook of the very call, on every edge (stdin hook, warm core,
OpenCode core) alike.
"""

import os
import stat
import sys
import time
from typing import TYPE_CHECKING, Callable, NamedTuple, TypeVar

import msgspec

from ..digest import sha256_hex
from ..engine.context import Context
from ..model.events import Event, ToolEvent
from ..model.verdicts import Block, Verdict
from ..paths import below, resolved
from ..store.locked import write_all
from . import ledger
from .ledger import call_id
from .protection import Agent, Outside, Protection, agent_of, outside_places, protection_for
from .store import Store, StoreError, store_for
from .tree import Dir, File, Index, Reading, Skip, dir_sig, file_sig, protected_paths, read, skip_of

if TYPE_CHECKING:
    from ..config.schema import Config
    from .feed import CoreFeed, Feed

T = TypeVar("T")


class Change(NamedTuple):
    kind: str  # "changed", "created", "deleted"
    rel: str
    before: File | None


def skip_for(ctx: Context) -> Skip:
    """What the scan never looks at: the folders the config names and the files hookgate writes
    itself on every call (its session logs and state, the lifetime log, this store), wherever the
    project's layout keeps them, as they resolve now.

    Where this process keeps a change feed of the project (effect/feed.py), an answer in which
    nothing resolved elsewhere is kept: those paths and their folders are then in the project, so
    none can become a symlink without an event in a folder the feed watches, and the answer is
    worked out again once the feed saw any of them touched. A checked call asks twice; the kept
    answer costs one read of the feed's queue instead of four system calls per path."""
    root = ctx.project.root_text
    state = str(ctx.project.state_dir)
    layout = ctx.project.layout
    own = tuple(sorted({f"{state}/{pattern.split('/', 1)[0] if '{session}' in pattern else pattern}"
                        # a per-session path is skipped at its first folder ("sessions/{session}/...")
                        for pattern in (layout.session_metrics, layout.session_state, layout.notices,
                                        layout.decisions, layout.lifetime_metrics, layout.role_owner)}))
    names = frozenset(ctx.config.effect.skip_dirs)
    scanned = ctx.config.effect.skip_except
    inner = frozenset(ctx.config.effect.skip_below_except)
    feed = _own_feed(root) if ctx.config.effect.feed else None
    kept = _skips.get(root)
    if feed is not None and kept is not None and kept.own == own and kept.skip.names == names \
            and kept.scanned == scanned and kept.skip.inner == inner \
            and feed.untouched(kept.token, kept.paths, kept.folders):
        return kept.skip
    token = feed.token() if feed is not None else ""  # before the first lookup: a change during it is touched after
    at = resolved(root).rstrip("/") + "/"
    landed = [resolved(path) for path in own]
    inside = [rel for rel in (below(path, at) for path in landed) if rel is not None]
    skip = skip_of(names, frozenset(rel for rel in inside if rel != "."), scanned, inner)
    if feed is not None and at == root + "/" and landed == list(own) and len(inside) == len(own):
        if len(_skips) >= MAX_SKIPS:
            _skips.clear()
        folders = frozenset({""} | {rel[:i] for rel in inside for i, c in enumerate(rel) if c == "/"})
        _skips[root] = _Kept(own, scanned, skip, token, frozenset(inside) | folders, folders)
    return skip


class _Kept(NamedTuple):
    own: tuple[str, ...]
    scanned: list[str]  # the config's skip_except
    skip: Skip
    token: str  # the feed's, taken before the answer was worked out
    paths: frozenset[str]  # project-relative: the own paths and every folder above them
    folders: frozenset[str]  # those folders, each of which the feed must watch


_skips: dict[str, _Kept] = {}  # project root -> the answer skip_for keeps
MAX_SKIPS = 16


def _feed_of(root: str | None) -> "Feed | CoreFeed | None":
    """The change feed this process reads `root` through (None: the protected folders outside the
    projects, feed.OUTSIDE), if it keeps feeds. A process that does imported the module to say so
    (feed.enable / feed.use_core): a cold hook process, which has none, does not import it."""
    feeds = sys.modules.get(f"{__package__}.feed")
    return feeds.for_root(feeds.OUTSIDE if root is None else root) if feeds is not None else None


def _own_feed(root: str) -> "Feed | None":
    """This process's own change feed of `root`, if it keeps one (not a warm core's, asked over a
    socket: one more round trip would cost what the kept answer saves)."""
    feed = _feed_of(root)
    if feed is None:
        return None
    from .feed import Feed  # loaded already: a feed came from it

    return feed if isinstance(feed, Feed) else None


# -- before ------------------------------------------------------------------------------------

def snapshot(event: Event, ctx: Context, role: str) -> None:
    call = call_id(event)
    assert call is not None
    store = store_for(ctx.project.root_text)
    if store.has_call(call) or ("effect", "refused", call) in ctx.memo:
        return  # one call, several events (a patch's files): read once; one refused file refuses all
    agent = agent_of(event, ctx, role)
    ctx.memo[("effect", "agent", call)] = agent  # for begin(), once the call is decided
    root = ctx.project.root_text
    protection = protection_for(agent, ctx.config, root)
    now = time.time_ns()
    index = store.load_index(protection.key)
    if index is None:
        index = Index(key=protection.key)
    (dirs, listed, changed, gone), token = _reading(index, root, now, protection, skip_for(ctx), ctx.config.effect.feed)
    around = _outside_reading(ctx.config, root, index, now)
    outside = _outside_now(store, index.outside, around, now, ctx)
    outside_moved = outside != index.outside
    moved = listed or changed or gone or not index.t or outside_moved or around.moved(index)
    files = _files_now(store, index, root, now, changed, gone, ctx) if moved else index.files
    # Asked once the bytes are read, not before: a call that began meanwhile may have written them.
    # When another checked call ran during this reading, what changed may be its forbidden write,
    # which its own after-event puts back; taken as this call's starting state, this call's
    # after-event would put it back again. The call starts from the latest reading instead (on a
    # first reading, the one the running call saved before it began). So too outside the project,
    # where that reading was judged by the same rules (by others, it names other files).
    outside_changed = outside_moved and around.places.key == index.outside_key
    another_ran = bool(changed or gone or outside_changed) and \
        ledger.Ledger.load(store, ctx.config.effect.ledger_seconds).ran_since(now, call)
    if another_ran and not index.t:  # a first reading: the one the running call saved before it began
        index = store.load_index(protection.key) or index
    if moved and not (another_ran and index.t):
        store.save_index(Index(key=protection.key, t=now, agent=tuple(agent), dirs=dirs, files=files,  # type: ignore[arg-type]
                               outside=outside, feed=token, **around.fields()), call=call)  # type: ignore[arg-type]
    elif around.places.key != index.outside_key:
        # the latest reading's outside part names the files of other rules: outside, the call
        # starts from what it reads (a file the latest reading does not name would be "created")
        store.save_index(msgspec.structs.replace(index, agent=tuple(agent), outside=outside, **around.fields()),
                         call=call)
    else:
        store.link_call(protection.key, call)
    if os.urandom(1)[0] < 4:  # now and then, not on every call
        store.prune(protection.key)
        ledger.prune(store, ctx.config.effect.ledger_seconds)


def _files_now(store: Store, index: Index, root: str, now: int, changed: dict[str, os.stat_result],
               gone: list[str], ctx: Context) -> dict[str, File]:
    """The index's files with what the reading found: those gone dropped, those changed read
    (and their bytes kept when new)."""
    files = dict(index.files)
    for rel in gone:
        del files[rel]
    for rel, st in changed.items():
        files[rel] = _file_now(store, files.get(rel), os.path.join(root, rel), st, now, ctx)
    return files


def _file_now(store: Store, old: File | None, path: str, st: os.stat_result, now: int, ctx: Context) -> File:
    """A protected file read again: its old copy when only its times moved, else a copy of it kept."""
    if old is not None and same_bytes(old, st, path):
        return file_sig(st, now, old.digest)
    return _keep(store, "", path, st, now, ctx)


def _reading(index: Index, root: str, now: int, protection: Protection, skip: Skip, follow: bool
             ) -> tuple[Reading, str]:
    """The tree against `index`, through a change feed where this process has one (the OpenCode
    core's own, a warm core's for its forks; effect/feed.py) and `follow` ([effect] feed) allows
    it, and the feed's token
    the new reading is as of ("": none). The token is taken before any lstat, so a change made
    while the tree is read is in the next reading's touched paths; what is read here for the
    first time is watched after."""
    feed = _feed_of(root) if follow else None
    if feed is None:
        return read(index, root, now, protection, skip), ""
    mark = f"{index.key}:{index.t}"
    token, touched = feed.reading(index.feed, mark)
    reading = read(index, root, now, protection, skip, touched)
    dirs, listed, changed, gone = reading
    unchanged = not listed and not changed and not gone and bool(index.dirs)  # kept, not written again
    if touched is None or not index.dirs:
        watched = feed.settle(mark, token, unchanged, dirs, protected_paths(dirs))
    else:  # what was touched (a new inode behind a path), and what is new: folders listed, files created
        new_folders = [rel for rel in dirs if rel not in index.dirs] if listed else []
        watched = feed.settle(mark, token, unchanged, [rel for rel in touched if rel in dirs] + new_folders,
                              [rel for rel in touched if rel not in dirs] + list(changed))
    return reading, token if watched else ""


class OutsideReading(NamedTuple):
    """The protected files outside the project as one reading found them (_outside_reading)."""
    stats: dict[str, tuple[str, "os.stat_result | None"]]  # looked at: its reason, its lstat (None: not there)
    kept: dict[str, File]  # as the index had them: in a folder the outside feed saw untouched, or looked at and the same
    token: str  # the outside feed's token this reading is as of ("": none)
    folders: dict[str, tuple[int, int]]  # the folders the feed watches whole, with their (device, inode)
    places: Outside  # what it read, and the key of the rules it judged by (Outside.key)
    dirs: dict[str, Dir]  # the folders below the places, each with its signature and names (listing)

    def reason(self, path: str, root: str) -> str:
        """Why `path`, looked at, is protected: a file the index found protected under the same
        rules is judged only once a change of it is to be put back."""
        return self.stats[path][0] or self.places.reason(path, root) or "a protected file"

    def moved(self, index: Index) -> bool:
        """Whether the feed's part of the reading, or a folder's signature, differs from the index's
        (only then written)."""
        return (self.token, self.folders, self.places.key, self.dirs) != (
            index.outside_feed, index.outside_folders, index.outside_key, index.outside_dirs)

    def fields(self) -> dict[str, object]:
        """The feed's part and the folders' signatures, as an Index keeps them."""
        return {"outside_feed": self.token, "outside_folders": self.folders, "outside_key": self.places.key,
                "outside_dirs": self.dirs}


def _outside_reading(config: "Config", root: str, index: Index, now: int) -> OutsideReading:
    """The protected files outside the project (outside_places): those named, those found in the
    folders named, and those of `index`'s reading below them (one deleted is no longer found),
    each with its lstat now; behind a symlink among them, the file it leads to (a dotfile kept
    elsewhere).

    Where this process keeps feeds (effect/feed.py), a folder is not listed again while the
    outside feed saw nothing below it touched since the index's reading, and the path still names
    the folder it watched (the same device and inode: a folder on the way renamed and another put
    in its place names another), under the same rules (Outside.key); its files are then the
    index's, judged as they were. A folder is watched whole only as a real folder holding no
    symlink: a linked folder's or file's target is not below it, and its changes would raise no
    event there. It is then listed on every reading, as without a feed. Without a feed, or in a
    folder the feed saw touched, a folder whose signature is the index's is not listed again
    (listing): its files are looked at, one lstat each.

    A file a listing finds that the index found protected under the same rules is not judged
    again (a fresh process judges a path in microseconds, and a home may hold thousands): one
    whose lstat is the index's signature is kept as the index had it, and the reason of one that
    changed is asked only then (OutsideReading.reason)."""
    found: dict[str, tuple[str, os.stat_result | None]] = {}
    base = root.rstrip("/") + "/"

    def add(path: str, reason: str, st: "os.stat_result | None") -> None:
        found[path] = (reason, st)
        if st is not None and stat.S_ISLNK(st.st_mode):
            real = os.path.realpath(path)
            if not real.startswith(base) and real not in found:
                found[real] = (reason, lstat_or_none(real))

    places = outside_places(config, root)
    for path, reason in places.files.items():
        add(path, reason, lstat_or_none(path))
    present = {folder: st for folder in places.folders if (st := lstat_or_none(folder)) is not None}
    feed = _feed_of(None) if present and config.effect.feed else None
    token, touched = feed.reading(index.outside_feed, "outside") if feed is not None else ("", None)
    same_rules = index.outside_key == places.key
    judged = index.outside if same_rules else {}  # the files found protected under these rules
    if not same_rules:
        touched = None  # every folder is judged afresh
    kept: dict[str, File] = {}
    folders: dict[str, tuple[int, int]] = {}
    dirs: dict[str, Dir] = {}
    vouched: list[str] = []  # those folders the feed saw untouched, each with its "/"
    watch_folders: list[str] = []
    watch_files: list[str] = []
    limit = config.effect.outside_max_files
    for folder, st in present.items():
        identity = (st.st_dev, st.st_ino)
        if touched is not None and index.outside_folders.get(folder) == identity and not _touched_below(touched, folder):
            folders[folder] = identity  # vouched for: its files are the index's (below, in one pass)
            vouched.append(folder + "/")
            continue
        files, below, linked, signed = listing(folder, limit, index.outside_dirs, now)
        if files and os.path.realpath(folder).startswith(base):
            continue  # a link into the project (~/.claude/skills kept in the project): the scan's
        dirs.update(signed)
        for path, file_st in files or ():
            old = judged.get(path)
            if old is not None and not stat.S_ISLNK(file_st.st_mode):
                if old.holds(file_st, now):
                    kept[path] = old
                else:
                    found[path] = ("", file_st)  # its reason asked if it changed (OutsideReading.reason)
                continue
            why = places.reason(path, root)
            if why:
                add(path, why, file_st)
        if feed is not None and files is not None and not linked and stat.S_ISDIR(st.st_mode):
            folders[folder] = identity
            watch_folders += [path[1:] for path in below]
            watch_files += [path[1:] for path, _ in files]
    untouched = tuple(vouched)
    if untouched:  # the signatures the index holds below a folder vouched for stand
        dirs.update((path, kept_dir) for path, kept_dir in index.outside_dirs.items() if (path + "/").startswith(untouched))
    listed = tuple(folder + "/" for folder in places.folders if folder + "/" not in untouched)
    for path, file in index.outside.items():
        if path in found or path in kept:
            continue
        if path.startswith(untouched):
            kept[path] = file
        elif path.startswith(listed):
            why = places.reason(path, root)
            if why:
                add(path, why, lstat_or_none(path))
    if feed is None:
        return OutsideReading(found, kept, "", {}, places, dirs)
    if not watch_folders and not watch_files and touched is not None and folders.keys() <= index.outside_folders.keys():
        token = index.outside_feed  # every folder vouched for: the index's token still tells the truth
    elif not feed.settle("outside", token, False, watch_folders, watch_files):
        token, folders = "", {}
    return OutsideReading(found, kept, token, folders, places, dirs)


def _touched_below(touched: set[str], folder: str) -> bool:
    """Whether the outside feed's `touched` (absolute paths without their first "/") names
    `folder` or a path below it."""
    rel = folder[1:]
    return any(path == rel or path.startswith(rel + "/") for path in touched)


def files_below(folder: str, limit: int) -> "list[tuple[str, os.stat_result]] | None":
    """Every file below `folder` with its lstat (listing); None for a folder of more than `limit`."""
    return listing(folder, limit)[0]


def listing(folder: str, limit: int, known: "dict[str, Dir] | None" = None, now: int = 0
            ) -> "tuple[list[tuple[str, os.stat_result]] | None, list[str], bool, dict[str, Dir]]":
    """(every file below `folder` (what is not a folder), with its lstat; the folders listed, itself
    first; whether a folder linked to was listed too (a skill kept in a dotfiles repository), once,
    or a file below is a symlink; each folder's signature and names (tree.Dir, by path) where no
    symlink was met, {} else). None for the files of a folder of more than `limit` files, which
    is not read at all (left to the syntax gates): hookgate doctor names it.

    A folder whose signature is the one `known` holds (a reading's, as of `now`) still holds the
    same names: creating, removing or renaming an entry moves its folder's mtime. It is not
    listed again; reading it costs an lstat for it and one per file, as the project's tree
    (tree.read_dirs). A tree behind a symlink is listed whole, every time: its target's changes
    move no signature here."""
    files: list[tuple[str, os.stat_result]] = []
    folders: list[str] = []
    dirs: dict[str, Dir] = {}
    linked = False
    signed = True  # until a symlink is met
    seen: set[tuple[int, int]] = set()
    stack = [folder]
    lstat = os.lstat
    while stack:
        here = stack.pop()
        st = None
        if signed:
            try:
                fd = os.open(here, _FOLDER)
            except OSError:  # gone, a symlink, no folder, or not ours to read
                st = lstat_or_none(here)
                if st is None:
                    continue
                if not stat.S_ISDIR(st.st_mode):
                    if here == folder:
                        signed = False  # the place itself is a link (or no folder: scandir says)
                    elif known:  # a folder the last reading found is one no more: read afresh
                        return listing(folder, limit, None, now)
                    else:
                        continue  # one no more since its folder was listed: as scandir would find it
            else:
                try:
                    st = os.fstat(fd)
                    old = known.get(here) if known else None
                    if old is not None and old.sig[2] != 0 and old.sig == (st.st_ino, st.st_mtime_ns, st.st_ctime_ns):
                        folders.append(here)
                        dirs[here] = old
                        prefix = here + "/"
                        stack.extend(prefix + name for name in old.dirs)
                        for name in old.files:  # by name in the open folder: no walk of the path
                            try:
                                file_st = lstat(name, dir_fd=fd)
                            except OSError:
                                continue
                            if stat.S_ISDIR(file_st.st_mode) or stat.S_ISLNK(file_st.st_mode):
                                return listing(folder, limit, None, now)  # not what the last reading found there
                            files.append((prefix + name, file_st))
                        if len(files) > limit:
                            return None, folders, linked, {}
                        continue
                finally:
                    os.close(fd)
        names: list[str] = []
        subfolders: list[str] = []
        try:
            with os.scandir(here) as entries:
                folders.append(here)
                for entry in entries:
                    try:
                        entry_st = entry.stat(follow_symlinks=False)
                        if stat.S_ISLNK(entry_st.st_mode):
                            linked, signed = True, False
                            if entry.is_dir():  # a linked folder: listed below the link
                                target = os.stat(entry.path)
                                if (target.st_dev, target.st_ino) not in seen:
                                    seen.add((target.st_dev, target.st_ino))
                                    stack.append(entry.path)
                                continue
                    except OSError:
                        continue
                    if stat.S_ISDIR(entry_st.st_mode):
                        stack.append(entry.path)
                        subfolders.append(entry.name)
                    else:
                        files.append((entry.path, entry_st))
                        names.append(entry.name)
        except OSError:  # not there (most of them), or not a folder
            continue
        if signed and st is not None:
            dirs[here] = Dir(dir_sig(st, now), names, subfolders)
        if len(files) > limit:
            return None, folders, linked, {}
    return files, folders, linked, dirs if signed else {}


_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def lstat_or_none(path: str) -> "os.stat_result | None":
    try:
        return os.lstat(path)
    except OSError:
        return None


def _outside_now(store: Store, old: dict[str, File], reading: OutsideReading, now: int, ctx: Context
                 ) -> dict[str, File]:
    """The protected files outside the project as they are now (one that is not there is left
    out), their bytes kept for one that changed."""
    found = dict(reading.kept)
    for path, (_, st) in reading.stats.items():
        if st is None:
            continue
        prev = old.get(path)
        found[path] = prev if prev is not None and prev.holds(st, now) \
            else _file_now(store, prev, path, st, now, ctx)
    return found


def _outside_changes(before: Index, reading: OutsideReading, now: int) -> list[Change]:
    """What the call changed, created or deleted among the protected files outside the project
    (those the rules still name). Where `before` was judged by other rules (edited during the call,
    or another environment's HOME or CODEX_HOME), a file it does not name was not protected then,
    or not in its places: it counts as created only where the folders it listed show it was not
    there (_absent_from)."""
    changes: list[Change] = []
    same_rules = before.outside_key == reading.places.key
    for path, (_, st) in reading.stats.items():
        old = before.outside.get(path)
        if st is None:
            if old is not None:
                changes.append(Change("deleted", path, old))
        elif old is None:
            if same_rules or _absent_from(before.outside_dirs, path):
                changes.append(Change("created", path, None))
        elif not unchanged(old, st, path, now):
            changes.append(Change("changed", path, old))
    return changes


def _absent_from(dirs: dict[str, Dir], path: str) -> bool:
    """Whether the folders a reading listed (their names, check.listing) show that `path` was not
    there: the nearest of them above it names no entry on the way down to it."""
    folder, name = os.path.split(path)
    while True:
        listed = dirs.get(folder)
        if listed is not None:
            return name not in listed.files and name not in listed.dirs
        up, name = os.path.split(folder)
        if up == folder:
            return False
        folder = up


def _keep(store: Store, root: str, rel: str, st: os.stat_result, now: int, ctx: Context) -> File:
    """The file's signature with a copy of its bytes in the store (when it is a regular file of
    a size the config keeps)."""
    if not stat.S_ISREG(st.st_mode) or st.st_size > ctx.config.effect.max_file_bytes:
        return file_sig(st, now)
    data, after = _read(os.path.join(root, rel))
    if data is None or after is None:
        return file_sig(st, now)
    sig = file_sig(after, now, store.put(data))
    if (after.st_ino, after.st_size, after.st_mtime_ns, after.st_ctime_ns) != (
            st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns):
        sig.ctime_ns = 0  # it changed while being read: compare the bytes next time
    return sig


def _read(path: str) -> tuple[bytes | None, os.stat_result | None]:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None, None
    try:
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks), os.fstat(fd)
    except OSError:
        return None, None
    finally:
        os.close(fd)


# -- after -------------------------------------------------------------------------------------

def compare(before: Index, root: str, protection: Protection, skip: Skip, follow: bool
            ) -> tuple[list[Change], dict[str, Dir], dict[str, File], int, bool, str]:
    """What the call changed among the protected files, the reading now, whether that reading
    differs from `before` at all (only then is it written), and its feed token (_reading)."""
    now = time.time_ns()
    (dirs, listed, changed, gone), token = _reading(before, root, now, protection, skip, follow)
    if not listed and not changed and not gone:
        return [], dirs, before.files, now, False, token
    files = dict(before.files)
    changes: list[Change] = []
    for rel, st in changed.items():
        old = files.get(rel)
        if old is None:
            changes.append(Change("created", rel, None))
        elif same_bytes(old, st, os.path.join(root, rel)):
            files[rel] = file_sig(st, now, old.digest)
        else:
            changes.append(Change("changed", rel, old))
            del files[rel]
    for rel in gone:
        changes.append(Change("deleted", rel, files.pop(rel)))
    return changes, dirs, files, now, True, token


def unchanged(old: File, st: os.stat_result, path: str, now: int) -> bool:
    """Whether the file at `path`, of lstat `st` read at `now`, is still `old`: its signature, or
    its mode and bytes with only its times moved."""
    return old.holds(st, now) or same_bytes(old, st, path)


def same_bytes(old: File, st: os.stat_result, path: str) -> bool:
    """Only the times moved (touch, a hard link made, a racy reading): same mode, same bytes."""
    if not old.digest or st.st_mode != old.mode or st.st_size != old.size:
        return False
    data, _ = _read(path)
    return data is not None and sha256_hex(data) == old.digest


def check_after(event: Event, ctx: Context) -> Verdict | None:
    call = call_id(event)
    if call is None or not isinstance(event, ToolEvent):
        return None
    store = store_for(ctx.project.root_text)
    before = store.take(call)
    if before is None:
        return None
    agent = Agent(*before.agent)
    root = ctx.project.root_text
    protection = protection_for(agent, ctx.config, root)
    if protection.key != before.key:  # the rules changed during the call: judge by the new ones
        before = _rekeyed(before, protection, store)
    skip = skip_for(ctx)
    changes, dirs, files, now, moved, token = compare(before, root, protection, skip, ctx.config.effect.feed)
    around = _outside_reading(ctx.config, root, before, now)
    outside = around.stats
    outside_changes = _outside_changes(before, around, now)
    reverted: list[tuple[Change, str, str | None]] = []
    failed: list[tuple[Change, str]] = []
    keep = ctx.config.effect.max_file_bytes
    for change in outside_changes:  # no other call may write them: only an inert git setting stands
        if not _inert_git(change, change.rel, store, ctx.config.pipeline.protect.git_inert_keys):
            _restore(change, change.rel, store, around.reason(change.rel, root), keep, reverted, failed)
    if changes:
        book = ledger.Ledger.load(store, ctx.config.effect.ledger_seconds)
        allows = lambda other, rel: other != agent and protection_for(other, ctx.config, root).reason(rel) is None  # noqa: E731
        started = book.started(call, before.t)
        asked = book.asked(event.session_id, started, now)
        for change in changes:
            path = os.path.join(root, change.rel)
            if book.excusing(change.rel, started, now, call, not agent.in_subagent, allows) or (
                    asked and _answered(change, path, store, ctx.config.effect.answer_keys.get(change.rel))) or (
                    _inert_git(change, path, store, ctx.config.pipeline.protect.git_inert_keys)):
                try:
                    files[change.rel] = _keep(store, root, change.rel, os.lstat(path), now, ctx)
                except FileNotFoundError:
                    pass
                continue
            _restore(change, path, store, protection.reason(change.rel) or "a protected file", keep, reverted, failed)
            if change.kind != "created" and change.before is not None:
                try:
                    files[change.rel] = file_sig(os.lstat(path), time.time_ns(), change.before.digest)
                except FileNotFoundError:
                    pass
    ledger.close(store, call)
    # what was put back is read again; with nothing changed, the reading the call started from
    # stands, unless other rules judged it (it names their files)
    if outside_changes or around.places.key != before.outside_key:
        reread = time.time_ns()
        around = _outside_reading(ctx.config, root, before, reread)
        outside_now = _outside_now(store, before.outside, around, reread, ctx)
    else:
        outside_now = before.outside
    if moved or outside_now != before.outside or around.moved(before):
        store.save_index(Index(key=protection.key, t=now, agent=before.agent, dirs=dirs, files=files,
                               outside=outside_now, feed=token, **around.fields()))  # type: ignore[arg-type]
        store.prune_blobs(ctx.config.effect.max_blobs)
    if not reverted and not failed:
        return None
    command = _command(event)
    for change, reason, displaced in reverted:
        ctx.record("write_reverted", file=os.path.basename(change.rel), path=change.rel, change=change.kind,
                   tool=event.tool_name, command=command, reason=reason.format(file=change.rel, role=agent.role),
                   **({"displaced": displaced} if displaced else {}))  # `hookgate explain` shows it, the model is not told
    for change, error in failed:
        ctx.record("write_revert_failed", file=os.path.basename(change.rel), path=change.rel, change=change.kind,
                   tool=event.tool_name, command=command, error=error)
    reason = _reason(reverted, failed, agent, command)
    # a failed call's answer may not carry a refusal to the model (Claude's PostToolUseFailure):
    # the same text goes as context too
    return Block(reason=reason, context=reason if event.name == "PostToolUseFailure" else None)


def _answered(change: Change, path: str, store: Store, keys: list[str] | None) -> bool:
    """Whether the change is what a runtime writes answering a permission prompt: in a JSON
    settings file, a change of `keys` alone (the rest, whatever holds hookgate's hooks, as it was)."""
    if keys is None:
        return False
    read = _before_and_now(change, path, store, msgspec.json.decode)
    if read is None or not isinstance(read[0] or {}, dict) or not isinstance(read[1], dict):
        return False
    before, now = read[0] or {}, read[1]
    return {k: v for k, v in before.items() if k not in keys} == {k: v for k, v in now.items() if k not in keys}


def _inert_git(change: Change, path: str, store: Store, inert: list[str]) -> bool:
    """Whether the change is of a git config (a repository's, a submodule's, a worktree's, the
    user's) and sets, changes or removes only keys that name no program (`[pipeline.protect]
    git_inert_keys`): what `git init`, `git remote add` or `git push -u` write. One this reader
    cannot read is not."""
    from ..formats import gitconfig  # a protected file changed in a call: not on every call's way

    if not gitconfig.is_config(path):
        return False
    from collections import Counter

    read = _before_and_now(change, path, store, lambda data: gitconfig.entries(data.decode()))
    if read is None or read[1] is None or (change.before is not None and read[0] is None):
        return False
    was, now = Counter(read[0] or []), Counter(read[1])
    return gitconfig.inert((name for name, _ in (was - now) + (now - was)), inert)


def _before_and_now(change: Change, path: str, store: Store, parse: Callable[[bytes], T]
                    ) -> tuple[T | None, T] | None:
    """A changed or created file as `parse` reads its kept copy (None: created) and its bytes now;
    None when it was deleted or either cannot be read or parsed."""
    if change.kind == "deleted":
        return None
    data, _ = _read(path)
    if data is None:
        return None
    try:
        return (None if change.before is None else parse(store.get(change.before.digest))), parse(data)
    except (StoreError, ValueError):  # a decode error of either format is a ValueError
        return None


def begin(event: Event, ctx: Context, refused: bool) -> None:
    """After the PreToolUse was decided: a refused call never runs, so its reading is dropped;
    an allowed one is noted in the ledger as running (what its agent may write is excused while
    it runs)."""
    call = call_id(event)
    if call is None:
        return
    store = store_for(ctx.project.root_text)
    if refused or ("effect", "refused", call) in ctx.memo:
        ctx.memo[("effect", "refused", call)] = True
        if store.take(call) is not None:
            ledger.close(store, call)  # an earlier file of the same patch may have noted it running
        return
    agent = ctx.memo.get(("effect", "agent", call))
    if agent is None:  # read by an earlier event of the same call (a patch's first file)
        return
    ledger.open_call(store, call, agent)


def rename_call(event: Event, tool_use_id: str, root: "os.PathLike[str] | str") -> None:
    """A hook rewrote this call's input, and its runtime derives the after-event's id from the
    input (Gemini CLI): the reading the call started from, and its ledger entry, go under the id
    the after-event will carry."""
    old, new = call_id(event), f"{event.session_id}/{tool_use_id}"
    if old is None:
        return
    store = store_for(root)
    before = store.rename_call(old, new)
    if before is not None:
        ledger.close(store, old)
        ledger.open_call(store, new, Agent(*before.agent))


def _rekeyed(before: Index, protection: Protection, store: Store) -> Index:
    files = {rel: f for rel, f in before.files.items() if protection.reason(rel)}
    return msgspec.structs.replace(before, key=protection.key, dirs={}, files=files, feed="")


def _restore(change: Change, path: str, store: Store, reason: str, keep: int,
             reverted: list[tuple[Change, str, str | None]], failed: list[tuple[Change, str]]) -> None:
    """Put the change back: noted in `reverted` with the rule's reason and where what the call
    left there is kept (a file of at most `keep` bytes), or in `failed` with why not."""
    try:
        displaced = _displace(change, path, store, keep)
        _put_back(change, path, store)
        reverted.append((change, reason, displaced))
    except (StoreError, OSError) as exc:
        failed.append((change, str(exc)))


def _displace(change: Change, path: str, store: Store, keep: int) -> str | None:
    """Keep the bytes the put-back replaces or removes (a file the call changed or created): the
    change may be a person's own edit, made while the call ran, and nothing of theirs is lost."""
    st = lstat_or_none(path) if change.kind != "deleted" else None
    if st is None or not stat.S_ISREG(st.st_mode) or st.st_size > keep:
        return None
    data, _ = _read(path)
    return store.keep_displaced(os.path.basename(path), data) if data is not None else None


def _put_back(change: Change, path: str, store: Store) -> None:
    if change.kind == "created":
        if os.path.isdir(path) and not os.path.islink(path):
            raise OSError("a folder now stands where it was created; not removed")
        os.unlink(path)
        return
    old = change.before
    assert old is not None
    if not old.digest:
        raise StoreError("no copy of it was kept (not a regular file, or larger than effect.max_file_bytes)")
    data = store.get(old.digest)
    folder = os.path.dirname(path)
    os.makedirs(folder, exist_ok=True)
    tmp = os.path.join(folder, f".hookgate-restore-{os.getpid()}-{time.monotonic_ns()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        write_all(fd, data)
        os.fchmod(fd, stat.S_IMODE(old.mode))
    finally:
        os.close(fd)
    os.utime(tmp, ns=(old.mtime_ns, old.mtime_ns))
    if os.path.isdir(path) and not os.path.islink(path):
        os.unlink(tmp)
        raise OSError("a folder now stands in its place; not replaced")
    os.replace(tmp, path)  # a fresh inode: a hard link made to the old one keeps what was written


def _command(event: ToolEvent) -> str:
    command = (event.tool_input or {}).get("command")
    text = command if isinstance(command, str) else event.tool_name
    return text if len(text) <= 500 else text[:497] + "..."


_KIND = {"changed": "changed", "created": "created (removed again)", "deleted": "deleted (recreated)"}


def _reason(reverted: list[tuple[Change, str, str | None]], failed: list[tuple[Change, str]], agent: Agent,
            command: str) -> str:
    lines = []
    if reverted:
        lines.append("hookgate put back files this call may not change, exactly as they were before it:")
        for change, reason, _ in reverted:
            lines.append(f"- {change.rel} was {_KIND[change.kind]}: {reason.format(file=change.rel, role=agent.role)}")
    if failed:
        lines.append("hookgate found files this call may not change and could NOT put them back:")
        for change, error in failed:
            lines.append(f"- {change.rel} was {change.kind}: {error}")
    lines.append(f"(by `{command}`; the call's other effects stand.) Do not repeat the change through another "
                 "command: do the work the allowed way the reason names (dispatch the role or subagent that "
                 "owns the file, or ask the user).")
    return "\n".join(lines)
