"""hookgate: one hook policy engine for Claude Code, Codex and OpenCode.

Kept empty of imports on purpose: `hookgate hook ...` runs on every tool call of every agent,
and everything imported here would be paid for each time.
"""

__version__ = "0.1.0"
