"""`hookgate hook codex` as Codex runs it (a process, the payload on stdin), on the payloads captured
from the real Codex 0.171 and on the failure paths Codex would otherwise turn into an allow."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from support import HOOKGATE, run_hook
from hookgate_codex.install import hook_command

PAYLOADS = Path(__file__).resolve().parents[1] / "parity-tests" / "payloads"
# the shape the real Codex 0.171 sends for apply_patch (gpt-5.5), its cwd moved to a neutral place
PATCH_PAYLOAD = {
    "session_id": "01a22c24-6357-79d0-b770-e86adcd4abf0", "turn_id": "01a22c24-63b0-7833-82fe-3b899a4aef48",
    "transcript_path": None, "cwd": "/srv/game", "hook_event_name": "PreToolUse", "model": "gpt-5.5",
    "permission_mode": "bypassPermissions", "tool_name": "apply_patch",
    "tool_input": {"command": "*** Begin Patch\n*** Add File: hello.txt\n+hello\n*** End Patch\n"},
    "tool_use_id": "call_84966f7ff68a430f",
}


def captured(name):
    return [json.loads(line)["payload"] for line in (PAYLOADS / name).read_text().splitlines() if line.strip()]


@pytest.fixture
def build_project(tmp_path):
    """Role build, ready to dispatch workers (gdd completed, its outputs present)."""
    (tmp_path / ".hookgate").mkdir()
    for name in ("project.godot", "GDD.md", "PLAN.md", "STRUCTURE.md"):
        (tmp_path / name).write_text("")
    subprocess.run([HOOKGATE, "stage", "complete", "gdd"], cwd=tmp_path, check=True, capture_output=True)
    (tmp_path / ".hookgate" / "current_role").write_text("build\n")
    return tmp_path


def in_project(payload, project, **changes):
    """The payload as if Codex had run in `project` (the captured paths moved along with cwd)."""
    moved = json.loads(json.dumps(payload).replace(payload["cwd"], str(project)))
    return {**moved, **changes}


def metrics(project):
    path = project / ".hookgate" / "metrics.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@pytest.mark.parametrize("name", ["codex_basic.hooks.jsonl", "codex_block.hooks.jsonl", "codex_subagent.hooks.jsonl"])
def test_every_captured_payload_gets_an_answer_codex_accepts(build_project, name):
    for payload in captured(name):
        event = payload["hook_event_name"]
        done = run_hook("codex", in_project(payload, build_project), build_project, "--event", event)
        # none of these calls writes a file, so nothing is refused; the answer is empty or JSON
        assert done.returncode == 0, (event, done.stderr)
        assert done.stdout == b"" or json.loads(done.stdout), (event, done.stdout)
        assert b"Traceback" not in done.stderr


def test_the_captured_subagent_session_keeps_its_identity(build_project):
    child = "01a22bf3-14f8-7192-a802-eb5223126a91"
    for payload in captured("codex_subagent.hooks.jsonl"):
        if payload["hook_event_name"] == "PreToolUse" and payload["tool_name"] == "Bash":
            memory = in_project(payload, build_project, tool_name="apply_patch",
                                tool_input={"command": "*** Begin Patch\n*** Add File: MEMORY.md\n+x\n*** End Patch\n"})
            done = run_hook("codex", memory, build_project, "--event", "PreToolUse")
            assert done.returncode == 2 and b"Subagents cannot write project memory (MEMORY.md)" in done.stderr
    (block,) = [m for m in metrics(build_project) if m["event"] == "hook_block"]
    assert (block["agent_id"], block["agent_type"], block["runtime"]) == (child, "default", "codex")


def test_one_forbidden_file_blocks_the_whole_patch(build_project):
    patch = "*** Begin Patch\n*** Add File: notes.txt\n+ok\n*** Update File: src/player.gd\n@@\n-a\n+b\n*** End Patch\n"
    done = run_hook("codex", in_project(PATCH_PAYLOAD, build_project, tool_input={"command": patch}), build_project,
                    "--event", "PreToolUse")
    assert done.returncode == 2 and done.stdout == b""
    assert done.stderr.decode().startswith("Build role cannot write game code directly (player.gd).")
    writes = [(m["event"], m["file"]) for m in metrics(build_project) if m["event"].startswith("file_")]
    assert writes == [("file_write", "notes.txt"), ("file_edit", "player.gd")]


def test_an_allowed_patch_is_recorded_per_file(build_project):
    done = run_hook("codex", in_project(PATCH_PAYLOAD, build_project), build_project, "--event", "PreToolUse")
    assert done.returncode == 0 and done.stdout == b"" and done.stderr == b""
    (write,) = [m for m in metrics(build_project) if m["event"] == "file_write"]
    assert (write["file"], write["path"], write["runtime"], write["agent_id"]) == \
        ("hello.txt", str(build_project / "hello.txt"), "codex", "main")


@pytest.mark.parametrize("raw", [b"", b"{\"hook_event_name\": \"PreToolUse\", \"tool", b"[]", b"\xff\xfe",
                                 json.dumps({**PATCH_PAYLOAD, "tool_input": {"command": "not a patch"}}).encode()])
def test_what_hookgate_cannot_read_on_a_gating_event_is_refused_with_a_reason(tmp_path, raw):
    done = run_hook("codex", raw, tmp_path, "--event", "PreToolUse")
    assert done.returncode == 2 and done.stdout == b""
    stderr = done.stderr.decode()
    assert "hookgate could not decide this call" in stderr and "Traceback" not in stderr


def test_what_hookgate_cannot_read_on_another_event_is_let_through(tmp_path):
    done = run_hook("codex", b"{oops", tmp_path, "--event", "Stop")
    assert done.returncode == 0 and done.stdout == b"" and b"allowing" in done.stderr


def test_an_invalid_config_refuses_with_the_field_named(build_project):
    (build_project / ".hookgate" / "config.toml").write_text("[gates.check_file_permissions]\nfail_mod = 'open'\n")
    done = run_hook("codex", in_project(PATCH_PAYLOAD, build_project), build_project, "--event", "PreToolUse")
    assert done.returncode == 2
    assert "unknown field `fail_mod` - at `$.gates.check_file_permissions`" in done.stderr.decode()


@pytest.mark.parametrize("program", ["/nonexistent/hookgate", "false", "sh -c 'exit 3'", "sh -c 'kill -9 $$'"])
def test_a_gating_registration_turns_any_failure_of_hookgate_into_a_refusal(tmp_path, program):
    """Codex lets the tool run when a hook fails; hookgate's gating registrations exit 2 instead."""
    command = hook_command(program, "PreToolUse")
    done = subprocess.run(["sh", "-c", command], input=b"{}", capture_output=True, cwd=tmp_path,
                          env={"PATH": "/usr/bin:/bin", "HOOKGATE_WARM_IDLE": "10"}, timeout=30)
    assert done.returncode == 2 and b"hookgate could not run" in done.stderr


