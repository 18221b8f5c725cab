// What the client does with a core that answers wrongly: each fault on its own, against the
// stand-in core's injected faults (test-support/fake-core.mjs). The 1000-fault run is faults.test.js.
import assert from "node:assert/strict"
import { mkdtempSync, writeFileSync } from "node:fs"
import os from "node:os"
import path from "node:path"
import { test } from "node:test"

import { CoreClient, CoreUnavailable } from "../lib/client.js"
import { isVerdict } from "../lib/protocol.js"
import { HookgatePlugin } from "../index.js"
import { FAKE_CORE, fakeClient } from "../test-support/support.js"

const CAPS = { events: {
  PreToolUse: { fail_mode: "closed", timeout_ms: 600, gates: [{ id: "check_file_permissions", matcher: "Write", fail_mode: "closed" }] },
  PostToolUse: { fail_mode: "open", timeout_ms: 400, gates: [] },
} }
const tmp = () => mkdtempSync(path.join(os.tmpdir(), "hookgate-faults-"))
const fake = (extra = {}) => new CoreClient({
  command: FAKE_CORE, cwd: tmp(), env: { ...process.env, FAKE_CORE_CAPS: JSON.stringify(CAPS) }, log: () => {}, ...extra,
})
const write = (file, content = "") => ({ hook_event_name: "PreToolUse", session_id: "s", tool_name: "Write", tool_input: { file_path: file, content } })
const post = (command) => ({ hook_event_name: "PostToolUse", session_id: "s", tool_name: "Bash", tool_input: { command } })
const alive = (pid) => { try { process.kill(pid, 0); return true } catch { return false } }
const until = async (condition) => { while (!condition()) await new Promise((r) => setTimeout(r, 20)) }

test("JSON lines that are no message (null, numbers, arrays) are skipped, and the answer after them is taken", async () => {
  const logged = []
  const core = fake({ log: (level, message) => logged.push(message) })
  // `null` used to throw out of the stdout handler: an uncaught TypeError that ended the host process
  assert.equal((await core.evaluate(write("a.txt", "FAULT:scalars"))).kind, "allow")
  assert.ok(logged.some((m) => m.includes("no JSON-RPC message: null")))
  await core.dispose()
})

test("an answer that is no verdict is no answer: the request fails at once, whatever the variant", async () => {
  const core = fake()
  for (let variant = 0; variant < 11; variant++) {
    await assert.rejects(core.evaluate(write("a.txt", `FAULT:bad-result:${variant}`)),
      (error) => error instanceof CoreUnavailable && /the core answered with no verdict/.test(error.message), `variant ${variant}`)
  }
  assert.equal((await core.evaluate(write("a.gd"))).kind, "block") // the same core goes on deciding
  await core.dispose()
})

test("verdicts are told from look-alikes", () => {
  assert.ok(isVerdict({ kind: "allow" }) && isVerdict({ kind: "block", reason: "r", message: null, context: "c" }))
  assert.ok(isVerdict({ kind: "modify", updated_input: {} }) && isVerdict({ kind: "retry", reason: "r", delay_ms: 5 }))
  for (const bad of [null, [], "allow", { kind: "toString" }, { kind: "block" }, { kind: "context" }, { kind: "modify", updated_input: [] },
    { kind: "allow", context: 5 }]) assert.ok(!isVerdict(bad), JSON.stringify(bad))
})

test("through the plugin, a verdict that is none takes the fail mode: closed refuses naming the gate, open goes ahead", async () => {
  const root = tmp()
  const env = process.env.FAKE_CORE_CAPS
  process.env.FAKE_CORE_CAPS = JSON.stringify(CAPS)
  const client = fakeClient()
  const hooks = await HookgatePlugin({ client, directory: root }, { command: FAKE_CORE })
  try {
    await assert.rejects(hooks["tool.execute.before"]({ tool: "write", sessionID: "s", callID: "c" }, { args: { filePath: "a.txt", content: "FAULT:bad-result:0" } }),
      /could not decide this PreToolUse \(the core answered with no verdict: null\); check_file_permissions fail closed/)
    const output = { title: "t", output: "ran", metadata: {} }
    await hooks["tool.execute.after"]({ tool: "bash", sessionID: "s", callID: "c", args: { command: "FAULT:bad-result:4" } }, output)
    assert.equal(output.output, "ran")
    assert.ok(client.calls.some((c) => c.name === "tui.showToast" && /no verdict: \{"kind":"bogus"\}\); no gate on it fails closed, so it goes ahead/.test(c.args.body.message)))
  } finally {
    await hooks.dispose()
    if (env === undefined) delete process.env.FAKE_CORE_CAPS
    else process.env.FAKE_CORE_CAPS = env
  }
})

