import type { Log } from "./transport.js";
import type { SessionInfo } from "./opencode.js";
import type { Who } from "./protocol.js";
/** The part of OpenCode's client the map uses: `session.get`. */
export interface SessionLookup {
    session?: {
        get?: (options: {
            path: {
                id: string;
            };
        }) => Promise<{
            data?: unknown;
        }>;
    };
}
export declare class Sessions {
    private readonly client;
    private readonly log;
    readonly known: Map<string, {
        parent: string | null;
        agent: string | null;
    }>;
    constructor(client: SessionLookup, log: Log);
    /** Record a session from its info (`session.created`, `session.updated`, `session.get`). */
    note(info: Partial<SessionInfo> | null | undefined): void;
    /** A child's agent, when its creation did not name it (chat.message carries it). */
    noteAgent(sessionID: string, agent: string | undefined): void;
    isChild(sessionID: string): boolean;
    /** The root session (the canonical session_id) and the subagent, if `sessionID` is a child: at
     * once when the map knows every session on the way (a tool call waits for no turn of the event
     * loop), else once the first it lacks is looked up. */
    resolve(sessionID: string): Who | Promise<Who>;
    /** Who `sessionID` is, from the map alone; or the first session on the way the map lacks. */
    private walk;
    private lookUp;
}
