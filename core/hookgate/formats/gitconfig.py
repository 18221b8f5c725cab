"""git's config files (.git/config), read far enough to list their entries: what the effect check
needs to tell a change that only sets inert keys (`git init`, `git remote add`) from one that
names a program git runs. Anything this reader does not understand makes the whole file
unreadable (None), so a file git reads in a way this reader does not is never taken as inert.

    [section]              keys are `section.key`
    [section "sub"]        `section.sub.key` (the subsection keeps its case; sections and keys do not)
    key = value            `key` alone means true; `#` and `;` start a comment outside quotes,
                           and a backslash at the end of a line continues the value
"""

from __future__ import annotations

import re
from fnmatch import fnmatchcase
from typing import Iterable

_HEADER = re.compile(r'\[([A-Za-z0-9.-]+)(?:[ \t]+"((?:[^"\\\n]|\\.)*)")?\]')
_KEY = re.compile(r"([A-Za-z][A-Za-z0-9-]*)[ \t]*(=?)")
_BLANK = " \t\r"  # what git takes for white space; any other character is text
_UNESCAPE = re.compile(r"\\(.)")


def entries(text: str) -> list[tuple[str, str]] | None:
    """Every (name, value) the file sets, in order; None when it cannot be read as git would."""
    found: list[tuple[str, str]] = []
    section: str | None = None
    lines = iter(text.split("\n"))
    for line in lines:
        rest = line.strip(_BLANK)
        if not rest or rest[0] in "#;":
            continue
        if rest[0] == "[":
            header = _HEADER.match(rest)
            if header is None:
                return None
            name, sub = header.group(1).lower(), header.group(2)
            section = name if sub is None else name + "." + _UNESCAPE.sub(r"\1", sub)  # [a.b] is a.b too
            rest = rest[header.end():].strip(_BLANK)  # a key may follow the header on its line
            if not rest or rest[0] in "#;":
                continue
        key = _KEY.match(rest)
        if key is None or section is None:
            return None
        after = rest[key.end():]
        if key.group(2):
            value, more = _value(after)
        elif after.strip(_BLANK) and after.strip(_BLANK)[0] not in "#;":
            return None  # text after a bare key that is not a comment
        else:
            value, more = "true", False
        while more:
            following = next(lines, None)
            if following is None:
                return None
            tail, more = _value(following)
            value += tail
        found.append((f"{section}.{key.group(1).lower()}", value))
    return found


def _value(text: str) -> tuple[str, bool]:
    """A value's text up to its comment, unquoted and unescaped, and whether the line continues
    (an unescaped backslash at its end)."""
    out: list[str] = []
    quoted = False
    chars = iter(text.strip(_BLANK))
    for char in chars:
        if char == "\\":
            escaped = next(chars, None)
            if escaped is None:
                return "".join(out), True
            out.append({"n": "\n", "t": "\t", "b": "\b"}.get(escaped, escaped))
        elif char == '"':
            quoted = not quoted
        elif char in "#;" and not quoted:
            break
        else:
            out.append(char)
    return "".join(out).strip(_BLANK), False


def inert(names: Iterable[str], patterns: list[str]) -> bool:
    """Whether every name is one of `patterns` (fnmatch, on lower-case `section.sub.key`): the keys
    that name no program git runs ([pipeline.protect] git_inert_keys)."""
    return all(any(fnmatchcase(name.lower(), pattern) for pattern in patterns) for name in names)


def is_config(path: str) -> bool:
    """Whether `path` names a file git reads as a config: a repository's (`.git/config`, a
    submodule's or worktree's below `.git`, `config.worktree`) or the user's (`~/.gitconfig`,
    `~/.config/git/config`)."""
    parts = path.split("/")
    return parts[-1] == ".gitconfig" or (
        parts[-1] in ("config", "config.worktree") and (".git" in parts or parts[-2:-1] == ["git"]))
