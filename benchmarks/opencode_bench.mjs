// The OpenCode section of benchmarks/run.py: one `tool.execute.before` through the real plugin and
// its long-running core, against one Python process spawned per call (`hookgate hook claude`, the
// way GodotMaker's adapter runs its hooks), interleaved call by call in the same run. The plugin
// runs as registered by default (it measures whether turning its event loop while an answer is due
// pays, and chooses); beside it, the same plugin told to wait asleep (`awakeMs: 0`) and told to turn
// every time (`awakeMs: 1`), each with a core of its own, and the floor of any core behind this
// transport: a process of the core's interpreter that answers each line at once (an echo), pinged
// in the same places (after a spawn, back to back).
//
//   node benchmarks/opencode_bench.mjs HOOKGATE PROJECT_DIR CALLS  -> JSON on stdout
//   (or under OpenCode's own Bun: BUN_BE_BUN=1 opencode benchmarks/opencode_bench.mjs ...)
import { spawn } from "node:child_process"
import { existsSync } from "node:fs"
import path from "node:path"
import { performance } from "node:perf_hooks"
import { fileURLToPath, pathToFileURL } from "node:url"

const [hookgate, project, calls] = [process.argv[2], process.argv[3], Number(process.argv[4] ?? 300)]
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const { HookgatePlugin } = await import(pathToFileURL(path.join(root, "adapters", "opencode-plugin", "index.js")).href)

const quiet = async () => ({ data: {} })
const client = { app: { log: quiet }, tui: { showToast: quiet }, session: { get: async () => ({ data: { id: "bench" } }) } }
const command = [hookgate, "serve", "--stdio"]
const hooks = await HookgatePlugin({ client, directory: project }, { command })
const asleep = await HookgatePlugin({ client, directory: project }, { command, awakeMs: 0 })
const awake = await HookgatePlugin({ client, directory: project }, { command, awakeMs: 1 })

// half the calls are allowed, half blocked by the build role, on both sides
const files = ["notes.txt", "src/player.gd"].map((name) => path.join(project, name))

async function viaPlugin(i, plugin = hooks) {
  const started = performance.now()
  try {
    await plugin["tool.execute.before"]({ tool: "write", sessionID: "bench", callID: `c${i}` }, { args: { filePath: files[i % 2], content: "x" } })
  } catch { /* a block is a thrown Error: the answer OpenCode gets */ }
  return performance.now() - started
}

function viaProcess(i) {
  const payload = JSON.stringify({ hook_event_name: "PreToolUse", session_id: "bench-spawn", cwd: project, tool_name: "Write",
    tool_input: { file_path: files[i % 2], content: "x" } })
  const started = performance.now()
  return new Promise((resolve, reject) => {
    // a process that decides by itself, as GodotMaker's adapter spawns one: no warm core to hand off to
    const child = spawn(hookgate, ["hook", "claude", "--event", "PreToolUse"], {
      cwd: project, stdio: ["pipe", "ignore", "ignore"], env: { ...process.env, HOOKGATE_WARM: "off" },
    })
    child.on("error", reject)
    child.on("exit", (code) => (code === 0 || code === 2 ? resolve(performance.now() - started) : reject(new Error(`exit ${code}`))))
    child.stdin.end(payload)
  })
}

// the echo: the interpreter the hookgate command runs (its venv's python beside it), without site
const python = path.join(path.dirname(hookgate), "python")
const echo = spawn(existsSync(python) ? python : "python3", ["-S", "-c",
  "import sys\nout = sys.stdout.buffer\nfor line in sys.stdin.buffer:\n    out.write(line)\n    out.flush()"],
  { stdio: ["pipe", "pipe", "inherit"] })
let echoed = null
let pendingEcho = ""
echo.stdout.on("data", (chunk) => {
  pendingEcho += chunk
  if (pendingEcho.includes("\n") && echoed) {
    pendingEcho = ""
    const done = echoed
    echoed = null
    done()
  }
})
const frame = JSON.stringify({ jsonrpc: "2.0", id: 1, result: { kind: "block", reason: "x".repeat(200) } }) + "\n"
function viaEcho() {
  const started = performance.now()
  return new Promise((resolve) => {
    echoed = () => resolve(performance.now() - started)
    echo.stdin.write(frame)
  })
}

for (let i = 0; i < 20; i++) await viaPlugin(i) // the core starts on the first call; not part of the figure
for (let i = 0; i < 20; i++) await viaPlugin(i, asleep)
for (let i = 0; i < 20; i++) await viaPlugin(i, awake)
for (let i = 0; i < 20; i++) await viaEcho()
const plugin = []
const pluginAsleep = []
const pluginAwake = []
const process_ = []
const floor = []
for (let i = 0; i < calls; i++) {
  plugin.push(await viaPlugin(i))
  process_.push(await viaProcess(i))
  floor.push(await viaEcho()) // after the plugin's call: the spawn two steps back, its exit the same
  await viaProcess(i)
  pluginAsleep.push(await viaPlugin(i, asleep))
  await viaProcess(i)
  pluginAwake.push(await viaPlugin(i, awake))
  await viaProcess(i)
}
// the same calls back to back, as a burst of tool calls meets a core that is already awake (above,
// each plugin call follows a process spawn, as a call follows a model turn in a session); the
// plugins take turns by blocks, so that none pays alone for coming first after the spawns
const burst = []
const floorBurst = []
const burstAsleep = []
const burstAwake = []
for (let block = 0; block < calls; block += 30) {
  const end = Math.min(calls, block + 30)
  for (let i = block; i < end; i++) burst.push(await viaPlugin(i))
  for (let i = block; i < end; i++) burstAsleep.push(await viaPlugin(i, asleep))
  for (let i = block; i < end; i++) burstAwake.push(await viaPlugin(i, awake))
}
for (let i = 0; i < calls; i++) floorBurst.push(await viaEcho())
await hooks.dispose()
await asleep.dispose()
await awake.dispose()
echo.stdin.end()

const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]
}
const summary = (values) => ({ p50_ms: percentile(values, 50), p99_ms: percentile(values, 99), calls: values.length })
console.log(JSON.stringify({ plugin: summary(plugin), plugin_burst: summary(burst),
  plugin_asleep: summary(pluginAsleep), plugin_asleep_burst: summary(burstAsleep),
  plugin_awake: summary(pluginAwake), plugin_awake_burst: summary(burstAwake), process_per_call: summary(process_),
  echo: summary(floor), echo_burst: summary(floorBurst) }))
