import assert from "node:assert/strict"
import { test } from "node:test"

import { failVerdict, matches } from "../lib/failmode.js"

test("matchers follow Claude Code's semantics", () => {
  assert.ok(matches("", "Write") && matches("*", "Write"))
  assert.ok(matches("Write|Edit", "Edit") && !matches("Write|Edit", "EditNotebook"))
  assert.ok(matches("^mcp__.*", "mcp__x__y") && !matches("^mcp__.*", "Bash"))
  assert.ok(matches("Write", "Write") && !matches("Write", undefined))
})

const caps = { events: {
  PreToolUse: { fail_mode: "closed", gates: [{ id: "check_file_permissions", matcher: "Write|Edit", fail_mode: "closed" },
    { id: "note", matcher: "", fail_mode: "open" }] },
  Stop: { fail_mode: "open", gates: [{ id: "check_completion", matcher: "", fail_mode: "open" }] },
} }

test("a closed gate that matches blocks, with the reason naming it", () => {
  const verdict = failVerdict(caps, { hook_event_name: "PreToolUse", tool_name: "Write" }, "the core exited (code 1)")
  assert.equal(verdict.kind, "block")
  assert.match(verdict.reason, /could not decide this PreToolUse \(the core exited \(code 1\)\); check_file_permissions fail closed/)
})

test("no closed gate for the tool, or an open event: allowed, and the user is told", () => {
  const read = failVerdict(caps, { hook_event_name: "PreToolUse", tool_name: "Read" }, "timeout")
  assert.equal(read.kind, "allow")
  assert.match(read.message, /goes ahead/)
  assert.equal(failVerdict(caps, { hook_event_name: "Stop" }, "timeout").kind, "allow")
})

test("before the core ever answered, the gating events fail closed", () => {
  assert.equal(failVerdict(undefined, { hook_event_name: "PreToolUse", tool_name: "Read" }, "x").kind, "block")
  assert.equal(failVerdict(undefined, { hook_event_name: "PermissionRequest", tool_name: "Bash" }, "x").kind, "block")
  assert.equal(failVerdict(undefined, { hook_event_name: "PostToolUse", tool_name: "Write" }, "x").kind, "allow")
})
