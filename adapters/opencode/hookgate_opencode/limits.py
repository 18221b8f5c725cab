"""OpenCode's own numbers that hookgate's engine must respect: none (session.idle is an event,
not a hook, so there is no Stop to cap)."""
