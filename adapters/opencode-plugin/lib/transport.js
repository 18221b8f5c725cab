// The core's process and its frames: newline-delimited JSON on the child's stdin/stdout, its
// stderr passed on line by line to the log. It knows nothing of requests: the client
// (client.ts) gives it messages to write and is told of each message read and of the end.
import { spawn as spawnProcess } from "node:child_process";
/** One running core process. */
export class CoreProcess {
    options;
    child;
    ended = false;
    constructor(options) {
        this.options = options;
        const [program, ...args] = options.command;
        this.child = (options.spawn ?? spawnProcess)(program ?? "hookgate", args, {
            cwd: options.cwd, env: options.env ?? process.env, stdio: ["pipe", "pipe", "pipe"],
        });
        this.attach();
    }
    get pid() { return this.child.pid; }
    get exitCode() { return this.child.exitCode; }
    get signalCode() { return this.child.signalCode; }
    get running() { return this.child.exitCode === null && this.child.signalCode === null; }
    /** Write one message as a frame. A core that died meanwhile is reported by its exit. */
    write(message) {
        this.child.stdin?.write(JSON.stringify(message) + "\n");
    }
    /** No more frames: a core that reads its stdin to the end then leaves. */
    endInput() {
        this.child.stdin?.end();
    }
    kill() {
        if (this.running)
            this.child.kill("SIGKILL");
    }
    /** Resolves when the process has exited (at once if it has). */
    exited() {
        if (!this.running)
            return Promise.resolve();
        return new Promise((resolve) => this.child.once("exit", () => resolve()));
    }
    /** Whether the process keeps Node's event loop alive: only while its exit is awaited. */
    hold(held) {
        if (held)
            this.child.ref();
        else
            this.child.unref();
    }
    gone(why) {
        if (this.ended)
            return;
        this.ended = true;
        this.options.onGone(why);
    }
    attach() {
        const { child, options } = this;
        let buffer = "";
        child.stdout?.setEncoding("utf8");
        child.stdout?.on("data", (chunk) => {
            buffer += chunk;
            let newline;
            while ((newline = buffer.indexOf("\n")) >= 0) {
                const line = buffer.slice(0, newline).trim();
                buffer = buffer.slice(newline + 1);
                if (line)
                    this.read(line);
            }
        });
        let errors = "";
        child.stderr?.setEncoding("utf8");
        child.stderr?.on("data", (chunk) => {
            errors += chunk;
            const lines = errors.split("\n");
            errors = lines.pop() ?? "";
            for (const line of lines)
                if (line.trim())
                    options.log("warn", line);
        });
        child.stdin?.on("error", () => { }); // EPIPE when the core died; its exit rejects what is pending
        child.on("error", (error) => this.gone(`could not run ${options.command[0]}: ${error.message}`));
        child.on("exit", (code, signal) => this.gone(`the core exited (${signal ? "signal " + signal : "code " + code})`));
        // the core must never keep OpenCode (or a test) alive; the client's deadline timer holds it while a request is pending
        child.unref();
        for (const stream of [child.stdin, child.stdout, child.stderr])
            unrefStream(stream);
    }
    read(line) {
        let message;
        try {
            message = JSON.parse(line);
        }
        catch {
            this.options.log("warn", `hookgate core sent a line that is not JSON: ${line.slice(0, 200)}`);
            return;
        }
        this.options.onMessage(message, line);
    }
}
// the pipes are net.Sockets at run time, whose unref() the stream types do not declare
function unrefStream(stream) {
    const unref = stream?.unref;
    if (typeof unref === "function")
        unref.call(stream);
}
