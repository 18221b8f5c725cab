// The OpenCode side of the payload tier: the real opencode-hookgate plugin, loaded in Node the way
// OpenCode loads it, talking to the real hookgate core, with a stand-in for OpenCode's client.
//
//   node opencode_host.mjs <project dir> <core argv...>
//
// One command per stdin line, {hook, input, output, message?}: the plugin's hook `hook` is called
// with (input, output), as OpenCode calls it (`message`: an assistant message the client serves,
// for experimental.text.complete and session.idle). One answer per line, once everything the call
// set off has settled (the `event` hook is not awaited by OpenCode; its decisions run on):
//   {threw: error message | null, output: the output after the hook, calls: what the plugin asked
//    of the client, events: the canonical events it sent the core}
import readline from "node:readline"

import { HookgatePlugin } from "../../adapters/opencode-plugin/index.js"
import { CoreClient } from "../../adapters/opencode-plugin/lib/client.js"
import { fakeClient } from "../../adapters/opencode-plugin/test-support/support.js"

const [directory, ...command] = process.argv.slice(2)

// watch the plugin's decisions (not change them): which events went to the core, and when the
// last of them has been answered
const inflight = new Set()
let events = []
let core = null // the plugin's client of the core
const evaluate = CoreClient.prototype.evaluate
CoreClient.prototype.evaluate = function (event) {
  core = this
  events.push(event)
  const answer = evaluate.call(this, event)
  inflight.add(answer)
  answer.finally(() => inflight.delete(answer)).catch(() => {})
  return answer
}

async function settled() {
  for (let quiet = 0; quiet < 3;) {
    if (inflight.size) {
      quiet = 0
      await Promise.allSettled([...inflight])
    } else {
      quiet += 1
    }
    await new Promise((resolve) => setImmediate(resolve)) // what an answer set off (a client call)
  }
  // the core writes a decision's records just after its answer: a ping is answered once they are
  // written (sent only to a running core: a sync never starts one)
  if (core?.child?.running) await core.send(core.child, "ping", undefined, { at: Date.now() + 10000, budgetMs: 10000 }).catch(() => {})
}

const messages = {}
const client = fakeClient({ messages })
const hooks = await HookgatePlugin({ client, directory, worktree: directory, project: {} }, { command })

let disposed = false
for await (const line of readline.createInterface({ input: process.stdin })) {
  if (!line.trim()) continue
  const { hook, input, output, message } = JSON.parse(line)
  if (message) {
    messages[message.info.id] = message // session.message
    messages[message.info.sessionID] = [message] // session.messages
  }
  const calls = client.calls.length
  events = []
  let threw = null
  try {
    if (hook === "dispose") disposed = true
    await hooks[hook](input, output)
  } catch (error) {
    threw = error?.message ?? String(error)
  }
  await settled()
  process.stdout.write(JSON.stringify({ threw, output, calls: client.calls.slice(calls), events }) + "\n")
}
if (!disposed) await hooks.dispose()
