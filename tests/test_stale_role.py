"""A pipeline role left over from an earlier session is dropped, by ownership
(hookgate.pipeline.session), through real hook processes and the real `hookgate role set`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from support import HOOKGATE, run_hook


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / ".hookgate").mkdir()
    return tmp_path


def hook(root: Path, session: str, event: str, runtime: str = "claude", **fields) -> dict:
    payload = {"session_id": session, "cwd": str(root), "hook_event_name": event, **fields}
    done = run_hook(runtime, payload, root, "--event", event)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout) if done.stdout.strip() else {}


def start(root: Path, session: str, source: str = "startup", runtime: str = "claude") -> str:
    """SessionStart; the context hookgate gave the model."""
    out = hook(root, session, "SessionStart", runtime, source=source)
    return out.get("hookSpecificOutput", {}).get("additionalContext", "")


def role_set_in_terminal(root: Path, role: str) -> None:
    subprocess.run([HOOKGATE, "role", "set", role], cwd=root, check=True, capture_output=True)


def skill_writes_role(root: Path, session: str, role: str, runtime: str = "claude") -> None:
    """What a GodotMaker skill does first inside its session: a Write of the role file."""
    path = str(root / ".hookgate" / "current_role")
    call = {"tool_name": "Write", "tool_input": {"file_path": path, "content": role + "\n"}}
    hook(root, session, "PreToolUse", runtime, **call)
    Path(path).write_text(role + "\n")
    hook(root, session, "PostToolUse", runtime, tool_response={"filePath": path}, **call)


def role(root: Path) -> str | None:
    path = root / ".hookgate" / "current_role"
    return path.read_text().strip() if path.exists() else None


def dropped(root: Path, session: str) -> list:
    lines = (root / ".hookgate" / "sessions" / session / "metrics.jsonl").read_text().splitlines()
    return [json.loads(line)["dropped_role"] for line in lines if json.loads(line)["event"] == "session_start"]


def test_a_role_set_before_the_agent_starts_is_kept(root: Path) -> None:
    role_set_in_terminal(root, "build")
    assert start(root, "s1").endswith("pipeline role: build")
    assert role(root) == "build"


def test_a_killed_sessions_role_is_dropped_at_the_next_session(root: Path) -> None:
    start(root, "s1")
    skill_writes_role(root, "s1", "build")
    hook(root, "s1", "PreToolUse", tool_name="Bash", tool_input={"command": "ls"})
    # killed: no Stop, no SessionEnd
    assert "pipeline role" not in start(root, "s2")
    assert role(root) is None and dropped(root, "s2") == ["build"]


def test_a_role_inherited_then_killed_is_dropped_too(root: Path) -> None:
    role_set_in_terminal(root, "build")
    start(root, "s1")  # inherits it, so owns it
    start(root, "s2")
    assert role(root) is None


def test_the_session_that_set_it_keeps_it_when_resumed(root: Path) -> None:
    start(root, "s1")
    skill_writes_role(root, "s1", "verify")
    hook(root, "s1", "SessionEnd", reason="prompt_input_exit")
    assert start(root, "s1", "resume").endswith("pipeline role: verify")
    assert role(root) == "verify"
    # a resume under another id (a fork) did not set it
    start(root, "s3", "resume")
    assert role(root) is None


def test_compaction_keeps_the_role(root: Path) -> None:
    start(root, "s1")
    skill_writes_role(root, "s1", "build")
    assert start(root, "s1", "compact").endswith("pipeline role: build")
    assert role(root) == "build"


def test_a_role_set_while_the_old_session_only_idles_and_closes_goes_to_the_next(root: Path) -> None:
    start(root, "s1")
    skill_writes_role(root, "s1", "gdd")
    role_set_in_terminal(root, "build")  # the user, for the next session
    hook(root, "s1", "Stop", stop_hook_active=False, last_assistant_message="done")
    hook(root, "s1", "SessionEnd", reason="prompt_input_exit")
    start(root, "s2")
    assert role(root) == "build"


def test_a_role_set_by_the_agent_with_the_cli_belongs_to_its_session(root: Path) -> None:
    start(root, "s1")
    command = "hookgate role set build"
    hook(root, "s1", "PreToolUse", tool_name="Bash", tool_input={"command": command})
    role_set_in_terminal(root, "build")  # the command the agent ran
    hook(root, "s1", "PostToolUse", tool_name="Bash", tool_input={"command": command}, tool_response={})
    start(root, "s2")
    assert role(root) is None


def test_codex_sessions_follow_the_same_rule(root: Path) -> None:
    start(root, "c1", runtime="codex")
    skill_writes_role(root, "c1", "build", runtime="codex")
    start(root, "c2", runtime="codex")
    assert role(root) is None
