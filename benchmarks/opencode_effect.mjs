// The effect section's OpenCode row (benchmarks/run.py): a `bash` call's tool.execute.before and
// tool.execute.after through the real plugin and its core, in each project given, the projects
// taking turns pair by pair.
//
//   node benchmarks/opencode_effect.mjs HOOKGATE PAIRS PROJECT=HOME...  -> JSON on stdout, by project
//
// Each project's core runs with HOME set to the home given beside it.
import path from "node:path"
import { performance } from "node:perf_hooks"
import { fileURLToPath, pathToFileURL } from "node:url"

const [hookgate, pairs, ...projects] = [process.argv[2], Number(process.argv[3]), ...process.argv.slice(4)]
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const { HookgatePlugin } = await import(pathToFileURL(path.join(root, "adapters", "opencode-plugin", "index.js")).href)

const quiet = async () => ({ data: {} })
const sides = []
for (const [project, home] of projects.map((side) => side.split("="))) {
  const client = { app: { log: quiet }, tui: { showToast: quiet }, session: { get: async () => ({ data: { id: "bench-oc" } }) } }
  sides.push({ project, hooks: await HookgatePlugin({ client, directory: project }, { command: ["env", `HOME=${home}`, hookgate, "serve", "--stdio"] }), times: [] })
}

async function pair(side, i) {
  const input = { tool: "bash", sessionID: "bench-oc", callID: `oc${i}` }
  const started = performance.now()
  await side.hooks["tool.execute.before"](input, { args: { command: "ls", description: "list" } })
  await side.hooks["tool.execute.after"](input, { title: "ls", output: "ok", metadata: {} })
  return performance.now() - started
}

for (let i = 0; i < 3; i++) for (const side of sides) await pair(side, i) // the first reading keeps every copy
for (let i = 3; i < pairs + 3; i++) for (const side of sides) side.times.push(await pair(side, i))
for (const side of sides) await side.hooks.dispose()

const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]
}
// every pair's time too, in turn order: benchmarks/run.py pairs them round by round
console.log(JSON.stringify(Object.fromEntries(sides.map((s) => [s.project, { p50_ms: percentile(s.times, 50), p99_ms: percentile(s.times, 99), pairs: s.times.length, times_ms: s.times }]))))
