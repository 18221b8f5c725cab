"""hookgate's Codex CLI adapter: the stdin dialect, the hooks.json installer and Codex's doctor checks."""
