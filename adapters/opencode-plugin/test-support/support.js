import { existsSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import path from "node:path"

const here = path.dirname(fileURLToPath(import.meta.url))
export const REPO = path.resolve(here, "../../..")
export const PAYLOADS = path.join(REPO, "parity-tests", "payloads")
export const FAKE_CORE = [process.execPath, path.join(here, "fake-core.mjs")]

/** The real core: $HOOKGATE_COMMAND, else the repo's venv (`make venv` builds it). */
export function realCore() {
  if (process.env.HOOKGATE_COMMAND) return [process.env.HOOKGATE_COMMAND, "serve", "--stdio"]
  const script = path.join(REPO, ".venv", "bin", "hookgate")
  if (!existsSync(script)) throw new Error(`no hookgate at ${script}: run \`make venv\` (or set HOOKGATE_COMMAND)`)
  return [script, "serve", "--stdio"]
}

/** A session's metrics records as the core wrote them so far (none before its first). */
export function metrics(root, session) {
  const file = path.join(root, ".hookgate", "sessions", session, "metrics.jsonl")
  return existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean).map((line) => JSON.parse(line)) : []
}

/** A stand-in for OpenCode's SDK client that records what the plugin asked of it. */
export function fakeClient({ sessions = {}, messages = {} } = {}) {
  const calls = []
  const record = (name, result = { data: {} }) => async (args) => { calls.push({ name, args }); return typeof result === "function" ? result(args) : result }
  return {
    calls,
    app: { log: record("app.log") },
    tui: { showToast: record("tui.showToast") },
    session: {
      get: record("session.get", ({ path: p }) => (sessions[p.id] ? { data: sessions[p.id] } : { error: { name: "NotFound" } })),
      message: record("session.message", ({ path: p }) => ({ data: messages[p.messageID] ?? null })),
      messages: record("session.messages", ({ path: p }) => ({ data: messages[p.id] ?? [] })),
      prompt: record("session.prompt"),
      promptAsync: record("session.promptAsync"),
    },
    postSessionIdPermissionsPermissionId: record("permission.reply"),
  }
}
