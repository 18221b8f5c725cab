// The JSON-RPC client: lazy spawn, pending requests under deadlines, restart after a crash,
// clean shutdown; against a misbehaving stand-in and against the real `hookgate serve --stdio`.
import assert from "node:assert/strict"
import { mkdtempSync, mkdirSync, writeFileSync, readFileSync } from "node:fs"
import os from "node:os"
import path from "node:path"
import { test } from "node:test"

import { SAMPLES } from "../lib/awake.js"
import { AWAKE_MS, CoreClient, CoreUnavailable, coreCommand } from "../lib/client.js"
import { FAKE_CORE, realCore } from "../test-support/support.js"

const fake = (mode, extra = {}) => new CoreClient({
  command: FAKE_CORE, env: { ...process.env, FAKE_CORE_MODE: mode }, log: () => {}, ...extra,
})
const write = (file) => ({ hook_event_name: "PreToolUse", session_id: "s", tool_name: "Write", tool_input: { file_path: file, content: "" } })
const until = async (condition) => { while (!condition()) await new Promise((r) => setTimeout(r, 20)) }
const alive = (pid) => { try { process.kill(pid, 0); return true } catch { return false } }

test("the core is spawned on the first request, not before, and answers many requests at once", async () => {
  const core = fake("normal")
  assert.equal(core.child, null)
  const verdicts = await Promise.all(Array.from({ length: 50 }, (_, i) => core.evaluate(write(i % 2 ? "a.gd" : "a.txt"))))
  assert.deepEqual(verdicts.map((v) => v.kind), Array.from({ length: 50 }, (_, i) => (i % 2 ? "block" : "allow")))
  assert.equal(core.capabilities.events.PreToolUse.fail_mode, "closed")
  assert.equal(core.timeoutFor("PreToolUse"), 6000) // learned from initialize
  await core.dispose()
})

test("a request past its deadline is rejected while the core keeps running", async () => {
  const core = fake("hang", { timeoutMs: 300 })
  await core.ensureStarted({ at: Date.now() + 10_000, budgetMs: 10_000 }) // a start may take longer than 300 ms
  const started = Date.now()
  await assert.rejects(core.evaluate(write("a.txt")), (error) => error instanceof CoreUnavailable && /no answer from the core within/.test(error.message))
  assert.ok(Date.now() - started < 20_000) // the hanging core would never have answered
  assert.equal(core.pending.size, 0)
  await core.dispose()
})

test("a running core is asked at once: the request is pending before the caller's next line", async () => {
  const core = fake("normal")
  await core.evaluate(write("a.txt")) // started
  const answer = core.evaluate(write("b.gd"))
  assert.equal(core.pending.size, 1) // written without a turn of the event loop
  assert.equal((await answer).kind, "block")
  await core.dispose()
})

test("one timer keeps the deadlines of every pending request, the earliest first, and holds the process only while one is pending", async () => {
  const core = fake("hang")
  await core.ensureStarted({ at: Date.now() + 10_000, budgetMs: 10_000 })
  const later = core.request("evaluate", { event: write("a.txt") }, 1_500)
  const sooner = core.request("evaluate", { event: write("b.txt") }, 200) // sent after, due first
  assert.equal(core.watch.hasRef(), true)
  await assert.rejects(sooner, /no answer from the core within 200 ms/)
  assert.equal(core.pending.size, 1) // given up before the later one: that one still waits, and holds the process
  assert.equal(core.watch.hasRef(), true)
  await assert.rejects(later, /no answer from the core within 1500 ms/)
  assert.equal(core.pending.size, 0)
  assert.equal(core.watch, null) // nothing left to watch
  await core.dispose()

  const answering = fake("normal")
  await answering.evaluate(write("a.txt"))
  assert.equal(answering.watch.hasRef(), false) // answered: the watch stays set, but holds nothing
  const pending = answering.evaluate(write("b.txt"))
  assert.equal(answering.watch.hasRef(), true)
  await pending
  assert.equal(answering.watch.hasRef(), false)
  await answering.dispose()
})

