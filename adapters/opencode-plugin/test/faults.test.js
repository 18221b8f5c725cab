// 1000 faults of the core under the plugin, driven as OpenCode drives it: the plugin's hooks are
// called (several at once, like parallel tool calls) on lanes that each own a plugin, a project and
// a core; the stand-in core (test-support/fake-core.mjs) crashes, hangs or answers garbage on the
// requests that carry a fault. For every hook call:
//   - it settles within its deadline (the per-event budget the core announced), give or take a
//     margin that is a fraction of that budget, once the lateness of a plain timer armed with the
//     call for the same deadline is taken off (a stalled process runs every timer late);
//   - the outcome is the real verdict where the fault leaves one, else the fail mode: a closed
//     event refuses with a reason that names the gates and why the core could not answer, an open
//     one goes ahead (and the user is told why);
//   - the core comes back: after every fault, the next calls get real verdicts again.
// And at the end: every fault was carried out by a core (they log it), no unhandled rejection or
// exception reached the process, and no core process is left. A second test kills the real
// `hookgate serve --stdio` with SIGKILL mid-session, and stops one with SIGSTOP.
import assert from "node:assert/strict"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from "node:fs"
import os from "node:os"
import path from "node:path"
import { monitorEventLoopDelay, performance } from "node:perf_hooks"
import { test } from "node:test"

import { HookgatePlugin } from "../index.js"
import { CoreClient, DEFAULT_TIMEOUT_MS } from "../lib/client.js"
import { FAKE_CORE, fakeClient, metrics, realCore } from "../test-support/support.js"

const SEED = Number(process.env.HOOKGATE_FAULT_SEED ?? 8)
const LANES = 10
// how far past its deadline a call may settle, as a fraction of the deadline (timers, a busy machine)
const MARGIN = 0.25
// the per-event budgets the stand-in core announces: short, as every hang costs one, and long
// enough to start a core again on a busy machine (a restart counts against the call that needs it)
const BUDGET = { PreToolUse: 1500, PostToolUse: 1200, UserPromptSubmit: 1200, Stop: 1800, SubagentStop: 1800 }
// how long a start may take before it is given up (its own, longer than any call's budget)
const START_TIMEOUT = 6000
// the stand-in cores run below this process's priority where `nice` exists: this process's timers
// are what is measured, and hundreds of cores starting would otherwise take its CPU
const CORE = existsSync("/usr/bin/nice") ? ["/usr/bin/nice", "-n", "10", ...FAKE_CORE] : FAKE_CORE
const gate = (id, matcher, failMode) => ({ id, matcher, fail_mode: failMode })
// the shape of the real preset's: writes and shell commands fail closed, fetches and the rest open
const CAPS = { events: {
  PreToolUse: { fail_mode: "closed", timeout_ms: BUDGET.PreToolUse, gates: [gate("check_file_permissions", "Write|Edit", "closed"),
    gate("check_shell_writes", "Bash", "closed"), gate("note_fetches", "WebFetch", "open")] },
  PostToolUse: { fail_mode: "open", timeout_ms: BUDGET.PostToolUse, gates: [] },
  UserPromptSubmit: { fail_mode: "open", timeout_ms: BUDGET.UserPromptSubmit, gates: [] },
  Stop: { fail_mode: "open", timeout_ms: BUDGET.Stop, gates: [gate("check_completion", "", "open")] },
  SubagentStop: { fail_mode: "closed", timeout_ms: BUDGET.SubagentStop, gates: [gate("check_worker_report", "", "closed")] },
} }

