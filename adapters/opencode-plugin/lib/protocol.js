// What the plugin and the hookgate core say to each other over `hookgate serve --stdio`: the
// canonical events the plugin sends, the verdicts and capabilities the core answers with. The
// core's side is core/hookgate/model (events.py, verdicts.py) and core/hookgate/rpc.
//
// Whatever the core sends is checked before it is believed (isVerdict, isCapabilities): the
// types below say what a checked answer is, never what an unchecked one is assumed to be.
export const PROTOCOL_VERSION = 1;
export const isObject = (value) => typeof value === "object" && value !== null && !Array.isArray(value);
const isText = (value) => value === undefined || value === null || typeof value === "string";
// what each kind of verdict must carry (core/hookgate/model/verdicts.py); anything else is no verdict
const VERDICT_FIELDS = new Map([
    ["allow", []], ["context", [["context", "string"]]], ["modify", [["updated_input", "object"]]],
    ["ask", [["reason", "string"]]], ["retry", [["reason", "string"]]], ["block", [["reason", "string"]]],
]);
/** Whether the core's answer to evaluate is a verdict the plugin can carry out. */
export function isVerdict(value) {
    const fields = isObject(value) && typeof value.kind === "string" && VERDICT_FIELDS.get(value.kind);
    return Boolean(fields) && isObject(value) && isText(value.message) && isText(value.context) &&
        (fields || []).every(([name, type]) => (type === "object" ? isObject(value[name]) : typeof value[name] === type));
}
/** Whether capabilities (initialize's, or a reload's) make sense: an object of events, each an object. */
export function isCapabilities(value) {
    return isObject(value) && isObject(value.events) && Object.values(value.events).every(isObject);
}
