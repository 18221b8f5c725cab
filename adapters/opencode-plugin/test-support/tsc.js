import { execFileSync } from "node:child_process"
import { createRequire } from "node:module"
import { fileURLToPath } from "node:url"
import path from "node:path"

export const PACKAGE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const TSC = createRequire(import.meta.url).resolve("typescript/bin/tsc")

/** Run the package's TypeScript compiler; {ok, output} (its diagnostics). */
export function tsc(...args) {
  try {
    return { ok: true, output: execFileSync(process.execPath, [TSC, ...args], { cwd: PACKAGE, encoding: "utf8", timeout: 300_000 }) }
  } catch (error) {
    if (error.status === undefined || error.status === null) throw error // not run at all, or killed
    return { ok: false, output: `${error.stdout ?? ""}${error.stderr ?? ""}` }
  }
}
