"""hooks.json (seed 002, the Bricks format): the files, their events, and reading them.

    ~/.hookgate/hooks.json     global, read first
    .hookgate/hooks.json       the project's

    {"hooks": {"PreToolUse": [{"matcher": "Bash|Write",
                               "hooks": [{"type": "command", "command": "node check.js", "timeout": 30}]}]}}

The outer `hooks` key is optional. The two files are merged; a handler with the same event,
matcher and command as an earlier one runs once (the first one's timeout holds). A broken entry
is skipped and reported as a Problem; the rest of the file still runs.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, ClassVar, Iterable, Literal

import msgspec

from ..engine.matcher import Matcher, compile_matcher
from ..store import locked
# in the package itself: a hook call looks for the files without importing this module
from . import GLOBAL_FILE as GLOBAL_FILE, hook_files as hook_files

# seed 002's events and whether a handler can block them; the matcher is tested against the
# canonical event's own match field (tool name, source, agent type, trigger; none for the others)
EVENTS: dict[str, bool] = {
    "SessionStart": False,
    "UserPromptSubmit": True,
    "PreToolUse": True,
    "PostToolUse": False,
    "Stop": False,
    "SubagentStart": False,
    "SubagentStop": False,
    "PreCompact": False,
    "PostCompact": False,
    "GoalUpdate": False,  # Bricks' goal lifecycle: no supported runtime emits it, so it never fires
}
DEFAULT_TIMEOUT = 60.0
_HANDLER_KEYS = {"type", "command", "timeout"}
_GROUP_KEYS = {"matcher", "hooks"}


class Handler(msgspec.Struct, frozen=True, kw_only=True):
    event: str
    matcher: str
    command: str
    timeout: float = DEFAULT_TIMEOUT
    file: str = ""  # where it was declared, for messages and records
    where: str = ""

    @property
    def key(self) -> tuple[str, str, str]:
        """What makes two handlers the same one (seed 002's dedupe)."""
        return (self.event, "" if self.matcher == "*" else self.matcher, self.command)

    def compiled_matcher(self) -> Matcher:
        return compile_matcher(self.matcher)


class Problem(msgspec.Struct, frozen=True, kw_only=True):
    """One thing wrong in a file. Reads as a `hookgate doctor` finding (status, message, fix)."""

    severity: Literal["error", "warning"]  # error: the entry does not run; warning: it runs
    file: str
    where: str  # a JSON path in the file, or what the problem concerns
    detail: str

    status: ClassVar[str] = "fail"

    @property
    def message(self) -> str:
        at = f" - at `{self.where}`" if self.where else ""
        return f"{self.file}: {self.detail}{at}"

    @property
    def fix(self) -> str:
        return f"edit {self.file}" + (f" at `{self.where}`" if self.where else "")

    def __str__(self) -> str:
        return self.message


class HookFiles(msgspec.Struct, frozen=True):
    handlers: tuple[Handler, ...] = ()
    problems: tuple[Problem, ...] = ()

    @property
    def errors(self) -> tuple[Problem, ...]:
        return tuple(p for p in self.problems if p.severity == "error")


def load(paths: Iterable[Path]) -> HookFiles:
    handlers: dict[tuple[str, str, str], Handler] = {}
    problems: list[Problem] = []
    for path in paths:
        reader = _Reader(str(path), problems)
        for handler in reader.read(path):
            handlers.setdefault(handler.key, handler)
    return HookFiles(tuple(handlers.values()), tuple(problems))


class _Reader:
    """Reads one file, noting a Problem for each entry it has to skip or ignore."""

    def __init__(self, file: str, problems: list[Problem]) -> None:
        self.file = file
        self.problems = problems

    def problem(self, where: str, message: str, severity: Literal["error", "warning"] = "error") -> None:
        self.problems.append(Problem(severity=severity, file=self.file, where=where, detail=message))

    def read(self, path: Path) -> list[Handler]:
        try:
            raw = locked.read(path)  # without blocking: a FIFO there must not hang every hook
        except locked.NotAFile:
            self.problem("", "not a regular file; none of its hooks run")
            return []
        except OSError as exc:
            self.problem("", f"cannot read: {exc.strerror}; none of its hooks run")
            return []
        try:
            top = msgspec.json.decode(raw) if raw.strip() else {}
        except msgspec.DecodeError as exc:
            self.problem("", f"not valid JSON ({exc}); none of its hooks run")
            return []
        if not isinstance(top, dict):
            self.problem("$", f"expected an object of events, got {_kind(top)}; none of its hooks run")
            return []
        events, base = top, "$"
        if isinstance(top.get("hooks"), dict):
            events, base = top["hooks"], "$.hooks"
            for name in sorted(set(top) & set(EVENTS)):
                self.problem(f"$.{name}", "an event beside `hooks` is ignored; move it inside `hooks`")
        elif "hooks" in top:
            self.problem("$.hooks", f"expected an object of events, got {_kind(top['hooks'])}; none of its hooks run")
            return []
        found: list[Handler] = []
        for event, groups in events.items():
            where = f"{base}.{event}"
            if event not in EVENTS:
                if base == "$" and isinstance(groups, str):
                    continue  # a top-level note such as "description", not an event
                self.problem(where, f"unknown event {event!r}{_did_you_mean(event, EVENTS)}; known: {', '.join(EVENTS)}")
                continue
            if not isinstance(groups, list):
                self.problem(where, f"expected a list of matcher groups, got {_kind(groups)}")
                continue
            for i, group in enumerate(groups):
                found += self.group(event, group, f"{where}[{i}]")
        return found

    def group(self, event: str, group: Any, where: str) -> list[Handler]:
        if not isinstance(group, dict):
            self.problem(where, f"expected a matcher group object, got {_kind(group)}")
            return []
        for key in sorted(set(group) - _GROUP_KEYS):
            self.problem(f"{where}.{key}", f"unknown key {key!r} is ignored; a group has: matcher, hooks", "warning")
        matcher = group.get("matcher")
        if matcher is None:
            matcher = ""
        if not isinstance(matcher, str):
            self.problem(f"{where}.matcher", f"bad matcher: expected a string, got {_kind(matcher)}")
            return []
        try:
            compile_matcher(matcher)
        except re.error as exc:
            self.problem(f"{where}.matcher", f"bad matcher {matcher!r}: not a valid regular expression ({exc})")
            return []
        handlers = group.get("hooks")
        if not isinstance(handlers, list) or not handlers:
            self.problem(f"{where}.hooks", "a matcher group needs a non-empty `hooks` list of handlers")
            return []
        found = []
        for j, entry in enumerate(handlers):
            handler = self.handler(event, matcher, entry, f"{where}.hooks[{j}]")
            if handler is not None:
                found.append(handler)
        return found

    def handler(self, event: str, matcher: str, entry: Any, where: str) -> Handler | None:
        if not isinstance(entry, dict):
            self.problem(where, f"expected a handler object, got {_kind(entry)}")
            return None
        kind = entry.get("type", "command")
        if kind != "command":
            self.problem(f"{where}.type", f"handler type {kind!r} is not supported; only \"command\"")
            return None
        command = entry.get("command")
        if not isinstance(command, str) or not command.strip():
            self.problem(f"{where}.command", "missing command: a handler needs a non-empty `command` string")
            return None
        timeout = entry.get("timeout", DEFAULT_TIMEOUT)
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
            self.problem(f"{where}.timeout", f"the timeout must be a positive number of seconds, got {timeout!r}")
            return None
        for key in sorted(set(entry) - _HANDLER_KEYS):
            self.problem(f"{where}.{key}", f"unknown key {key!r} is ignored; a handler has: type, command, timeout",
                         "warning")
        return Handler(event=event, matcher=matcher, command=command, timeout=float(timeout),
                       file=self.file, where=where)


def _did_you_mean(name: str, known: Iterable[str]) -> str:
    folded = re.sub(r"[\W_]", "", name).lower()
    match = [k for k in known if k.lower() == folded]
    return f" (did you mean {match[0]!r}?)" if match else ""


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    return {dict: "an object", list: "a list", str: "a string", type(None): "null"}.get(type(value), type(value).__name__)
