import { type CanonicalEvent, type Capabilities, type ServerInfo, type Verdict } from "./protocol.js";
import { CoreProcess, type Log, type Spawn } from "./transport.js";
export declare const DEFAULT_TIMEOUT_MS = 10000;
export declare const START_TIMEOUT_MS = 10000;
export declare const AWAKE_MS: number;
/** Where the core's command may come from: the registration's options. */
export interface CommandOptions {
    command?: string | readonly string[];
}
/** The core's argv: the registration's `command`, else $HOOKGATE_COMMAND, else `hookgate` on PATH. */
export declare function coreCommand(options?: CommandOptions, env?: NodeJS.ProcessEnv): string[];
export declare class CoreUnavailable extends Error {
    constructor(message: string);
}
export interface CoreOptions {
    /** argv of the core, e.g. ["/venv/bin/hookgate", "serve", "--stdio"] */
    command: readonly string[];
    cwd?: string;
    env?: NodeJS.ProcessEnv;
    /** a fixed per-request deadline (default: the core's per event) */
    timeoutMs?: number;
    /** how long a start may take (default START_TIMEOUT_MS) */
    startTimeoutMs?: number;
    /** how long to keep the event loop turning while an answer is due after a pause, every time
     * (0: never); default: AWAKE_MS, or 0, whichever answered sooner on this machine (awake.ts) */
    awakeMs?: number;
    /** sent with initialize */
    clientInfo?: Record<string, unknown>;
    log?: Log;
    onCapabilities?: (capabilities: Capabilities) => void;
    spawn?: Spawn;
}
/** When a request must be answered by; `startMs` is what starting the core took of it. */
export interface Deadline {
    at: number;
    budgetMs: number;
    startMs?: number;
}
interface Pending {
    resolve: (result: unknown) => void;
    reject: (error: Error) => void;
    at: number;
    late: () => void;
    sentAt: number;
    wait?: number;
}
export declare class CoreClient {
    readonly options: CoreOptions;
    private readonly log;
    child: CoreProcess | null;
    starting: Promise<CoreProcess> | null;
    private nextId;
    readonly pending: Map<number, Pending>;
    capabilities: Capabilities | undefined;
    server: ServerInfo["server"] | undefined;
    private failedStarts;
    private retryAt;
    private disposed;
    private quietSince;
    private heardAt;
    private awakeUntil;
    private answeredAt;
    private turning;
    private readonly awake;
    private watch;
    private watchAt;
    constructor(options: CoreOptions);
    /** The deadline for one event: the fixed one, or what the core said its gates may take. */
    timeoutFor(eventName: string): number;
    /** How long the core may be silent while asked something: the longest any decision may take
     * (the server answers in turn, each within its gates' timeouts). Past that, it is stuck. */
    stuckAfterMs(): number;
    /** Evaluate one canonical event; the verdict, or a CoreUnavailable when there is none in time. */
    evaluate(event: CanonicalEvent): Promise<Verdict>;
    /** One request; starting the core, if needed, counts against the same budget. */
    request(method: string, params: unknown, budgetMs?: number): Promise<unknown>;
    private startThenSend;
    ensureStarted(deadline: Deadline): Promise<CoreProcess>;
    private start;
    private receive;
    /** A message that answers no request: a policy reload, or an error about no request in particular. */
    private notified;
    send(child: CoreProcess, method: string, params: unknown, deadline: Deadline): Promise<unknown>;
    /** The watch is due by `at`, and holds the process alive (a request is pending). */
    private watchDeadline;
    /** Every request whose deadline has passed is given up; the watch is set for the next one. */
    private deadlinesPassed;
    /** How long to keep the loop turning for a request sent at `now`: the registration's awakeMs or
     * the measured choice's; undefined when the last answer came less than that window ago. */
    private awakeFor;
    /** Keep the event loop turning until `until` (performance.now()), or until nothing is pending. */
    private stayAwake;
    /** A core that said nothing for longer than any decision may take will not answer again. */
    private recycleIfStuck;
    private setCapabilities;
    private gone;
    private kill;
    /** Ask the core to shut down (it answers what is in flight first), then make sure it is gone. */
    dispose(): Promise<void>;
}
export {};
