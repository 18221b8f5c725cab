"""Line edits of a Codex config.toml that keep everything else as the user wrote it, and that
hookgate can take back exactly.

Python reads TOML but does not write it, and Codex's config.toml is the user's own file (comments,
order, layout), so hookgate edits lines rather than re-serialising the file. Every line it adds or
changes ends with a mark, `# hookgate`, and a changed line remembers what it replaced:

    [features]
    hooks = true  # hookgate (was: hooks = false)

so uninstall restores the old line and deletes the added ones. Every result is parsed again before
it is written; an edit that would leave the file unreadable is refused and nothing changes.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any, Callable

from hookgate.store import locked

MARK = "# hookgate"
_MARKED = re.compile(r"\s+# hookgate(?: \(was: (?P<was>.*)\))?$")
_HEADER = re.compile(r"^\s*\[(?!\[)")
_ARRAY_HEADER = re.compile(r"^\s*\[\[")
_BARE = re.compile(r"[A-Za-z0-9_-]+")

Key = tuple[str, ...]


class TomlFile:
    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            text = locked.read(path).decode()
        except UnicodeDecodeError:
            raise ValueError(f"{path} is not UTF-8 text; fix or move it, nothing was changed") from None
        self.data = self._parse(text)
        # the file's own line ending and last newline are kept, so that taking back every edit
        # gives back the very bytes (split on the ending alone: splitlines would also split
        # inside a comment at a form feed or U+2028)
        self.newline = "\r\n" if "\r\n" in text else "\n"
        self.final_newline = text.endswith("\n") or not text
        self.lines = text.split(self.newline)
        if self.lines and self.lines[-1] == "":
            self.lines.pop()
        self._before = list(self.lines)

    # -- reading -------------------------------------------------------------------------------
    def table(self, key: Key) -> dict[str, Any] | None:
        node: Any = self.data
        for part in key:
            node = node.get(part) if isinstance(node, dict) else None
        return node if isinstance(node, dict) else None

    # -- editing -------------------------------------------------------------------------------
    def set(self, table: Key, name: str, value: Any) -> None:
        """`name = value` in `[table]`: the line replaced (and remembered) or added, marked."""
        line = f"{_key((name,))} = {_literal(value)}"
        span = self._span(table)
        if span is None:
            # no blank line before it: one that install added could not be told from the user's
            self.lines += [f"[{_key(table)}]  {MARK}", f"{line}  {MARK}"]
            return
        start, end = span
        assignment = re.compile(rf"^\s*{re.escape(_key((name,)))}\s*=")
        for i in range(start + 1, end):
            if assignment.match(self.lines[i]):
                old = self.lines[i]
                if _value_of(old, name) == value:
                    return
                was = _MARKED.search(old)
                remembered = was.group("was") if was else old
                self.lines[i] = f"{line}  {MARK}" + (f" (was: {remembered})" if remembered else "")
                return
        self.lines.insert(start + 1, f"{line}  {MARK}")

    def rename_table(self, old: Key, new: Key) -> None:
        span = self._span(old)
        if span is not None:
            header = self.lines[span[0]]
            mark = _MARKED.search(header)
            self.lines[span[0]] = f"[{_key(new)}]" + (mark.group(0) if mark else "")

    def unmark(self, selects: Callable[[Key], bool]) -> None:
        """Take back every marked line in the tables `selects` picks: changed lines get their old
        text back, added lines go, and an added header goes once its table holds nothing else."""
        kept: list[str] = []
        header_at: int | None = None  # index in `kept` of a marked header of a selected table
        selected = False
        for line in self.lines:
            key = _header_key(line)
            if key is not None:
                self._drop_if_empty(kept, header_at)
                selected = selects(key)
                header_at = len(kept) if selected and _MARKED.search(line) else None
                kept.append(line)
                continue
            mark = _MARKED.search(line) if selected else None
            if mark is None:
                kept.append(line)
            elif mark.group("was"):
                kept.append(mark.group("was"))
        self._drop_if_empty(kept, header_at)
        self.lines = kept

    # -- writing -------------------------------------------------------------------------------
    def text(self) -> str:
        """The edited file; raises ValueError when it would not parse."""
        text = self.newline.join(self.lines) + (self.newline if self.final_newline else "") if self.lines else ""
        try:
            tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"{self.path}: hookgate could not edit it safely ({exc}); nothing was changed") from None
        return text

    def save(self) -> bool:
        """Write the edits, if any (a file left empty is removed)."""
        if self.lines == self._before:
            return False
        text = self.text()
        if not text.strip():
            self.path.unlink(missing_ok=True)
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            locked.replace(self.path, text.encode())
        self._before = list(self.lines)
        return True

    # -- helpers -------------------------------------------------------------------------------
    def _span(self, table: Key) -> tuple[int, int] | None:
        """(header line, end) of `[table]`; None when the file has no such header."""
        start = None
        for i, line in enumerate(self.lines):
            if _header_key(line) is not None or _ARRAY_HEADER.match(line):
                if start is not None:
                    return start, i
                if _header_key(line) == table:
                    start = i
        return (start, len(self.lines)) if start is not None else None

    def _drop_if_empty(self, kept: list[str], header_at: int | None) -> None:
        """Drop an added header whose table holds no key any more; blank lines and comments the
        user wrote below it stay."""
        if header_at is None:
            return
        body = kept[header_at + 1:]
        if any(line.strip() and not line.lstrip().startswith("#") for line in body):
            return
        kept[header_at:] = body

    def _parse(self, text: str) -> dict[str, Any]:
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"{self.path} is not valid TOML ({exc}); fix or move it, nothing was changed") from None


def _value_of(line: str, name: str) -> Any:
    try:
        return tomllib.loads(line).get(name)
    except tomllib.TOMLDecodeError:  # a value spread over several lines
        return None


def _header_key(line: str) -> Key | None:
    """The key of a `[table]` header line (quoted and dotted parts as TOML reads them)."""
    if not _HEADER.match(line):
        return None
    try:
        node: Any = tomllib.loads(line)
    except tomllib.TOMLDecodeError:
        return None
    key: list[str] = []
    while isinstance(node, dict) and len(node) == 1:
        name, node = next(iter(node.items()))
        key.append(name)
    return tuple(key)


def _key(parts: Key) -> str:
    return ".".join(part if _BARE.fullmatch(part) else json.dumps(part) for part in parts)


def _literal(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    raise TypeError(f"no TOML literal for {type(value).__name__}")
