"""Registered hooks (seed 003): what a registration holds, and the registry it goes into.

`register_hook`, `hook_count` and `unregister_hook` act on the *current* registry: while hookgate
loads a project's policies, a fresh one (see load.py), so the hooks in force are always exactly
what the policy files say; at any other time the process's own, which every load starts from.
"""

from __future__ import annotations

import re
import threading
from contextlib import contextmanager
from contextvars import ContextVar
from fnmatch import fnmatchcase
from typing import Any, Callable, Iterator

import msgspec

from ..errors import GateError, HookgateError
from ..model.events import Event, ToolEvent
from ..model.tool_inputs import PATH_FIELDS
from ..model.tools import ALIASES, SHELL_TOOLS, canonical_tool
from ..paths import matches as path_matches, readings
from .events import EVENT_MAP

Handler = Callable[[Event], Any]


class HookError(GateError):
    """`register_hook` was called wrongly; the message names the hook and what is at fault."""

    def __init__(self, message: str, hook_id: object) -> None:
        HookgateError.__init__(self, f"hook {hook_id!r}: {message}")
        self.gate_id = str(hook_id)


class HookMatcher(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Every field set must match; an unset field matches anything. An event that has nothing for
    a set field to look at (no tool, no shell command, no path, no skill) does not match."""

    tool: str | None = None  # a canonical tool name (Bash, Write, ...), compared ignoring case
    command_pattern: str | None = None  # regular expression searched in a shell command (Bash, Monitor)
    # glob over the project-relative path a tool works on, in the pipeline's path language (hookgate/paths.py)
    path_pattern: str | None = None
    session_id: str | None = None
    skill: str | None = None  # glob over the name of the skill the Skill tool loads

    def matches(self, event: Event, project_root: str) -> bool:
        if self.session_id is not None and event.session_id != self.session_id:
            return False
        tool = event.tool_name if isinstance(event, ToolEvent) else None
        tool_input = event.tool_input if isinstance(event, ToolEvent) else {}
        if self.tool is not None and (tool or "").lower() != canonical_lower(self.tool):
            return False
        if self.command_pattern is not None:
            command = tool_input.get("command") if tool in SHELL_TOOLS else None
            if not isinstance(command, str) or not re.search(self.command_pattern, command):
                return False
        if self.path_pattern is not None and not self._path_matches(event, tool_input, project_root):
            return False
        if self.skill is not None:
            skill = tool_input.get("skill") if tool == "Skill" else None
            if not isinstance(skill, str) or not fnmatchcase(skill, self.skill):
                return False
        return True

    def _path_matches(self, event: Event, tool_input: dict[str, Any], root: str) -> bool:
        path = next((v for f in PATH_FIELDS if isinstance(v := tool_input.get(f), str) and v), None)
        if path is None:
            return False
        try:
            spellings = readings(path, event.cwd or root, [root])
        except ValueError:  # a NUL byte: no file has that name
            return False
        return any(path_matches(rel, self.path_pattern or "") for rel in spellings)


def canonical_lower(tool: str) -> str:
    """A tool name as the canonical one, in lower case: "task" and "Task" are "agent"."""
    folded = tool.lower()
    return next((canonical_tool(old).lower() for old in ALIASES if old.lower() == folded), folded)


class HookOptions(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    priority: int = 100  # lower runs first; equal priorities run in id order
    timeout_ms: int = 30_000


class Hook(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    event: str
    matcher: HookMatcher
    options: HookOptions
    handler: Handler
    origin: str = ""  # the policy file or module that registered it

    @property
    def order(self) -> tuple[int, str]:
        return (self.options.priority, self.id)


class Registry:
    def __init__(self, hooks: tuple[Hook, ...] = ()) -> None:
        self._hooks = {hook.id: hook for hook in hooks}
        self._lock = threading.Lock()
        self.origin = ""  # what is being loaded into it, stamped on each hook

    def add(self, hook: Hook) -> Hook:
        with self._lock:
            if hook.id in self._hooks:
                where = self._hooks[hook.id].origin
                raise HookError(f"already registered{f' by {where}' if where else ''}; unregister_hook it first", hook.id)
            self._hooks[hook.id] = hook
        return hook

    def remove(self, hook_id: str) -> bool:
        with self._lock:
            return self._hooks.pop(hook_id, None) is not None

    def __len__(self) -> int:
        return len(self._hooks)

    def hooks(self) -> tuple[Hook, ...]:
        """In run order: priority, then id."""
        with self._lock:
            return tuple(sorted(self._hooks.values(), key=lambda h: h.order))

    def copy(self) -> "Registry":
        return Registry(self.hooks())

    def reset(self, hooks: tuple[Hook, ...]) -> None:
        """Back to exactly `hooks` (what it held before a policy that failed half-way)."""
        with self._lock:
            self._hooks = {hook.id: hook for hook in hooks}


PROCESS = Registry()
_loading: ContextVar[Registry | None] = ContextVar("hookgate_loading_registry", default=None)


def current() -> Registry:
    registry = _loading.get()
    return PROCESS if registry is None else registry


@contextmanager
def loading_into(registry: Registry) -> Iterator[None]:
    """Make `registry` the current one (used by load.py around a policy's code)."""
    token = _loading.set(registry)
    try:
        yield
    finally:
        _loading.reset(token)


def register_hook(
    id: str,
    event: str,
    matcher: HookMatcher | dict[str, Any] | None = None,
    options: HookOptions | dict[str, Any] | None = None,
    handler: Handler | None = None,
) -> Hook:
    """Register `handler` to run on `event` (one of EVENT_MAP's names) when `matcher` fits.

    The handler gets the canonical event and returns None or a result dict (see results.py).
    Raises HookError naming the argument at fault; nothing is registered then.
    """
    if not isinstance(id, str) or not id.strip():
        raise HookError("the id must be a non-empty string", id)
    if event not in EVENT_MAP:
        raise HookError(f"unknown event {event!r}; known: {', '.join(EVENT_MAP)}", id)
    if not callable(handler):
        raise HookError(f"the handler must be callable, got {type(handler).__name__}", id)
    hook_matcher = _convert(matcher, HookMatcher, "matcher", id)
    if hook_matcher.command_pattern is not None:
        try:
            re.compile(hook_matcher.command_pattern)
        except re.error as exc:
            raise HookError(f"matcher.command_pattern {hook_matcher.command_pattern!r} is not a valid regular "
                            f"expression ({exc})", id) from None
    hook_options = _convert(options, HookOptions, "options", id)
    if hook_options.timeout_ms <= 0:
        raise HookError(f"options.timeout_ms must be positive, got {hook_options.timeout_ms}", id)
    registry = current()
    return registry.add(Hook(id=id, event=event, matcher=hook_matcher, options=hook_options, handler=handler,
                             origin=registry.origin))


def hook_count() -> int:
    return len(current())


def unregister_hook(id: str) -> bool:
    """True when a hook with that id was registered (and is now gone)."""
    return current().remove(id)


def _convert(value: Any, cls: type[msgspec.Struct], what: str, hook_id: object) -> Any:
    if value is None:
        return cls()
    if isinstance(value, cls):
        return value
    try:
        return msgspec.convert(value, cls)
    except msgspec.ValidationError as exc:
        message = str(exc).replace("`$", f"`{what}")
        known = ", ".join(cls.__struct_fields__)
        raise HookError(f"invalid {what}: {message} (known: {known})", hook_id) from None
