// What the plugin and the hookgate core say to each other over `hookgate serve --stdio`: the
// canonical events the plugin sends, the verdicts and capabilities the core answers with. The
// core's side is core/hookgate/model (events.py, verdicts.py) and core/hookgate/rpc.
//
// Whatever the core sends is checked before it is believed (isVerdict, isCapabilities): the
// types below say what a checked answer is, never what an unchecked one is assumed to be.

import type { EventName } from "./lifecycle.js"

export const PROTOCOL_VERSION = 1

export type FailMode = "open" | "closed"

/** Who did it: the root session (the canonical session_id) and the subagent, if any. */
export interface Who {
  root: string
  agentId: string | null
  agentType: string | null
}

/** A canonical event: Claude Code's names and fields (DESIGN.md), plus the ones every event carries. */
export interface CanonicalEvent {
  hook_event_name: EventName
  session_id: string
  cwd: string
  runtime: "opencode"
  agent_id: string | null
  agent_type: string | null
  // OpenCode's hooks name no agent: a subagent is known from the child-session map
  identity: "given" | "inferred"
  [field: string]: unknown
}

interface VerdictText {
  message?: string | null
  context?: string | null
}

export type Refusal = VerdictText & ({ kind: "block" | "ask"; reason: string } | { kind: "retry"; reason: string; delay_ms?: number })

export type Verdict = VerdictText & (
  | { kind: "allow" }
  | { kind: "context"; context: string }
  | { kind: "modify"; updated_input: Record<string, unknown> }
) | Refusal

export interface GateInfo {
  id: string
  matcher: string
  fail_mode: FailMode
}

export interface EventCapability {
  fail_mode: FailMode
  timeout_ms?: number
  gates?: GateInfo[]
}

export interface Capabilities {
  events: Partial<Record<string, EventCapability>>
}

/** The core's answer to initialize. */
export interface ServerInfo {
  protocol?: number
  server?: { name?: string; version?: string; pid?: number }
  project?: string
  capabilities?: unknown
  error?: string
}

export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const isText = (value: unknown) => value === undefined || value === null || typeof value === "string"

// what each kind of verdict must carry (core/hookgate/model/verdicts.py); anything else is no verdict
const VERDICT_FIELDS = new Map<string, [string, "string" | "object"][]>([
  ["allow", []], ["context", [["context", "string"]]], ["modify", [["updated_input", "object"]]],
  ["ask", [["reason", "string"]]], ["retry", [["reason", "string"]]], ["block", [["reason", "string"]]],
])

/** Whether the core's answer to evaluate is a verdict the plugin can carry out. */
export function isVerdict(value: unknown): value is Verdict {
  const fields = isObject(value) && typeof value.kind === "string" && VERDICT_FIELDS.get(value.kind)
  return Boolean(fields) && isObject(value) && isText(value.message) && isText(value.context) &&
    (fields || []).every(([name, type]) => (type === "object" ? isObject(value[name]) : typeof value[name] === type))
}

/** Whether capabilities (initialize's, or a reload's) make sense: an object of events, each an object. */
export function isCapabilities(value: unknown): value is Capabilities {
  return isObject(value) && isObject(value.events) && Object.values(value.events).every(isObject)
}
