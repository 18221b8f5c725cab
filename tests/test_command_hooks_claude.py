"""Command hooks through the Claude stdin protocol: `hookgate hook claude` as Claude Code runs it,
with real handler processes behind it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from support import run_hook


@pytest.fixture
def work(tmp_path: Path) -> Path:
    (tmp_path / "work" / ".hookgate").mkdir(parents=True)
    (tmp_path / "home" / ".hookgate").mkdir(parents=True)
    return tmp_path / "work"


def write_hooks(path: Path, **events: list[tuple[str, list[Any]]]) -> None:
    path.write_text(json.dumps({"hooks": {
        event: [{"matcher": m, "hooks": [h if isinstance(h, dict) else {"type": "command", "command": h} for h in hs]}
                for m, hs in groups]
        for event, groups in events.items()
    }}))


def claude(work: Path, event: str, **fields: Any):
    payload = {"hook_event_name": event, "session_id": "sess-1", "cwd": str(work), **fields}
    done = run_hook("claude", payload, work, "--event", event, env={"HOME": str(work.parent / "home")})
    out = json.loads(done.stdout) if done.stdout.strip() else {}
    return done, out


def metrics(work: Path) -> list[dict[str, Any]]:
    path = work / ".hookgate" / "metrics.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_pre_tool_use_exit_2_denies_with_stderr(work):
    write_hooks(work / ".hookgate" / "hooks.json", PreToolUse=[("Bash", [
        """python3 -c 'import json,sys; p=json.load(sys.stdin); sys.exit(print("no " + p["tool_input"]["command"], file=sys.stderr) or 2)'"""
    ])])
    done, out = claude(work, "PreToolUse", tool_name="Bash", tool_input={"command": "make deploy"})
    assert done.returncode == 0
    assert out == {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                          "permissionDecisionReason": "no make deploy"},
                   "systemMessage": "hookgate: run `hookgate explain sess-1 --last-block` to see why"}
    done, out = claude(work, "PreToolUse", tool_name="Write", tool_input={"file_path": "a", "content": ""})
    assert done.returncode == 0 and out == {}
    [block] = [m for m in metrics(work) if m["event"] == "hook_block"]
    assert block["gate"] == "command_hooks.pre_tool_use" and block["runtime"] == "claude"


def test_global_and_project_files_both_run_and_an_identical_handler_runs_once(work):
    log = 'echo "$0" >> "$HOOKGATE_PROJECT_DIR/ran.txt"'
    write_hooks(work.parent / "home" / ".hookgate" / "hooks.json",
                PreToolUse=[("*", [f"sh -c '{log}' global", f"sh -c '{log}' shared"])])
    write_hooks(work / ".hookgate" / "hooks.json", PreToolUse=[("*", [f"sh -c '{log}' shared", f"sh -c '{log}' project"])])
    done, _ = claude(work, "PreToolUse", tool_name="Read", tool_input={"file_path": "x"})
    assert done.returncode == 0
    assert sorted((work / "ran.txt").read_text().split()) == ["global", "project", "shared"]


def test_user_prompt_submit_can_be_blocked_and_given_context(work):
    write_hooks(work / ".hookgate" / "hooks.json", UserPromptSubmit=[("", [
        """python3 -c 'import json,sys; p=json.load(sys.stdin)["prompt"]; print(json.dumps({"decision": "block", "reason": "no secrets in prompts"}) if "password" in p else "team style: tabs")'"""
    ])])
    _, out = claude(work, "UserPromptSubmit", prompt="the password is hunter2")
    assert out == {"decision": "block", "reason": "no secrets in prompts",
                   "systemMessage": "hookgate: run `hookgate explain sess-1 --last-block` to see why"}
    _, out = claude(work, "UserPromptSubmit", prompt="refactor it")
    assert out == {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "team style: tabs"}}


def test_stop_cannot_be_blocked_by_a_command_hook(work):
    write_hooks(work / ".hookgate" / "hooks.json", Stop=[("", ["echo 'keep going' >&2; exit 2"])])
    done, out = claude(work, "Stop", stop_hook_active=False)
    assert done.returncode == 0 and "decision" not in out
    assert "a command hook cannot block Stop" in done.stderr.decode()


def test_post_tool_use_context_reaches_the_model(work):
    write_hooks(work / ".hookgate" / "hooks.json", PostToolUse=[("Write", [
        """echo '{"additionalContext": "formatted with prettier"}'"""
    ])])
    _, out = claude(work, "PostToolUse", tool_name="Write", tool_input={"file_path": "a.ts", "content": ""},
                    tool_response={"success": True})
    assert out == {"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "formatted with prettier"}}


def test_a_failing_or_hanging_handler_is_logged_and_the_call_goes_ahead(work):
    write_hooks(work / ".hookgate" / "hooks.json", PreToolUse=[("Bash", [
        "echo 'linter crashed' >&2; exit 1", {"type": "command", "command": "sleep 30", "timeout": 0.3},
    ])])
    done, out = claude(work, "PreToolUse", tool_name="Bash", tool_input={"command": "ls"})
    assert done.returncode == 0 and out == {}
    errors = sorted(m["error"] for m in metrics(work) if m["event"] == "command_hook_error")
    assert errors == ["exit code 1: linter crashed", "timed out after 0.3s"]
    assert all(m["session_id"] == "sess-1" and m["runtime"] == "claude" for m in metrics(work))
    stderr = done.stderr.decode()
    assert "command hook `echo 'linter crashed' >&2; exit 1` failed (exit code 1: linter crashed); ignored" in stderr


def test_a_broken_hooks_file_is_reported_to_the_user_once_and_allows(work):
    (work / ".hookgate" / "hooks.json").write_text('{"PreToolUse": [{"matcher": "Bash", "hooks": [')
    done, out = claude(work, "PreToolUse", tool_name="Bash", tool_input={"command": "ls"})
    assert done.returncode == 0 and "permissionDecision" not in out.get("hookSpecificOutput", {})
    assert "these command hooks do not run" in out["systemMessage"] and "not valid JSON" in out["systemMessage"]
    _, again = claude(work, "PreToolUse", tool_name="Bash", tool_input={"command": "ls"})
    assert "systemMessage" not in again


def test_the_hook_path_stays_light_when_no_handler_matches(work):
    """Loading hooks.json costs nothing heavy; `subprocess` is imported only to run a handler."""
    import subprocess
    import sys

    from test_hook_path_is_light import HEAVY, PROBE, probe_report

    write_hooks(work / ".hookgate" / "hooks.json", PreToolUse=[("Bash", ["exit 2"])], Stop=[("", ["true"])])
    payload = json.dumps({"hook_event_name": "PreToolUse", "session_id": "s", "cwd": str(work),
                          "tool_name": "Write", "tool_input": {"file_path": "a.txt", "content": ""}}).encode()
    done = subprocess.run([sys.executable, "-c", f"PAYLOAD={payload!r}\n" + PROBE], cwd=work, capture_output=True,
                          text=True, timeout=60, env={"HOME": str(work.parent / "home"), "PATH": "/usr/bin:/bin",
                                                      "HOOKGATE_WARM_IDLE": "10"})
    assert done.returncode == 0, done.stderr
    imported = set(probe_report(done.stderr)["modules"])
    assert "hookgate.commandhooks.gate" in imported  # the hooks were loaded
    assert {m for m in imported if m.split(".")[0] in HEAVY or m in HEAVY} == set()
