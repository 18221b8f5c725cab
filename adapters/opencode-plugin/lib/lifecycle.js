// Generated from core/hookgate/lifecycle.toml by `python -m hookgate.lifecycle`; do not edit.
// Per canonical event the plugin delivers: the OpenCode hook it comes from, whether it fails
// closed when the core cannot answer, and the field its gates' matchers test.
export const LIFECYCLE = {
    SessionStart: { hook: "event session.created (root session)", failClosed: false, matchField: "source" },
    UserPromptSubmit: { hook: "chat.message", failClosed: false, matchField: null },
    PreToolUse: { hook: "tool.execute.before", failClosed: true, matchField: "tool_name" },
    PermissionRequest: { hook: "event permission.asked", failClosed: true, matchField: "tool_name" },
    PostToolUse: { hook: "tool.execute.after", failClosed: false, matchField: "tool_name" },
    PostToolUseFailure: { hook: "event message.part.updated (tool part in state error)", failClosed: false, matchField: "tool_name" },
    SubagentStart: { hook: "event session.created (child session)", failClosed: false, matchField: "agent_type" },
    SubagentStop: { hook: "experimental.text.complete / event session.idle (child session)", failClosed: false, matchField: "agent_type" },
    Stop: { hook: "experimental.text.complete / event session.idle (root session)", failClosed: false, matchField: null },
    PreCompact: { hook: "experimental.session.compacting", failClosed: false, matchField: "trigger" },
    PostCompact: { hook: "event session.compacted", failClosed: false, matchField: "trigger" },
    SessionEnd: { hook: "dispose / event session.deleted (root session)", failClosed: false, matchField: "reason" },
};
