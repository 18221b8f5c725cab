"""Where a write lands, relative to the project, before any rule looks at it.

A path can name one place and land in another (`a/../e2e/x`, a symlinked folder, a worker's
worktree). Rules therefore judge two readings of every path, the one the caller named (`..`
folded lexically) and the one the filesystem resolves (symlinks followed), and a write is
blocked if either reading is blocked. Matching is case-insensitive on `/`-separated text.
"""

from __future__ import annotations

import os
from fnmatch import fnmatchcase
from functools import lru_cache
from typing import Callable, Iterable, Sequence


def readings(path: str, cwd: str, roots: Iterable[str], worktree_markers: Sequence[str] = (),
             resolve: Callable[[str], str] | None = None) -> tuple[str, ...]:
    """The distinct project-relative spellings of `path` (absolute when it lands outside).
    `resolve`: `resolved`, or one that remembers it for a decision (`Context.resolved`)."""
    if "\x00" in path:
        raise ValueError("path contains a NUL byte")
    joined = at(cwd, path)
    try:
        real: str | None = (resolve or resolved)(joined)
    except (OSError, ValueError):
        real = None
    return _readings(joined, real, tuple(roots), tuple(worktree_markers))


@lru_cache(maxsize=4096)
def _readings(joined: str, real: str | None, roots: tuple[str, ...], markers: tuple[str, ...]) -> tuple[str, ...]:
    """readings once the filesystem has answered (`real`: None when it could not): a pure function
    of the texts, so the folding and the spelling are worked out once per place, not per write judged."""
    lexical = os.path.normpath(joined)
    forms = root_forms(roots)
    parts = _marker_parts(markers)
    spelled = _spelling(lexical, forms, parts)
    if real is None or real == lexical:
        return (spelled,)
    return tuple(dict.fromkeys((spelled, _spelling(real, forms, parts))))


def at(cwd: str, path: str) -> str:
    """os.path.join(cwd, path) of a text path: the absolute path a runtime's Write names, as it is,
    without join's walk in Python (every write judged asks)."""
    return path if path[:1] == "/" else os.path.join(cwd, path)


def _spelling(absolute: str, forms: tuple[str, ...], markers: tuple[tuple[str, ...], ...]) -> str:
    """How the rules name the place `absolute`, given the root forms and the worktree markers."""
    return _strip_worktree(_relative(absolute, forms).lower(), markers)


_PROC_FD = "/proc/self/fd/" if os.path.isdir("/proc/self/fd") else None
_OPEN_DIR = os.O_PATH | os.O_DIRECTORY if hasattr(os, "O_PATH") else 0


def resolved(path: str) -> str:
    """os.path.realpath(path), from the kernel where it can say: the folder the path names is
    opened (O_PATH, symlinks followed) and its name read back from /proc, and the last component
    is looked at (a symlink there is left to realpath). Three or four calls instead of
    realpath's walk of one lstat per component in Python, and nothing remembered between calls,
    so a symlink swapped in since the last call is followed at once."""
    parent, name = os.path.split(path)
    if _PROC_FD is None or not _OPEN_DIR or not parent.startswith("/") or name in ("", ".", ".."):
        return os.path.realpath(path)
    try:
        folder = _folder(parent)
    except FileNotFoundError:
        return _below_missing(path)
    except OSError:
        return os.path.realpath(path)
    if folder is None:
        return os.path.realpath(path)
    try:
        if os.lstat(path).st_mode & 0o170000 == _S_IFLNK:  # realpath follows a link there
            return os.path.realpath(path)
    except FileNotFoundError:
        pass
    except OSError:
        return os.path.realpath(path)
    return folder.rstrip("/") + "/" + name


_S_IFLNK, _S_IFDIR = 0o120000, 0o040000


def _folder(path: str) -> str | None:
    """Where the folder `path` is, as the kernel resolved it; None when /proc cannot say."""
    fd = os.open(path, _OPEN_DIR)
    try:
        folder = os.readlink(f"{_PROC_FD}{fd}")
    finally:
        os.close(fd)
    return folder if folder.startswith("/") and not folder.endswith(" (deleted)") else None


def _below_missing(path: str) -> str:
    """realpath of a path whose folder does not exist: the names that do not exist are kept as
    they are, below the deepest folder that does. A missing name that is a dangling symlink, or
    a `..` among them, is left to realpath."""
    tail: list[str] = []
    head = path
    while True:
        head, name = os.path.split(head)
        if name in ("", ".", ".."):
            return os.path.realpath(path)
        tail.append(name)
        try:
            st = os.lstat(head)
        except FileNotFoundError:
            continue
        except OSError:
            return os.path.realpath(path)
        if st.st_mode & 0o170000 not in (_S_IFDIR, _S_IFLNK):  # a file: realpath keeps going past it
            return os.path.realpath(path)
        try:
            folder = _folder(head)  # a link is followed, to a folder; a dangling one fails here
        except OSError:
            return os.path.realpath(path)
        if folder is None:
            return os.path.realpath(path)
        return folder.rstrip("/") + "/" + "/".join(reversed(tail))


@lru_cache(maxsize=64)
def root_forms(roots: tuple[str, ...]) -> tuple[str, ...]:
    """Each project root as named and as resolved, longest first, each ending in `/`. A root does
    not move under a running hookgate, so this is worked out once, not on every write judged."""
    forms = {form.rstrip("/") + "/" for root in roots for form in (os.path.normpath(root), os.path.realpath(root))}
    return tuple(sorted(forms, key=len, reverse=True))


