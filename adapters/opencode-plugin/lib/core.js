// The JSON-RPC 2.0 client of the hookgate core (`hookgate serve --stdio`), after the MCP client:
// the core is spawned lazily on the first request, every request waits in a map of pending
// requests under its own deadline, all of them are rejected when the process goes away, and the
// next request starts a new one. Frames are newline-delimited JSON on the child's stdin/stdout.
// Whatever the core sends is checked before it is believed: a line that is no message is skipped,
// an answer that is no verdict counts as no answer, and a core that stays silent for longer than
// any decision may take is killed, so that the next request starts a working one.

import { spawn as spawnProcess } from "node:child_process"

export const PROTOCOL_VERSION = 1
export const DEFAULT_TIMEOUT_MS = 10_000
// how long a core may take to answer initialize. A start is not tied to the request that began it:
// that request gives up at its own deadline, and the core goes on starting for the next ones (a
// busy machine can take longer to start Python than a PostToolUse may wait)
export const START_TIMEOUT_MS = 10_000
const SHUTDOWN_GRACE_MS = 2_000
// after a start that failed, requests fail at once for this long (doubling up to the cap), so a
// broken install is not respawned on every tool call
const BACKOFF_MS = [250, 500, 1_000, 2_000, 5_000]

/** The core's argv: the registration's `command`, else $HOOKGATE_COMMAND, else `hookgate` on PATH. */
export function coreCommand(options = {}, env = process.env) {
  const given = options.command ?? env.HOOKGATE_COMMAND
  const base = Array.isArray(given) ? given : given ? [given] : ["hookgate"]
  return base.includes("serve") ? base : [...base, "serve", "--stdio"]
}

export class CoreUnavailable extends Error {
  constructor(message) {
    super(message)
    this.name = "CoreUnavailable"
  }
}

/**
 * @typedef {object} CoreOptions
 * @property {string[]} command argv of the core, e.g. ["/venv/bin/hookgate", "serve", "--stdio"]
 * @property {string} [cwd]
 * @property {Record<string, string | undefined>} [env]
 * @property {number} [timeoutMs] a fixed per-request deadline (default: the core's per event)
 * @property {number} [startTimeoutMs] how long a start may take (default START_TIMEOUT_MS)
 * @property {Record<string, unknown>} [clientInfo] sent with initialize
 * @property {(level: string, message: string) => void} [log]
 * @property {(caps: any) => void} [onCapabilities]
 * @property {typeof spawnProcess} [spawn]
 */

// what each kind of verdict must carry (core/hookgate/model/verdicts.py); anything else is no verdict
const VERDICT_FIELDS = new Map([
  ["allow", []], ["context", [["context", "string"]]], ["modify", [["updated_input", "object"]]],
  ["ask", [["reason", "string"]]], ["retry", [["reason", "string"]]], ["block", [["reason", "string"]]],
])
const isObject = (value) => typeof value === "object" && value !== null && !Array.isArray(value)
const isText = (value) => value === undefined || value === null || typeof value === "string"
const isBudget = (ms) => Number.isFinite(ms) && ms > 0

/** Whether the core's answer to evaluate is a verdict the plugin can carry out. */
export function isVerdict(value) {
  const fields = isObject(value) && VERDICT_FIELDS.get(value.kind)
  return Boolean(fields) && isText(value.message) && isText(value.context) &&
    fields.every(([name, type]) => (type === "object" ? isObject(value[name]) : typeof value[name] === type))
}

function withinDeadline(promise, deadline, what) {
  let timer
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new CoreUnavailable(`${what} ${deadline.budgetMs} ms`)),
      Math.max(0, deadline.at - Date.now()))
  })
  return Promise.race([promise, late]).finally(() => clearTimeout(timer))
}

export class CoreClient {
  /** @param {CoreOptions} options */
  constructor(options) {
    this.options = options
    this.log = options.log ?? (() => {})
    this.child = null
    this.starting = null
    this.nextId = 0
    /** @type {Map<number, {resolve: Function, reject: Function, timer: any}>} */
    this.pending = new Map()
    this.capabilities = undefined
    this.server = undefined
    this.failedStarts = 0
    this.retryAt = 0
    this.disposed = false
    this.quietSince = null // since when the running core has been asked something and said nothing
    this.heardAt = 0 // when it last answered a request in time
  }

  /** The deadline for one event: the fixed one, or what the core said its gates may take. */
  timeoutFor(eventName) {
    const declared = this.capabilities?.events?.[eventName]?.timeout_ms
    return this.options.timeoutMs ?? (isBudget(declared) ? declared : DEFAULT_TIMEOUT_MS)
  }

