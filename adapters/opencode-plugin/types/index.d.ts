import type { Hooks, PluginInput, PluginOptions } from "@opencode-ai/plugin";
import type { HookName } from "./lib/opencode.js";
/** The options a registration may pass (the tuple form in opencode.json, or install's file). */
export interface HookgateOptions {
    /** the core's argv (or its program); default $HOOKGATE_COMMAND, else `hookgate` on PATH */
    command?: string | string[];
    /** a fixed deadline for every decision; default: what the core declares per event */
    timeoutMs?: number;
    /** how long the core may take to start */
    startTimeoutMs?: number;
    /** how long to keep OpenCode's event loop turning while the core's answer is due after a pause,
     * so that it is read at once (0: sleep until it comes). Default: 1 ms or 0, whichever answers
     * sooner on this machine, measured as the plugin runs; 0 on one CPU */
    awakeMs?: number;
}
/** The hooks hookgate implements, each with OpenCode's own signature. */
export type HookgateHooks = Required<Pick<Hooks, HookName>>;
export declare const HookgatePlugin: (input: PluginInput, pluginOptions?: PluginOptions) => Promise<HookgateHooks>;
export default HookgatePlugin;
