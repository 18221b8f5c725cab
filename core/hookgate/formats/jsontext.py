"""Edits of a hooks document (Claude Code's settings.json, Codex's hooks.json) made in its text,
so that everything hookgate does not add stays as the user wrote it, byte for byte: indentation,
key order, line endings, the last newline or its absence.

Install appends hookgate's groups to the end of an event's list (or adds the event, or the
`hooks` object, or the file) in the file's own layout; uninstall cuts exactly that text out again.
What is cut is found by its content (hookgate's handlers), not remembered, so the user's own later
edits anywhere else survive.

One thing text alone cannot say is whether a container hookgate leaves empty was the user's (an
empty `"PreToolUse": []` they wrote) or hookgate's. The two are written differently: a container
hookgate creates has whitespace before its first entry (a new line, or in a one-line file a
space); into a container the user left empty, hookgate writes its entries right after the opening
bracket. Uninstall drops a container it emptied only when it has the first form.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable

_WS = re.compile(r"[ \t\r\n]*")
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")
_STRING = re.compile(r'"(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"')


@dataclass
class Node:
    """One JSON value and where it is: text[start:end]. Objects have `members` (key, key start,
    value), arrays `items`."""
    start: int
    end: int
    kind: str  # "object" | "array" | "scalar"
    members: list[tuple[str, int, "Node"]] = field(default_factory=list)
    items: list["Node"] = field(default_factory=list)
    value: Any = None

    def member(self, key: str) -> "Node | None":
        return next((node for name, _, node in self.members if name == key), None)


class _Parser:
    def __init__(self, text: str) -> None:
        self.text, self.at = text, 0

    def document(self) -> Node:
        self._ws()
        node = self._value()
        self._ws()
        if self.at != len(self.text):
            raise ValueError(f"extra text at offset {self.at}")
        return node

    def _ws(self) -> None:
        self.at = _WS.match(self.text, self.at).end()  # type: ignore[union-attr]

    def _value(self) -> Node:
        start, char = self.at, self.text[self.at:self.at + 1]
        if char == "{":
            node = Node(start, start, "object")
            self.at += 1
            self._ws()
            if self._peek("}"):
                node.end = self.at
                return node
            while True:
                self._ws()
                key_start = self.at
                key = self._string()
                self._ws()
                self._expect(":")
                self._ws()
                node.members.append((key, key_start, self._value()))
                self._ws()
                if self._peek("}"):
                    node.end = self.at
                    return node
                self._expect(",")
        if char == "[":
            node = Node(start, start, "array")
            self.at += 1
            self._ws()
            if self._peek("]"):
                node.end = self.at
                return node
            while True:
                self._ws()
                node.items.append(self._value())
                self._ws()
                if self._peek("]"):
                    node.end = self.at
                    return node
                self._expect(",")
        value: Any
        if char == '"':
            value = self._string()
        else:
            for literal, value in (("true", True), ("false", False), ("null", None)):
                if self.text.startswith(literal, self.at):
                    self.at += len(literal)
                    break
            else:
                match = _NUMBER.match(self.text, self.at)
                if not match or not match.group():
                    raise ValueError(f"unexpected text at offset {self.at}")
                self.at = match.end()
                value = json.loads(match.group())
        return Node(start, self.at, "scalar", value=value)

    def _string(self) -> str:
        match = _STRING.match(self.text, self.at)
        if not match:
            raise ValueError(f"expected a string at offset {self.at}")
        self.at = match.end()
        text: str = json.loads(match.group())
        return text

    def _peek(self, char: str) -> bool:
        if self.text.startswith(char, self.at):
            self.at += 1
            return True
        return False

    def _expect(self, char: str) -> None:
        if not self._peek(char):
            raise ValueError(f"expected {char!r} at offset {self.at}")


def parse(text: str) -> Node:
    return _Parser(text).document()


def value_of(text: str, node: Node) -> Any:
    return json.loads(text[node.start:node.end])


# -- taking hookgate's handlers out ----------------------------------------------------------------

def remove(text: str, is_ours: Callable[[Any], bool]) -> str | None:
    """`text` without hookgate's handlers (and the groups, events, `hooks` object they leave empty
    where hookgate had created them). None: the file was hookgate's alone (it created it)."""
    while True:
        root = parse(text)
        cut = _next_cut(text, root, is_ours)
        if cut is None:
            return text
        if isinstance(cut, str):  # "file": the file was hookgate's alone
            return None
        start, end = cut
        text = text[:start] + text[end:]


def _next_cut(text: str, root: Node, is_ours: Callable[[Any], bool]) -> tuple[int, int] | str | None:
    hooks = root.member("hooks") if root.kind == "object" else None
    if hooks is None or hooks.kind != "object":
        return None
    for _, _, groups in hooks.members:
        if groups.kind != "array":
            continue
        for g, group in enumerate(groups.items):
            handlers = group.member("hooks") if group.kind == "object" else None
            if handlers is None or handlers.kind != "array":
                continue
            mine = [h for h, handler in enumerate(handlers.items) if is_ours(value_of(text, handler))]
            if not mine:
                continue
            if len(mine) < len(handlers.items):  # a group of the user's with a hookgate handler in it
                return _item_span(text, handlers, mine[0])
            return _emptied(text, root, hooks, groups, g)
    return None


