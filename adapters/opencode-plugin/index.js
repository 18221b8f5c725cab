// opencode-hookgate: OpenCode's hooks, decided by the hookgate core.
//
// Every hook is translated to a canonical event (lib/translate.ts), decided by one long-running
// `hookgate serve --stdio` (lib/client.ts over lib/transport.ts), and the verdict carried out the
// way OpenCode allows:
//
//   tool.execute.before            PreToolUse        refusal: throw Error(reason), the model sees it
//                                                     (apply_patch: the raw patch, read by the core)
//   tool.execute.after             PostToolUse       context / refusal appended to the tool output
//   event message.part.updated     PostToolUseFailure a tool part in state error (a thrown or aborted
//                                                     call, which has no tool.execute.after): a refusal
//                                                     reaches the model as a queued note
//   event session.created          SessionStart      (a child session: SubagentStart, and the
//                                                     sessionID -> {parent, agent} map is updated)
//   chat.message                   UserPromptSubmit  refusal: throw; context appended to the prompt
//   experimental.text.complete     Stop/SubagentStop on the turn's final text (no tool call in it):
//                                                     a refusal holds the session by queueing the
//                                                     reason as a user message, inside the loop
//   event session.idle             Stop/SubagentStop for a turn that ended without text (re-prompt
//                                                     through the client; a child's refusal reaches
//                                                     the parent with the task's result)
//   experimental.session.compacting PreCompact       context added to the compaction prompt
//   event session.compacted        PostCompact       recorded and run, nothing to carry out
//   event permission.asked         PermissionRequest refusal: answered "reject" through the client
//   dispose / event session.deleted SessionEnd       every main session still open, when OpenCode
//                                                     tears the plugin down (the end of `opencode run`,
//                                                     the TUI's exit), or one that is deleted
//
// When the core is down or too slow, each gate's fail mode decides (lib/failmode.ts); no hook
// waits past its deadline.
import { CoreClient, coreCommand } from "./lib/client.js";
import { failVerdict } from "./lib/failmode.js";
import { Sessions } from "./lib/sessions.js";
import * as t from "./lib/translate.js";
const PLUGIN_VERSION = "0.1.0";
const HOLD = "hookgate-hold"; // marks the user messages this plugin queues to hold a session
const asNumber = (value) => (typeof value === "number" ? value : undefined);
/** The registration's options, read (they come from a user's config: unknown until checked). */
function hookgateOptions(options) {
    const command = options?.command;
    return {
        command: typeof command === "string" || (Array.isArray(command) && command.every((a) => typeof a === "string"))
            ? command : undefined,
        timeoutMs: asNumber(options?.timeoutMs),
        startTimeoutMs: asNumber(options?.startTimeoutMs),
        awakeMs: asNumber(options?.awakeMs),
    };
}
export const HookgatePlugin = async (input, pluginOptions = {}) => {
    const { client, directory } = input;
    const options = hookgateOptions(pluginOptions);
    const log = (level, text) => {
        const message = text.startsWith("hookgate") ? text : `hookgate: ${text}`;
        Promise.resolve(client?.app?.log?.({ body: { service: "hookgate", level, message } })).catch(() => { });
        if (level !== "info" && !client?.app?.log)
            console.error(message);
    };
    const core = new CoreClient({
        command: coreCommand(options), cwd: directory, timeoutMs: options.timeoutMs, startTimeoutMs: options.startTimeoutMs,
        awakeMs: options.awakeMs, log,
        clientInfo: { plugin: PLUGIN_VERSION },
    });
    const sessions = new Sessions(client, log);
    /** per session: the last user message, the one whose turn a stop was decided for, whether held */
    const turns = new Map();
    const turn = (id) => {
        let state = turns.get(id);
        if (!state)
            turns.set(id, state = { lastUser: null, stopFor: undefined, held: false });
        return state;
    };
    const starts = new Map(); // session -> its SessionStart/SubagentStart decision
    const startsDecided = new WeakSet(); // the decisions of `starts` that are made
    const startContext = new Map(); // session -> context a start verdict wants the model to see
    const callContext = new Map(); // tool call -> context its PreToolUse verdict wants the model to see
    const childStops = new Map(); // child session -> its SubagentStop decision
    // tool calls refused before they ran (their error is hookgate's refusal, not a failure of a call
    // that ran), or whose PostToolUseFailure was sent (OpenCode may report the error part again)
    const failedCalls = new Set();
    async function decide(event) {
        let verdict;
        try {
            verdict = await core.evaluate(event);
        }
        catch (error) {
            verdict = failVerdict(core.capabilities, event, error.message);
            log("warn", `${event.hook_event_name}: ${error.message}; ${verdict.kind === "block" ? "failing closed" : "failing open"}`);
        }
        if (verdict.message)
            notify(verdict.message);
        return verdict;
    }
    function notify(message) {
        log("warn", message);
        Promise.resolve(client?.tui?.showToast?.({ body: { message, variant: "warning" } })).catch(() => { });
    }
    /** Who a session is, once its start and its root's are decided (a session's start is decided
     * before anything done in it): at once when nothing is left to wait for, so that a tool call
     * reaches the core without a turn of the event loop. */
    function who(sessionID) {
        const resolved = sessions.resolve(sessionID);
        return resolved instanceof Promise ? resolved.then((known) => afterStarts(known, sessionID)) : afterStarts(resolved, sessionID);
    }
    function afterStarts(resolved, sessionID) {
        const waits = [starts.get(resolved.root), starts.get(sessionID)].filter((start) => start && !startsDecided.has(start));
        return waits.length ? Promise.all(waits).then(() => resolved) : resolved;
    }
    function startDeciding(sessionID, start) {
        starts.set(sessionID, start);
        const decided = () => { startsDecided.add(start); };
        start.then(decided, decided);
    }
    const holdParts = (verdict) => [{ type: "text", text: t.holdText(verdict), metadata: { [HOLD]: true } }];
    /** Keep a session going: its loop is still running, so a queued user message makes it go on. */
    async function holdSession(sessionID, verdict) {
        const answer = await client.session.prompt({ path: { id: sessionID }, body: { noReply: true, parts: holdParts(verdict) } })
            .catch((error) => ({ error: error?.message ?? error }));
        if (answer?.error)
            log("error", `could not hold session ${sessionID} (${JSON.stringify(answer.error)}); it stops unheld`);
    }
    /** Stop (or SubagentStop) for the turn that just ended, once per turn. */
    async function stopTurn(sessionID, text, stage) {
        const state = turn(sessionID);
        if (state.stopFor === state.lastUser)
            return null;
        state.stopFor = state.lastUser;
        const event = t.stop(text, state.held, await who(sessionID), directory);
        const verdict = await decide(event);
        state.held = t.refuses(verdict);
        if (t.refuses(verdict) && stage === "in-loop")
            await holdSession(sessionID, verdict);
        return verdict;
    }
    async function onSessionCreated(info) {
        sessions.note(info);
        const resolved = await sessions.resolve(info.id);
        if (resolved.agentId)
            await starts.get(resolved.root); // SessionStart resets the session first
        const event = resolved.agentId ? t.subagentStart(resolved, directory) : t.sessionStart(resolved, directory);
        const verdict = await decide(event);
        if (verdict.context)
            startContext.set(info.id, verdict.context);
    }
    async function onIdle(sessionID) {
        const state = turn(sessionID);
        if (state.stopFor === state.lastUser)
            return;
        const messages = await client.session.messages({ path: { id: sessionID } }).catch(() => null);
        const last = [...(messages?.data ?? [])].reverse().find((m) => m.info?.role === "assistant");
        const verdict = await stopTurn(sessionID, t.messageText(last?.parts), "idle");
        if (!verdict || !t.refuses(verdict) || sessions.isChild(sessionID))
            return verdict;
        // the loop has ended: queue the reason as a new prompt (works while OpenCode keeps running;
        // `opencode run` exits on idle, which is why the in-loop hold above is the main path)
        await client.session.promptAsync({ path: { id: sessionID }, body: { parts: holdParts(verdict) } });
        return verdict;
    }
    async function onPermission(asked) {
        const verdict = await decide(t.permissionRequest(asked, await who(asked.sessionID), directory));
        if (!t.refuses(verdict))
            return; // no opinion: OpenCode's own permission rules and dialog decide
        const reply = { path: { id: asked.sessionID, permissionID: asked.id }, body: { response: "reject" } };
        // the v1 client answers through this endpoint; a v2 client through permission.reply
        const v2 = client;
        const answer = client.postSessionIdPermissionsPermissionId
            ? await client.postSessionIdPermissionsPermissionId(reply)
            : await v2.permission?.reply?.({ requestID: asked.id, reply: "reject" });
        if (answer?.error)
            log("warn", `could not answer permission ${asked.id}: ${JSON.stringify(answer.error)}`);
    }
    /** A main session hookgate saw start ends, once: its start is decided first. */
    async function endSession(sessionID) {
        const started = starts.get(sessionID);
        if (!started || sessions.isChild(sessionID))
            return;
        starts.delete(sessionID);
        await started.catch(() => null);
        await decide(t.sessionEnd(await who(sessionID), directory, "other"));
    }
    /** A call that threw or was aborted: its after-event, so the effect check sees what it changed. */
    async function onToolError(part) {
        if (!part.callID || failedCalls.has(part.callID))
            return;
        failedCalls.add(part.callID);
        callContext.delete(part.callID);
        const verdict = await decide(t.postToolUseFailure(part, await who(part.sessionID), directory));
        if (!t.refuses(verdict))
            return;
        // no tool output to append to: the note is queued for the model's next step
        const parts = [{ type: "text", text: `[hookgate] ${t.refusal(verdict)}` }];
        const answer = await client.session.prompt({ path: { id: part.sessionID }, body: { noReply: true, parts } })
            .catch((error) => ({ error: error?.message ?? error }));
        if (answer?.error)
            log("warn", `could not tell the model what was put back: ${JSON.stringify(answer.error)}`);
    }
    function guard(what, promise) {
        promise.catch((error) => log("error", `${what} failed: ${error?.message ?? error}`));
        return promise;
    }
    return {
        "tool.execute.before": async (input, output) => {
            const verdict = await decide(t.preToolUse(input, output.args, await who(input.sessionID), directory));
            if (t.refuses(verdict)) {
                failedCalls.add(input.callID); // refused here, it never ran
                throw new Error(t.refusal(verdict));
            }
            if (verdict.kind === "modify") {
                // the whole input is replaced, as Claude Code's updatedInput; OpenCode 1.18.33 runs the
                // tool with these very args (checked on the real binary), so they are edited in place
                const next = t.openCodeArgs(verdict.updated_input);
                try {
                    for (const key of Object.keys(output.args))
                        if (!(key in next))
                            delete output.args[key];
                    Object.assign(output.args, next);
                }
                catch (error) {
                    failedCalls.add(input.callID);
                    throw new Error(`hookgate had to rewrite this call's input, which OpenCode refused (${error.message}); not run`);
                }
            }
            if (verdict.context)
                callContext.set(input.callID, verdict.context);
        },
        "tool.execute.after": async (input, output) => {
            const resolved = await who(input.sessionID);
            const verdict = await decide(t.postToolUse(input, output, resolved, directory));
            const notes = [callContext.get(input.callID), t.modelNote(verdict)];
            callContext.delete(input.callID);
            const child = input.tool === "task" ? output?.metadata?.sessionId : null;
            const childStop = typeof child === "string" ? await childStops.get(child) : null;
            if (childStop && t.refuses(childStop)) {
                notes.push(`[hookgate] The subagent stopped although ${t.refusal(childStop)}\n(resume it with task_id "${child}" to fix this)`);
            }
            const text = notes.filter(Boolean).join("\n");
            if (text && typeof output.output === "string")
                output.output += `\n\n${text}`;
        },
        "chat.message": async (input, output) => {
            const sessionID = input.sessionID;
            sessions.noteAgent(sessionID, input.agent);
            const state = turn(sessionID);
            state.lastUser = output.message?.id ?? `${Date.now()}`;
            if (output.parts?.some((p) => p?.type === "text" && p.metadata?.[HOLD]))
                return; // our own hold, not the user's prompt
            state.held = false;
            const verdict = await decide(t.userPromptSubmit(output.parts, await who(sessionID), directory));
            if (t.refuses(verdict))
                throw new Error(t.refusal(verdict));
            const context = [startContext.get(sessionID), verdict.context].filter(Boolean).join("\n");
            startContext.delete(sessionID);
            const part = output.parts?.find((p) => p?.type === "text");
            if (context && part)
                part.text += `\n\n[hookgate] ${context}`;
        },
        "experimental.text.complete": async (input, output) => {
            // the end of a turn is a final text with no tool call beside it; the loop is still running,
            // so a queued user message makes it go on
            const message = await client.session.message({ path: { id: input.sessionID, messageID: input.messageID } }).catch(() => null);
            if (!message?.data || message.data.parts?.some((p) => p.type === "tool"))
                return;
            await stopTurn(input.sessionID, output.text, "in-loop");
        },
        "experimental.session.compacting": async (input, output) => {
            const verdict = await decide(t.preCompact(await who(input.sessionID), directory));
            if (t.refuses(verdict))
                throw new Error(t.refusal(verdict));
            if (verdict.context)
                output.context?.push(verdict.context);
        },
        // not awaited by OpenCode: each branch registers what later hooks must wait for, synchronously
        event: async ({ event: announced }) => {
            const event = announced; // see lib/opencode.ts
            switch (event?.type) {
                case "session.created":
                    if (event.properties?.info)
                        startDeciding(event.properties.info.id, guard("session start", onSessionCreated(event.properties.info)));
                    break;
                case "session.updated":
                    if (event.properties?.info && !sessions.known.has(event.properties.info.id))
                        sessions.note(event.properties.info);
                    break;
                case "session.idle": {
                    const sessionID = event.properties?.sessionID;
                    if (!sessionID)
                        break;
                    const decided = guard("stop", onIdle(sessionID));
                    if (sessions.isChild(sessionID))
                        childStops.set(sessionID, decided.catch(() => null));
                    break;
                }
                case "session.compacted": {
                    const sessionID = event.properties?.sessionID;
                    if (sessionID)
                        guard("post compact", Promise.resolve(who(sessionID)).then((resolved) => decide(t.postCompact(resolved, directory))));
                    break;
                }
                case "session.deleted": {
                    const id = event.properties?.info?.id;
                    if (!id)
                        break;
                    guard("session end", endSession(id));
                    for (const map of [turns, starts, startContext, childStops])
                        map.delete(id);
                    break;
                }
                case "message.part.updated": {
                    const part = event.properties?.part;
                    if (t.isFailedToolPart(part))
                        guard("post tool use failure", onToolError(part));
                    break;
                }
                case "permission.asked":
                    if (event.properties)
                        guard("permission request", onPermission(event.properties));
                    break;
            }
        },
        dispose: async () => {
            await Promise.allSettled([...starts.keys()].map((id) => guard("session end", endSession(id))));
            await core.dispose();
        },
    };
};
// OpenCode calls every export of a plugin module as a plugin: export no other value here (types
// are erased, so they may be exported)
export default HookgatePlugin;
