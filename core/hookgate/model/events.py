"""The canonical events: Claude Code's names and fields, plus where the event came from.

Every adapter decodes its runtime's payload into one of these; gates only ever see these.
Unknown fields are ignored (runtimes add fields often) and unknown event names become an
`UnknownEvent`, so a newer runtime never crashes an older hookgate.
"""

from typing import Any, ClassVar, Literal, Union, get_args

import msgspec

from ..runtimes import NAMES

Runtime = str  # one of hookgate.runtimes.NAMES, checked when an event is made
Identity = Literal["given", "inferred"]


class Event(msgspec.Struct, frozen=True, kw_only=True, tag_field="hook_event_name"):
    """Fields every event carries.

    `agent_id` is None on the main agent and set inside a subagent. `identity` says whether
    the runtime gave that identity ("given") or hookgate reconstructed it ("inferred", OpenCode's
    child-session map).
    """

    # the payload field a hook matcher is tested against (Claude semantics); None: matchers ignored
    match_field: ClassVar[str | None] = None

    session_id: str = ""
    cwd: str = ""
    runtime: Runtime = "claude"
    agent_id: str | None = None
    agent_type: str | None = None
    identity: Identity = "given"
    transcript_path: str | None = None
    permission_mode: str | None = None
    turn_id: str | None = None

    def __post_init__(self) -> None:
        if self.runtime not in NAMES:
            raise ValueError(f"unknown runtime {self.runtime!r}; known: {', '.join(NAMES)}")

    @property
    def name(self) -> str:
        return str(type(self).__struct_config__.tag)

    @property
    def in_subagent(self) -> bool:
        return bool(self.agent_id)

    @property
    def match_value(self) -> str | None:
        return getattr(self, self.match_field) if self.match_field else None


class ToolEvent(Event, frozen=True, kw_only=True):
    """The events about one tool call (PreToolUse, PermissionRequest, PostToolUse,
    PostToolUseFailure): `isinstance(event, ToolEvent)` narrows to one with a tool_name and input."""

    match_field: ClassVar[str | None] = "tool_name"

    tool_name: str
    tool_input: dict[str, Any] = {}
    tool_use_id: str | None = None


class SessionStart(Event, frozen=True, kw_only=True, tag="SessionStart"):
    match_field: ClassVar[str | None] = "source"
    source: str = "startup"
    model: str | None = None


class SessionEnd(Event, frozen=True, kw_only=True, tag="SessionEnd"):
    match_field: ClassVar[str | None] = "reason"
    reason: str = "other"


class UserPromptSubmit(Event, frozen=True, kw_only=True, tag="UserPromptSubmit"):
    prompt: str = ""


class PreToolUse(ToolEvent, frozen=True, kw_only=True, tag="PreToolUse"):
    pass


class PermissionRequest(ToolEvent, frozen=True, kw_only=True, tag="PermissionRequest"):
    pass


class PostToolUse(ToolEvent, frozen=True, kw_only=True, tag="PostToolUse"):
    tool_response: Any = None


class PostToolUseFailure(ToolEvent, frozen=True, kw_only=True, tag="PostToolUseFailure"):
    error: str = ""
    is_interrupt: bool = False


class SubagentStart(Event, frozen=True, kw_only=True, tag="SubagentStart"):
    match_field: ClassVar[str | None] = "agent_type"


class SubagentStop(Event, frozen=True, kw_only=True, tag="SubagentStop"):
    match_field: ClassVar[str | None] = "agent_type"
    stop_hook_active: bool = False
    agent_transcript_path: str | None = None
    last_assistant_message: str | None = None


class Stop(Event, frozen=True, kw_only=True, tag="Stop"):
    stop_hook_active: bool = False
    last_assistant_message: str | None = None
    # Claude Code: subagents (and shells) still running in the background; the turn resumes when they end
    background_tasks: list[dict[str, Any]] = []


class PreCompact(Event, frozen=True, kw_only=True, tag="PreCompact"):
    match_field: ClassVar[str | None] = "trigger"
    trigger: str = "auto"
    custom_instructions: str | None = None


class PostCompact(Event, frozen=True, kw_only=True, tag="PostCompact"):
    match_field: ClassVar[str | None] = "trigger"
    trigger: str = "auto"
    compact_summary: str | None = None


class Notification(Event, frozen=True, kw_only=True, tag="Notification"):
    match_field: ClassVar[str | None] = "notification_type"
    message: str = ""
    title: str | None = None
    notification_type: str = ""


class Interrupt(Event, frozen=True, kw_only=True, tag="Interrupt"):
    """Codex only: the user interrupted a turn."""


class UnknownEvent(Event, frozen=True, kw_only=True, tag="Unknown"):
    """An event name hookgate does not know; kept whole so gates and logs can still see it."""

    event_name: str = ""
    fields: dict[str, Any] = {}

    @property
    def name(self) -> str:
        return self.event_name


# The events hookgate knows, as one type: msgspec reads any of them in one pass, told apart by
# their tag (hook_event_name)
KnownEvent = Union[
    SessionStart, SessionEnd, UserPromptSubmit, PreToolUse, PermissionRequest, PostToolUse,
    PostToolUseFailure, SubagentStart, SubagentStop, Stop, PreCompact, PostCompact,
    Notification, Interrupt,
]

KNOWN_EVENTS: dict[str, type[Event]] = {str(cls.__struct_config__.tag): cls for cls in get_args(KnownEvent)}

# Each known event's name as a class attribute, in front of Event.name: a decision asks it four
# times, and the property's look at the struct's config took 79 ns against 13 (timed apart).
for _name, _cls in KNOWN_EVENTS.items():
    _cls.name = _name  # type: ignore[assignment]
del _name, _cls

TOOL_EVENTS = frozenset({"PreToolUse", "PermissionRequest", "PostToolUse", "PostToolUseFailure"})
