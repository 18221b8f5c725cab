"""`hookgate replay`: the recorded events of sessions (hookgate.recording) decided again (run)."""