def test_a_gating_registration_passes_hookgates_own_answers_through(build_project):
    command = hook_command(HOOKGATE, "PreToolUse")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(build_project), "HOOKGATE_WARM_IDLE": "10"}
    allowed = subprocess.run(["sh", "-c", command], input=json.dumps(in_project(PATCH_PAYLOAD, build_project)).encode(),
                             capture_output=True, cwd=build_project, env=env, timeout=60)
    assert (allowed.returncode, allowed.stdout, allowed.stderr) == (0, b"", b"")
    patch = "*** Begin Patch\n*** Add File: src/a.gd\n+x\n*** End Patch\n"
    refused = subprocess.run(["sh", "-c", command], capture_output=True, cwd=build_project, env=env, timeout=60,
                             input=json.dumps(in_project(PATCH_PAYLOAD, build_project, tool_input={"command": patch})).encode())
    assert refused.returncode == 2 and refused.stderr.decode().startswith("Build role cannot write game code")
    assert b"could not run" not in refused.stderr


def test_hook_codex_imports_no_heavy_module(build_project):
    from test_hook_path_is_light import HEAVY, PROBE, probe_report

    patch = "*** Begin Patch\n*** Add File: src/a.gd\n+x\n*** End Patch\n"
    payload = json.dumps(in_project(PATCH_PAYLOAD, build_project, tool_input={"command": patch})).encode()
    probe = PROBE.replace('"hook", "claude"', '"hook", "codex"')
    done = subprocess.run([sys.executable, "-c", f"PAYLOAD={payload!r}\n" + probe], cwd=build_project,
                          capture_output=True, text=True, timeout=60, env={**os.environ, "HOOKGATE_WARM": "off"})
    assert done.returncode == 0, done.stderr
    assert done.stderr.startswith("Build role cannot write game code")  # the probe really ran a decision
    imported = set(probe_report(done.stderr)["modules"])
    assert {m for m in imported if m.split(".")[0] in HEAVY or m in HEAVY} == set()


def test_a_codex_child_gets_its_role_from_the_spawn_message(build_project):
    """Codex types every spawned child "default"; the role comes from the message's prefix."""
    session = captured("codex_subagent.hooks.jsonl")
    spawn = next(p for p in session if p["hook_event_name"] == "PreToolUse" and p["tool_name"] == "spawn_agent")
    start = next(p for p in session if p["hook_event_name"] == "SubagentStart")
    spawn = in_project(spawn, build_project, tool_input={"message": "verify: check M1\nrun the tests"})
    assert run_hook("codex", spawn, build_project, "--event", "PreToolUse").returncode == 0
    assert run_hook("codex", in_project(start, build_project), build_project, "--event", "SubagentStart").returncode == 0
    (record,) = [m for m in metrics(build_project) if m["event"] == "subagent_start"]
    assert (record["agent_id"], record["agent_type"], record["role"], record["description"]) == \
        (start["agent_id"], "default", "verifier", "verify: check M1")
