// Replay OpenCode hook calls through the plugin, as OpenCode would make them, and say what the
// plugin did with each: went ahead, or refused (OpenCode's refusal is the thrown Error).
//
//   node lib/replay.js < calls.json
//   {"directory": "/project", "command": ["/path/hookgate", "serve", "--stdio"],
//    "calls": [{"hook": "event", "input": {"event": {...}}},
//              {"hook": "tool.execute.before", "input": {...}, "output": {"args": {...}}}]}
//
// One JSON line per call on stdout: {"hook", "ok": true} or {"hook", "ok": false, "error": reason}.
// `hookgate demo` plays its OpenCode leg through this; the plugin runs exactly as inside OpenCode,
// with a client that answers lookups with nothing.
import { HookgatePlugin } from "../index.js";
const quietClient = {
    app: { log: async () => ({}) },
    tui: { showToast: async () => ({}) },
    session: {
        get: async () => ({ error: { name: "NotFound" } }),
        message: async () => ({ data: null }),
        messages: async () => ({ data: [] }),
        prompt: async () => ({ data: {} }),
        promptAsync: async () => ({ data: {} }),
    },
};
async function main() {
    let text = "";
    for await (const chunk of process.stdin)
        text += chunk;
    const { directory, command, calls } = JSON.parse(text);
    // the replay is OpenCode's stand-in: its client is the part of OpenCode's the plugin calls
    const input = { client: quietClient, directory, worktree: directory };
    const hooks = await HookgatePlugin(input, { command });
    try {
        for (const call of calls) {
            const line = { hook: call.hook };
            try {
                await hooks[call.hook](call.input, call.output ?? {});
                line.ok = true;
                if (call.output?.args)
                    line.args = call.output.args;
            }
            catch (error) {
                line.ok = false;
                line.error = error.message;
            }
            process.stdout.write(JSON.stringify(line) + "\n");
        }
    }
    finally {
        await hooks.dispose();
    }
}
main().catch((error) => {
    process.stderr.write(`replay: ${error?.stack ?? error}\n`);
    process.exit(1);
});