test("capabilities that make no sense are not taken: the deadlines and fail modes stay what they were", async () => {
  const logged = []
  const core = fake({ log: (level, message) => logged.push(message) })
  for (let variant = 0; variant < 5; variant++) {
    assert.equal((await core.evaluate(write("a.txt", `FAULT:bad-notice:${variant}`))).kind, "allow")
    assert.equal(core.timeoutFor("PreToolUse"), 600)
    assert.equal(core.capabilities.events.PreToolUse.gates[0].id, "check_file_permissions")
  }
  assert.equal(logged.filter((m) => m.includes("capabilities that make no sense")).length, 5)
  await core.dispose()
})

// "wedge-chatty": stuck, yet its reload thread writes notices and the answer comes far too late;
// neither is the core deciding, so it is recycled as soon as a silent one is
for (const fault of ["wedge", "wedge-chatty"]) {
  test(`a stuck core (${fault}) is killed once it was silent for longer than any decision may take; the next request starts a new one`, async () => {
    const logged = []
    const core = fake({ log: (level, message) => logged.push(message) })
    assert.equal((await core.evaluate(write("a.gd"))).kind, "block")
    const stuck = core.server.pid
    // one PostToolUse's silence (400 ms) is shorter than the longest decision (PreToolUse, 600 ms): not yet
    await assert.rejects(core.evaluate(post(`FAULT:${fault}`)), /no answer from the core within 400 ms/)
    assert.equal(core.server?.pid, stuck)
    await assert.rejects(core.evaluate(post("ls")), /no answer from the core within 400 ms/)
    assert.ok(logged.some((m) => /the core answered nothing for \d+ ms; it is started again/.test(m)), logged.join("\n"))
    await until(() => !alive(stuck)) // it would never have gone by itself (it outlives its stdin)
    assert.equal((await core.evaluate(write("b.gd"))).kind, "block")
    assert.notEqual(core.server.pid, stuck)
    await core.dispose()
  })
}

test("a core that is only slow on one request is not taken for stuck", async () => {
  const logged = []
  const core = fake({ log: (level, message) => logged.push(message) })
  assert.equal((await core.evaluate(write("a.gd"))).kind, "block") // the deadlines are learned from initialize
  const pid = core.server.pid
  await assert.rejects(core.evaluate(post("FAULT:hang")), /no answer from the core within 400 ms/)
  assert.equal((await core.evaluate(write("a.gd"))).kind, "block")
  await assert.rejects(core.evaluate(post("FAULT:late")), /no answer from the core within 400 ms/)
  assert.equal((await core.evaluate(write("b.gd"))).kind, "block")
  assert.equal(core.server.pid, pid)
  assert.ok(!logged.some((m) => m.includes("answered nothing")))
  await core.dispose()
})

test("a start slower than the request that began it goes on for the next ones: one core, no restart", async () => {
  const root = tmp()
  writeFileSync(path.join(root, "start-fault"), "slow") // answers initialize after 800 ms
  const logged = []
  const core = fake({ cwd: root, timeoutMs: 300, log: (level, message) => logged.push(message) })
  await assert.rejects(core.evaluate(write("a.gd")), /^CoreUnavailable: the core was still starting after 300 ms$/)
  await assert.rejects(core.evaluate(write("a.gd")), /the core was still starting after 300 ms/) // the same start
  await until(() => core.server)
  assert.equal((await core.evaluate(write("a.gd"))).kind, "block")
  assert.equal(logged.filter((m) => m.includes("started (pid")).length, 1)
  await core.dispose()
})

test("a request that waited for a start says how much of its budget the start took", async () => {
  const root = tmp()
  writeFileSync(path.join(root, "start-fault"), "slow")
  const core = fake({ cwd: root, timeoutMs: 1500 })
  await assert.rejects(core.evaluate(write("a.txt", "FAULT:hang")), /^CoreUnavailable: no answer from the core within 1500 ms, \d+ of them spent starting it$/)
  await core.dispose()
})

test("a plugin disposed while its core is starting stops it at once", async () => {
  const root = tmp()
  writeFileSync(path.join(root, "start-fault"), "mute")
  const core = fake({ cwd: root, timeoutMs: 200 })
  await assert.rejects(core.evaluate(write("a.txt")), /still starting/)
  const child = core.child
  const sent = []
  const send = core.send.bind(core)
  core.send = (to, method, ...rest) => { sent.push(method); return send(to, method, ...rest) }
  await core.dispose() // nothing to shut down gracefully: it never answered initialize
  assert.deepEqual(sent, []) // no shutdown request it would not answer, no grace to wait out
  assert.equal(child.signalCode, "SIGKILL")
})

test("a core that answers initialize with something else is not started", async () => {
  const root = tmp()
  writeFileSync(path.join(root, "start-fault"), "garbage")
  const core = fake({ cwd: root })
  await assert.rejects(core.evaluate(write("a.txt")), /the core answered initialize with null/)
  await core.dispose()
})
