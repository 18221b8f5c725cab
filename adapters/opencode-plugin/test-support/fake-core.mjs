// A stand-in core for the client's tests: speaks the same frames, misbehaves on request.
//   FAKE_CORE_MODE=normal    answers initialize and evaluate: blocks *.gd writes, and a Stop or
//                            SubagentStop whose last message has no "REPORT"; else allows, with context
//                            (a tool input with `rewrite_to` is answered with a modify)
//   FAKE_CORE_MODE=hang      answers initialize, never evaluate
//   FAKE_CORE_MODE=mute      answers nothing at all
//   FAKE_CORE_MODE=die       exits on the first evaluate
//   FAKE_CORE_MODE=noisy     writes a line of garbage before every answer
import readline from "node:readline"

const mode = process.env.FAKE_CORE_MODE ?? "normal"
const caps = {
  events: {
    PreToolUse: { fail_mode: "closed", timeout_ms: 6000, gates: [{ id: "check_file_permissions", matcher: "Write|Edit", fail_mode: "closed" }] },
    PostToolUse: { fail_mode: "open", timeout_ms: 1000, gates: [] },
  },
}
const send = (message) => {
  if (mode === "noisy") process.stdout.write("not a frame\n")
  process.stdout.write(JSON.stringify(message) + "\n")
}
readline.createInterface({ input: process.stdin }).on("line", (line) => {
  const request = JSON.parse(line)
  if (mode === "mute") return
  if (request.method === "initialize") {
    return send({ jsonrpc: "2.0", id: request.id, result: { protocol: 1, server: { name: "fake", version: "0", pid: process.pid }, project: process.cwd(), capabilities: caps } })
  }
  if (request.method === "shutdown") {
    send({ jsonrpc: "2.0", id: request.id, result: null })
    return process.exit(0)
  }
  if (mode === "hang") return
  if (mode === "die") process.exit(3)
  const event = request.params.event
  const path = event.tool_input?.file_path ?? ""
  const stopping = ["Stop", "SubagentStop"].includes(event.hook_event_name)
  const refused = path.endsWith(".gd") || (stopping && !event.last_assistant_message?.includes("REPORT"))
  const rewrite = event.tool_input?.rewrite_to
  const result = rewrite ? { kind: "modify", updated_input: { file_path: rewrite, content: event.tool_input.content }, message: null, context: null }
    : refused ? { kind: "block", reason: `no ${path || "report"}`, message: null, context: null }
    : { kind: "allow", message: null, context: `seen ${event.hook_event_name} ${event.tool_name ?? ""}`.trim() }
  setTimeout(() => send({ jsonrpc: "2.0", id: request.id, result }), Number(event.tool_input?.delay ?? 0))
})
