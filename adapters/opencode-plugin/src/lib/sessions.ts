// Which agent a session belongs to. OpenCode's hooks carry only a sessionID: a subagent runs in a
// child session whose parentID is set, announced by a `session.created` event (not awaited, but
// published before the child's first tool call). The map is kept from those events; a session the
// map has not seen is looked up once through the client.

import type { Log } from "./transport.js"
import type { SessionInfo } from "./opencode.js"
import type { Who } from "./protocol.js"
import { agentOf } from "./translate.js"

/** The part of OpenCode's client the map uses: `session.get`. */
export interface SessionLookup {
  session?: { get?: (options: { path: { id: string } }) => Promise<{ data?: unknown }> }
}

export class Sessions {
  readonly known = new Map<string, { parent: string | null; agent: string | null }>()

  constructor(private readonly client: SessionLookup, private readonly log: Log) {}

  /** Record a session from its info (`session.created`, `session.updated`, `session.get`). */
  note(info: Partial<SessionInfo> | null | undefined): void {
    if (!info?.id) return
    this.known.set(info.id, { parent: info.parentID || null, agent: info.parentID ? agentOf(info) : null })
  }

  /** A child's agent, when its creation did not name it (chat.message carries it). */
  noteAgent(sessionID: string, agent: string | undefined): void {
    const own = this.known.get(sessionID)
    if (own?.parent && !own.agent && agent) own.agent = agent
  }

  isChild(sessionID: string): boolean {
    return Boolean(this.known.get(sessionID)?.parent)
  }

  /** The root session (the canonical session_id) and the subagent, if `sessionID` is a child: at
   * once when the map knows every session on the way (a tool call waits for no turn of the event
   * loop), else once the first it lacks is looked up. */
  resolve(sessionID: string): Who | Promise<Who> {
    const found = this.walk(sessionID)
    return typeof found === "string" ? this.lookUp(found).then(() => this.resolve(sessionID)) : found
  }

  /** Who `sessionID` is, from the map alone; or the first session on the way the map lacks. */
  private walk(sessionID: string): Who | string {
    const own = this.known.get(sessionID)
    if (!own) return sessionID
    if (!own.parent) return { root: sessionID, agentId: null, agentType: null }
    let root = own.parent
    for (let hops = 0; hops < 32; hops++) { // nested subagents: the root is the top session
      const up = this.known.get(root)
      if (!up) return root
      if (!up.parent) break
      root = up.parent
    }
    return { root, agentId: sessionID, agentType: own.agent }
  }

  private async lookUp(sessionID: string) {
    try {
      const answer = await this.client.session?.get?.({ path: { id: sessionID } })
      if (answer?.data) this.note(answer.data as Partial<SessionInfo>)
      else this.log("warn", `session ${sessionID} could not be looked up; treating it as a main session`)
    } catch (error) {
      this.log("warn", `session ${sessionID} lookup failed (${(error as Error)?.message ?? error}); treating it as a main session`)
    }
    // a session the answer did not name is a main session too: each lookup settles one session
    if (!this.known.has(sessionID)) this.known.set(sessionID, { parent: null, agent: null })
  }
}
