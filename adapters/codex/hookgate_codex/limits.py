"""Codex's own numbers that hookgate's engine must respect: none. (Codex has no cap on Stop
blocks; the fields its PreToolUse output rejects are its dialect's rendering rules, and the
timeouts it clamps are in trust.py, where its trust hash needs them.)"""