// why a call that met each fault could not be decided (what its refusal or the user's notice says)
const SILENT = /^(no answer from the core within \d+ ms|the core answered nothing for \d+ ms)$/
// a new core took (nearly) all of a call's budget to start: the next call finds it running
const STARTING = /^the core was still starting after \d+ ms$|^no answer from the core within \d+ ms, \d+ of them spent starting it$/
const START_GAVE_UP = new RegExp(`^no answer from the core within ${START_TIMEOUT} ms$`)
const BACKOFF = /^the core failed to start 1 time\(s\); next try in \d+ ms$/
const anyOf = (...patterns) => new RegExp(patterns.map((p) => `(?:${p.source})`).join("|"))
const WHY = {
  exit: /^the core exited \(code 7\)$/, kill: /^the core exited \(signal SIGKILL\)$/,
  "half-exit": /^the core exited \(code 7\)$/, "exit-later": /^the core exited \(code 7\)$/,
  hang: SILENT, late: SILENT, wedge: SILENT, "wrong-id": SILENT, truncated: SILENT, glued: SILENT,
  "rpc-error": /^the core refused -32603: internal error: KeyError: 'tool_name'$/,
  "bad-result": /^the core answered with no verdict: /,
  "start-exit": /^the core exited \(code 9\)$/, "start-mute": STARTING,
  "start-error": /^the core refused -32603: internal error: the policy did not load$/,
  "start-garbage": /^the core answered initialize with null$/,
}
// the faults injected, by family and kind; `tolerated` ones leave the real verdict to be seen through
const PLAN = {
  crash: { exit: 70, kill: 50, "half-exit": 50, "exit-later": 40, "start-exit": 20 },
  hang: { hang: 100, late: 55, wedge: 25, "start-mute": 10 },
  garbage: { noise: 50, scalars: 50, unsolicited: 50, duplicate: 40, split: 40, huge: 15, binary: 35, "bad-notice": 25,
    "wrong-id": 65, "rpc-error": 55, "bad-result": 55, truncated: 45, glued: 35, "start-error": 10, "start-garbage": 10 },
}
const TOLERATED = new Set(["noise", "scalars", "unsolicited", "duplicate", "split", "huge", "binary", "bad-notice"])
const CRASHES = new Set(["exit", "kill", "half-exit", "exit-later"])
const ANSWERED_AT_ONCE = new Set(["rpc-error", "bad-result"])
const VARIANTS = { "bad-result": 11, "wrong-id": 6, "bad-notice": 5 }

// the hook calls a lane makes, each the way OpenCode makes it, and the event it becomes
const CALLS = ["write", "write-gd", "bash", "fetch", "after", "prompt", "stop", "substop"]
const EVENT = { write: "PreToolUse", "write-gd": "PreToolUse", bash: "PreToolUse", fetch: "PreToolUse", after: "PostToolUse",
  prompt: "UserPromptSubmit", stop: "Stop", substop: "SubagentStop" }
const CLOSED_BY = { write: "check_file_permissions", "write-gd": "check_file_permissions", bash: "check_shell_writes",
  substop: "check_worker_report" }

