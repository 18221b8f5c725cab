// The whole plugin, as OpenCode calls it: hooks in, the real core deciding, a stand-in OpenCode
// client recording what the plugin asked of it.
import assert from "node:assert/strict"
import { mkdtempSync, mkdirSync, writeFileSync, readFileSync, existsSync } from "node:fs"
import os from "node:os"
import path from "node:path"
import { test } from "node:test"
import { execFileSync } from "node:child_process"

import { HookgatePlugin } from "../index.js"
import { FAKE_CORE, fakeClient, metrics, realCore } from "../test-support/support.js"

function project(role = "build") {
  const root = mkdtempSync(path.join(os.tmpdir(), "hookgate-plugin-"))
  mkdirSync(path.join(root, ".hookgate"))
  if (role) writeFileSync(path.join(root, ".hookgate", "current_role"), `${role}\n`)
  return root
}

const created = (id, extra = {}) => ({ event: { type: "session.created", properties: { sessionID: id, info: { id, title: "t", ...extra } } } })
// The core writes a decision's records just after its answer, before it reads the next frame:
// wait for the record of the last call a check reads (those of the calls before it are written by then).
const recorded = async (root, session, last) => {
  await until(() => metrics(root, session).some(last))
  return metrics(root, session)
}

async function plugin(root, client, options = {}) {
  return HookgatePlugin({ client, directory: root, worktree: root, project: {} }, { command: realCore(), ...options })
}

test("a forbidden write throws the reason; an allowed one goes through; records carry the runtime", async () => {
  const root = project()
  const hooks = await plugin(root, fakeClient())
  await hooks.event(created("ses_a"))
  await assert.rejects(
    hooks["tool.execute.before"]({ tool: "write", sessionID: "ses_a", callID: "c1" }, { args: { filePath: path.join(root, "src/player.gd"), content: "" } }),
    /Build role cannot write game code directly \(player\.gd\)/)
  await hooks["tool.execute.before"]({ tool: "write", sessionID: "ses_a", callID: "c2" }, { args: { filePath: path.join(root, "notes.txt"), content: "" } })
  const records = await recorded(root, "ses_a", (r) => r.event === "file_write" && r.file === "notes.txt")
  assert.ok(records.some((r) => r.event === "file_write" && r.file === "notes.txt" && r.runtime === "opencode"))
  assert.ok(records.some((r) => r.event === "hook_block" && r.gate === "check_file_permissions"))
  await hooks.dispose()
})

test("a tool call made while its session's start is being decided reaches the core after it; later calls wait for nothing", async () => {
  const root = project()
  const hooks = await plugin(root, fakeClient())
  const write = (sessionID, callID) => hooks["tool.execute.before"]({ tool: "write", sessionID, callID }, { args: { filePath: path.join(root, "notes.txt"), content: "" } })
  // nothing awaited in between: each start is still being decided when the child's call comes
  hooks.event(created("ses_main"))
  hooks.event(created("ses_child", { parentID: "ses_main", title: "look around (@general subagent)", agent: "general" }))
  await write("ses_child", "c1")
  await write("ses_child", "c2") // both starts decided: no wait, the same order
  await until(() => metrics(root, "ses_main").filter((r) => r.event === "file_write").length === 2)
  const events = metrics(root, "ses_main").map((r) => r.event).filter((e) => ["session_start", "subagent_start", "file_write"].includes(e))
  assert.deepEqual(events, ["session_start", "subagent_start", "file_write", "file_write"])
  await hooks.dispose()
})

test("a subagent's write of MEMORY.md is blocked through the session map", async () => {
  const root = project()
  const hooks = await plugin(root, fakeClient())
  await hooks.event(created("ses_main"))
  await hooks.event(created("ses_child", { parentID: "ses_main", title: "look around (@general subagent)", agent: "general" }))
  const memory = { tool: "write", sessionID: "ses_child", callID: "c1" }
  await assert.rejects(hooks["tool.execute.before"](memory, { args: { filePath: path.join(root, "MEMORY.md"), content: "x" } }), /MEMORY\.md/)
  // the same write by the main agent is not a subagent's: the build role allows it
  await hooks["tool.execute.before"]({ ...memory, sessionID: "ses_main" }, { args: { filePath: path.join(root, "MEMORY.md"), content: "x" } })
  await recorded(root, "ses_main", (r) => r.event === "file_write" && r.agent_id === "main")
  const starts = metrics(root, "ses_main").filter((r) => r.event === "subagent_start")
  assert.deepEqual(starts.map((s) => [s.agent_id, s.agent_type]), [["ses_child", "general"]])
  const writes = metrics(root, "ses_main").filter((r) => r.event === "file_write")
  assert.deepEqual(writes.map((w) => w.agent_id), ["ses_child", "main"])
  await hooks.dispose()
})

