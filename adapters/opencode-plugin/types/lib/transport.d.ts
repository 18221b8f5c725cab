import { type ChildProcess, type SpawnOptions } from "node:child_process";
export type Log = (level: "info" | "warn" | "error", message: string) => void;
export type Spawn = (program: string, args: readonly string[], options: SpawnOptions) => ChildProcess;
export interface TransportOptions {
    /** argv of the core, e.g. ["/venv/bin/hookgate", "serve", "--stdio"] */
    command: readonly string[];
    cwd?: string;
    env?: NodeJS.ProcessEnv;
    spawn?: Spawn;
    log: Log;
    /** each message read: a parsed JSON line (any JSON value: the client checks what it is) */
    onMessage: (message: unknown, line: string) => void;
    /** the process is gone (exited, or could not be run); called once */
    onGone: (why: string) => void;
}
/** One running core process. */
export declare class CoreProcess {
    private readonly options;
    readonly child: ChildProcess;
    private ended;
    constructor(options: TransportOptions);
    get pid(): number | undefined;
    get exitCode(): number | null;
    get signalCode(): NodeJS.Signals | null;
    get running(): boolean;
    /** Write one message as a frame. A core that died meanwhile is reported by its exit. */
    write(message: unknown): void;
    /** No more frames: a core that reads its stdin to the end then leaves. */
    endInput(): void;
    kill(): void;
    /** Resolves when the process has exited (at once if it has). */
    exited(): Promise<void>;
    /** Whether the process keeps Node's event loop alive: only while its exit is awaited. */
    hold(held: boolean): void;
    private gone;
    private attach;
    private read;
}
