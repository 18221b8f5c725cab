// A stand-in core for the client's tests: speaks the same frames, misbehaves on request.
//   FAKE_CORE_MODE=normal    answers initialize and evaluate: blocks *.gd writes, and a Stop or
//                            SubagentStop whose last message has no "REPORT"; else allows, with context
//                            (a tool input with `rewrite_to` is answered with a modify)
//   FAKE_CORE_MODE=hang      answers initialize, never evaluate
//   FAKE_CORE_MODE=mute      answers nothing at all
//   FAKE_CORE_MODE=die       exits on the first evaluate
//   FAKE_CORE_MODE=noisy     writes a line of garbage before every answer
//   FAKE_CORE_CAPS=<json>    the capabilities initialize announces (default: a small set below)
//   FAKE_CORE_EVENTS=<file>  every event asked about is appended to <file>, one JSON line each
//
// Injected faults, for the fault suite: a request whose params contain `FAULT:<kind>` (or
// `FAULT:<kind>:<variant>`), in a tool argument, a prompt or a final text, suffers that fault
// (FAULTS below), so each hook call carries its own. A file `start-fault` in the working directory
// makes the next core that starts there misbehave (or be slow) before it answers initialize (START_FAULTS),
// once: the core that reads it removes it. Every fault a core carries out is first appended to
// `faults.log` there, so a test can count what was really done.
import { appendFileSync, readFileSync, rmSync } from "node:fs"
import readline from "node:readline"

const mode = process.env.FAKE_CORE_MODE ?? "normal"
const caps = process.env.FAKE_CORE_CAPS ? JSON.parse(process.env.FAKE_CORE_CAPS) : {
  events: {
    PreToolUse: { fail_mode: "closed", timeout_ms: 6000, gates: [{ id: "check_file_permissions", matcher: "Write|Edit", fail_mode: "closed" }] },
    PostToolUse: { fail_mode: "open", timeout_ms: 1000, gates: [] },
  },
}
const frame = (message) => JSON.stringify(message) + "\n"
// all output goes out in turn, so a frame sent in pieces is never interleaved with another
let output = Promise.resolve()
const write = (text, pauseMs = 0) => {
  output = output.then(() => pauseMs && new Promise((resolve) => setTimeout(resolve, pauseMs))).then(() => { process.stdout.write(text) })
}
const send = (message) => {
  if (mode === "noisy") write("not a frame\n")
  write(frame(message))
}
const die = (code) => { output = output.then(() => process.stdout.write("", () => process.exit(code))) } // after what was written
const stayAlive = () => setInterval(() => {}, 60_000) // a stuck core does not go away by itself
const budget = (event) => caps.events?.[event.hook_event_name]?.timeout_ms ?? 1000
const answerTo = (request, result) => ({ jsonrpc: "2.0", id: request.id, result })

// a stuck core: reads on, answers nothing (not even shutdown), and outlives its stdin
let wedged = false

const hello = (request) => send({ jsonrpc: "2.0", id: request.id, result: { protocol: 1, server: { name: "fake", version: "0", pid: process.pid }, project: process.cwd(), capabilities: caps } })
const START_FAULTS = {
  exit: () => process.exit(9),
  slow: (request) => setTimeout(() => hello(request), 800),
  mute: () => { wedged = true; stayAlive() },
  error: (request) => send({ jsonrpc: "2.0", id: request.id, error: { code: -32603, message: "internal error: the policy did not load" } }),
  garbage: (request) => send(answerTo(request, null)),
}
let startFault = null
try {
  startFault = readFileSync("start-fault", "utf8").trim()
  rmSync("start-fault")
  appendFileSync("faults.log", `start-${startFault}\n`)
} catch { /* a normal start */ }

const SCALARS = ["null", "42", '"allow"', "true", "[]", "{}", '{"jsonrpc":"2.0"}', "[null]"]
const NOT_VERDICTS = [null, "allow", 42, [], { kind: "bogus" }, { kind: "block" }, { kind: "modify" },
  { kind: "constructor" }, { kind: "__proto__", reason: "x" }, { kind: "block", reason: 7 }, { kind: "allow", message: {} }]
const WRONG_IDS = [(id) => id + 100_000, (id) => String(id), () => null, () => undefined, (id) => id + 0.5, (id) => -id]

