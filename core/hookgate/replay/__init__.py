"""Recorded events and their replay: `record` (on the hook path: what a session log keeps of each
decided event) and `run` (`hookgate replay`: decide them again under a policy)."""
