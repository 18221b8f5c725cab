import type { EventName } from "./lifecycle.js";
import type { FailedToolPart, HookInput, HookOutput, Part, PermissionAsked, SessionInfo } from "./opencode.js";
import type { CanonicalEvent, Verdict, Who } from "./protocol.js";
export type { Who };
type Args = Record<string, unknown> | null | undefined;
export declare const TOOL_NAMES: Record<string, string>;
export declare const toolName: (tool: string) => string;
/** OpenCode's camelCase arguments as canonical snake_case input (`filePath` -> `file_path`). */
export declare function toolInput(args: Args): Record<string, unknown>;
/** A canonical input back in OpenCode's spelling (for a rewrite). */
export declare function openCodeArgs(input: Args): Record<string, unknown>;
/** The fields every canonical event carries, then the event's own. (Not spread into a literal:
 * after a pause, the spread took about two thirds of what was left of a tool call's translation.) */
export declare function base(name: EventName, who: Who, cwd: string, own?: Record<string, unknown>): CanonicalEvent;
type ToolCall = Pick<HookInput<"tool.execute.before">, "tool" | "callID">;
export declare const preToolUse: (input: ToolCall, args: Args, who: Who, cwd: string) => CanonicalEvent;
export declare const postToolUse: (input: HookInput<"tool.execute.after">, output: Partial<HookOutput<"tool.execute.after">> | undefined, who: Who, cwd: string) => CanonicalEvent;
/** Whether an updated message part is a tool call that failed (threw, or was aborted). */
export declare const isFailedToolPart: (part: {
    type: string;
} | null | undefined) => part is FailedToolPart;
/** A tool call that threw or was aborted: OpenCode fires no tool.execute.after for it, so this is
 * its after-event (the effect check puts back what it changed). */
export declare const postToolUseFailure: (part: FailedToolPart, who: Who, cwd: string) => CanonicalEvent;
export declare const sessionStart: (who: Who, cwd: string) => CanonicalEvent;
export declare const sessionEnd: (who: Who, cwd: string, reason: string) => CanonicalEvent;
export declare const subagentStart: (who: Who, cwd: string) => CanonicalEvent;
export declare const userPromptSubmit: (parts: readonly Part[] | undefined, who: Who, cwd: string) => CanonicalEvent;
export declare const stop: (text: string | null | undefined, held: boolean, who: Who, cwd: string) => CanonicalEvent;
export declare const preCompact: (who: Who, cwd: string) => CanonicalEvent;
export declare const postCompact: (who: Who, cwd: string) => CanonicalEvent;
/** permission.asked: `permission` is the tool family (edit, bash, ...), `patterns` what it is for. */
export declare function permissionRequest(asked: PermissionAsked, who: Who, cwd: string): CanonicalEvent;
/** The text a user (or a task dispatch) typed: every text part that is not OpenCode's own. */
export declare function promptText(parts: readonly Part[] | undefined): string;
/** A child session's agent, from its info (v2 `agent`) or its title "… (@general subagent)". */
export declare function agentOf(info: Partial<SessionInfo> | null | undefined): string | null;
/** The text of an assistant message's parts. */
export declare const messageText: (parts: readonly Part[] | undefined) => string;
type Refusing = Extract<Verdict, {
    reason: string;
}>;
/** Whether a verdict refuses the action (an Ask too: no OpenCode plugin can ask the user). */
export declare const refuses: (verdict: Verdict | null | undefined) => verdict is Refusing;
/** The error text a refused tool call throws; OpenCode hands it to the model as the tool result. */
export declare function refusal(verdict: Refusing): string;
/** What goes to the model with a tool's result, or with a prompt: context, and any refusal of a
 * PostToolUse (the tool already ran; Claude Code shows the model the reason the same way). */
export declare function modelNote(verdict: Verdict): string;
/** The message that keeps a session going when a Stop (or SubagentStop) gate refuses it. */
export declare const holdText: (verdict: Refusing) => string;