/** mulberry32: the same seed, the same faults on the same calls */
function random(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const problems = [] // unhandled rejections and exceptions: none may happen
process.on("unhandledRejection", (error) => problems.push(`unhandled rejection: ${error?.stack ?? error}`))
process.on("uncaughtException", (error) => problems.push(`uncaught exception: ${error?.stack ?? error}`))

/** The processes this one started that still exist (Linux: /proc), else null. */
function children() {
  if (!existsSync("/proc/self/task")) return null
  return readdirSync("/proc/self/task").flatMap((task) => {
    try {
      return readFileSync(`/proc/self/task/${task}/children`, "utf8").split(" ").filter(Boolean).map(Number)
    } catch {
      return []
    }
  })
}

async function noChildrenLeft() {
  for (let i = 0; i < 100 && children()?.length; i++) await sleep(50) // killed ones are reaped as their exit is seen
  assert.deepEqual(children() ?? [], [], "a core outlived the plugin that started it")
}

const lag = monitorEventLoopDelay({ resolution: 10 }) // how late this process ran what was due
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const FINAL = "m_final"

class Lane {
  constructor(index, rng) {
    this.rng = rng
    this.dir = mkdtempSync(path.join(os.tmpdir(), `hookgate-faults-${index}-`))
    this.root = `ses_root_${index}`
    this.child = `ses_child_${index}`
    this.talk = `ses_talk_${index}`
    this.client = fakeClient({
      sessions: { [this.child]: { id: this.child, parentID: this.root, agent: "general" } },
      messages: { [FINAL]: { info: { role: "assistant" }, parts: [{ type: "text", text: "done" }] } },
    })
    this.n = 0
    this.history = []
    this.waits = { "still starting": 0, other: 0 } // healthy calls that met a core not back yet
    this.budgets = { UserPromptSubmit: DEFAULT_TIMEOUT_MS }
    this.worst = { ratio: 0 }
    this.worstRaw = 0
    this.outcomes = { real: 0, "refused (fail closed)": 0, "went ahead (fail open)": 0 }
  }

  async open() {
    this.hooks = await HookgatePlugin({ client: this.client, directory: this.dir }, { command: CORE, startTimeoutMs: START_TIMEOUT })
    // the first call starts the core and learns its budgets (until then, the default); it carries no fault
    await this.step([{ type: "prompt", fault: null, expect: REAL }])
    this.budgets = BUDGET
  }

  /** One hook call; what OpenCode would see of it, and how long it took. */
  async call(type, fault, session) {
    const n = ++this.n
    const variant = fault && VARIANTS[fault] ? `:${Math.floor(this.rng() * VARIANTS[fault])}` : ""
    const text = fault ? `FAULT:${fault}${variant}` : "fine"
    const hooks = this.hooks
    const seen = { type, event: EVENT[type], timerLate: 0 }
    // a plain timer for the same deadline, armed with the call: how late this process runs what is
    // due (a busy machine) is not the plugin's doing
    const budget = this.budgets[seen.event]
    const started = performance.now()
    const reference = setTimeout(() => { seen.timerLate = Math.max(0, performance.now() - started - budget) }, budget)
    try {
      if (EVENT[type] === "PreToolUse") {
        const [tool, args] = {
          write: ["write", { filePath: path.join(this.dir, `n${n}.txt`), content: text }],
          "write-gd": ["write", { filePath: path.join(this.dir, "src", `n${n}.gd`), content: text }],
          bash: ["bash", { command: `echo ${text}`, description: "echo" }],
          fetch: ["webfetch", { url: `http://127.0.0.1:9/${text}`, format: "text" }],
        }[type]
        await hooks["tool.execute.before"]({ tool, sessionID: this.root, callID: `c${n}` }, { args })
      } else if (type === "after") {
        const output = { title: "echo", output: "ran", metadata: {} }
        await hooks["tool.execute.after"]({ tool: "bash", sessionID: this.root, callID: `c${n}`, args: { command: `echo ${text}` } }, output)
        seen.output = output.output
      } else if (type === "prompt") {
        const parts = [{ type: "text", text }]
        await hooks["chat.message"]({ sessionID: session ?? this.talk }, { message: { id: `u${n}` }, parts })
        seen.output = parts[0].text.slice(text.length)
      } else {
        const session = type === "stop" ? this.root : this.child
        const before = this.holds(session).length
        await hooks["experimental.text.complete"]({ sessionID: session, messageID: FINAL, partID: `p${n}` }, { text })
        seen.holds = this.holds(session).slice(before)
      }
    } catch (error) {
      seen.threw = error.message
    }
    seen.ms = performance.now() - started
    clearTimeout(reference)
    return seen
  }

  holds(session) {
    return this.client.calls.filter((c) => c.name === "session.prompt" && c.args.path.id === session).map((c) => c.args.body.parts[0].text)
  }

  toasts() {
    return this.client.calls.filter((c) => c.name === "tui.showToast").map((c) => c.args.body.message)
  }

  /** Calls made at once; each is checked against what it may meet. Returns what each got. */
  async step(calls) {
    for (const c of calls) {
      if (c.type !== "stop" && c.type !== "substop") continue
      // a stop is decided once per turn: first the turn's prompt, into what the core is now
      await this.step([{ type: "prompt", session: c.type === "stop" ? this.root : this.child, fault: null, expect: c.fault ? REAL : c.expect }])
    }
    const toastsBefore = this.toasts().length
    const seen = await Promise.all(calls.map((c) => this.call(c.type, c.fault, c.session)))
    const notices = this.toasts().slice(toastsBefore).map(parseNotice)
    return seen.map((s, i) => this.check(s, calls[i], notices)).concat(leftover(notices))
  }

  /** The call settled by its deadline, give or take the margin, once the lateness of a plain timer
   * for the same deadline is taken off. */
  time(seen) {
    const budget = this.budgets[seen.event]
    const ratio = (seen.ms - seen.timerLate) / budget
    if (ratio > this.worst.ratio) this.worst = { ratio, ms: seen.ms, timerLate: seen.timerLate, budget, event: seen.event }
    this.worstRaw = Math.max(this.worstRaw, seen.ms / budget)
    assert.ok(ratio <= 1 + MARGIN, `${seen.event} took ${seen.ms.toFixed(0)} ms (a timer due at its deadline ran ` +
      `${seen.timerLate.toFixed(0)} ms late); its deadline was ${budget} ms`)
  }

  /** What a call got, held against what it may get: "real", "closed" or "open". */
  check(seen, call, notices) {
    this.time(seen)
    const got = outcome(seen, notices, call.expect)
    const where = `${call.type} with ${call.fault ?? "no fault"}: ${JSON.stringify(seen)}\nsteps: ${this.history.slice(-3).join(" | ")}\nlog: ${this.client.calls.filter((c) => c.name === "app.log").slice(-6).map((c) => c.args.body.message).join("\n     ")}`
    assert.ok(got, `neither the real verdict nor the fail mode: ${where}`)
    if (got.kind === "real") assert.ok(call.expect.real, `the real verdict, where the fault leaves none: ${where}`)
    else assert.ok(call.expect.why?.test(got.why), `failed ${got.kind} for the wrong reason (${got.why}): ${where}`)
    this.outcomes[got.kind === "real" ? "real" : got.kind === "closed" ? "refused (fail closed)" : "went ahead (fail open)"] += 1
    return got
  }
}

const REAL = { real: true, why: null }
const parseNotice = (text) => {
  const match = /^hookgate could not decide this (\w+) \((.*)\); no gate on it fails closed, so it goes ahead\.$/.exec(text)
  assert.ok(match, `a notice to the user that is not a fail-open notice: ${text}`)
  return { event: match[1], why: match[2], used: false }
}
const leftover = (notices) => {
  const unused = notices.filter((n) => !n.used)
  assert.deepEqual(unused, [], "a fail-open notice no call accounts for")
  return []
}
/** The notice of a call that went ahead: one for its event, saying why as it may, if there is one. */
const takeNotice = (notices, event, why) => {
  const unused = notices.filter((n) => !n.used && n.event === event)
  const notice = unused.find((n) => why?.test(n.why)) ?? unused[0]
  if (notice) notice.used = true
  return notice
}

/** "real" (the stand-in's own verdict), "closed" (refused by the fail mode) or "open" (went ahead
 * by the fail mode, with the user's notice saying why); null when it is neither. */
function outcome(seen, notices, expect) {
  const closed = (text) => {
    const match = /^hookgate could not decide this (\w+) \((.*)\); (\S+) fail closed, so it is blocked until the hookgate core answers again/.exec(text ?? "")
    return match && match[1] === seen.event && match[3] === CLOSED_BY[seen.type] ? { kind: "closed", why: match[2] } : null
  }
  const open = () => {
    const notice = takeNotice(notices, seen.event, expect.why)
    return notice ? { kind: "open", why: notice.why } : null
  }
  const real = { kind: "real" }
  switch (seen.type) {
    case "write": case "bash":
      return seen.threw === undefined ? real : closed(seen.threw)
    case "write-gd":
      return /^no .*\.gd$/.test(seen.threw) ? real : closed(seen.threw)
    case "fetch":
      return seen.threw !== undefined ? null : open() ?? real // the real verdict allows it too: only a notice tells them apart
    case "after":
      return seen.threw !== undefined ? null : seen.output === "ran\n\nseen PostToolUse Bash" ? real : seen.output === "ran" ? open() : null
    case "prompt":
      return seen.threw !== undefined ? null : seen.output === "\n\n[hookgate] seen UserPromptSubmit" ? real : seen.output === "" ? open() : null
    case "stop":
      return seen.threw !== undefined ? null : seen.holds.length === 0 ? open()
        : seen.holds.length === 1 && seen.holds[0] === "[hookgate] You may not stop yet:\nno report" ? real : null
    case "substop": {
      if (seen.threw !== undefined || seen.holds.length !== 1) return null
      const [hold] = seen.holds
      return hold === "[hookgate] You may not stop yet:\nno report" ? real
        : hold.startsWith("[hookgate] You may not stop yet:\n") ? closed(hold.slice("[hookgate] You may not stop yet:\n".length)) : null
    }
  }
  return null
}

/** The faults, as steps: each a group of calls made at once, with what each may get. */
function plan(rng) {
  const pool = Object.values(PLAN).flatMap((kinds) => Object.entries(kinds).flatMap(([kind, count]) => Array(count).fill(kind)))
  shuffle(pool, rng)
  const take = (predicate) => pool.filter(predicate)
  const chunks = (faults, most) => {
    const out = []
    for (let i = 0; i < faults.length;) {
      const size = 1 + Math.floor(rng() * most)
      out.push(faults.slice(i, i + size))
      i += size
    }
    return out
  }
  const crashes = take((k) => CRASHES.has(k))
  const steps = [
    // a start that fails needs a core to start: it follows a crash
    ...take((k) => k.startsWith("start-")).map((start) => ({ kind: "restart", faults: [crashes.pop(), start] })),
    ...crashes.map((crash) => ({ kind: "crash", faults: [crash] })),
    ...take((k) => k === "wedge").map((wedge) => ({ kind: "wedge", faults: [wedge] })),
    ...chunks(take((k) => WHY[k] === SILENT && k !== "wedge"), 8).map((faults) => ({ kind: "silent", faults })),
    ...chunks(take((k) => ANSWERED_AT_ONCE.has(k)), 3).map((faults) => ({ kind: "refused", faults })),
    ...chunks(take((k) => TOLERATED.has(k)), 4).map((faults) => ({ kind: "tolerated", faults })),
  ]
  return shuffle(steps, rng)
}

function shuffle(list, rng) {
  for (let i = list.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [list[i], list[j]] = [list[j], list[i]]
  }
  return list
}

/** Calls of different types (one stop per session at a time), faulted ones first. */
function callsFor(lane, faults, expectFault, companions, expectCompanion, calls = CALLS) {
  const types = shuffle([...calls], lane.rng)
  const used = new Set()
  const next = () => {
    const type = types.find((t) => !((t === "stop" || t === "substop") && used.has(t))) ?? "write"
    used.add(type)
    types.push(types.splice(types.indexOf(type), 1)[0]) // the others come first next time
    return type
  }
  return [
    ...faults.map((fault) => ({ type: next(), fault, expect: expectFault(fault) })),
    ...Array.from({ length: companions }, () => ({ type: next(), fault: null, expect: expectCompanion })),
  ]
}

async function runStep(lane, step) {
  lane.history.push(`${step.kind} ${step.faults.join(",")}`)
  const companions = Math.floor(lane.rng() * 3)
  const failed = (fault) => ({ real: TOLERATED.has(fault), why: WHY[fault] ?? null })
  if (step.kind === "restart") {
    const [crash, start] = step.faults
    writeFileSync(path.join(lane.dir, "start-fault"), start.slice("start-".length))
    await lane.step(callsFor(lane, [crash], failed, 0))
    // the core that starts now does not come up (not a stop: its turn's prompt would start it)
    await lane.step(callsFor(lane, [start], (fault) => ({ real: false, why: anyOf(WHY[fault], STARTING) }), 0, null, CALLS.filter((c) => !c.includes("stop"))))
    // a failed start is retried after a pause; calls meanwhile fail at once and say until when
    await comesBack(lane, WHY[start], START_GAVE_UP, BACKOFF)
    assert.ok(!existsSync(path.join(lane.dir, "start-fault")), "the start fault was not met")
  } else if (step.kind === "crash") {
    // the others in flight with the crash are answered first, lost with it, or meet the next core starting
    await lane.step(callsFor(lane, step.faults, failed, companions, { real: true, why: anyOf(WHY[step.faults[0]], STARTING) }))
    await comesBack(lane)
  } else if (step.kind === "wedge") {
    await lane.step(callsFor(lane, step.faults, failed, 0))
    // a stuck core is killed once silent for longer than any decision may take (the longest budget):
    // by the end of the next call at the latest; until then, calls fail in time
    const met = await comesBack(lane, SILENT)
    assert.ok(met.filter((why) => SILENT.test(why)).length <= 1, `a stuck core was not replaced in time: ${met.join("; ")}`)
  } else {
    await lane.step(callsFor(lane, step.faults, failed, companions, REAL))
    await comesBack(lane)
  }
}

/** After a fault, the core is back: a healthy call gets the real verdict. Until then, it may fail
 * only for the reasons given, or because a new core is still starting (a busy machine: the start
 * goes on for the next call). Returns why the calls before failed. */
async function comesBack(lane, ...reasons) {
  const met = []
  for (let tries = 0; tries < 10; tries++) {
    const [got] = await lane.step(callsFor(lane, [], null, 1, { real: true, why: anyOf(STARTING, ...reasons) }))
    if (got.kind === "real") return met
    met.push(got.why)
    lane.waits[STARTING.test(got.why) ? "still starting" : "other"] += 1
    const backoff = /next try in (\d+) ms/.exec(got.why)
    if (backoff) await sleep(Number(backoff[1]) + 20)
  }
  assert.fail(`the core did not come back (steps: ${lane.history.slice(-3).join(" | ")}; met: ${met.join("; ")})`)
}

test("1000 core faults under the plugin: every call settles in time, fail modes hold, the core comes back", async (t) => {
  const previous = process.env.FAKE_CORE_CAPS
  process.env.FAKE_CORE_CAPS = JSON.stringify(CAPS) // what the cores the plugins start announce
  const rng = random(SEED)
  const steps = plan(rng)
  const lanes = Array.from({ length: LANES }, (_, i) => new Lane(i, random(SEED * 1000 + i)))
  lag.enable()
  const started = performance.now()
  try {
    await Promise.all(lanes.map(async (lane, i) => {
      await lane.open()
      for (let s = i; s < steps.length; s += LANES) await runStep(lane, steps[s])
    }))
  } finally {
    await Promise.all(lanes.map((lane) => lane.hooks?.dispose()))
    if (previous === undefined) delete process.env.FAKE_CORE_CAPS
    else process.env.FAKE_CORE_CAPS = previous
  }
  const wall = performance.now() - started
  lag.disable()
  await noChildrenLeft()
  assert.deepEqual(problems, [])

  // every fault planned was carried out by a core
  const done = {}
  for (const lane of lanes) {
    const log = existsSync(path.join(lane.dir, "faults.log")) ? readFileSync(path.join(lane.dir, "faults.log"), "utf8") : ""
    for (const kind of log.split("\n").filter(Boolean)) done[kind] = (done[kind] ?? 0) + 1
  }
  const planned = Object.fromEntries(Object.values(PLAN).flatMap(Object.entries))
  assert.deepEqual(done, planned)
  const total = Object.values(done).reduce((a, b) => a + b, 0)
  assert.equal(total, 1000)

  const outcomes = {}
  for (const lane of lanes) for (const [k, v] of Object.entries(lane.outcomes)) outcomes[k] = (outcomes[k] ?? 0) + v
  const worst = lanes.map((l) => l.worst).reduce((a, b) => (b.ratio > a.ratio ? b : a))
  t.diagnostic(`faults carried out: ${total} in ${(wall / 1000).toFixed(1)} s over ${LANES} lanes (seed ${SEED})`)
  for (const [family, kinds] of Object.entries(PLAN)) {
    const count = Object.keys(kinds).reduce((sum, k) => sum + done[k], 0)
    t.diagnostic(`  ${family} ${count}: ${Object.keys(kinds).map((k) => `${k} ${done[k]}`).join(", ")}`)
  }
  const starts = lanes.reduce((sum, lane) => sum + lane.client.calls.filter((c) => c.name === "app.log" && /hookgate core \S+ started/.test(c.args.body.message)).length, 0)
  t.diagnostic(`cores started: ${starts}; this process used ${(process.cpuUsage().user / 1e6).toFixed(1)} s of CPU`)
  t.diagnostic(`hook calls checked: ${Object.values(outcomes).reduce((a, b) => a + b, 0)} (${Object.entries(outcomes).map(([k, v]) => `${k} ${v}`).join(", ")})`)
  const waits = { "still starting": 0, other: 0 }
  for (const lane of lanes) for (const [k, v] of Object.entries(lane.waits)) waits[k] += v
  t.diagnostic(`healthy calls after a fault that met no core yet: ${waits["still starting"]} a core still starting, ${waits.other} a failed start or a stuck core not yet replaced`)
  t.diagnostic(`slowest call against its deadline: ${worst.ratio.toFixed(3)} once a plain timer's lateness is taken off ` +
    `(${worst.event}: ${worst.ms.toFixed(0)} ms, the timer ${worst.timerLate.toFixed(0)} ms late, of ${worst.budget} ms; allowed ${1 + MARGIN}); ` +
    `${Math.max(...lanes.map((l) => l.worstRaw)).toFixed(3)} as measured; this process's event loop was late by up to ${(lag.max / 1e6).toFixed(0)} ms`)
})

// -- the real core ---------------------------------------------------------------------------------

const SLOW_POLICY = `import time
from hookgate import register_hook

# holds a Bash call in the core long enough to kill the core under it
register_hook("slow-bash", "pre_tool_use", {"tool": "Bash", "command_pattern": "^sleep-in-core"}, {"timeout_ms": 20000},
              lambda event: time.sleep(10))
`

function realProject() {
  const root = mkdtempSync(path.join(os.tmpdir(), "hookgate-faults-real-"))
  mkdirSync(path.join(root, ".hookgate", "policies"), { recursive: true })
  writeFileSync(path.join(root, ".hookgate", "current_role"), "build\n")
  writeFileSync(path.join(root, ".hookgate", "policies", "slow.py"), SLOW_POLICY)
  return root
}

const corePids = (client) => client.calls.filter((c) => c.name === "app.log")
  .map((c) => /hookgate core \S+ started \(pid (\d+)\)/.exec(c.args.body.message)?.[1]).filter(Boolean).map(Number)

test("the real core, killed with SIGKILL mid-session again and again, and stopped with SIGSTOP: fail modes, then real verdicts", async (t) => {
  const root = realProject()
  const client = fakeClient()
  const hooks = await HookgatePlugin({ client, directory: root }, { command: realCore() })
  const before = (tool, args, n) => hooks["tool.execute.before"]({ tool, sessionID: "ses_real", callID: `c${n}` }, { args })
  const timed = async (promise) => {
    const started = performance.now()
    try {
      await promise
      return { ms: performance.now() - started }
    } catch (error) {
      return { ms: performance.now() - started, threw: error.message }
    }
  }
  const realBlock = async (n) => {
    await assert.rejects(before("write", { filePath: path.join(root, "src", `p${n}.gd`), content: "" }, n),
      /Build role cannot write game code directly \(p\d+\.gd\)/)
  }
  const KILLS = 6
  let worst = 0
  // the deadline the plugin gives a PreToolUse: what this project's core announces for it
  const probe = new CoreClient({ command: realCore(), cwd: root, log: () => {} })
  await probe.evaluate({ hook_event_name: "Notification", session_id: "probe", cwd: root, notification_type: "probe", message: "" })
  const budget = { PreToolUse: probe.timeoutFor("PreToolUse"), PostToolUse: probe.timeoutFor("PostToolUse") }
  await probe.dispose()
  const restarts = () => client.calls.filter((c) => c.name === "app.log" && /it is started again on the next event/.test(c.args.body.message)).length
  try {
    await realBlock(0)
    for (let round = 1; round <= KILLS; round++) {
      const pid = corePids(client).at(-1)
      // a Bash call the core is busy deciding, and the result of an earlier call queued behind it
      const slow = timed(before("bash", { command: "sleep-in-core && echo hi", description: "x" }, `${round}a`))
      const output = { title: "ls", output: "ran", metadata: {} }
      const after = timed(hooks["tool.execute.after"]({ tool: "bash", sessionID: "ses_real", callID: `${round}b`, args: { command: "ls" } }, output))
      await sleep(400)
      process.kill(pid, "SIGKILL")
      const [bash, afterwards] = await Promise.all([slow, after])
      assert.match(bash.threw ?? "", /^hookgate could not decide this PreToolUse \(the core exited \(signal SIGKILL\)\); .*check_shell_writes.* fail closed/)
      assert.equal(afterwards.threw, undefined) // no gate on PostToolUse fails closed: it goes ahead, as it was
      assert.equal(output.output, "ran")
      worst = Math.max(worst, bash.ms / budget.PreToolUse, afterwards.ms / budget.PostToolUse)
      // the next calls start a new core, which decides
      await realBlock(round)
      assert.notEqual(corePids(client).at(-1), pid)
      await before("write", { filePath: path.join(root, `notes${round}.txt`), content: "" }, `${round}c`)
    }
    // killed while idle (its last decision's records written, just after the answer): once the
    // plugin has seen it go, the next call starts a new one
    for (let i = 0; i < 200 && !metrics(root, "ses_real").some((r) => r.event === "file_write" && r.file === `notes${KILLS}.txt`); i++) await sleep(20)
    const seen = restarts()
    process.kill(corePids(client).at(-1), "SIGKILL")
    for (let i = 0; i < 200 && restarts() === seen; i++) await sleep(20)
    await realBlock(KILLS + 1)
    assert.ok(client.calls.some((c) => c.name === "tui.showToast" && /could not decide this PostToolUse \(the core exited \(signal SIGKILL\)\); no gate on it fails closed, so it goes ahead/.test(c.args.body.message)))
    const pids = corePids(client)
    assert.equal(new Set(pids).size, KILLS + 2)
    const blocks = () => metrics(root, "ses_real").filter((r) => r.event === "hook_block" && r.gate === "check_file_permissions")
    for (let i = 0; i < 200 && blocks().length < KILLS + 2; i++) await sleep(20) // the last one is written just after its answer
    const records = metrics(root, "ses_real")
    // every decision after a restart was the real core's: the blocks and the allowed writes were recorded
    assert.equal(records.filter((r) => r.event === "hook_block" && r.gate === "check_file_permissions").length, KILLS + 2)
    assert.equal(records.filter((r) => r.event === "file_write" && /^notes\d+\.txt$/.test(r.file)).length, KILLS)
  } finally {
    await hooks.dispose()
  }
  await noChildrenLeft()

  // a stuck core (SIGSTOP: it neither answers nor dies) is replaced once it has been silent for as
  // long as a decision may take, here the registration's fixed 4 s
  const stuckClient = fakeClient()
  const fixed = 4000
  const stuck = await HookgatePlugin({ client: stuckClient, directory: root }, { command: realCore(), timeoutMs: fixed })
  const write = (n) => stuck["tool.execute.before"]({ tool: "write", sessionID: "ses_stuck", callID: `s${n}` }, { args: { filePath: path.join(root, "src", `s${n}.gd`), content: "" } })
  try {
    await assert.rejects(write(0), /Build role cannot write game code directly/)
    const pid = corePids(stuckClient).at(-1)
    process.kill(pid, "SIGSTOP")
    const stalled = await timed(write(1))
    assert.match(stalled.threw ?? "", /could not decide this PreToolUse \(no answer from the core within 4000 ms\); .*check_file_permissions.* fail closed/)
    worst = Math.max(worst, stalled.ms / fixed)
    // the next call starts a new core (on a busy machine, its start may take longer than one call)
    for (let n = 2; ; n++) {
      const next = await timed(write(n))
      worst = Math.max(worst, next.ms / fixed)
      const why = /could not decide this PreToolUse \((.*)\); /.exec(next.threw ?? "")?.[1]
      if (why && STARTING.test(why) && n < 4) continue
      assert.match(next.threw ?? "", new RegExp(`Build role cannot write game code directly \\(s${n}\\.gd\\)`))
      break
    }
    assert.notEqual(corePids(stuckClient).at(-1), pid)
    assert.ok(stuckClient.calls.some((c) => c.name === "app.log" && /the core answered nothing for \d+ ms; it is started again/.test(c.args.body.message)))
  } finally {
    await stuck.dispose()
  }
  await noChildrenLeft()
  assert.deepEqual(problems, [])
  t.diagnostic(`real core: ${KILLS} kills mid-decision, 1 while idle, 1 stopped; slowest call against its deadline: ${worst.toFixed(3)}`)
  assert.ok(worst <= 1 + MARGIN)
})
