"""The event names `register_hook` accepts (seed 003: A3S's 25, plus permission_request,
pre_compact and post_compact) and the canonical events each one fires on.

A name mapped to no canonical event is accepted, but no supported runtime emits anything it
stands for, so its hooks never fire; the parity report reads this table to say so.
"""

from __future__ import annotations

EVENT_MAP: dict[str, tuple[str, ...]] = {
    "pre_tool_use": ("PreToolUse",),
    "post_tool_use": ("PostToolUse", "PostToolUseFailure"),  # after the tool ran, whatever its result
    "generate_start": (),
    "generate_end": (),
    "session_start": ("SessionStart",),
    "session_end": ("SessionEnd",),
    "skill_load": (),
    "skill_unload": (),
    "pre_prompt": ("UserPromptSubmit",),
    "post_response": ("Stop",),  # the agent's response to the prompt is complete
    "on_error": ("PostToolUseFailure",),
    "on_success": (),
    "pre_context_perception": (),
    "post_context_perception": (),
    "pre_memory_recall": (),
    "post_memory_recall": (),
    "pre_planning": (),
    "post_planning": (),
    "pre_reasoning": (),
    "post_reasoning": (),
    "on_rate_limit": (),
    "on_confirmation": (),
    "intent_detection": (),
    "pre_run_control": (),
    "post_run_control": ("Interrupt",),  # Codex: the user's interrupt was applied to the turn
    "permission_request": ("PermissionRequest",),
    "pre_compact": ("PreCompact",),
    "post_compact": ("PostCompact",),
}

# A handler that raises or times out on one of these blocks; on the others it is skipped
GATING = frozenset({"pre_tool_use", "permission_request", "pre_compact", "pre_prompt", "pre_planning",
                    "pre_run_control"})

# where a hook may hand back a rewritten tool input (before the tool has any side effect)
MODIFIES_TOOL_INPUT = frozenset({"pre_tool_use", "permission_request"})

NEVER_FIRES = tuple(name for name, canonical in EVENT_MAP.items() if not canonical)
