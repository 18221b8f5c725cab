// OpenCode's side of the types, all from the pinned @opencode-ai/plugin (and the SDK it is built
// on): each hook's arguments are taken from its `Hooks` type, so a change of a hook's signature
// in a new OpenCode release fails the type check here rather than a user's session.

import type { Hooks } from "@opencode-ai/plugin"
import type { Event as RuntimeEvent, PermissionRequest, Session, ToolPart, ToolStateError } from "@opencode-ai/sdk/v2"

/** The hooks that hookgate implements (the keys of `Hooks` it returns). */
export type HookName =
  | "tool.execute.before" | "tool.execute.after" | "chat.message" | "experimental.text.complete"
  | "experimental.session.compacting" | "event" | "dispose"

/** The hooks that are functions (not `tool`, `auth`, `provider`). */
type FunctionHook = { [K in keyof Hooks]-?: NonNullable<Hooks[K]> extends (...args: never[]) => unknown ? K : never }[keyof Hooks]
type Hook<K extends FunctionHook> = Extract<NonNullable<Hooks[K]>, (...args: never[]) => unknown>
/** The first argument OpenCode passes to hook K. */
export type HookInput<K extends FunctionHook> = Parameters<Hook<K>>[0]
/** The second argument (the output a hook edits in place) OpenCode passes to hook K. */
export type HookOutput<K extends FunctionHook> = Parameters<Hook<K>>[1]

/** A message part, as chat.message and the session API carry them. */
export type Part = HookOutput<"chat.message">["parts"][number]

// The `event` hook is typed with the SDK's v1 event union, but OpenCode 1.18.33 publishes its v2
// events (`permission.asked`, `session.*` with the v2 session info, which names the agent): the
// plugin reads them as the v2 union of the same release.
export type { RuntimeEvent }

/** What the plugin reads of a session's info (v2: `agent`; v1: only the title names it). */
export type SessionInfo = Pick<Session, "id" | "parentID" | "title" | "agent">

/** A permission asked of the user (the `permission.asked` event's properties). */
export type PermissionAsked = PermissionRequest

/** A tool call that threw or was aborted (`message.part.updated` with a tool part in state error). */
export type FailedToolPart = ToolPart & { state: ToolStateError }

