// OpenCode <-> canonical: the one place that knows both shapes. Hook arguments in, canonical
// events (Claude Code's names and fields, DESIGN.md) out; verdicts in, what OpenCode can carry out.
// Pure: no I/O, so every mapping is testable on the captured payloads.

import type { EventName } from "./lifecycle.js"
import type { FailedToolPart, HookInput, HookOutput, Part, PermissionAsked, SessionInfo } from "./opencode.js"
import type { CanonicalEvent, Verdict, Who } from "./protocol.js"

export type { Who }

type Args = Record<string, unknown> | null | undefined

// OpenCode's tool ids -> Claude Code's tool names (the canonical ones)
export const TOOL_NAMES: Record<string, string> = {
  write: "Write", edit: "Edit", multiedit: "MultiEdit", read: "Read", bash: "Bash", task: "Agent",
  glob: "Glob", grep: "Grep", list: "LS", webfetch: "WebFetch", websearch: "WebSearch",
  todowrite: "TodoWrite", todoread: "TodoRead", skill: "Skill",
}

export const toolName = (tool: string): string => TOOL_NAMES[tool] ?? tool

// each argument name's snake_case, kept: a tool has a handful of names, and a regular expression
// with a function for each argument of every tool call cost a third of its translation after a pause
const snakeNames = new Map<string, string>()
const snake = (key: string) => {
  let name = snakeNames.get(key)
  if (name === undefined) {
    name = key.replace(/[A-Z]/g, (c) => "_" + c.toLowerCase())
    if (snakeNames.size < 1024) snakeNames.set(key, name)
  }
  return name
}
const camel = (key: string) => key.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase())

/** OpenCode's camelCase arguments as canonical snake_case input (`filePath` -> `file_path`). */
export function toolInput(args: Args): Record<string, unknown> {
  const input: Record<string, unknown> = {}
  for (const key in args) {
    if (!Object.hasOwn(args, key)) continue
    const name = snake(key)
    // an argument named __proto__ stays an argument (assigned, it would set the prototype)
    if (name === "__proto__") Object.defineProperty(input, name, { value: args[key], enumerable: true, writable: true, configurable: true })
    else input[name] = args[key]
  }
  return input
}

// Tools whose canonical input is not their arguments renamed. apply_patch (OpenCode offers it
// instead of write/edit to GPT-family models) takes `{patchText}`; the canonical apply_patch is
// `{patch}`, the raw text, as Codex's: the core reads the patch (one reader for every runtime)
// and judges each file it changes as the tool Claude would have used.
const CANONICAL_INPUT: Record<string, (args: Args) => Record<string, unknown>> = {
  apply_patch: (args) => ({ patch: args?.patchText }),
}

const canonicalInput = (tool: string, args: Args) => (CANONICAL_INPUT[tool] ?? toolInput)(args)

/** A canonical input back in OpenCode's spelling (for a rewrite). */
export function openCodeArgs(input: Args): Record<string, unknown> {
  return Object.fromEntries(Object.entries(input ?? {}).map(([k, v]) => [camel(k), v]))
}

/** The fields every canonical event carries, then the event's own. (Not spread into a literal:
 * after a pause, the spread took about two thirds of what was left of a tool call's translation.) */
export function base(name: EventName, who: Who, cwd: string, own: Record<string, unknown> = {}): CanonicalEvent {
  return Object.assign({
    hook_event_name: name,
    session_id: who.root,
    cwd,
    runtime: "opencode" as const,
    agent_id: who.agentId,
    agent_type: who.agentType,
    // OpenCode's hooks name no agent: a subagent is known from the child-session map
    identity: who.agentId ? "inferred" as const : "given" as const,
  }, own)
}

type ToolCall = Pick<HookInput<"tool.execute.before">, "tool" | "callID">

export const preToolUse = (input: ToolCall, args: Args, who: Who, cwd: string): CanonicalEvent => base("PreToolUse", who, cwd, {
  tool_name: toolName(input.tool), tool_input: canonicalInput(input.tool, args), tool_use_id: input.callID,
})

export const postToolUse = (input: HookInput<"tool.execute.after">, output: Partial<HookOutput<"tool.execute.after">> | undefined,
  who: Who, cwd: string): CanonicalEvent => base("PostToolUse", who, cwd, {
  tool_name: toolName(input.tool), tool_input: canonicalInput(input.tool, input.args), tool_use_id: input.callID,
  tool_response: { title: output?.title, output: output?.output, metadata: output?.metadata },
})

/** Whether an updated message part is a tool call that failed (threw, or was aborted). */
export const isFailedToolPart = (part: { type: string } | null | undefined): part is FailedToolPart =>
  part?.type === "tool" && (part as { state?: { status?: string } }).state?.status === "error"