test("the completion gate holds the final text by queueing its reason; the next stop says so", async () => {
  const root = project(null)
  for (const name of ["project.godot", "GDD.md", "PLAN.md", "STRUCTURE.md"]) writeFileSync(path.join(root, name), "")
  execFileSync(realCore()[0], ["stage", "complete", "gdd"], { cwd: root })
  execFileSync(realCore()[0], ["role", "set", "build"], { cwd: root })
  const client = fakeClient({ messages: { msg_final: { info: { role: "assistant" }, parts: [{ type: "text", text: "All done." }] } } })
  const hooks = await plugin(root, client)
  await hooks.event(created("ses_lead"))
  await hooks["chat.message"]({ sessionID: "ses_lead" }, { message: { id: "msg_user" }, parts: [{ type: "text", text: "build it" }] })
  await hooks["tool.execute.before"]({ tool: "task", sessionID: "ses_lead", callID: "c1" }, { args: { description: "worker: M1", prompt: "go", subagent_type: "general" } })
  await hooks.event(created("ses_worker", { parentID: "ses_lead", agent: "general" }))
  await hooks["tool.execute.before"]({ tool: "read", sessionID: "ses_worker", callID: "c2" }, { args: { filePath: path.join(root, "PLAN.md") } }) // waits for the start
  await hooks["experimental.text.complete"]({ sessionID: "ses_lead", messageID: "msg_final", partID: "p" }, { text: "All done." })
  const held = client.calls.filter((c) => c.name === "session.prompt")
  assert.equal(held.length, 1)
  assert.equal(held[0].args.path.id, "ses_lead")
  assert.equal(held[0].args.body.noReply, true)
  assert.match(held[0].args.body.parts[0].text, /Cannot finish build yet[\s\S]*0 verifiers/)
  // OpenCode passes the queued message through chat.message: it is not a user prompt
  await hooks["chat.message"]({ sessionID: "ses_lead" }, { message: { id: "msg_hold" }, parts: held[0].args.body.parts })
  await hooks["experimental.text.complete"]({ sessionID: "ses_lead", messageID: "msg_final", partID: "p" }, { text: "All done." })
  assert.equal(client.calls.filter((c) => c.name === "session.prompt").length, 2)
  await hooks.dispose() // the core's shutdown: every record is written
  assert.equal(metrics(root, "ses_lead").filter((r) => r.hook_event === "UserPromptSubmit").length, 0)
  const blocks = metrics(root, "ses_lead").filter((r) => r.event === "hook_block" && r.gate === "check_completion")
  assert.equal(blocks.length, 2)
})

test("a text beside a tool call is not the end of the turn", async () => {
  const root = project()
  const client = fakeClient({ messages: { m: { info: {}, parts: [{ type: "text", text: "let me" }, { type: "tool", tool: "bash" }] } } })
  const hooks = await plugin(root, client)
  await hooks["experimental.text.complete"]({ sessionID: "s", messageID: "m", partID: "p" }, { text: "let me" })
  await hooks.dispose() // the core's shutdown: every record is written
  assert.equal(metrics(root, "s").filter((r) => r.hook_event === "Stop").length, 0)
  assert.equal(client.calls.filter((c) => c.name === "session.prompt").length, 0)
})

test("a permission request a gate refuses is answered reject through the client", async () => {
  const root = project("verify")
  const client = fakeClient()
  const hooks = await HookgatePlugin({ client, directory: root }, { command: FAKE_CORE })
  await hooks.event({ event: { type: "permission.asked", properties: { id: "per_1", sessionID: "s", permission: "edit",
    patterns: ["a.gd"], metadata: { filePath: "a.gd" } } } })
  await new Promise((r) => setTimeout(r, 50))
  for (let i = 0; i < 100 && !client.calls.some((c) => c.name === "permission.reply"); i++) await new Promise((r) => setTimeout(r, 20))
  const reply = client.calls.find((c) => c.name === "permission.reply")
  assert.deepEqual(reply.args, { path: { id: "s", permissionID: "per_1" }, body: { response: "reject" } })
  await hooks.dispose()
})

