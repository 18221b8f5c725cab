"""Gemini CLI's plug of hookgate: its stdin payloads in, its hook answers out, its settings.json."""
