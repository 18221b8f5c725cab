// What a hook gets when the core cannot answer (down, crashed, slow): each gate's declared fail
// mode decides, as the core itself would decide for a gate that failed. The plugin learns the
// gates per event from initialize's capabilities; before the core ever answered, the gating
// events fail closed, as `hookgate hook` does when it cannot start.
import { LIFECYCLE } from "./lifecycle.js";
const EVENTS = Object.entries(LIFECYCLE);
/** Before the core ever answered: each event's fail mode from the lifecycle matrix. */
export const UNKNOWN_CORE = {
    events: Object.fromEntries(EVENTS.map(([name, e]) => [name, { fail_mode: e.failClosed ? "closed" : "open" }])),
};
// the canonical field a matcher is tested against, per event (Claude Code's semantics)
const MATCH_FIELD = Object.fromEntries(EVENTS.map(([name, e]) => [name, e.matchField]));
/** Claude Code's matcher: "" or "*" = all; letters, digits, "_" and "|" only = exact names; else a regex. */
export function matches(pattern, value) {
    const text = value === undefined || value === null ? "" : String(value);
    if (!pattern || pattern === "*")
        return true;
    if (/^[A-Za-z0-9_|]+$/.test(pattern))
        return pattern.split("|").includes(text);
    try {
        return new RegExp(pattern).test(text);
    }
    catch {
        return true; // a pattern this engine cannot read: assume the gate applies (the safer reading)
    }
}
/** The verdict when the core could not decide `event`. */
export function failVerdict(capabilities, event, why) {
    const name = event.hook_event_name;
    const known = capabilities?.events?.[name] ?? UNKNOWN_CORE.events[name];
    const field = MATCH_FIELD[name];
    const value = field ? event[field] : undefined;
    const closed = known?.gates
        ? known.gates.filter((g) => g.fail_mode === "closed" && (!field || matches(g.matcher, value))).map((g) => g.id)
        : known?.fail_mode === "closed" ? [`the ${name} gates`] : [];
    if (closed.length) {
        return {
            kind: "block",
            reason: `hookgate could not decide this ${name} (${why}); ${closed.join(", ")} fail closed, ` +
                `so it is blocked until the hookgate core answers again (try \`hookgate doctor\`).`,
            message: null, context: null,
        };
    }
    return {
        kind: "allow",
        message: `hookgate could not decide this ${name} (${why}); no gate on it fails closed, so it goes ahead.`,
        context: null,
    };
}