test("core down: a write fails closed with a clear reason, a read goes ahead, and nothing waits past the deadline", async () => {
  const root = project()
  const client = fakeClient()
  const hooks = await HookgatePlugin({ client, directory: root }, {
    command: [process.execPath, "-e", "setTimeout(() => {}, 60000)"], timeoutMs: 300 }) // never answers
  const started = Date.now()
  await assert.rejects(hooks["tool.execute.before"]({ tool: "write", sessionID: "s", callID: "c" }, { args: { filePath: "a.txt" } }),
    /hookgate could not decide this PreToolUse \(the core was still starting after 300 ms\)/)
  assert.ok(Date.now() - started < 20_000) // the core would have taken 60 s
  assert.ok(client.calls.some((c) => c.name === "tui.showToast") === false)
  await hooks.dispose()
})

test("core down after it was known: the learned fail modes decide per tool", async () => {
  const root = project()
  const client = fakeClient()
  const env = process.env.FAKE_CORE_MODE
  process.env.FAKE_CORE_MODE = "die" // answers initialize, then exits on the first decision
  try {
    const hooks = await HookgatePlugin({ client, directory: root }, { command: FAKE_CORE })
    await assert.rejects(hooks["tool.execute.before"]({ tool: "edit", sessionID: "s", callID: "c" }, { args: { filePath: "a.txt" } }),
      /the core exited \(code 3\)\); check_file_permissions fail closed/)
    await hooks["tool.execute.before"]({ tool: "read", sessionID: "s", callID: "c2" }, { args: { filePath: "a.txt" } })
    assert.ok(client.calls.some((c) => c.name === "tui.showToast" && /goes ahead/.test(c.args.body.message)))
    await hooks.dispose()
  } finally {
    if (env === undefined) delete process.env.FAKE_CORE_MODE
    else process.env.FAKE_CORE_MODE = env
  }
})

test("context reaches the model: appended to the tool output and to the prompt", async () => {
  const root = project()
  const hooks = await HookgatePlugin({ client: fakeClient(), directory: root }, { command: FAKE_CORE })
  const output = { title: "x", output: "ran", metadata: {} }
  await hooks["tool.execute.after"]({ tool: "bash", sessionID: "s", callID: "c", args: { command: "ls" } }, output)
  assert.equal(output.output, "ran\n\nseen PostToolUse Bash")
  const parts = [{ type: "text", text: "hello" }]
  await hooks["chat.message"]({ sessionID: "s" }, { message: { id: "m" }, parts })
  assert.equal(parts[0].text, "hello\n\n[hookgate] seen UserPromptSubmit")
  await hooks.dispose()
})

test("a child that goes idle without a final text: SubagentStop from its last message; a refusal reaches the parent", async () => {
  const root = project()
  const client = fakeClient({ messages: { ses_kid: [
    { info: { role: "user" }, parts: [{ type: "text", text: "do it" }] },
    { info: { role: "assistant" }, parts: [{ type: "text", text: "did it, no report" }] },
  ] } })
  const hooks = await HookgatePlugin({ client, directory: root }, { command: FAKE_CORE })
  await hooks.event(created("ses_boss"))
  await hooks.event(created("ses_kid", { parentID: "ses_boss", agent: "general" }))
  await hooks.event({ event: { type: "session.idle", properties: { sessionID: "ses_kid" } } })
  const output = { title: "t", output: "<task_result>did it</task_result>", metadata: { sessionId: "ses_kid" } }
  await hooks["tool.execute.after"]({ tool: "task", sessionID: "ses_boss", callID: "c", args: {} }, output)
  assert.match(output.output, /The subagent stopped although no report\n\(resume it with task_id "ses_kid" to fix this\)/)
  assert.ok(client.calls.some((c) => c.name === "session.messages" && c.args.path.id === "ses_kid"))
  assert.equal(client.calls.filter((c) => c.name.startsWith("session.prompt")).length, 0) // a child is never re-prompted
  await hooks.dispose()
})

