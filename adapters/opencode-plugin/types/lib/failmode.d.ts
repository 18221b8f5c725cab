import type { CanonicalEvent, Capabilities, Verdict } from "./protocol.js";
/** Before the core ever answered: each event's fail mode from the lifecycle matrix. */
export declare const UNKNOWN_CORE: Capabilities;
/** Claude Code's matcher: "" or "*" = all; letters, digits, "_" and "|" only = exact names; else a regex. */
export declare function matches(pattern: string | null | undefined, value: unknown): boolean;
/** The verdict when the core could not decide `event`. */
export declare function failVerdict(capabilities: Capabilities | undefined, event: CanonicalEvent, why: string): Verdict;
