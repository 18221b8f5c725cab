"""Registered Python hooks through the Claude stdin protocol: `hookgate hook claude` as Claude Code
runs it, with the policy in `.hookgate/policies/`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from support import run_hook

POLICY = '''\
import time
from hookgate import block, modify, register_hook, retry


def release(event):
    path = event.tool_input["file_path"].replace("draft.txt", "approved/release.txt")
    return modify({**event.tool_input, "file_path": path, "content": "ready\\n"})


def crash(event):
    raise RuntimeError("policy bug")


register_hook("no-publish", "pre_tool_use", {"tool": "bash", "command_pattern": "npm publish"}, {"priority": 50},
              lambda e: block("publishing is done by CI"))
register_hook("backend", "pre_tool_use", {"command_pattern": "^deploy"}, None,
              lambda e: retry("policy backend unavailable", delay_ms=2000))
register_hook("release-path", "pre_tool_use", {"tool": "Write", "path_pattern": "draft.txt"}, None, release)
register_hook("bad-rewrite", "pre_tool_use", {"tool": "Write", "path_pattern": "broken.txt"}, None,
              lambda e: modify({"file_path": e.tool_input["file_path"]}))
register_hook("crashes", "pre_tool_use", {"command_pattern": "^crash"}, None, crash)
register_hook("slow", "pre_tool_use", {"command_pattern": "^slow"}, {"timeout_ms": 200}, lambda e: time.sleep(5))
register_hook("observer", "post_tool_use", None, None, crash)
register_hook("ask-push", "permission_request", {"command_pattern": "git push"}, None,
              lambda e: {"decision": "deny", "reason": "pushes need review"})
register_hook("approve-elsewhere", "permission_request", {"tool": "Write", "path_pattern": "notes.txt"}, None,
              lambda e: modify({**e.tool_input, "file_path": e.tool_input["file_path"].replace("notes.txt", "src/p.gd")}))
register_hook("keep-context", "pre_compact", {"session_id": "protected"}, None, lambda e: block("not now"))
register_hook("style", "pre_prompt", None, None,
              lambda e: {"action": "continue", "modified": {"additionalContext": "answer in English"}})
'''


@pytest.fixture
def work(tmp_path: Path) -> Path:
    policies = tmp_path / "work" / ".hookgate" / "policies"
    policies.mkdir(parents=True)
    (policies / "release.py").write_text(POLICY)
    (tmp_path / "home").mkdir()
    return tmp_path / "work"


def claude(work: Path, event: str, **fields: Any) -> tuple[subprocess.CompletedProcess[bytes], dict[str, Any]]:
    payload = {"hook_event_name": event, "session_id": fields.pop("session_id", "sess-1"), "cwd": str(work), **fields}
    done = run_hook("claude", payload, work, "--event", event, env={"HOME": str(work.parent / "home")})
    assert done.returncode == 0, done.stderr
    return done, json.loads(done.stdout) if done.stdout.strip() else {}


def pre_tool_use(work: Path, tool: str, **tool_input: Any) -> dict[str, Any]:
    return claude(work, "PreToolUse", tool_name=tool, tool_input=tool_input)[1].get("hookSpecificOutput", {})


def test_block_denies_with_the_reason(work):
    out = pre_tool_use(work, "Bash", command="npm publish --access public")
    assert out == {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                   "permissionDecisionReason": "publishing is done by CI"}
    assert pre_tool_use(work, "Bash", command="npm test") == {}


def test_retry_denies_with_retry_guidance(work):
    out = pre_tool_use(work, "Bash", command="deploy staging")
    assert out["permissionDecision"] == "deny"
    assert out["permissionDecisionReason"] == "policy backend unavailable (temporary: retry in 2s)"
    [denied] = [json.loads(line) for line in (work / ".hookgate" / "metrics.jsonl").read_text().splitlines()
                if json.loads(line)["event"] == "hook_denied"]
    assert (denied["hook"], denied["retryable"], denied["retry_after_ms"]) == ("backend", True, 2000)


def test_a_rewrite_becomes_updated_input(work):
    out = pre_tool_use(work, "Write", file_path=str(work / "draft.txt"), content="wip\n")
    assert out == {"hookEventName": "PreToolUse", "permissionDecision": "allow",
                   "updatedInput": {"file_path": str(work / "approved" / "release.txt"), "content": "ready\n"}}


def test_an_invalid_rewrite_is_denied(work):
    out = pre_tool_use(work, "Write", file_path=str(work / "broken.txt"), content="x")
    assert out["permissionDecision"] == "deny"
    assert out["permissionDecisionReason"] == ("hook 'bad-rewrite' rewrote the Write input into an invalid one (invalid "
                                               "Write input: Object missing required field `content`); the call is refused")


@pytest.mark.parametrize("command, reason", [
    ("crash now", "Required hook 'crashes' failed: RuntimeError: policy bug"),
    ("slow thing", "Required hook 'slow' failed: GateTimeout: timed out after 0.2s"),
])
def test_a_failing_gating_hook_fails_closed(work, command, reason):
    out = pre_tool_use(work, "Bash", command=command)
    assert out == {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": reason}


def test_a_failing_observer_fails_open(work):
    done, out = claude(work, "PostToolUse", tool_name="Bash", tool_input={"command": "ls"}, tool_response={})
    assert out == {} and "hook 'observer' failed (RuntimeError: policy bug); skipped" in done.stderr.decode()


def test_permission_request_and_pre_compact_and_pre_prompt(work):
    _, out = claude(work, "PermissionRequest", tool_name="Bash", tool_input={"command": "git push origin main"})
    assert out.pop("systemMessage") == "hookgate: run `hookgate explain sess-1 --last-block` to see why"
    assert out == {"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                                          "decision": {"behavior": "deny", "message": "pushes need review"}}}
    _, out = claude(work, "PreCompact", session_id="protected", trigger="auto", custom_instructions=None)
    assert out == {"decision": "block", "reason": "not now",
                   "systemMessage": "hookgate: run `hookgate explain protected --last-block` to see why"}
    _, out = claude(work, "PreCompact", session_id="other", trigger="auto", custom_instructions=None)
    assert out == {}
    _, out = claude(work, "UserPromptSubmit", prompt="hello")
    assert out == {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "answer in English"}}


def test_a_permission_rewrite_meets_the_rules_the_tool_call_meets(work):
    """Claude Code runs a PermissionRequest's updatedInput without another PreToolUse: the role
    rules judge the rewritten call there."""
    request = {"tool_name": "Write", "tool_input": {"file_path": str(work / "notes.txt"), "content": "x"}}
    _, out = claude(work, "PermissionRequest", **request)
    assert out["hookSpecificOutput"]["decision"] == {
        "behavior": "allow", "updatedInput": {"file_path": str(work / "src" / "p.gd"), "content": "x"}}
    (work / ".hookgate" / "current_role").write_text("build\n")
    _, out = claude(work, "PermissionRequest", **request)
    decision = out["hookSpecificOutput"]["decision"]
    assert decision["behavior"] == "deny" and "Build role cannot write game code directly (p.gd)" in decision["message"]


def test_a_broken_policy_blocks_gating_events_until_fixed(work):
    policy = work / ".hookgate" / "policies" / "release.py"
    policy.write_text(POLICY.replace("def crash(event):", "def crash(event)"))
    reason = f"until it is fixed: {policy}: SyntaxError: expected ':' (line 10)"
    out = pre_tool_use(work, "Bash", command="ls")
    assert out["permissionDecision"] == "deny" and reason in out["permissionDecisionReason"]
    _, out = claude(work, "UserPromptSubmit", prompt="why is everything blocked?")
    assert out["decision"] == "block" and reason in out["reason"]
    _, out = claude(work, "Stop", stop_hook_active=False)
    assert out == {}  # not a gating event
    policy.write_text(POLICY)
    assert pre_tool_use(work, "Bash", command="ls") == {}


def test_the_hook_path_stays_light_with_policies_loaded(work):
    from test_hook_path_is_light import HEAVY, PROBE, probe_report

    payload = json.dumps({"hook_event_name": "PreToolUse", "session_id": "s", "cwd": str(work),
                          "tool_name": "Bash", "tool_input": {"command": "npm publish"}}).encode()
    done = subprocess.run([sys.executable, "-c", f"PAYLOAD={payload!r}\n" + PROBE], cwd=work, capture_output=True,
                          text=True, timeout=60, env={"HOME": str(work.parent / "home"), "PATH": "/usr/bin:/bin",
                                                      "HOOKGATE_WARM_IDLE": "10"})
    assert done.returncode == 0, done.stderr
    assert "publishing is done by CI" in done.stdout  # the policy really ran
    imported = set(probe_report(done.stderr)["modules"])
    assert {m for m in imported if m.split(".")[0] in HEAVY or m in HEAVY} == set()
