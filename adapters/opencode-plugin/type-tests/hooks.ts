// Type test (checked by `tsc --noEmit`, never run): the plugin is an OpenCode `Plugin`, and each
// hook it implements has exactly the signature it was written against (@opencode-ai/plugin
// 1.18.33). A release that changes any of them (a field renamed, added, retyped or made optional)
// fails this check, so the change is met here, not in a user's session.

import type { Hooks, Plugin, PluginInput } from "@opencode-ai/plugin"
import type { Event, Part, UserMessage } from "@opencode-ai/sdk"

import { HookgatePlugin, type HookgateHooks } from "../src/index.js"
import type { HookName } from "../src/lib/opencode.js"

// true only when A and B are the same type (not merely assignable either way)
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false

/** The hooks as hookgate reads and writes them, copied from 1.18.33's Hooks. */
interface WrittenAgainst {
  "tool.execute.before": (input: { tool: string; sessionID: string; callID: string }, output: { args: any }) => Promise<void>
  "tool.execute.after": (
    input: { tool: string; sessionID: string; callID: string; args: any },
    output: { title: string; output: string; metadata: any },
  ) => Promise<void>
  "chat.message": (
    input: { sessionID: string; agent?: string; model?: { providerID: string; modelID: string }; messageID?: string; variant?: string },
    output: { message: UserMessage; parts: Part[] },
  ) => Promise<void>
  "experimental.text.complete": (input: { sessionID: string; messageID: string; partID: string }, output: { text: string }) => Promise<void>
  "experimental.session.compacting": (input: { sessionID: string }, output: { context: string[]; prompt?: string }) => Promise<void>
  event: (input: { event: Event }) => Promise<void>
  dispose: () => Promise<void>
}

// every hook hookgate implements is in the snapshot, and nothing else is
const named: Same<HookName, keyof WrittenAgainst> = true
// each hook's signature in the installed @opencode-ai/plugin is the snapshot's
const unchanged = {
  "tool.execute.before": true,
  "tool.execute.after": true,
  "chat.message": true,
  "experimental.text.complete": true,
  "experimental.session.compacting": true,
  event: true,
  dispose: true,
} satisfies { [K in HookName]: Same<NonNullable<Hooks[K]>, WrittenAgainst[K]> }

// the plugin is what OpenCode loads: a Plugin, whose hooks are OpenCode's Hooks
const plugin = HookgatePlugin satisfies Plugin
const hooks = {} as HookgateHooks satisfies Hooks
// and it takes OpenCode's PluginInput, not a narrower stand-in
const input: Same<Parameters<typeof HookgatePlugin>[0], PluginInput> = true

export type TypeTest = [typeof named, typeof unchanged, typeof plugin, typeof hooks, typeof input]
