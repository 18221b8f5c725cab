import type { EventName } from "./lifecycle.js";
export declare const PROTOCOL_VERSION = 1;
export type FailMode = "open" | "closed";
/** Who did it: the root session (the canonical session_id) and the subagent, if any. */
export interface Who {
    root: string;
    agentId: string | null;
    agentType: string | null;
}
/** A canonical event: Claude Code's names and fields (DESIGN.md), plus the ones every event carries. */
export interface CanonicalEvent {
    hook_event_name: EventName;
    session_id: string;
    cwd: string;
    runtime: "opencode";
    agent_id: string | null;
    agent_type: string | null;
    identity: "given" | "inferred";
    [field: string]: unknown;
}
interface VerdictText {
    message?: string | null;
    context?: string | null;
}
export type Refusal = VerdictText & ({
    kind: "block" | "ask";
    reason: string;
} | {
    kind: "retry";
    reason: string;
    delay_ms?: number;
});
export type Verdict = VerdictText & ({
    kind: "allow";
} | {
    kind: "context";
    context: string;
} | {
    kind: "modify";
    updated_input: Record<string, unknown>;
}) | Refusal;
export interface GateInfo {
    id: string;
    matcher: string;
    fail_mode: FailMode;
}
export interface EventCapability {
    fail_mode: FailMode;
    timeout_ms?: number;
    gates?: GateInfo[];
}
export interface Capabilities {
    events: Partial<Record<string, EventCapability>>;
}
/** The core's answer to initialize. */
export interface ServerInfo {
    protocol?: number;
    server?: {
        name?: string;
        version?: string;
        pid?: number;
    };
    project?: string;
    capabilities?: unknown;
    error?: string;
}
export declare const isObject: (value: unknown) => value is Record<string, unknown>;
/** Whether the core's answer to evaluate is a verdict the plugin can carry out. */
export declare function isVerdict(value: unknown): value is Verdict;
/** Whether capabilities (initialize's, or a reload's) make sense: an object of events, each an object. */
export declare function isCapabilities(value: unknown): value is Capabilities;
export {};