/** A tool call that threw or was aborted: OpenCode fires no tool.execute.after for it, so this is
 * its after-event (the effect check puts back what it changed). */
export const postToolUseFailure = (part: FailedToolPart, who: Who, cwd: string): CanonicalEvent => base("PostToolUseFailure", who, cwd, {
  tool_name: toolName(part.tool), tool_input: canonicalInput(part.tool, part.state.input), tool_use_id: part.callID,
  error: String(part.state.error ?? ""),
})

export const sessionStart = (who: Who, cwd: string): CanonicalEvent => base("SessionStart", who, cwd, { source: "startup" })

export const sessionEnd = (who: Who, cwd: string, reason: string): CanonicalEvent => base("SessionEnd", who, cwd, { reason })

export const subagentStart = (who: Who, cwd: string): CanonicalEvent => base("SubagentStart", who, cwd)

export const userPromptSubmit = (parts: readonly Part[] | undefined, who: Who, cwd: string): CanonicalEvent =>
  base("UserPromptSubmit", who, cwd, { prompt: promptText(parts) })

export const stop = (text: string | null | undefined, held: boolean, who: Who, cwd: string): CanonicalEvent =>
  base(who.agentId ? "SubagentStop" : "Stop", who, cwd, { stop_hook_active: held, last_assistant_message: text ?? null })

// OpenCode says nothing of what started a compaction (the user's /compact or an overflow)
export const preCompact = (who: Who, cwd: string): CanonicalEvent => base("PreCompact", who, cwd, { trigger: "auto" })

export const postCompact = (who: Who, cwd: string): CanonicalEvent => base("PostCompact", who, cwd, { trigger: "auto" })

/** permission.asked: `permission` is the tool family (edit, bash, ...), `patterns` what it is for. */
export function permissionRequest(asked: PermissionAsked, who: Who, cwd: string): CanonicalEvent {
  return base("PermissionRequest", who, cwd, {
    tool_name: toolName(asked.permission),
    tool_input: { ...toolInput(asked.metadata), patterns: asked.patterns ?? [] },
    tool_use_id: asked.tool?.callID ?? null,
  })
}

const isText = (part: Part | null | undefined): part is Extract<Part, { type: "text" }> => part?.type === "text"

/** The text a user (or a task dispatch) typed: every text part that is not OpenCode's own. */
export function promptText(parts: readonly Part[] | undefined): string {
  return (parts ?? []).filter(isText).filter((p) => !p.synthetic).map((p) => p.text).join("\n")
}

/** A child session's agent, from its info (v2 `agent`) or its title "… (@general subagent)". */
export function agentOf(info: Partial<SessionInfo> | null | undefined): string | null {
  if (info?.agent) return info.agent
  const match = /\(@([^\s)]+) subagent\)\s*$/.exec(info?.title ?? "")
  return match?.[1] ?? null
}

/** The text of an assistant message's parts. */
export const messageText = (parts: readonly Part[] | undefined): string => (parts ?? []).filter(isText).map((p) => p.text).join("\n")

// -- verdicts -> what OpenCode can do ------------------------------------------------------------

const REFUSALS = new Set(["block", "retry", "ask"])

type Refusing = Extract<Verdict, { reason: string }>

/** Whether a verdict refuses the action (an Ask too: no OpenCode plugin can ask the user). */
export const refuses = (verdict: Verdict | null | undefined): verdict is Refusing => REFUSALS.has(verdict?.kind ?? "")

/** The error text a refused tool call throws; OpenCode hands it to the model as the tool result. */
export function refusal(verdict: Refusing): string {
  if (verdict.kind === "retry") return `${verdict.reason} (temporary: retry in ${Number(verdict.delay_ms) / 1000}s)`
  if (verdict.kind === "ask") {
    return `${verdict.reason} (hookgate would ask the user to approve this, which an OpenCode plugin cannot; refused)`
  }
  return verdict.reason
}

/** What goes to the model with a tool's result, or with a prompt: context, and any refusal of a
 * PostToolUse (the tool already ran; Claude Code shows the model the reason the same way). */
export function modelNote(verdict: Verdict): string {
  const lines = []
  if (refuses(verdict)) lines.push(refusal(verdict))
  if (verdict.context) lines.push(verdict.context)
  return lines.join("\n")
}

/** The message that keeps a session going when a Stop (or SubagentStop) gate refuses it. */
export const holdText = (verdict: Refusing): string =>
  `[hookgate] You may not stop yet:\n${refusal(verdict)}${verdict.context ? "\n" + verdict.context : ""}`
