// The core's process and its frames: newline-delimited JSON on the child's stdin/stdout, its
// stderr passed on line by line to the log. It knows nothing of requests: the client
// (client.ts) gives it messages to write and is told of each message read and of the end.

import { spawn as spawnProcess, type ChildProcess, type SpawnOptions } from "node:child_process"

export type Log = (level: "info" | "warn" | "error", message: string) => void

export type Spawn = (program: string, args: readonly string[], options: SpawnOptions) => ChildProcess

export interface TransportOptions {
  /** argv of the core, e.g. ["/venv/bin/hookgate", "serve", "--stdio"] */
  command: readonly string[]
  cwd?: string
  env?: NodeJS.ProcessEnv
  spawn?: Spawn
  log: Log
  /** each message read: a parsed JSON line (any JSON value: the client checks what it is) */
  onMessage: (message: unknown, line: string) => void
  /** the process is gone (exited, or could not be run); called once */
  onGone: (why: string) => void
}

/** One running core process. */
export class CoreProcess {
  readonly child: ChildProcess
  private ended = false

  constructor(private readonly options: TransportOptions) {
    const [program, ...args] = options.command
    this.child = (options.spawn ?? spawnProcess)(program ?? "hookgate", args, {
      cwd: options.cwd, env: options.env ?? process.env, stdio: ["pipe", "pipe", "pipe"],
    })
    this.attach()
  }

  get pid(): number | undefined { return this.child.pid }
  get exitCode(): number | null { return this.child.exitCode }
  get signalCode(): NodeJS.Signals | null { return this.child.signalCode }
  get running(): boolean { return this.child.exitCode === null && this.child.signalCode === null }

  /** Write one message as a frame. A core that died meanwhile is reported by its exit. */
  write(message: unknown): void {
    this.child.stdin?.write(JSON.stringify(message) + "\n")
  }

  /** No more frames: a core that reads its stdin to the end then leaves. */
  endInput(): void {
    this.child.stdin?.end()
  }

  kill(): void {
    if (this.running) this.child.kill("SIGKILL")
  }

  /** Resolves when the process has exited (at once if it has). */
  exited(): Promise<void> {
    if (!this.running) return Promise.resolve()
    return new Promise((resolve) => this.child.once("exit", () => resolve()))
  }

  /** Whether the process keeps Node's event loop alive: only while its exit is awaited. */
  hold(held: boolean): void {
    if (held) this.child.ref()
    else this.child.unref()
  }

  private gone(why: string) {
    if (this.ended) return
    this.ended = true
    this.options.onGone(why)
  }

  private attach() {
    const { child, options } = this
    let buffer = ""
    child.stdout?.setEncoding("utf8")
    child.stdout?.on("data", (chunk: string) => {
      buffer += chunk
      let newline
      while ((newline = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, newline).trim()
        buffer = buffer.slice(newline + 1)
        if (line) this.read(line)
      }
    })
    let errors = ""
    child.stderr?.setEncoding("utf8")
    child.stderr?.on("data", (chunk: string) => {
      errors += chunk
      const lines = errors.split("\n")
      errors = lines.pop() ?? ""
      for (const line of lines) if (line.trim()) options.log("warn", line)
    })
    child.stdin?.on("error", () => {}) // EPIPE when the core died; its exit rejects what is pending
    child.on("error", (error) => this.gone(`could not run ${options.command[0]}: ${error.message}`))
    child.on("exit", (code, signal) => this.gone(`the core exited (${signal ? "signal " + signal : "code " + code})`))
    // the core must never keep OpenCode (or a test) alive; the client's deadline timer holds it while a request is pending
    child.unref()
    for (const stream of [child.stdin, child.stdout, child.stderr]) unrefStream(stream)
  }

  private read(line: string) {
    let message: unknown
    try {
      message = JSON.parse(line)
    } catch {
      this.options.log("warn", `hookgate core sent a line that is not JSON: ${line.slice(0, 200)}`)
      return
    }
    this.options.onMessage(message, line)
  }
}

// the pipes are net.Sockets at run time, whose unref() the stream types do not declare
function unrefStream(stream: unknown) {
  const unref = (stream as { unref?: () => void } | null)?.unref
  if (typeof unref === "function") unref.call(stream)
}
