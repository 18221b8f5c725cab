// Type test of what ships: the package imported by name resolves (through `exports`) to the
// committed declarations under types/, and what they declare is an OpenCode Plugin.

import type { Plugin } from "@opencode-ai/plugin"

import HookgatePlugin, { HookgatePlugin as named, type HookgateOptions } from "opencode-hookgate"

const plugin = HookgatePlugin satisfies Plugin
const same: typeof named = HookgatePlugin
const options: HookgateOptions = { command: ["hookgate", "serve", "--stdio"], timeoutMs: 1000 }

export type ShippedTypeTest = [typeof plugin, typeof same, typeof options]
