// Which agent a session belongs to. OpenCode's hooks carry only a sessionID: a subagent runs in a
// child session whose parentID is set, announced by a `session.created` event (not awaited, but
// published before the child's first tool call). The map is kept from those events; a session the
// map has not seen is looked up once through the client.
import { agentOf } from "./translate.js";
export class Sessions {
    client;
    log;
    known = new Map();
    constructor(client, log) {
        this.client = client;
        this.log = log;
    }
    /** Record a session from its info (`session.created`, `session.updated`, `session.get`). */
    note(info) {
        if (!info?.id)
            return;
        this.known.set(info.id, { parent: info.parentID || null, agent: info.parentID ? agentOf(info) : null });
    }
    /** A child's agent, when its creation did not name it (chat.message carries it). */
    noteAgent(sessionID, agent) {
        const own = this.known.get(sessionID);
        if (own?.parent && !own.agent && agent)
            own.agent = agent;
    }
    isChild(sessionID) {
        return Boolean(this.known.get(sessionID)?.parent);
    }
    /** The root session (the canonical session_id) and the subagent, if `sessionID` is a child: at
     * once when the map knows every session on the way (a tool call waits for no turn of the event
     * loop), else once the first it lacks is looked up. */
    resolve(sessionID) {
        const found = this.walk(sessionID);
        return typeof found === "string" ? this.lookUp(found).then(() => this.resolve(sessionID)) : found;
    }
    /** Who `sessionID` is, from the map alone; or the first session on the way the map lacks. */
    walk(sessionID) {
        const own = this.known.get(sessionID);
        if (!own)
            return sessionID;
        if (!own.parent)
            return { root: sessionID, agentId: null, agentType: null };
        let root = own.parent;
        for (let hops = 0; hops < 32; hops++) { // nested subagents: the root is the top session
            const up = this.known.get(root);
            if (!up)
                return root;
            if (!up.parent)
                break;
            root = up.parent;
        }
        return { root, agentId: sessionID, agentType: own.agent };
    }
    async lookUp(sessionID) {
        try {
            const answer = await this.client.session?.get?.({ path: { id: sessionID } });
            if (answer?.data)
                this.note(answer.data);
            else
                this.log("warn", `session ${sessionID} could not be looked up; treating it as a main session`);
        }
        catch (error) {
            this.log("warn", `session ${sessionID} lookup failed (${error?.message ?? error}); treating it as a main session`);
        }
        // a session the answer did not name is a main session too: each lookup settles one session
        if (!this.known.has(sessionID))
            this.known.set(sessionID, { parent: null, agent: null });
    }
}
