// The OpenCode <-> canonical mapping, on the payloads captured from a real OpenCode 1.18.33 run.
import assert from "node:assert/strict"
import { readFileSync } from "node:fs"
import path from "node:path"
import { test } from "node:test"

import { Sessions } from "../lib/sessions.js"
import * as t from "../lib/translate.js"
import { PAYLOADS } from "../test-support/support.js"

const captured = (name) => readFileSync(path.join(PAYLOADS, `opencode_${name}.hooks.jsonl`), "utf8")
  .split("\n").filter(Boolean).map((line) => JSON.parse(line))
const main = { root: "ses_main", agentId: null, agentType: null }

test("tool.execute.before of the captured write and bash become PreToolUse Write and Bash", () => {
  const befores = captured("basic").filter((h) => h.kind === "tool.execute.before")
  const [write, bash] = befores.map((h) => t.preToolUse(h.input, h.output.args, { ...main, root: h.input.sessionID }, "/w"))
  assert.equal(write.hook_event_name, "PreToolUse")
  assert.equal(write.tool_name, "Write")
  const capturedPath = befores[0].output.args.filePath
  assert.ok(capturedPath.endsWith("/hello.txt"))
  assert.deepEqual(write.tool_input, { file_path: capturedPath, content: "hello\n" })
  assert.equal(write.tool_use_id, befores[0].input.callID)
  assert.equal(write.session_id, befores[0].input.sessionID)
  assert.equal(write.runtime, "opencode")
  assert.equal(write.agent_id, null)
  assert.equal(write.identity, "given")
  assert.equal(bash.tool_name, "Bash")
  assert.equal(bash.tool_input.command, befores[1].output.args.command)
  assert.deepEqual(Object.keys(bash.tool_input), ["command", "description"])
})

test("an argument named __proto__ stays an argument; inherited ones are not arguments", () => {
  const args = JSON.parse('{"filePath": "/a", "__proto__": {"polluted": 1}}')
  const input = t.toolInput(args)
  assert.deepEqual(Object.keys(input), ["file_path", "__proto__"])
  assert.equal(Object.getPrototypeOf(input), Object.prototype)
  assert.equal(JSON.stringify(input), '{"file_path":"/a","__proto__":{"polluted":1}}')
  assert.deepEqual(t.toolInput(Object.create({ inherited: 1 }, { ownName: { value: 2, enumerable: true } })), { own_name: 2 })
  assert.deepEqual(t.toolInput(null), {})
})

test("camelCase arguments are normalised; the task tool is the canonical Agent", () => {
  const edit = t.preToolUse({ tool: "edit", callID: "c" }, { filePath: "/a", oldString: "x", newString: "y", replaceAll: true }, main, "/w")
  assert.equal(edit.tool_name, "Edit")
  assert.deepEqual(edit.tool_input, { file_path: "/a", old_string: "x", new_string: "y", replace_all: true })
  assert.equal(t.preToolUse({ tool: "read" }, { filePath: "/a" }, main, "/w").tool_name, "Read")
  const task = captured("subagent").find((h) => h.kind === "tool.execute.after" && h.input.tool === "task")
  const agent = t.postToolUse(task.input, task.output, main, "/w")
  assert.equal(agent.tool_name, "Agent")
  assert.deepEqual(agent.tool_input, { description: "sub test", prompt: "SCENARIO:oc_sub run", subagent_type: "general" })
  assert.match(agent.tool_response.output, /<task_result>/)
  assert.deepEqual(t.openCodeArgs({ file_path: "/a", old_string: "x" }), { filePath: "/a", oldString: "x" })
  assert.equal(t.toolName("some_mcp_tool"), "some_mcp_tool")
})

test("the captured child session's tool calls carry the subagent's identity, inferred", async () => {
  const hooks = captured("subagent")
  const sessions = new Sessions({}, () => {})
  for (const h of hooks) if (h.kind === "event" && h.event.type === "session.created") sessions.note(h.event.properties.info)
  const child = hooks.find((h) => h.kind === "tool.execute.before" && h.output.args.command?.includes("sub_ran"))
  const who = await sessions.resolve(child.input.sessionID)
  const event = t.preToolUse(child.input, child.output.args, who, "/w")
  assert.equal(event.agent_id, child.input.sessionID)
  assert.equal(event.agent_type, "general")
  assert.equal(event.identity, "inferred")
  assert.equal(event.session_id, "ses_dd40fa702ffeNDruzdRALhoHcW") // the parent's, as in Claude Code
  assert.equal(t.subagentStart(who, "/w").hook_event_name, "SubagentStart")
  assert.equal(t.stop("done", false, who, "/w").hook_event_name, "SubagentStop")
  assert.equal(t.stop("done", false, main, "/w").hook_event_name, "Stop")
})

test("a session the map never saw is looked up through the client, once; nesting finds the root", async () => {
  const asked = []
  const client = { session: { get: async ({ path: p }) => {
    asked.push(p.id)
    const infos = { c2: { id: "c2", parentID: "c1", title: "x (@worker subagent)" }, c1: { id: "c1", parentID: "root", agent: "planner" }, root: { id: "root" } }
    return { data: infos[p.id] }
  } } }
  const sessions = new Sessions(client, () => {})
  assert.deepEqual(await sessions.resolve("c2"), { root: "root", agentId: "c2", agentType: "worker" })
  assert.deepEqual(asked, ["c2", "c1", "root"])
  assert.deepEqual(sessions.resolve("c2"), { root: "root", agentId: "c2", agentType: "worker" }) // known: at once, no promise
  assert.equal(asked.length, 3)
  // an answer that names another session settles the one asked for as a main session (no endless lookups)
  const odd = new Sessions({ session: { get: async () => ({ data: { id: "other" } }) } }, () => {})
  assert.deepEqual(await odd.resolve("x"), { root: "x", agentId: null, agentType: null })
  const failing = new Sessions({ session: { get: async () => { throw new Error("down") } } }, () => {})
  assert.deepEqual(await failing.resolve("x"), { root: "x", agentId: null, agentType: null })
})