test("a crash rejects what is pending, and the next request starts a new core", async () => {
  const core = fake("die")
  await assert.rejects(core.evaluate(write("a.txt")), /the core exited \(code 3\)/)
  const first = core.server?.pid
  assert.equal(core.child, null)
  core.options.env = { ...process.env, FAKE_CORE_MODE: "normal" }
  assert.equal((await core.evaluate(write("b.gd"))).kind, "block")
  assert.notEqual(core.server.pid, first)
  await core.dispose()
})

test("a core that never answers initialize is killed, and restarts back off", async () => {
  const core = fake("mute", { timeoutMs: 300, startTimeoutMs: 600 })
  await assert.rejects(core.evaluate(write("a.txt")), /the core was still starting after 300 ms/)
  assert.ok(core.starting) // the start outlives the request that began it, up to its own timeout
  await until(() => core.starting === null && core.child === null) // the failed start is over
  await assert.rejects(core.evaluate(write("a.txt")), /failed to start 1 time\(s\); next try in/)
  await core.dispose()
})

test("a missing program is reported, not thrown past the client", async () => {
  const core = new CoreClient({ command: ["/nonexistent/hookgate", "serve", "--stdio"], log: () => {}, timeoutMs: 2000 })
  await assert.rejects(core.evaluate(write("a.txt")), (e) => e instanceof CoreUnavailable && /could not run \/nonexistent\/hookgate/.test(e.message))
})

test("lines that are not frames are logged and skipped", async () => {
  const logged = []
  const core = fake("noisy", { log: (level, message) => logged.push(message) })
  assert.equal((await core.evaluate(write("x.txt"))).kind, "allow")
  assert.ok(logged.some((m) => m.includes("not JSON: not a frame")))
  await core.dispose()
})

// The turns of the event loop the client asks for while an answer is due, counted where it asks
// (the global setImmediate, read at each call); nothing else in these tests schedules one.
async function countingTurns(during) {
  const real = globalThis.setImmediate
  const turns = { count: 0 }
  globalThis.setImmediate = (fn, ...args) => { turns.count += 1; return real(fn, ...args) }
  try {
    return await during(turns)
  } finally {
    globalThis.setImmediate = real
  }
}
const pause = (ms) => new Promise((r) => setTimeout(r, ms))

test("while an answer is due the event loop keeps turning, for at most awakeMs, and stops once answered", async () => {
  const hanging = fake("hang", { timeoutMs: 5000, awakeMs: 200 })
  await hanging.ensureStarted({ at: Date.now() + 10_000, budgetMs: 10_000 })
  await pause(250) // initialize's answer is past: the CPUs may have gone idle since
  await countingTurns(async (turns) => {
    const answer = hanging.evaluate(write("a.txt")).catch((error) => error)
    await pause(100)
    assert.ok(turns.count > 20, `${turns.count} turns in the first 100 ms of the window`) // turning, not sleeping
    await pause(300) // the window is over; the answer is still due
    const after = turns.count
    await pause(200)
    assert.equal(turns.count, after, "still turning past awakeMs")
    assert.equal(hanging.pending.size, 1)
    await hanging.dispose()
    assert.ok((await answer) instanceof CoreUnavailable)
  })

  const answering = fake("normal", { awakeMs: 1000 })
  await answering.ensureStarted({ at: Date.now() + 10_000, budgetMs: 10_000 })
  await pause(1100)
  await countingTurns(async (turns) => {
    assert.equal((await answering.evaluate(write("a.gd"))).kind, "block")
    await pause(20) // the turn already queued when the answer came
    const after = turns.count
    await pause(200) // within the window: nothing is pending
    assert.equal(turns.count, after, "still turning with nothing pending")
    // a request right after an answer meets CPUs that have not gone idle: no turning
    assert.equal((await answering.evaluate(write("b.gd"))).kind, "block")
    await pause(50)
    assert.equal(turns.count, after, "turning right after an answer")
  })
  await answering.dispose()
})

