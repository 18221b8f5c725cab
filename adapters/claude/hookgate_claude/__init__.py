"""Claude Code's dialect of hookgate: its stdin payloads in, its hook answers out, its settings."""
