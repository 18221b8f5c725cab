// The JSON-RPC 2.0 client of the hookgate core (`hookgate serve --stdio`), after the MCP client:
// the core is started lazily on the first request, every request waits in a map of pending
// requests under its own deadline, all of them are rejected when the process goes away, and the
// next request starts a new one. The process and its frames are transport.ts's.
// Whatever the core sends is checked before it is believed: a line that is no message is skipped,
// an answer that is no verdict counts as no answer, and a core that stays silent for longer than
// any decision may take is killed, so that the next request starts a working one.
import { availableParallelism } from "node:os";
import { AwakeChoice } from "./awake.js";
import { PROTOCOL_VERSION, isCapabilities, isObject, isVerdict, } from "./protocol.js";
import { CoreProcess } from "./transport.js";
export const DEFAULT_TIMEOUT_MS = 10_000;
// how long a core may take to answer initialize. A start is not tied to the request that began it:
// that request gives up at its own deadline, and the core goes on starting for the next ones (a
// busy machine can take longer to start Python than a PostToolUse may wait)
export const START_TIMEOUT_MS = 10_000;
const SHUTDOWN_GRACE_MS = 2_000;
// after a start that failed, requests fail at once for this long (doubling up to the cap), so a
// broken install is not respawned on every tool call
const BACKOFF_MS = [250, 500, 1_000, 2_000, 5_000];
// How long after a request the client may keep the event loop turning (setImmediate: each turn
// polls for I/O without blocking) while the answer is due, instead of sleeping in the poll until
// it comes. A core answers in a fraction of a millisecond, and a process whose CPU went idle
// meanwhile is woken late; but turning takes a CPU the core may need. Whether it pays is measured
// per client (awake.ts) unless the registration fixes it. Not for a request within this long of
// the last answer, whose CPUs have not gone idle (turning there bought nothing and lengthened the
// tail), nor on a single CPU, where it would take the core's.
export const AWAKE_MS = availableParallelism() > 1 ? 1 : 0;
/** The core's argv: the registration's `command`, else $HOOKGATE_COMMAND, else `hookgate` on PATH. */
export function coreCommand(options = {}, env = process.env) {
    const given = options.command ?? env.HOOKGATE_COMMAND;
    const base = Array.isArray(given) ? [...given] : given ? [given] : ["hookgate"];
    return base.includes("serve") ? base : [...base, "serve", "--stdio"];
}
export class CoreUnavailable extends Error {
    constructor(message) {
        super(message);
        this.name = "CoreUnavailable";
    }
}
const isBudget = (ms) => typeof ms === "number" && Number.isFinite(ms) && ms > 0;
function withinDeadline(promise, deadline, what) {
    let timer;
    const late = new Promise((_, reject) => {
        timer = setTimeout(() => reject(new CoreUnavailable(`${what} ${deadline.budgetMs} ms`)), Math.max(0, deadline.at - Date.now()));
    });
    return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
const excerpt = (value) => String(JSON.stringify(value)).slice(0, 200);
export class CoreClient {
    options;
    log;
    child = null;
    starting = null;
    nextId = 0;
    pending = new Map();
    capabilities = undefined;
    server = undefined;
    failedStarts = 0;
    retryAt = 0;
    disposed = false;
    quietSince = null; // since when the running core has been asked something and said nothing
    heardAt = 0; // when it last answered a request in time
    awakeUntil = 0; // performance.now() until which the event loop keeps turning, while answers are due
    answeredAt = -Infinity; // performance.now() of the last answer
    turning = false;
    awake; // whether to turn, measured here, unless the registration says
    // One timer for the deadlines of every pending request, due at the earliest when it was set and
    // kept from one request to the next: setting and clearing a timer per request took more than the
    // rest of a request's JavaScript on a call after a pause. It holds the process alive only while
    // a request is pending.
    watch = null;
    watchAt = Infinity;
    constructor(options) {
        this.options = options;
        this.log = options.log ?? (() => { });
        this.awake = options.awakeMs === undefined && AWAKE_MS > 0 ? new AwakeChoice(AWAKE_MS) : null;
    }
    /** The deadline for one event: the fixed one, or what the core said its gates may take. */
    timeoutFor(eventName) {
        const declared = this.capabilities?.events?.[eventName]?.timeout_ms;
        return this.options.timeoutMs ?? (isBudget(declared) ? declared : DEFAULT_TIMEOUT_MS);
    }
    /** How long the core may be silent while asked something: the longest any decision may take
     * (the server answers in turn, each within its gates' timeouts). Past that, it is stuck. */
    stuckAfterMs() {
        const declared = Object.values(this.capabilities?.events ?? {}).map((e) => e?.timeout_ms).filter(isBudget);
        return this.options.timeoutMs ?? (declared.length ? Math.max(...declared) : DEFAULT_TIMEOUT_MS);
    }
    /** Evaluate one canonical event; the verdict, or a CoreUnavailable when there is none in time. */
    async evaluate(event) {
        const verdict = await this.request("evaluate", { event }, this.timeoutFor(event.hook_event_name));
        if (!isVerdict(verdict))
            throw new CoreUnavailable(`the core answered with no verdict: ${excerpt(verdict)}`);
        return verdict;
    }
    /** One request; starting the core, if needed, counts against the same budget. */
    request(method, params, budgetMs = DEFAULT_TIMEOUT_MS) {
        const deadline = { at: Date.now() + budgetMs, budgetMs, startMs: 0 };
        // a running core is asked at once, without a turn of the event loop before the write
        if (this.child && this.server && !this.disposed)
            return this.send(this.child, method, params, deadline);
        return this.startThenSend(method, params, deadline);
    }
    async startThenSend(method, params, deadline) {
        const child = await this.ensureStarted(deadline);
        deadline.startMs = deadline.budgetMs - (deadline.at - Date.now()); // told if the rest runs out
        return this.send(child, method, params, deadline);
    }
    ensureStarted(deadline) {
        if (this.disposed)
            return Promise.reject(new CoreUnavailable("the plugin was disposed"));
        if (this.child && this.server)
            return Promise.resolve(this.child);
        if (!this.starting) {
            if (Date.now() < this.retryAt) {
                return Promise.reject(new CoreUnavailable(`the core failed to start ${this.failedStarts} time(s); next try in ${this.retryAt - Date.now()} ms`));
            }
            this.starting = this.start().finally(() => { this.starting = null; });
        }
        return withinDeadline(this.starting, deadline, "the core was still starting after");
    }
    async start() {
        const budgetMs = this.options.startTimeoutMs ?? START_TIMEOUT_MS;
        const deadline = { at: Date.now() + budgetMs, budgetMs };
        const child = new CoreProcess({
            command: this.options.command, cwd: this.options.cwd, env: this.options.env, spawn: this.options.spawn, log: this.log,
            onMessage: (message, line) => this.receive(message, line),
            onGone: (why) => this.gone(child, why),
        });
        this.child = child;
        try {
            const info = await this.send(child, "initialize", {
                protocol: PROTOCOL_VERSION, runtime: "opencode", versions: this.options.clientInfo ?? {},
            }, deadline);
            if (!isObject(info))
                throw new CoreUnavailable(`the core answered initialize with ${excerpt(info)}`);
            const started = info;
            this.server = started.server;
            this.setCapabilities(started.capabilities);
            this.failedStarts = 0;
            this.log("info", `hookgate core ${started.server?.version} started (pid ${started.server?.pid}) for ${started.project}`);
            if (started.error)
                this.log("warn", started.error);
            return child;
        }
        catch (error) {
            this.failedStarts += 1;
            this.retryAt = Date.now() + (BACKOFF_MS[Math.min(this.failedStarts, BACKOFF_MS.length) - 1] ?? 0);
            this.kill(child); // a core that does not answer initialize in time is of no use
            throw error instanceof CoreUnavailable ? error : new CoreUnavailable(`the core did not start: ${error.message}`);
        }
    }
    receive(message, line) {
        if (!isObject(message)) {
            this.log("warn", `hookgate core sent a line that is no JSON-RPC message: ${line.slice(0, 200)}`);
            return;
        }
        if (message.id === undefined || message.id === null) {
            this.notified(message);
            return;
        }
        const waiting = typeof message.id === "number" ? this.pending.get(message.id) : undefined;
        if (!waiting)
            return; // answered after its deadline (the hook went on without it), or never asked
        this.pending.delete(message.id);
        if (!this.pending.size)
            this.watch?.unref();
        // only an answer in time shows the core deciding: a notification comes from its reload thread
        // and a late answer from a loop that has since stopped, so neither holds off the recycling
        this.heardAt = Date.now();
        this.answeredAt = performance.now();
        if (waiting.wait !== undefined)
            this.awake?.took(waiting.wait, this.answeredAt - waiting.sentAt);
        this.quietSince = this.pending.size ? this.heardAt : null;
        const error = isObject(message.error) ? message.error : message.error ? {} : null;
        if (error)
            waiting.reject(new CoreUnavailable(`the core refused ${error.code}: ${error.message}`));
        else
            waiting.resolve(message.result);
    }
    /** A message that answers no request: a policy reload, or an error about no request in particular. */
    notified(message) {
        const params = isObject(message.params) ? message.params : undefined;
        if (message.method === "policy/reloaded") {
            if (params?.capabilities)
                this.setCapabilities(params.capabilities);
            this.log(params?.ok ? "info" : "warn", params?.ok ? `policy reloaded (generation ${params.generation})` : `policy reload failed: ${params?.error}`);
        }
        else if (message.error) {
            this.log("warn", `hookgate core: ${isObject(message.error) ? message.error.message : undefined}`);
        }
    }
    send(child, method, params, deadline) {
        return new Promise((resolve, reject) => {
            if (!child.running || child !== this.child)
                return reject(new CoreUnavailable("the core is not running"));
            const id = ++this.nextId;
            const late = () => {
                const starting = deadline.startMs ? `, ${deadline.startMs} of them spent starting it` : "";
                reject(new CoreUnavailable(`no answer from the core within ${deadline.budgetMs} ms${starting}`));
                this.recycleIfStuck(child);
            };
            const sentAt = performance.now();
            const wait = this.server ? this.awakeFor(sentAt) : undefined; // not for initialize: a start takes far longer
            this.pending.set(id, { resolve, reject, at: deadline.at, late, sentAt, wait });
            this.watchDeadline(deadline.at);
            // asked when the request was made, unless a start it waited for answered since
            this.quietSince ??= Math.max(deadline.at - deadline.budgetMs, this.heardAt);
            child.write({ jsonrpc: "2.0", id, method, params });
            if (wait)
                this.stayAwake(sentAt + wait);
        });
    }
    /** The watch is due by `at`, and holds the process alive (a request is pending). */
    watchDeadline(at) {
        if (this.watch && this.watchAt <= at) {
            this.watch.ref();
            return;
        }
        if (this.watch)
            clearTimeout(this.watch);
        this.watchAt = at;
        this.watch = setTimeout(() => this.deadlinesPassed(), Math.max(0, at - Date.now()));
    }
    /** Every request whose deadline has passed is given up; the watch is set for the next one. */
    deadlinesPassed() {
        this.watch = null;
        this.watchAt = Infinity;
        const now = Date.now();
        let next = Infinity;
        for (const [id, waiting] of this.pending) {
            if (waiting.at > now) {
                next = Math.min(next, waiting.at);
                continue;
            }
            this.pending.delete(id);
            waiting.late();
        }
        if (next < Infinity && this.pending.size)
            this.watchDeadline(next);
    }
    /** How long to keep the loop turning for a request sent at `now`: the registration's awakeMs or
     * the measured choice's; undefined when the last answer came less than that window ago. */
    awakeFor(now) {
        const fixed = this.options.awakeMs;
        if (now - this.answeredAt < (fixed ?? AWAKE_MS))
            return undefined;
        return fixed ?? this.awake?.wait() ?? 0;
    }
    /** Keep the event loop turning until `until` (performance.now()), or until nothing is pending. */
    stayAwake(until) {
        this.awakeUntil = until;
        if (this.turning)
            return;
        this.turning = true;
        const turn = () => {
            this.turning = this.pending.size > 0 && performance.now() < this.awakeUntil;
            if (this.turning)
                setImmediate(turn);
        };
        setImmediate(turn);
    }
    /** A core that said nothing for longer than any decision may take will not answer again. */
    recycleIfStuck(child) {
        const quiet = this.quietSince === null ? 0 : Date.now() - this.quietSince;
        if (child === this.child && quiet >= this.stuckAfterMs())
            this.kill(child, `the core answered nothing for ${quiet} ms`);
    }
    setCapabilities(capabilities) {
        if (!isCapabilities(capabilities)) {
            this.log("warn", `hookgate core sent capabilities that make no sense (kept the earlier ones): ${excerpt(capabilities)}`);
            return;
        }
        this.capabilities = capabilities;
        this.options.onCapabilities?.(capabilities);
    }
    gone(child, why) {
        if (child !== this.child)
            return;
        this.child = null;
        this.server = undefined;
        this.quietSince = null;
        if (!this.disposed)
            this.log("warn", `${why}; it is started again on the next event`);
        for (const [id, waiting] of this.pending) {
            waiting.reject(new CoreUnavailable(why));
            this.pending.delete(id);
        }
        this.watch?.unref();
    }
    kill(child, why = "the core was stopped") {
        child.kill();
        this.gone(child, why);
    }
    /** Ask the core to shut down (it answers what is in flight first), then make sure it is gone. */
    async dispose() {
        this.disposed = true;
        const child = this.child;
        if (!child || !child.running)
            return;
        const exited = child.exited();
        child.hold(true); // its exit is awaited, even with nothing else left to do
        if (!this.server) { // still starting: there is nothing to finish
            this.kill(child);
            return exited;
        }
        try {
            await this.send(child, "shutdown", undefined, { at: Date.now() + SHUTDOWN_GRACE_MS, budgetMs: SHUTDOWN_GRACE_MS });
        }
        catch { /* it is going away either way */ }
        child.endInput();
        const timer = setTimeout(() => child.kill(), SHUTDOWN_GRACE_MS);
        await exited;
        clearTimeout(timer);
    }
}