@lru_cache(maxsize=64)
def _marker_parts(markers: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(part.lower() for part in marker.strip("/").split("/") if part) for marker in markers)


def matches(rel: str, pattern: str, root: str | None = None) -> bool:
    """See presets/godot.toml for the pattern language. `root` (the project's, as `readings` saw
    it) lets a pattern anchored outside the project match where that place lies inside it.
    (pipeline/rules.py compiles whole rule sets from the same root_relative_pattern.)"""
    plan = root_relative_pattern(pattern, root)
    if plan is None:
        return False
    on_name, compared = plan
    return fnmatchcase(rel.rsplit("/", 1)[-1] if on_name else rel, compared)


def anchor(pattern: str) -> str | None:
    """A pattern that starts at a place outside the project ("~/.claude/settings.json",
    "$CODEX_HOME/hooks.json", "$HOOKGATE_INSTALL/*", or a variable alone that names a file:
    "$BASH_ENV"), as the absolute lower-case pattern it names now; None when that place is not
    set (the pattern then matches nothing)."""
    named = place(pattern)
    return named.lower() if named is not None else None


def place(pattern: str) -> str | None:
    """What `anchor` names, as spelled on disk (a path to open, not a pattern to match)."""
    head, _, rest = pattern.partition("/")
    if head == "~":
        base = os.path.expanduser("~")
    elif head.startswith("$"):
        name = head[1:]
        base = os.environ.get(name) or (_BUILTIN_PLACES[name]() if name in _BUILTIN_PLACES else "")
    else:
        return None
    if not base.startswith("/"):
        return None
    base = os.path.normpath(base)
    return os.path.join(base, rest) if rest else base


def anchor_names(pattern: str) -> tuple[str, ...]:
    """The environment variables `anchor(pattern)` reads (HOME for `~`), so a value computed from
    anchored patterns can be keyed on what they depend on."""
    head = pattern.partition("/")[0]
    if head == "~":
        return ("HOME",)
    return (head[1:],) if head.startswith("$") else ()


def root_relative_pattern(pattern: str, root: str | None) -> tuple[bool, str] | None:
    """What `matches` compares for `pattern`: (whether it is the last component of `rel` alone,
    as for a pattern without `/`; the lower-case fnmatch pattern), or None when an anchored
    pattern names no place now."""
    if pattern[:1] in ("~", "$"):
        anchored = anchor(pattern)
        if anchored is None:
            return None
        if root is not None:
            for form in root_forms((root,)):
                if anchored.startswith(form.lower()):
                    return False, anchored[len(form):]
        return False, anchored
    pattern = pattern.lower()
    if pattern.startswith("/"):
        return False, pattern[1:]
    return "/" not in pattern, pattern


@lru_cache(maxsize=1)
def _hookgate_install() -> str:
    """Where this hookgate is installed: it cannot move under the running process (a core whose
    code changed leaves, hookgate.warm.server), so it is resolved once."""
    import hookgate

    return os.path.dirname(os.path.realpath(hookgate.__file__))


def _hookgate_bin() -> str:
    import sys

    return os.path.dirname(sys.executable)


def _hookgate_python() -> str:
    """The interpreter file itself, past the venv's links to it."""
    import sys

    return os.path.realpath(sys.executable)


@lru_cache(maxsize=1)
def _hookgate_site() -> str:
    """The folder msgspec is loaded from: every hookgate process imports it, and in an install it
    holds hookgate, its other dependencies and the .pth files a plain start runs, too."""
    import msgspec

    return os.path.dirname(os.path.dirname(os.path.realpath(msgspec.__file__)))


def _hookgate_stdlib() -> str:
    return os.path.dirname(os.path.realpath(os.__file__))


# places hookgate knows itself, for patterns that must follow its own install: what every
# hookgate process runs (its code, the interpreter, the libraries it loads)
_BUILTIN_PLACES: dict[str, Callable[[], str]] = {
    "HOOKGATE_INSTALL": _hookgate_install, "HOOKGATE_BIN": _hookgate_bin, "HOOKGATE_PYTHON": _hookgate_python,
    "HOOKGATE_SITE": _hookgate_site, "HOOKGATE_STDLIB": _hookgate_stdlib,
}


def _relative(absolute: str, roots: tuple[str, ...]) -> str:
    for root in roots:
        rel = below(absolute, root)
        if rel is not None:
            return rel
    return absolute


def below(absolute: str, root: str) -> str | None:
    """`absolute` (a normalized absolute path) relative to `root` (one of `root_forms`, ending in
    `/`): "." for the root itself, None when it lies elsewhere."""
    if absolute.rstrip("/") + "/" == root:
        return "."
    return absolute[len(root):] if absolute.startswith(root) else None


def _strip_worktree(rel: str, markers: tuple[tuple[str, ...], ...]) -> str:
    """`.claude/worktrees/<agent>/src/x.gd` is `src/x.gd` of the project again."""
    if rel.startswith("/") or not markers:
        return rel
    parts = rel.split("/")
    for marker in markers:
        span = len(marker)
        for i in range(len(parts) - span, -1, -1):
            if all(fnmatchcase(parts[i + k], marker[k]) for k in range(span)):
                return "/".join(parts[i + span:]) or "."
    return rel
