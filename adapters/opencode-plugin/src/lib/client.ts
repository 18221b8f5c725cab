// The JSON-RPC 2.0 client of the hookgate core (`hookgate serve --stdio`), after the MCP client:
// the core is started lazily on the first request, every request waits in a map of pending
// requests under its own deadline, all of them are rejected when the process goes away, and the
// next request starts a new one. The process and its frames are transport.ts's.
// Whatever the core sends is checked before it is believed: a line that is no message is skipped,
// an answer that is no verdict counts as no answer, and a core that stays silent for longer than
// any decision may take is killed, so that the next request starts a working one.

import { availableParallelism } from "node:os"

import { AwakeChoice } from "./awake.js"
import {
  type CanonicalEvent, type Capabilities, type ServerInfo, type Verdict,
  PROTOCOL_VERSION, isCapabilities, isObject, isVerdict,
} from "./protocol.js"
import { CoreProcess, type Log, type Spawn } from "./transport.js"

export const DEFAULT_TIMEOUT_MS = 10_000
// how long a core may take to answer initialize. A start is not tied to the request that began it:
// that request gives up at its own deadline, and the core goes on starting for the next ones (a
// busy machine can take longer to start Python than a PostToolUse may wait)
export const START_TIMEOUT_MS = 10_000
const SHUTDOWN_GRACE_MS = 2_000
// after a start that failed, requests fail at once for this long (doubling up to the cap), so a
// broken install is not respawned on every tool call
const BACKOFF_MS = [250, 500, 1_000, 2_000, 5_000]
// How long after a request the client may keep the event loop turning (setImmediate: each turn
// polls for I/O without blocking) while the answer is due, instead of sleeping in the poll until
// it comes. A core answers in a fraction of a millisecond, and a process whose CPU went idle
// meanwhile is woken late; but turning takes a CPU the core may need. Whether it pays is measured
// per client (awake.ts) unless the registration fixes it. Not for a request within this long of
// the last answer, whose CPUs have not gone idle (turning there bought nothing and lengthened the
// tail), nor on a single CPU, where it would take the core's.
export const AWAKE_MS = availableParallelism() > 1 ? 1 : 0

/** Where the core's command may come from: the registration's options. */
export interface CommandOptions {
  command?: string | readonly string[]
}

/** The core's argv: the registration's `command`, else $HOOKGATE_COMMAND, else `hookgate` on PATH. */
export function coreCommand(options: CommandOptions = {}, env: NodeJS.ProcessEnv = process.env): string[] {
  const given = options.command ?? env.HOOKGATE_COMMAND
  const base = Array.isArray(given) ? [...given] : given ? [given as string] : ["hookgate"]
  return base.includes("serve") ? base : [...base, "serve", "--stdio"]
}

export class CoreUnavailable extends Error {
  constructor(message: string) {
    super(message)
    this.name = "CoreUnavailable"
  }
}

export interface CoreOptions {
  /** argv of the core, e.g. ["/venv/bin/hookgate", "serve", "--stdio"] */
  command: readonly string[]
  cwd?: string
  env?: NodeJS.ProcessEnv
  /** a fixed per-request deadline (default: the core's per event) */
  timeoutMs?: number
  /** how long a start may take (default START_TIMEOUT_MS) */
  startTimeoutMs?: number
  /** how long to keep the event loop turning while an answer is due after a pause, every time
   * (0: never); default: AWAKE_MS, or 0, whichever answered sooner on this machine (awake.ts) */
  awakeMs?: number
  /** sent with initialize */
  clientInfo?: Record<string, unknown>
  log?: Log
  onCapabilities?: (capabilities: Capabilities) => void
  spawn?: Spawn
}

/** When a request must be answered by; `startMs` is what starting the core took of it. */
export interface Deadline {
  at: number
  budgetMs: number
  startMs?: number
}

interface Pending {
  resolve: (result: unknown) => void
  reject: (error: Error) => void
  at: number // Date.now() by which it must be answered
  late: () => void // what its deadline passing does
  sentAt: number // performance.now()
  wait?: number // how long the loop turned for it, when it was sent after a pause
}