def _emptied(text: str, root: Node, hooks: Node, groups: Node, g: int) -> tuple[int, int] | str:
    """The cut that takes group `g` out, with each container it leaves empty that hookgate made."""
    if len(groups.items) > 1 or not _created(text, groups):
        return _item_span(text, groups, g)
    event = next(i for i, (_, _, node) in enumerate(hooks.members) if node is groups)
    if len(hooks.members) > 1 or not _created(text, hooks):
        return _member_span(text, hooks, event)
    index = next(i for i, (_, _, node) in enumerate(root.members) if node is hooks)
    if len(root.members) > 1 or not _created(text, root):
        return _member_span(text, root, index)
    return "file"


def _created(text: str, container: Node) -> bool:
    """Whether the container's first entry comes after whitespace (the form hookgate creates)."""
    return text[container.start + 1:container.start + 2] in (" ", "\t", "\r", "\n")


def _item_span(text: str, array: Node, index: int) -> tuple[int, int]:
    items = array.items
    if index > 0:
        return items[index - 1].end, items[index].end  # ", <item>" after the one before it
    if len(items) > 1:
        return items[0].start, items[1].start  # "<item>, " before the next one
    return items[0].start, items[0].end


def _member_span(text: str, obj: Node, index: int) -> tuple[int, int]:
    members = obj.members
    if index > 0:
        return members[index - 1][2].end, members[index][2].end
    if len(members) > 1:
        return members[0][1], members[1][1]
    return members[0][1], members[0][2].end


# -- putting hookgate's groups in ------------------------------------------------------------------

def new_file(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=2) + "\n"


def append(text: str, event: str, group: dict[str, Any]) -> str:
    """`text` with `group` appended to `hooks[event]`, creating what is missing."""
    root = parse(text)
    if root.kind != "object":
        raise ValueError("the file is not a JSON object")
    hooks = root.member("hooks")
    if hooks is None:
        return _add_member(text, root, "hooks", {event: [group]})
    if hooks.kind != "object":
        raise ValueError("`hooks` is not an object")
    groups = hooks.member(event)
    if groups is None:
        return _add_member(text, hooks, event, [group])
    if groups.kind != "array":
        raise ValueError(f"`hooks.{event}` is not a list")
    return _add_item(text, groups, group)


def _add_member(text: str, obj: Node, key: str, value: Any) -> str:
    if not obj.members:
        return _into_empty(text, obj, f"{json.dumps(key)}: {_one_line(value)}")
    last = obj.members[-1]
    separator = text[_after_comma(text, obj.members[-2][2].end if len(obj.members) > 1 else obj.start + 1):last[1]]
    return _insert(text, last[2].end, separator, f"{json.dumps(key)}: ", value)


def _add_item(text: str, array: Node, value: Any) -> str:
    if not array.items:
        return _into_empty(text, array, _one_line(value))
    last = array.items[-1]
    separator = text[_after_comma(text, array.items[-2].end if len(array.items) > 1 else array.start + 1):last.start]
    return _insert(text, last.end, separator, "", value)


def _after_comma(text: str, at: int) -> int:
    """The offset just after the comma that follows `at` (or `at` itself, right after a bracket)."""
    comma = text.find(",", at)
    return comma + 1 if comma != -1 and not text[at:comma].strip() else at


def _into_empty(text: str, container: Node, entry: str) -> str:
    # right after the bracket: the form uninstall leaves alone (the user's container); what the
    # entry itself brings is in the created form (_one_line), so uninstall takes it out whole
    return text[:container.start + 1] + entry + text[container.start + 1:]


def _insert(text: str, at: int, separator: str, prefix: str, value: Any) -> str:
    """`, <separator><prefix><value>` after offset `at`, the value laid out as the file is: one
    line in a one-line file, else indented one step deeper per level, in the file's line ending."""
    if "\n" not in separator:
        rendered = _one_line(value)
    else:
        newline = "\r\n" if "\r\n" in separator else "\n"
        indent = separator.rsplit("\n", 1)[1]
        rendered = json.dumps(value, indent=_indent_unit(text)).replace("\n", newline + indent)
    return text[:at] + "," + separator + prefix + rendered + text[at:]


def _one_line(value: Any) -> str:
    """JSON on one line with a space inside every bracket: a container hookgate creates has
    whitespace before its first entry in a one-line file too."""
    if isinstance(value, dict) and value:
        return "{ " + ", ".join(f"{json.dumps(k)}: {_one_line(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list) and value:
        return "[ " + ", ".join(_one_line(v) for v in value) + " ]"
    return json.dumps(value)


def _indent_unit(text: str) -> str:
    """The file's indentation step: the smallest indentation of an indented line (two spaces for
    a file that has none)."""
    widths = [m.group(1) for m in re.finditer(r"\n([ \t]+)\S", text)]
    return min(widths, key=len) if widths else "  "
