// The type test (type-tests/hooks.ts) against an OpenCode whose hooks changed: a copy of the
// pinned @opencode-ai/plugin with one hook's signature edited must fail the type check, and the
// unedited copy must pass it (so the failures come from the edits, not from the copying).
import assert from "node:assert/strict"
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import path from "node:path"
import { test } from "node:test"
import { fileURLToPath } from "node:url"

import { PACKAGE, tsc } from "../test-support/tsc.js"

const PINNED = path.dirname(fileURLToPath(import.meta.resolve("@opencode-ai/plugin")))

const CHANGES = [
  ["none", (d) => d],
  // a field of a hook's input renamed
  ["tool.execute.before's callID renamed", (d) => replaceOnce(d, /("tool\.execute\.before"\?: \(input: \{\s*tool: string;\s*sessionID: string;\s*)callID: string;/, "$1toolCallID: string;")],
  // a field of a hook's output retyped
  ["tool.execute.after's output retyped", (d) => replaceOnce(d, /(output: \{\s*title: string;\s*)output: string;/, "$1output: string[];")],
  // a hook dropped
  ["experimental.text.complete removed", (d) => replaceOnce(d, /"experimental\.text\.complete"\?:/, '"experimental.text.completed"?:')],
]

function replaceOnce(text, pattern, replacement) {
  const changed = text.replace(pattern, replacement)
  assert.notEqual(changed, text, `${pattern} no longer matches @opencode-ai/plugin's index.d.ts`)
  return changed
}

for (const [change, edit] of CHANGES) {
  test(`the type check with an OpenCode whose hooks changed: ${change}`, () => {
    // inside the package, so the copy's own imports (@opencode-ai/sdk, zod) resolve as the original's
    const dir = mkdtempSync(path.join(PACKAGE, ".typecheck-"))
    try {
      cpSync(PINNED, path.join(dir, "plugin"), { recursive: true })
      const declarations = path.join(dir, "plugin", "index.d.ts")
      writeFileSync(declarations, edit(readFileSync(declarations, "utf8")))
      writeFileSync(path.join(dir, "tsconfig.json"), JSON.stringify({
        extends: "../tsconfig.json",
        compilerOptions: { paths: { "@opencode-ai/plugin": ["./plugin/index.d.ts"] } },
        include: ["../src/**/*.ts", "../type-tests/**/*.ts"],
      }))
      const checked = tsc("-p", path.join(dir, "tsconfig.json"), "--noEmit")
      if (change === "none") assert.ok(checked.ok, checked.output)
      else assert.ok(!checked.ok && /error TS\d+/.test(checked.output), `the change passed the type check:\n${checked.output}`)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
}