const isBudget = (ms: unknown): ms is number => typeof ms === "number" && Number.isFinite(ms) && ms > 0

function withinDeadline<T>(promise: Promise<T>, deadline: Deadline, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new CoreUnavailable(`${what} ${deadline.budgetMs} ms`)),
      Math.max(0, deadline.at - Date.now()))
  })
  return Promise.race([promise, late]).finally(() => clearTimeout(timer))
}

const excerpt = (value: unknown) => String(JSON.stringify(value)).slice(0, 200)

export class CoreClient {
  readonly options: CoreOptions
  private readonly log: Log
  child: CoreProcess | null = null
  starting: Promise<CoreProcess> | null = null
  private nextId = 0
  readonly pending = new Map<number, Pending>()
  capabilities: Capabilities | undefined = undefined
  server: ServerInfo["server"] | undefined = undefined
  private failedStarts = 0
  private retryAt = 0
  private disposed = false
  private quietSince: number | null = null // since when the running core has been asked something and said nothing
  private heardAt = 0 // when it last answered a request in time
  private awakeUntil = 0 // performance.now() until which the event loop keeps turning, while answers are due
  private answeredAt = -Infinity // performance.now() of the last answer
  private turning = false
  private readonly awake: AwakeChoice | null // whether to turn, measured here, unless the registration says
  // One timer for the deadlines of every pending request, due at the earliest when it was set and
  // kept from one request to the next: setting and clearing a timer per request took more than the
  // rest of a request's JavaScript on a call after a pause. It holds the process alive only while
  // a request is pending.
  private watch: ReturnType<typeof setTimeout> | null = null
  private watchAt = Infinity

  constructor(options: CoreOptions) {
    this.options = options
    this.log = options.log ?? (() => {})
    this.awake = options.awakeMs === undefined && AWAKE_MS > 0 ? new AwakeChoice(AWAKE_MS) : null
  }

  /** The deadline for one event: the fixed one, or what the core said its gates may take. */
  timeoutFor(eventName: string): number {
    const declared = this.capabilities?.events?.[eventName]?.timeout_ms
    return this.options.timeoutMs ?? (isBudget(declared) ? declared : DEFAULT_TIMEOUT_MS)
  }

  /** How long the core may be silent while asked something: the longest any decision may take
   * (the server answers in turn, each within its gates' timeouts). Past that, it is stuck. */
  stuckAfterMs(): number {
    const declared = Object.values(this.capabilities?.events ?? {}).map((e) => e?.timeout_ms).filter(isBudget)
    return this.options.timeoutMs ?? (declared.length ? Math.max(...declared) : DEFAULT_TIMEOUT_MS)
  }

  /** Evaluate one canonical event; the verdict, or a CoreUnavailable when there is none in time. */
  async evaluate(event: CanonicalEvent): Promise<Verdict> {
    const verdict = await this.request("evaluate", { event }, this.timeoutFor(event.hook_event_name))
    if (!isVerdict(verdict)) throw new CoreUnavailable(`the core answered with no verdict: ${excerpt(verdict)}`)
    return verdict
  }

  /** One request; starting the core, if needed, counts against the same budget. */
  request(method: string, params: unknown, budgetMs = DEFAULT_TIMEOUT_MS): Promise<unknown> {
    const deadline: Deadline = { at: Date.now() + budgetMs, budgetMs, startMs: 0 }
    // a running core is asked at once, without a turn of the event loop before the write
    if (this.child && this.server && !this.disposed) return this.send(this.child, method, params, deadline)
    return this.startThenSend(method, params, deadline)
  }

  private async startThenSend(method: string, params: unknown, deadline: Deadline): Promise<unknown> {
    const child = await this.ensureStarted(deadline)
    deadline.startMs = deadline.budgetMs - (deadline.at - Date.now()) // told if the rest runs out
    return this.send(child, method, params, deadline)
  }

