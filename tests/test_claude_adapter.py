import json

import pytest

from support import run_hook
from hookgate_claude import dialect
from hookgate.model.verdicts import Allow, Ask, Block, Context, Modify, Retry


def rendered(event, verdict):
    answer = dialect.render(event, verdict)
    assert answer.exit_code == 0
    return json.loads(answer.stdout) if answer.stdout else None


def test_pre_tool_use_deny_carries_hook_event_name():
    assert rendered("PreToolUse", Block(reason="no")) == {"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "no"}}


def test_pre_tool_use_other_verdicts():
    assert rendered("PreToolUse", Allow()) is None
    assert rendered("PreToolUse", Ask(reason="sure?"))["hookSpecificOutput"]["permissionDecision"] == "ask"
    modify = rendered("PreToolUse", Modify(updated_input={"command": "ls"}))["hookSpecificOutput"]
    assert modify == {"hookEventName": "PreToolUse", "permissionDecision": "allow", "updatedInput": {"command": "ls"}}
    retry = rendered("PreToolUse", Retry(reason="backend down", delay_ms=1500))["hookSpecificOutput"]
    assert retry["permissionDecision"] == "deny" and "retry in 1.5s" in retry["permissionDecisionReason"]
    assert rendered("PreToolUse", Context(context="hint", message="fyi")) == {
        "hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": "hint"}, "systemMessage": "fyi"}


@pytest.mark.parametrize("event", ["Stop", "SubagentStop", "UserPromptSubmit", "PostToolUse", "PreCompact"])
def test_decision_block_events(event):
    assert rendered(event, Block(reason="keep going")) == {"decision": "block", "reason": "keep going"}


def test_stop_never_gets_additional_context_which_would_continue_the_turn():
    assert rendered("Stop", Context(context="x", message="released")) == {"systemMessage": "released"}


def test_permission_request():
    assert rendered("PermissionRequest", Block(reason="no"))["hookSpecificOutput"] == {
        "hookEventName": "PermissionRequest", "decision": {"behavior": "deny", "message": "no"}}
    assert rendered("PermissionRequest", Allow()) is None


def test_session_start_context():
    assert rendered("SessionStart", Context(context="[hookgate v0.1.0]")) == {
        "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "[hookgate v0.1.0]"}}


def test_legacy_task_tool_is_agent():
    (event,) = dialect.decode(b'{"hook_event_name":"PreToolUse","tool_name":"Task","tool_input":{}}')
    assert event.tool_name == "Agent"


@pytest.mark.parametrize("raw", [b"", b"{\"hook_event_name\": \"PreToolUse\", \"tool", b"[]", b"42", b"\x00\x01"])
def test_unreadable_stdin_on_a_fail_closed_event_blocks_with_one_line(tmp_path, raw):
    done = run_hook("claude", raw, tmp_path, "--event", "PreToolUse")
    assert done.returncode == 2 and done.stdout == b""
    stderr = done.stderr.decode()
    assert stderr.count("\n") == 1 and "Traceback" not in stderr and "hookgate could not decide this call" in stderr


@pytest.mark.parametrize("raw", [b"", b"{\"truncated", b"[1]"])
def test_unreadable_stdin_on_a_fail_open_event_allows_with_one_line(tmp_path, raw):
    done = run_hook("claude", raw, tmp_path, "--event", "SessionEnd")
    assert done.returncode == 0 and done.stdout == b""
    assert done.stderr.decode().count("\n") == 1 and b"Traceback" not in done.stderr


def test_an_invalid_config_does_not_silently_allow(tmp_path):
    (tmp_path / ".hookgate").mkdir()
    (tmp_path / ".hookgate" / "config.toml").write_text("[gates.check_file_permissions]\nfail_mod = 'open'\n")
    (tmp_path / ".hookgate" / "current_role").write_text("build\n")
    payload = {"hook_event_name": "PreToolUse", "session_id": "s", "cwd": str(tmp_path), "tool_name": "Write",
               "tool_input": {"file_path": "notes.txt", "content": ""}}
    done = run_hook("claude", payload, tmp_path)
    decision = json.loads(done.stdout)["hookSpecificOutput"]
    assert done.returncode == 0 and decision["permissionDecision"] == "deny"
    for reason in (decision["permissionDecisionReason"], done.stderr.decode()):
        assert "unknown field `fail_mod` - at `$.gates.check_file_permissions`" in reason and "config.toml" in reason


def test_usage_errors():
    import subprocess
    from support import HOOKGATE

    done = subprocess.run([HOOKGATE, "hook", "vim"], capture_output=True, input=b"")
    assert done.returncode == 2 and b"usage: hookgate hook claude|codex" in done.stderr
    done = subprocess.run([HOOKGATE, "hook", "claude", "--event"], capture_output=True, input=b"")
    assert done.returncode == 2 and b"usage: hookgate hook claude|codex" in done.stderr  # a runtime's bad call blocks
    for asked in (["hook", "--help"], ["hook", "claude", "-h"], ["hook", "codex", "--event", "Stop", "--help"]):
        done = subprocess.run([HOOKGATE, *asked], capture_output=True, input=b"")
        assert (done.returncode, done.stderr) == (0, b"") and done.stdout.startswith(b"usage: hookgate hook claude|codex")
