// OpenCode's side of the types, all from the pinned @opencode-ai/plugin (and the SDK it is built
// on): each hook's arguments are taken from its `Hooks` type, so a change of a hook's signature
// in a new OpenCode release fails the type check here rather than a user's session.
export {};