test("a root session that goes idle with its stop undecided is re-prompted through the client", async () => {
  const root = project()
  const client = fakeClient({ messages: { ses_r: [{ info: { role: "assistant" }, parts: [] }] } })
  const hooks = await HookgatePlugin({ client, directory: root }, { command: FAKE_CORE })
  await hooks["chat.message"]({ sessionID: "ses_r" }, { message: { id: "u1" }, parts: [{ type: "text", text: "go" }] })
  await hooks.event({ event: { type: "session.idle", properties: { sessionID: "ses_r" } } })
  for (let i = 0; i < 200 && !client.calls.some((c) => c.name === "session.promptAsync"); i++) await new Promise((r) => setTimeout(r, 20))
  const [reprompt] = client.calls.filter((c) => c.name === "session.promptAsync")
  assert.equal(reprompt.args.path.id, "ses_r")
  assert.match(reprompt.args.body.parts[0].text, /You may not stop yet:\nno report/)
  // decided once per turn: a second idle of the same turn does nothing
  await hooks.event({ event: { type: "session.idle", properties: { sessionID: "ses_r" } } })
  await new Promise((r) => setTimeout(r, 200))
  assert.equal(client.calls.filter((c) => c.name === "session.promptAsync").length, 1)
  await hooks.dispose()
})

test("compaction: PreCompact's context joins the compaction prompt", async () => {
  const root = project()
  const hooks = await HookgatePlugin({ client: fakeClient(), directory: root }, { command: FAKE_CORE })
  const output = { context: [] }
  await hooks["experimental.session.compacting"]({ sessionID: "s" }, output)
  assert.deepEqual(output.context, ["seen PreCompact"])
  await hooks.dispose()
})

test("an apply_patch reaches the core as one PreToolUse carrying the raw patch", async () => {
  const root = project()
  const sent = path.join(root, "events.jsonl")
  const hooks = await HookgatePlugin({ client: fakeClient(), directory: root }, { command: FAKE_CORE })
  const patchText = `*** Begin Patch\n*** Add File: ${path.join(root, "notes.txt")}\n+ok\n*** Add File: ${path.join(root, "src/p.gd")}\n+x\n*** End Patch`
  process.env.FAKE_CORE_EVENTS = sent
  try {
    await hooks["tool.execute.before"]({ tool: "apply_patch", sessionID: "s", callID: "c" }, { args: { patchText } })
  } finally {
    delete process.env.FAKE_CORE_EVENTS
    await hooks.dispose()
  }
  const events = readFileSync(sent, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l))
  assert.deepEqual(events.map((e) => [e.hook_event_name, e.tool_name, e.tool_input, e.tool_use_id]),
    [["PreToolUse", "apply_patch", { patch: patchText }, "c"]])
})

// The same call against the real core: the core expands the patch into one event per file (its one
// apply_patch reader, shared with Codex), so the game-code file is refused and garbage is not applied.
// Until that reader is in the core, the core sees one apply_patch it has no gate for, and lets it by.
test("an apply_patch that adds game code under build is blocked; an unreadable one is not applied", async () => {
  const root = project()
  const hooks = await plugin(root, fakeClient())
  const patchText = `*** Begin Patch\n*** Add File: ${path.join(root, "notes.txt")}\n+ok\n*** Add File: ${path.join(root, "src/p.gd")}\n+x\n*** End Patch`
  try {
    await assert.rejects(hooks["tool.execute.before"]({ tool: "apply_patch", sessionID: "s", callID: "c" }, { args: { patchText } }),
      /Build role cannot write game code directly \(p\.gd\)/)
    await assert.rejects(hooks["tool.execute.before"]({ tool: "apply_patch", sessionID: "s", callID: "c" }, { args: { patchText: "garbage" } }),
      /invalid apply_patch call/)
    const notes = `*** Begin Patch\n*** Add File: ${path.join(root, "notes.txt")}\n+ok\n*** End Patch`
    await hooks["tool.execute.before"]({ tool: "apply_patch", sessionID: "s", callID: "c" }, { args: { patchText: notes } })
  } finally {
    await hooks.dispose()
  }
})