test("awakeMs 0: the client sleeps until the answer comes", async () => {
  const core = fake("hang", { timeoutMs: 5000, awakeMs: 0 })
  await core.ensureStarted({ at: Date.now() + 10_000, budgetMs: 10_000 })
  await countingTurns(async (turns) => {
    const answer = core.evaluate(write("a.txt")).catch((error) => error)
    await pause(100)
    assert.equal(turns.count, 0)
    await core.dispose()
    await answer
  })
})

test("without awakeMs the client measures both ways on its own answers: one of each pair of requests after a pause turns", async () => {
  const core = fake("normal")
  await core.ensureStarted({ at: Date.now() + 10_000, budgetMs: 10_000 })
  const turned = []
  await countingTurns(async (turns) => {
    for (let i = 0; i < 2 * SAMPLES; i++) {
      await pause(5) // longer than AWAKE_MS since the last answer: the CPUs may have gone idle
      const before = turns.count
      assert.equal((await core.evaluate(write(i % 2 ? "a.gd" : "a.txt"))).kind, i % 2 ? "block" : "allow")
      turned.push(turns.count > before)
      await pause(5) // the turn queued when the answer came
    }
  })
  if (AWAKE_MS > 0) {
    assert.deepEqual(turned.filter((_, i) => i % 2 === 0), turned.filter((_, i) => i % 2 === 1).map((t) => !t), turned.join(" "))
    // each answer was timed into its way's samples, and the choice is made from them now
    const times = [core.awake.awake, core.awake.asleep]
    assert.deepEqual(times.map((t) => t.length), [SAMPLES, SAMPLES])
    assert.ok(times.flat().every((ms) => ms > 0 && ms < 10_000), times.flat().join(" "))
  } else {
    assert.ok(turned.every((t) => !t), "turning on one CPU")
  }
  await core.dispose()
})

test("the command comes from the registration, else HOOKGATE_COMMAND, else PATH", () => {
  assert.deepEqual(coreCommand({ command: ["/v/bin/hookgate"] }, {}), ["/v/bin/hookgate", "serve", "--stdio"])
  assert.deepEqual(coreCommand({ command: "/v/bin/hookgate" }, {}), ["/v/bin/hookgate", "serve", "--stdio"])
  assert.deepEqual(coreCommand({}, { HOOKGATE_COMMAND: "/e/hookgate" }), ["/e/hookgate", "serve", "--stdio"])
  assert.deepEqual(coreCommand({}, {}), ["hookgate", "serve", "--stdio"])
  assert.deepEqual(coreCommand({ command: ["py", "-m", "hookgate", "serve", "--stdio", "--no-reload"] }, {}), ["py", "-m", "hookgate", "serve", "--stdio", "--no-reload"])
})

function project() {
  const root = mkdtempSync(path.join(os.tmpdir(), "hookgate-js-"))
  mkdirSync(path.join(root, ".hookgate"))
  writeFileSync(path.join(root, ".hookgate", "current_role"), "build\n")
  return root
}

test("the real core: decisions, a kill mid-session, restart, clean shutdown", async () => {
  const root = project()
  const core = new CoreClient({ command: realCore(), cwd: root, log: () => {} })
  const event = (name) => ({ ...write(path.join(root, name)), cwd: root, runtime: "opencode" })
  const blocked = await core.evaluate(event("src/player.gd"))
  assert.equal(blocked.kind, "block")
  assert.match(blocked.reason, /Build role cannot write game code directly \(player\.gd\)/)
  assert.equal((await core.evaluate(event("notes.txt"))).kind, "allow")
  // the core writes a decision's records after its answer, before it reads the next frame: once a
  // ping is answered they are on disk (a kill between an answer and its records loses those records)
  await core.request("ping", {})
  const first = core.server.pid
  process.kill(first, "SIGKILL")
  await until(() => core.child === null) // the client saw the core go
  assert.equal((await core.evaluate(event("src/enemy.gd"))).kind, "block")
  const second = core.server.pid
  assert.notEqual(second, first)
  await core.dispose()
  assert.ok(!alive(second))
  const metrics = readFileSync(path.join(root, ".hookgate", "sessions", "s", "metrics.jsonl"), "utf8")
  assert.equal(metrics.split("\n").filter((l) => l.includes('"file_write"')).length, 3)
})