  /** How long the core may be silent while asked something: the longest any decision may take
   * (the server answers in turn, each within its gates' timeouts). Past that, it is stuck. */
  stuckAfterMs() {
    const declared = Object.values(this.capabilities?.events ?? {}).map((e) => e?.timeout_ms).filter(isBudget)
    return this.options.timeoutMs ?? (declared.length ? Math.max(...declared) : DEFAULT_TIMEOUT_MS)
  }

  /** Evaluate one canonical event; the verdict, or a CoreUnavailable when there is none in time. */
  async evaluate(event) {
    const verdict = await this.request("evaluate", { event }, this.timeoutFor(event.hook_event_name))
    if (!isVerdict(verdict)) {
      throw new CoreUnavailable(`the core answered with no verdict: ${String(JSON.stringify(verdict)).slice(0, 200)}`)
    }
    return verdict
  }

  /** One request; starting the core, if needed, counts against the same budget. */
  async request(method, params, budgetMs = DEFAULT_TIMEOUT_MS) {
    const deadline = { at: Date.now() + budgetMs, budgetMs, startMs: 0 }
    const running = Boolean(this.child && this.server)
    const child = await this.ensureStarted(deadline)
    if (!running) deadline.startMs = budgetMs - (deadline.at - Date.now()) // told if the rest runs out
    return this.send(child, method, params, deadline)
  }

  ensureStarted(deadline) {
    if (this.disposed) return Promise.reject(new CoreUnavailable("the plugin was disposed"))
    if (this.child && this.server) return Promise.resolve(this.child)
    if (!this.starting) {
      if (Date.now() < this.retryAt) {
        return Promise.reject(new CoreUnavailable(`the core failed to start ${this.failedStarts} time(s); next try in ${this.retryAt - Date.now()} ms`))
      }
      this.starting = this.start().finally(() => { this.starting = null })
    }
    return withinDeadline(this.starting, deadline, "the core was still starting after")
  }

  async start() {
    const budgetMs = this.options.startTimeoutMs ?? START_TIMEOUT_MS
    const deadline = { at: Date.now() + budgetMs, budgetMs }
    const [program, ...args] = this.options.command
    const child = (this.options.spawn ?? spawnProcess)(program, args, {
      cwd: this.options.cwd, env: this.options.env ?? process.env, stdio: ["pipe", "pipe", "pipe"],
    })
    this.child = child
    this.attach(child)
    try {
      const info = await this.send(child, "initialize", {
        protocol: PROTOCOL_VERSION, runtime: "opencode", versions: this.options.clientInfo ?? {},
      }, deadline)
      if (!isObject(info)) throw new CoreUnavailable(`the core answered initialize with ${String(JSON.stringify(info)).slice(0, 200)}`)
      this.server = info.server
      this.setCapabilities(info.capabilities)
      this.failedStarts = 0
      this.log("info", `hookgate core ${info.server?.version} started (pid ${info.server?.pid}) for ${info.project}`)
      if (info.error) this.log("warn", info.error)
      return child
    } catch (error) {
      this.failedStarts += 1
      this.retryAt = Date.now() + BACKOFF_MS[Math.min(this.failedStarts, BACKOFF_MS.length) - 1]
      this.kill(child) // a core that does not answer initialize in time is of no use
      throw error instanceof CoreUnavailable ? error : new CoreUnavailable(`the core did not start: ${error.message}`)
    }
  }

  attach(child) {
    let buffer = ""
    child.stdout.setEncoding("utf8")
    child.stdout.on("data", (chunk) => {
      buffer += chunk
      let newline
      while ((newline = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, newline).trim()
        buffer = buffer.slice(newline + 1)
        if (line) this.receive(line)
      }
    })
    let errors = ""
    child.stderr.setEncoding("utf8")
    child.stderr.on("data", (chunk) => {
      errors += chunk
      const lines = errors.split("\n")
      errors = lines.pop() ?? ""
      for (const line of lines) if (line.trim()) this.log("warn", line)
    })
    child.stdin.on("error", () => {}) // EPIPE when the core died; its exit rejects what is pending
    child.on("error", (error) => this.gone(child, `could not run ${this.options.command[0]}: ${error.message}`))
    child.on("exit", (code, signal) => this.gone(child, `the core exited (${signal ? "signal " + signal : "code " + code})`))
    // the core must never keep OpenCode (or a test) alive; pending requests hold their own timers
    child.unref?.()
    for (const stream of [child.stdin, child.stdout, child.stderr]) stream?.unref?.()
  }

