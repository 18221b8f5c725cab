// The compiled plugin is committed (so `pip install .`, `hookgate install opencode` and
// `make demo` work from a checkout with no TypeScript compiler): it must be exactly what the
// build makes of src/, with nothing left over from an older build.
import assert from "node:assert/strict"
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs"
import os from "node:os"
import path from "node:path"
import { test } from "node:test"

import { PACKAGE, tsc } from "../test-support/tsc.js"

/** Every file under `dir` (relative paths), optionally only those under `folders`. */
function files(dir, folders = [""]) {
  const found = []
  for (const folder of folders) {
    for (const entry of readdirSync(path.join(dir, folder), { withFileTypes: true, recursive: true })) {
      if (entry.isFile()) found.push(path.relative(dir, path.join(entry.parentPath ?? entry.path, entry.name)))
    }
  }
  return found.sort()
}

test("the committed index.js, lib/*.js and types/ are a fresh build of src/", () => {
  const out = mkdtempSync(path.join(os.tmpdir(), "hookgate-plugin-build-"))
  try {
    const built = tsc("-p", "tsconfig.build.json", "--outDir", out, "--declarationDir", path.join(out, "types"))
    assert.ok(built.ok, built.output)
    const fresh = files(out)
    assert.ok(fresh.includes("index.js") && fresh.includes("types/index.d.ts") && fresh.includes("lib/client.js"), fresh.join(" "))
    const committed = ["index.js", ...files(PACKAGE, ["lib", "types"])].sort()
    assert.deepEqual(committed, fresh, "run `npm run build` in adapters/opencode-plugin and commit the result")
    for (const file of fresh) {
      assert.equal(readFileSync(path.join(PACKAGE, file), "utf8"), readFileSync(path.join(out, file), "utf8"),
        `${file} differs from a fresh build: run \`npm run build\` in adapters/opencode-plugin and commit the result`)
    }
  } finally {
    rmSync(out, { recursive: true, force: true })
  }
})