test("chat.message becomes UserPromptSubmit with the typed text", () => {
  const message = captured("basic").find((h) => h.kind === "chat.message")
  const event = t.userPromptSubmit(message.output.parts, main, "/w")
  assert.equal(event.hook_event_name, "UserPromptSubmit")
  assert.equal(event.prompt, '"SCENARIO:oc_basic go"')
  assert.equal(t.promptText([{ type: "text", text: "a" }, { type: "text", text: "b", synthetic: true }, { type: "file" }]), "a")
})

test("permission.asked becomes PermissionRequest for the tool family", () => {
  const event = t.permissionRequest({ id: "per_1", sessionID: "s", permission: "bash", patterns: ["rm *"],
    metadata: { command: "rm -rf x" }, tool: { callID: "call_1" } }, main, "/w")
  assert.equal(event.tool_name, "Bash")
  assert.deepEqual(event.tool_input, { command: "rm -rf x", patterns: ["rm *"] })
  assert.equal(event.tool_use_id, "call_1")
})

test("verdicts: what refuses, and the text the model gets", () => {
  assert.ok(t.refuses({ kind: "block", reason: "r" }))
  assert.ok(t.refuses({ kind: "retry", reason: "r", delay_ms: 2000 }))
  assert.ok(t.refuses({ kind: "ask", reason: "r" }))
  assert.ok(!t.refuses({ kind: "context", context: "c" }))
  assert.equal(t.refusal({ kind: "retry", reason: "busy", delay_ms: 2000 }), "busy (temporary: retry in 2s)")
  assert.match(t.refusal({ kind: "ask", reason: "sure?" }), /cannot; refused/)
  assert.equal(t.modelNote({ kind: "block", reason: "no", context: "see docs" }), "no\nsee docs")
  assert.match(t.holdText({ kind: "block", reason: "dispatch a verifier" }), /You may not stop yet:\ndispatch a verifier/)
  assert.equal(t.agentOf({ title: "sub test (@general subagent)" }), "general")
})

test("apply_patch goes to the core as one event with the raw patch, before and after", () => {
  // OpenCode 1.18.33's apply_patch takes {patchText}; the core reads the patch (the reader Codex's
  // patches go through), so the plugin neither parses nor splits it
  const patchText = ["*** Begin Patch", "*** Add File: src/new.gd", "+extends Node", "*** Update File: a.txt",
    "*** Move to: b.txt", "@@", "-x", "+y", "*** Delete File: old.md", "*** End Patch"].join("\n")
  const before = t.preToolUse({ tool: "apply_patch", callID: "c" }, { patchText }, main, "/w")
  assert.equal(before.hook_event_name, "PreToolUse")
  assert.equal(before.tool_name, "apply_patch")
  assert.deepEqual(before.tool_input, { patch: patchText })
  assert.equal(before.tool_use_id, "c")
  const after = t.postToolUse({ tool: "apply_patch", sessionID: "s", callID: "c", args: { patchText } },
    { title: "Success", output: "Applied patch", metadata: {} }, main, "/w")
  assert.deepEqual([after.tool_name, after.tool_input], ["apply_patch", { patch: patchText }])
  // text that is no patch is sent as it is too: refusing it is the core's reader's call
  assert.deepEqual(t.preToolUse({ tool: "apply_patch", callID: "c" }, { patchText: "rm -rf /" }, main, "/w").tool_input, { patch: "rm -rf /" })
})

test("a child's agent missing at its creation is taken from its first chat.message", async () => {
  const sessions = new Sessions({}, () => {})
  sessions.note({ id: "kid", parentID: "root", title: "untitled" })
  sessions.note({ id: "root" })
  sessions.noteAgent("kid", "worker")
  sessions.noteAgent("root", "build") // a main session stays the main agent
  assert.deepEqual(await sessions.resolve("kid"), { root: "root", agentId: "kid", agentType: "worker" })
  assert.deepEqual(await sessions.resolve("root"), { root: "root", agentId: null, agentType: null })
})

test("a tool part in state error is the call's PostToolUseFailure, apply_patch carrying its raw patch", () => {
  const failed = (tool, input) => ({ type: "tool", sessionID: "s", callID: "c", tool, state: { status: "error", input, error: "aborted" } })
  const bash = failed("bash", { command: "sleep 600", description: "wait" })
  assert.ok(t.isFailedToolPart(bash))
  for (const part of [null, undefined, { type: "text", text: "x" }, { ...bash, state: { ...bash.state, status: "completed" } }, { ...bash, state: undefined }]) {
    assert.equal(t.isFailedToolPart(part), false)
  }
  const event = t.postToolUseFailure(bash, main, "/w")
  assert.deepEqual(event, { ...t.base("PostToolUseFailure", main, "/w"), tool_name: "Bash",
    tool_input: { command: "sleep 600", description: "wait" }, tool_use_id: "c", error: "aborted" })
  const patchText = "*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch"
  const patch = t.postToolUseFailure(failed("apply_patch", { patchText }), main, "/w")
  assert.deepEqual([patch.tool_name, patch.tool_input], ["apply_patch", { patch: patchText }])
})