/** Each fault: what the core does instead of (or before) answering `request` with `result`. */
const FAULTS = {
  // crashes: the core dies with the request unanswered
  exit: () => die(7),
  kill: () => process.kill(process.pid, "SIGKILL"),
  "half-exit": (request, result) => { const text = frame(answerTo(request, result)); write(text.slice(0, text.length >> 1)); die(7) },
  "exit-later": (request, result, event) => setTimeout(() => die(7), budget(event) * 0.3),
  // hangs: no answer in time
  hang: () => {},
  late: (request, result, event) => setTimeout(() => send(answerTo(request, result)), budget(event) * 1.5),
  wedge: () => { wedged = true; stayAlive() },
  // a decision loop stuck while the core's reload thread goes on talking, and its answer far too late
  "wedge-chatty": (request, result) => {
    wedged = true
    setInterval(() => send({ jsonrpc: "2.0", method: "policy/reloaded", params: { ok: true, generation: 2 } }), 100)
    setTimeout(() => send(answerTo(request, result)), 450)
  },
  // garbage the client must see through: the answer still comes
  noise: (request, result) => { write("Traceback (most recent call last):\nnot a frame\n\n   \n"); send(answerTo(request, result)) },
  scalars: (request, result) => { write(SCALARS.join("\n") + "\n"); send(answerTo(request, result)) },
  unsolicited: (request, result) => {
    for (const id of [1e9 + request.id, -1, "never-asked", 0]) send({ jsonrpc: "2.0", id, result: { kind: "block", reason: "not yours" } })
    send({ jsonrpc: "2.0", id: 1e9, error: { code: -32603, message: "not yours either" } })
    send({ jsonrpc: "2.0", method: "bogus/notice", params: { x: 1 } })
    send({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "parse error: a line nobody sent" } })
    send(answerTo(request, result))
  },
  duplicate: (request, result) => { send(answerTo(request, result)); send(answerTo(request, { kind: "block", reason: "the second answer" })) },
  split: (request, result) => {
    const text = frame(answerTo(request, result))
    const third = Math.ceil(text.length / 3)
    write(text.slice(0, third))
    write(text.slice(third, 2 * third), 5)
    write(text.slice(2 * third), 5)
  },
  huge: (request, result) => { write("x".repeat(2 * 1024 * 1024) + "\n"); send(answerTo(request, result)) },
  binary: (request, result) => {
    write(Buffer.from([0x00, 0xff, 0xfe, 0x7b, 0x22, 0xc3, 0x28, 0x0a, 0xe2, 0x82, 0x0a, 0x00, 0x0a]))
    send(answerTo(request, result))
  },
  "bad-notice": (request, result, event, variant) => {
    const junk = [true, "all of them", { events: 5 }, { events: { PreToolUse: "closed" } }, []][variant % 5]
    send({ jsonrpc: "2.0", method: "policy/reloaded", params: { ok: true, generation: 2, capabilities: junk } })
    send(answerTo(request, result))
  },
  // garbage in place of the answer
  "wrong-id": (request, result, event, variant) => send({ jsonrpc: "2.0", id: WRONG_IDS[variant % WRONG_IDS.length](request.id), result }),
  "rpc-error": (request) => send({ jsonrpc: "2.0", id: request.id, error: { code: -32603, message: "internal error: KeyError: 'tool_name'" } }),
  "bad-result": (request, result, event, variant) => send(answerTo(request, NOT_VERDICTS[variant % NOT_VERDICTS.length])),
  truncated: (request, result) => { const text = frame(answerTo(request, result)); write(text.slice(0, text.length - 7) + "\n") },
  glued: (request, result) => { const text = frame(answerTo(request, result)); write(text.slice(0, 20) + text) },
}

function verdict(event) {
  const path = event.tool_input?.file_path ?? ""
  const stopping = ["Stop", "SubagentStop"].includes(event.hook_event_name)
  const refused = path.endsWith(".gd") || (stopping && !event.last_assistant_message?.includes("REPORT"))
  const rewrite = event.tool_input?.rewrite_to
  return rewrite ? { kind: "modify", updated_input: { file_path: rewrite, content: event.tool_input.content }, message: null, context: null }
    : refused ? { kind: "block", reason: `no ${path || "report"}`, message: null, context: null }
    : { kind: "allow", message: null, context: `seen ${event.hook_event_name} ${event.tool_name ?? ""}`.trim() }
}

readline.createInterface({ input: process.stdin }).on("line", (line) => {
  const request = JSON.parse(line)
  if (mode === "mute" || wedged) return
  if (request.method === "initialize") {
    return startFault ? START_FAULTS[startFault](request) : hello(request)
  }
  if (request.method === "shutdown") {
    send({ jsonrpc: "2.0", id: request.id, result: null })
    return process.exit(0)
  }
  if (mode === "hang") return
  if (mode === "die") process.exit(3)
  const event = request.params.event
  if (process.env.FAKE_CORE_EVENTS) appendFileSync(process.env.FAKE_CORE_EVENTS, JSON.stringify(event) + "\n")
  const result = verdict(event)
  const fault = /FAULT:([a-z-]+)(?::(\d+))?/.exec(JSON.stringify(request.params))
  if (fault) {
    appendFileSync("faults.log", `${fault[1]}\n`)
    return FAULTS[fault[1]](request, result, event, Number(fault[2] ?? 0))
  }
  setTimeout(() => send(answerTo(request, result)), Number(event.tool_input?.delay ?? 0))
})