test("a rewrite replaces the call's arguments in place, in OpenCode's spelling", async () => {
  const root = project()
  const client = fakeClient()
  const hooks = await HookgatePlugin({ client, directory: root }, { command: FAKE_CORE })
  // the stand-in core answers a Write carrying `rewrite_to` with a modify
  const args = { filePath: "draft.txt", content: "x", rewriteTo: "approved/release.txt" }
  await hooks["tool.execute.before"]({ tool: "write", sessionID: "s", callID: "c" }, { args })
  assert.deepEqual(args, { filePath: "approved/release.txt", content: "x" })
  await hooks.dispose()
})

const toolError = (sessionID, callID, command) => ({ event: { type: "message.part.updated", properties: { sessionID,
  part: { type: "tool", sessionID, callID, tool: "bash", state: { status: "error", input: { command }, error: "aborted" } } } } })

async function until(check, ms = 20000) {
  const deadline = Date.now() + ms
  while (!check()) {
    if (Date.now() > deadline) throw new Error("timed out waiting")
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

test("a call that failed (tool part in state error) is its after-event: what it wrote is put back, the model told", async () => {
  const root = project()
  mkdirSync(path.join(root, "src"))
  const player = path.join(root, "src", "player.gd")
  writeFileSync(player, "extends Node\n")
  const client = fakeClient()
  const hooks = await plugin(root, client)
  await hooks.event(created("ses_e"))
  // the target computed at run time: the shell gate cannot read it, so it leaves it to the effect check
  const command = "p=$(printf 'src/play%s' er.gd); echo hacked >> $p; sleep 600"
  await hooks["tool.execute.before"]({ tool: "bash", sessionID: "ses_e", callID: "c1" }, { args: { command } })
  writeFileSync(player, "extends Node\nhacked\n") // what the command did before it was aborted
  await hooks.event(toolError("ses_e", "c1", command))
  await until(() => client.calls.some((c) => c.name === "session.prompt"))
  assert.equal(readFileSync(player, "utf8"), "extends Node\n")
  const note = client.calls.find((c) => c.name === "session.prompt").args.body
  assert.equal(note.noReply, true)
  assert.match(note.parts[0].text, /put back files this call may not change[\s\S]*src\/player\.gd was changed/)
  const reverted = (await recorded(root, "ses_e", (r) => r.event === "write_reverted")).filter((r) => r.event === "write_reverted")
  assert.deepEqual(reverted.map((r) => [r.path, r.hook_event, r.command]), [["src/player.gd", "PostToolUseFailure", command]])
  await hooks.dispose()
})

test("a failed call's error part: a refused call's is not sent, an allowed call's once, a finished part not at all", async () => {
  const root = project()
  const sent = path.join(root, "events.jsonl")
  process.env.FAKE_CORE_EVENTS = sent
  const hooks = await HookgatePlugin({ client: fakeClient(), directory: root }, { command: FAKE_CORE })
  const part = (callID, tool, input, state) => ({ event: { type: "message.part.updated", properties: { sessionID: "s",
    part: { type: "tool", sessionID: "s", callID, tool, state: { input, ...state } } } } })
  const sentFailures = () => (existsSync(sent) ? readFileSync(sent, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l)) : [])
    .filter((e) => e.hook_event_name === "PostToolUseFailure")
  try {
    const gd = { filePath: path.join(root, "src/p.gd"), content: "x" }
    // the stand-in core refuses a .gd write: OpenCode then reports the call's error part, which is hookgate's refusal
    await assert.rejects(hooks["tool.execute.before"]({ tool: "write", sessionID: "s", callID: "refused" }, { args: gd }), /no /)
    await hooks["tool.execute.before"]({ tool: "bash", sessionID: "s", callID: "ran" }, { args: { command: "sleep 9" } })
    await hooks.event(part("refused", "write", gd, { status: "error", error: "no src/p.gd" }))
    await hooks.event(part("done", "bash", { command: "true" }, { status: "completed", output: "" }))
    await hooks.event(part("ran", "bash", { command: "sleep 9" }, { status: "error", error: "Tool execution aborted" }))
    await hooks.event(part("ran", "bash", { command: "sleep 9" }, { status: "error", error: "Tool execution aborted" }))
    await until(() => sentFailures().length > 0)
  } finally {
    await hooks.dispose()
    delete process.env.FAKE_CORE_EVENTS
  }
  assert.deepEqual(sentFailures().map((e) => [e.tool_name, e.tool_input, e.tool_use_id, e.error, e.session_id]),
    [["Bash", { command: "sleep 9" }, "ran", "Tool execution aborted", "s"]])
})