  ensureStarted(deadline: Deadline): Promise<CoreProcess> {
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

  private async start(): Promise<CoreProcess> {
    const budgetMs = this.options.startTimeoutMs ?? START_TIMEOUT_MS
    const deadline = { at: Date.now() + budgetMs, budgetMs }
    const child: CoreProcess = new CoreProcess({
      command: this.options.command, cwd: this.options.cwd, env: this.options.env, spawn: this.options.spawn, log: this.log,
      onMessage: (message, line) => this.receive(message, line),
      onGone: (why) => this.gone(child, why),
    })
    this.child = child
    try {
      const info = await this.send(child, "initialize", {
        protocol: PROTOCOL_VERSION, runtime: "opencode", versions: this.options.clientInfo ?? {},
      }, deadline)
      if (!isObject(info)) throw new CoreUnavailable(`the core answered initialize with ${excerpt(info)}`)
      const started = info as ServerInfo
      this.server = started.server
      this.setCapabilities(started.capabilities)
      this.failedStarts = 0
      this.log("info", `hookgate core ${started.server?.version} started (pid ${started.server?.pid}) for ${started.project}`)
      if (started.error) this.log("warn", started.error)
      return child
    } catch (error) {
      this.failedStarts += 1
      this.retryAt = Date.now() + (BACKOFF_MS[Math.min(this.failedStarts, BACKOFF_MS.length) - 1] ?? 0)
      this.kill(child) // a core that does not answer initialize in time is of no use
      throw error instanceof CoreUnavailable ? error : new CoreUnavailable(`the core did not start: ${(error as Error).message}`)
    }
  }

  private receive(message: unknown, line: string) {
    if (!isObject(message)) {
      this.log("warn", `hookgate core sent a line that is no JSON-RPC message: ${line.slice(0, 200)}`)
      return
    }
    if (message.id === undefined || message.id === null) {
      this.notified(message)
      return
    }
    const waiting = typeof message.id === "number" ? this.pending.get(message.id) : undefined
    if (!waiting) return // answered after its deadline (the hook went on without it), or never asked
    this.pending.delete(message.id as number)
    if (!this.pending.size) this.watch?.unref()
    // only an answer in time shows the core deciding: a notification comes from its reload thread
    // and a late answer from a loop that has since stopped, so neither holds off the recycling
    this.heardAt = Date.now()
    this.answeredAt = performance.now()
    if (waiting.wait !== undefined) this.awake?.took(waiting.wait, this.answeredAt - waiting.sentAt)
    this.quietSince = this.pending.size ? this.heardAt : null
    const error = isObject(message.error) ? message.error : message.error ? {} : null
    if (error) waiting.reject(new CoreUnavailable(`the core refused ${error.code}: ${error.message}`))
    else waiting.resolve(message.result)
  }

  /** A message that answers no request: a policy reload, or an error about no request in particular. */
  private notified(message: Record<string, unknown>) {
    const params = isObject(message.params) ? message.params : undefined
    if (message.method === "policy/reloaded") {
      if (params?.capabilities) this.setCapabilities(params.capabilities)
      this.log(params?.ok ? "info" : "warn",
        params?.ok ? `policy reloaded (generation ${params.generation})` : `policy reload failed: ${params?.error}`)
    } else if (message.error) {
      this.log("warn", `hookgate core: ${isObject(message.error) ? message.error.message : undefined}`)
    }
  }

  send(child: CoreProcess, method: string, params: unknown, deadline: Deadline): Promise<unknown> {
    return new Promise((resolve, reject) => {
      if (!child.running || child !== this.child) return reject(new CoreUnavailable("the core is not running"))
      const id = ++this.nextId
      const late = () => {
        const starting = deadline.startMs ? `, ${deadline.startMs} of them spent starting it` : ""
        reject(new CoreUnavailable(`no answer from the core within ${deadline.budgetMs} ms${starting}`))
        this.recycleIfStuck(child)
      }
      const sentAt = performance.now()
      const wait = this.server ? this.awakeFor(sentAt) : undefined // not for initialize: a start takes far longer
      this.pending.set(id, { resolve, reject, at: deadline.at, late, sentAt, wait })
      this.watchDeadline(deadline.at)
      // asked when the request was made, unless a start it waited for answered since
      this.quietSince ??= Math.max(deadline.at - deadline.budgetMs, this.heardAt)
      child.write({ jsonrpc: "2.0", id, method, params })
      if (wait) this.stayAwake(sentAt + wait)
    })
  }

  /** The watch is due by `at`, and holds the process alive (a request is pending). */
  private watchDeadline(at: number) {
    if (this.watch && this.watchAt <= at) {
      this.watch.ref()
      return
    }
    if (this.watch) clearTimeout(this.watch)
    this.watchAt = at
    this.watch = setTimeout(() => this.deadlinesPassed(), Math.max(0, at - Date.now()))
  }

  /** Every request whose deadline has passed is given up; the watch is set for the next one. */
  private deadlinesPassed() {
    this.watch = null
    this.watchAt = Infinity
    const now = Date.now()
    let next = Infinity
    for (const [id, waiting] of this.pending) {
      if (waiting.at > now) {
        next = Math.min(next, waiting.at)
        continue
      }
      this.pending.delete(id)
      waiting.late()
    }
    if (next < Infinity && this.pending.size) this.watchDeadline(next)
  }

  /** How long to keep the loop turning for a request sent at `now`: the registration's awakeMs or
   * the measured choice's; undefined when the last answer came less than that window ago. */
  private awakeFor(now: number): number | undefined {
    const fixed = this.options.awakeMs
    if (now - this.answeredAt < (fixed ?? AWAKE_MS)) return undefined
    return fixed ?? this.awake?.wait() ?? 0
  }

  /** Keep the event loop turning until `until` (performance.now()), or until nothing is pending. */
  private stayAwake(until: number) {
    this.awakeUntil = until
    if (this.turning) return
    this.turning = true
    const turn = () => {
      this.turning = this.pending.size > 0 && performance.now() < this.awakeUntil
      if (this.turning) setImmediate(turn)
    }
    setImmediate(turn)
  }

  /** A core that said nothing for longer than any decision may take will not answer again. */
  private recycleIfStuck(child: CoreProcess) {
    const quiet = this.quietSince === null ? 0 : Date.now() - this.quietSince
    if (child === this.child && quiet >= this.stuckAfterMs()) this.kill(child, `the core answered nothing for ${quiet} ms`)
  }

  private setCapabilities(capabilities: unknown) {
    if (!isCapabilities(capabilities)) {
      this.log("warn", `hookgate core sent capabilities that make no sense (kept the earlier ones): ${excerpt(capabilities)}`)
      return
    }
    this.capabilities = capabilities
    this.options.onCapabilities?.(capabilities)
  }

  private gone(child: CoreProcess, why: string) {
    if (child !== this.child) return
    this.child = null
    this.server = undefined
    this.quietSince = null
    if (!this.disposed) this.log("warn", `${why}; it is started again on the next event`)
    for (const [id, waiting] of this.pending) {
      waiting.reject(new CoreUnavailable(why))
      this.pending.delete(id)
    }
    this.watch?.unref()
  }

  private kill(child: CoreProcess, why = "the core was stopped") {
    child.kill()
    this.gone(child, why)
  }

  /** Ask the core to shut down (it answers what is in flight first), then make sure it is gone. */
  async dispose(): Promise<void> {
    this.disposed = true
    const child = this.child
    if (!child || !child.running) return
    const exited = child.exited()
    child.hold(true) // its exit is awaited, even with nothing else left to do
    if (!this.server) { // still starting: there is nothing to finish
      this.kill(child)
      return exited
    }
    try {
      await this.send(child, "shutdown", undefined, { at: Date.now() + SHUTDOWN_GRACE_MS, budgetMs: SHUTDOWN_GRACE_MS })
    } catch { /* it is going away either way */ }
    child.endInput()
    const timer = setTimeout(() => child.kill(), SHUTDOWN_GRACE_MS)
    await exited
    clearTimeout(timer)
  }
}
