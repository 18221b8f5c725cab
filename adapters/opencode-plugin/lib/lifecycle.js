// Generated from core/hookgate/lifecycle.toml by `python -m hookgate.lifecycle`; do not edit.
// Per canonical event the plugin delivers: the OpenCode hook it comes from, its deadline, whether
// it fails closed when the core cannot answer, and the field its gates' matchers test.

export const LIFECYCLE = {
  SessionStart: { hook: "event session.created (root session)", timeoutMs: 120000, failClosed: false, matchField: "source" },
  UserPromptSubmit: { hook: "chat.message", timeoutMs: 120000, failClosed: false, matchField: null },
  PreToolUse: { hook: "tool.execute.before", timeoutMs: 120000, failClosed: true, matchField: "tool_name" },
  PermissionRequest: { hook: "event permission.asked", timeoutMs: 120000, failClosed: true, matchField: "tool_name" },
  PostToolUse: { hook: "tool.execute.after", timeoutMs: 120000, failClosed: false, matchField: "tool_name" },
  SubagentStart: { hook: "event session.created (child session)", timeoutMs: 120000, failClosed: false, matchField: "agent_type" },
  SubagentStop: { hook: "experimental.text.complete / event session.idle (child session)", timeoutMs: 120000, failClosed: false, matchField: "agent_type" },
  Stop: { hook: "experimental.text.complete / event session.idle (root session)", timeoutMs: 120000, failClosed: false, matchField: null },
  PreCompact: { hook: "experimental.session.compacting", timeoutMs: 120000, failClosed: false, matchField: "trigger" },
}