  receive(line) {
    let message
    try {
      message = JSON.parse(line)
    } catch {
      this.log("warn", `hookgate core sent a line that is not JSON: ${line.slice(0, 200)}`)
      return
    }
    if (!isObject(message)) {
      this.log("warn", `hookgate core sent a line that is no JSON-RPC message: ${line.slice(0, 200)}`)
      return
    }
    if (message.id === undefined || message.id === null) {
      if (message.method === "policy/reloaded") {
        if (message.params?.capabilities) this.setCapabilities(message.params.capabilities)
        this.log(message.params?.ok ? "info" : "warn",
          message.params?.ok ? `policy reloaded (generation ${message.params.generation})` : `policy reload failed: ${message.params?.error}`)
      } else if (message.error) {
        this.log("warn", `hookgate core: ${message.error.message}`)
      }
      return
    }
    const waiting = this.pending.get(message.id)
    if (!waiting) return // answered after its deadline (the hook went on without it), or never asked
    this.pending.delete(message.id)
    // only an answer in time shows the core deciding: a notification comes from its reload thread
    // and a late answer from a loop that has since stopped, so neither holds off the recycling
    this.heardAt = Date.now()
    this.quietSince = this.pending.size ? this.heardAt : null
    clearTimeout(waiting.timer)
    if (message.error) waiting.reject(new CoreUnavailable(`the core refused ${message.error.code}: ${message.error.message}`))
    else waiting.resolve(message.result)
  }

  send(child, method, params, deadline) {
    return new Promise((resolve, reject) => {
      if (child.exitCode !== null || child.signalCode !== null || child !== this.child) {
        return reject(new CoreUnavailable("the core is not running"))
      }
      const id = ++this.nextId
      const timer = setTimeout(() => {
        this.pending.delete(id)
        const starting = deadline.startMs ? `, ${deadline.startMs} of them spent starting it` : ""
        reject(new CoreUnavailable(`no answer from the core within ${deadline.budgetMs} ms${starting}`))
        this.recycleIfStuck(child)
      }, Math.max(0, deadline.at - Date.now()))
      this.pending.set(id, { resolve, reject, timer })
      // asked when the request was made, unless a start it waited for answered since
      this.quietSince ??= Math.max(deadline.at - deadline.budgetMs, this.heardAt)
      child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n")
    })
  }

  /** A core that said nothing for longer than any decision may take will not answer again. */
  recycleIfStuck(child) {
    const quiet = this.quietSince === null ? 0 : Date.now() - this.quietSince
    if (child === this.child && quiet >= this.stuckAfterMs()) this.kill(child, `the core answered nothing for ${quiet} ms`)
  }

  setCapabilities(capabilities) {
    if (!isObject(capabilities) || !isObject(capabilities.events) || !Object.values(capabilities.events).every(isObject)) {
      this.log("warn", `hookgate core sent capabilities that make no sense (kept the earlier ones): ${String(JSON.stringify(capabilities)).slice(0, 200)}`)
      return
    }
    this.capabilities = capabilities
    this.options.onCapabilities?.(capabilities)
  }

  gone(child, why) {
    if (child !== this.child) return
    this.child = null
    this.server = undefined
    this.quietSince = null
    if (!this.disposed) this.log("warn", `${why}; it is started again on the next event`)
    for (const [id, waiting] of this.pending) {
      clearTimeout(waiting.timer)
      waiting.reject(new CoreUnavailable(why))
      this.pending.delete(id)
    }
  }

  kill(child, why = "the core was stopped") {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
    this.gone(child, why)
  }

  /** Ask the core to shut down (it answers what is in flight first), then make sure it is gone. */
  async dispose() {
    this.disposed = true
    const child = this.child
    if (!child || child.exitCode !== null || child.signalCode !== null) return
    const exited = new Promise((resolve) => child.once("exit", resolve))
    child.ref?.() // its exit is awaited, even with nothing else left to do
    if (!this.server) { // still starting: there is nothing to finish
      this.kill(child)
      return exited
    }
    try {
      await this.send(child, "shutdown", undefined, { at: Date.now() + SHUTDOWN_GRACE_MS, budgetMs: SHUTDOWN_GRACE_MS })
    } catch { /* it is going away either way */ }
    child.stdin.end()
    const timer = setTimeout(() => child.kill("SIGKILL"), SHUTDOWN_GRACE_MS)
    await exited
    clearTimeout(timer)
  }
}
