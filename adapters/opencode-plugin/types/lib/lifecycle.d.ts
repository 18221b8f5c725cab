export interface LifecycleEntry {
    hook: string;
    failClosed: boolean;
    matchField: string | null;
}
export declare const LIFECYCLE: {
    readonly SessionStart: {
        readonly hook: "event session.created (root session)";
        readonly failClosed: false;
        readonly matchField: "source";
    };
    readonly UserPromptSubmit: {
        readonly hook: "chat.message";
        readonly failClosed: false;
        readonly matchField: null;
    };
    readonly PreToolUse: {
        readonly hook: "tool.execute.before";
        readonly failClosed: true;
        readonly matchField: "tool_name";
    };
    readonly PermissionRequest: {
        readonly hook: "event permission.asked";
        readonly failClosed: true;
        readonly matchField: "tool_name";
    };
    readonly PostToolUse: {
        readonly hook: "tool.execute.after";
        readonly failClosed: false;
        readonly matchField: "tool_name";
    };
    readonly PostToolUseFailure: {
        readonly hook: "event message.part.updated (tool part in state error)";
        readonly failClosed: false;
        readonly matchField: "tool_name";
    };
    readonly SubagentStart: {
        readonly hook: "event session.created (child session)";
        readonly failClosed: false;
        readonly matchField: "agent_type";
    };
    readonly SubagentStop: {
        readonly hook: "experimental.text.complete / event session.idle (child session)";
        readonly failClosed: false;
        readonly matchField: "agent_type";
    };
    readonly Stop: {
        readonly hook: "experimental.text.complete / event session.idle (root session)";
        readonly failClosed: false;
        readonly matchField: null;
    };
    readonly PreCompact: {
        readonly hook: "experimental.session.compacting";
        readonly failClosed: false;
        readonly matchField: "trigger";
    };
    readonly PostCompact: {
        readonly hook: "event session.compacted";
        readonly failClosed: false;
        readonly matchField: "trigger";
    };
    readonly SessionEnd: {
        readonly hook: "dispose / event session.deleted (root session)";
        readonly failClosed: false;
        readonly matchField: "reason";
    };
};
/** The canonical events the plugin delivers. */
export type EventName = keyof typeof LIFECYCLE;
