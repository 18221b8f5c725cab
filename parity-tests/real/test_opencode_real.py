"""hookgate on the real OpenCode (pinned), through the opencode-hookgate plugin and one long-running
core, driven by the scripted fake model. Each scenario checks the effect on disk, what reached the
model, and the records the core wrote."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import time
from pathlib import Path

import pytest

from drivers.opencode import configure, core_pids, hookgate_log, run_opencode
from harness.fakemodel import Call, Either, FakeModel, Say
from harness.reports import REVIEWER_REPORT, VERIFIER_REPORT, WORKER_REPORT
from harness.runtimes import HOOKGATE, hookgate, metrics, new_project
from hookgate_opencode import install as installer

pytestmark = pytest.mark.real



@pytest.fixture
def project(tmp_path: Path, fake_model: FakeModel) -> tuple[Path, Path]:
    """A project with hookgate installed for OpenCode as a user installs it, role build active."""
    work, home = new_project(tmp_path)
    hookgate("install", "opencode", "--project", str(work), cwd=work)
    hookgate("role", "set", "build", cwd=work)
    configure(work, home, fake_model)
    return work, home


def ready_to_build(work: Path) -> None:
    """What build needs before it may dispatch: the gdd stage completed and project.godot."""
    for name in ("project.godot", "GDD.md", "PLAN.md", "STRUCTURE.md"):
        (work / name).write_text("")
    hookgate("stage", "complete", "gdd", cwd=work)


def test_an_allowed_write_goes_through_and_is_recorded(project, fake_model: FakeModel) -> None:
    work, home = project
    marker = fake_model.script("oc_allowed", Call("write", {"filePath": str(work / "notes.txt"), "content": "hi\n"}),
                               Say("Wrote the notes."))
    run = run_opencode(work, home, f"{marker} write the notes")
    assert run.returncode == 0, run.stderr[-3000:]
    assert (work / "notes.txt").read_text() == "hi\n"
    records = metrics(work)
    [write] = [r for r in records if r["event"] == "file_write"]
    assert (write["file"], write["runtime"], write["agent_id"]) == ("notes.txt", "opencode", "main")
    assert write["session_id"].startswith("ses_")
    assert not [r for r in records if r["event"] == "hook_block"]
    assert "Wrote file successfully." in fake_model.tool_results("oc_allowed")
    # one core served the run, and it did not outlive OpenCode
    [pid] = [int(m.group(1)) for line in hookgate_log(run.stderr) for m in [re.search(r"started \(pid (\d+)\)", line)] if m]
    deadline = time.monotonic() + 10
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not Path(f"/proc/{pid}").exists()


def test_a_forbidden_write_is_blocked_and_the_reason_reaches_the_model(project, fake_model: FakeModel) -> None:
    work, home = project
    marker = fake_model.script("oc_forbidden", Call("write", {"filePath": str(work / "src" / "player.gd"), "content": "x"}),
                               Say("I will dispatch a worker instead."))
    run = run_opencode(work, home, f"{marker} write the player")
    assert run.returncode == 0, run.stderr[-3000:]
    assert not (work / "src" / "player.gd").exists()
    reason = "Build role cannot write game code directly (player.gd). Dispatch a Worker subagent."
    assert reason in fake_model.tool_results("oc_forbidden")  # exactly the reason, as the tool's result
    [block] = [r for r in metrics(work) if r["event"] == "hook_block"]
    assert (block["gate"], block["runtime"], block["reason"]) == ("check_file_permissions", "opencode", reason)


def test_a_task_subagent_writing_memory_is_blocked_through_the_session_map(project, fake_model: FakeModel) -> None:
    work, home = project
    ready_to_build(work)
    child = fake_model.script("oc_child_memory", Call("write", {"filePath": str(work / "MEMORY.md"), "content": "mine"}),
                              Say("Could not write memory."))
    lead = fake_model.script(
        "oc_lead_memory",
        Call("task", {"description": "notes: keep notes", "prompt": f"{child} remember this", "subagent_type": "general"}),
        Say("The subagent is done."),
    )
    run = run_opencode(work, home, f"{lead} keep notes")
    assert run.returncode == 0, run.stderr[-3000:]
    assert not (work / "MEMORY.md").exists()
    assert any("Subagents cannot write project memory (MEMORY.md)" in text for text in fake_model.tool_results("oc_child_memory"))
    records = metrics(work)
    [start] = [r for r in records if r["event"] == "subagent_start"]
    assert start["agent_type"] == "general" and start["agent_id"].startswith("ses_")
    [block] = [r for r in records if r["event"] == "hook_block"]
    # the child's call carries the subagent's identity, and the parent's session (as in Claude Code)
    assert (block["agent_id"], block["agent_type"], block["session_id"]) == (start["agent_id"], "general", start["session_id"])
    assert block["agent_id"] != block["session_id"]


def test_stop_is_held_once_by_the_completion_gate_then_released(project, fake_model: FakeModel) -> None:
    """build: a worker ran, no verifier or reviewer. The lead's final answer is held (the reason is
    queued as its next message, inside OpenCode's loop); it then dispatches a verifier and a
    reviewer, and its next final answer goes through."""
    work, home = project
    ready_to_build(work)
    worker = fake_model.script("oc_worker", Say(WORKER_REPORT))
    verifier = fake_model.script("oc_verifier", Say(VERIFIER_REPORT))
    reviewer = fake_model.script("oc_reviewer", Say(REVIEWER_REPORT))

    def task(role: str, marker: str) -> Call:
        return Call("task", {"description": f"{role}: M1", "prompt": f"{marker} do your part", "subagent_type": "general"})

    lead = fake_model.script(
        "oc_lead_stop",
        task("worker", worker),
        Either("You may not stop yet", then=task("verifier", verifier), otherwise=Say("All finished.")),
        task("reviewer", reviewer),
        Say("All finished, verified and reviewed."),
    )
    run = run_opencode(work, home, f"{lead} build M1")
    assert run.returncode == 0, run.stderr[-3000:]
    records = metrics(work)
    holds = [r for r in records if r["event"] == "hook_block" and r["gate"] == "check_completion"]
    assert len(holds) == 1
    assert "0 verifiers" in holds[0]["reason"] and "0 reviewers" in holds[0]["reason"]
    # the hold reached the lead as a user message, and the lead went on (verifier, reviewer)
    lead_texts = [text for request in fake_model.seen("oc_lead_stop") for text in request.user_texts]
    assert any("Cannot finish build yet" in text for text in lead_texts)
    starts = [(r["role"], r["agent_type"]) for r in records if r["event"] == "subagent_start"]
    assert starts == [("worker", "general"), ("verifier", "general"), ("reviewer", "general")]
    stops = [(r["role"], r["outcome_kind"]) for r in records if r["event"] == "subagent_stop"]
    assert stops == [("worker", "terminal"), ("verifier", "terminal"), ("reviewer", "terminal")]
    assert not [r for r in records if r["event"] == "hook_force_allow"]  # released because satisfied
    assert "All finished, verified and reviewed." in run.stdout


def test_a_core_killed_mid_session_is_restarted_and_fail_modes_hold_while_it_is_down(
        tmp_path: Path, fake_model: FakeModel) -> None:
    """The core is killed during a tool call: the next event starts a new one. Then it is killed
    again and cannot start: a write (its gates fail closed) is blocked with a clear reason, a
    fetch (no gate on WebFetch fails closed) goes ahead."""
    work, home = new_project(tmp_path)
    down = tmp_path / "core-down"
    wrapper = tmp_path / "hookgate-core"
    wrapper.write_text(f'#!/bin/sh\n[ -e {shlex.quote(str(down))} ] && exit 1\nexec {shlex.quote(str(HOOKGATE))} "$@"\n')
    wrapper.chmod(0o755)
    installer.install(installer.config_path(work), shlex.quote(str(wrapper)))  # what `install` writes, for the wrapper
    hookgate("role", "set", "build", cwd=work)
    configure(work, home, fake_model)
    marker = fake_model.script(
        "oc_core_killed",
        Call("write", {"filePath": str(work / "notes.txt"), "content": "1\n"}),
        Call("bash", {"command": "sleep 3; echo first pause", "description": "pause"}),
        Call("write", {"filePath": str(work / "src" / "player.gd"), "content": "x"}),
        Call("bash", {"command": "sleep 3; echo second pause", "description": "pause"}),
        Call("write", {"filePath": str(work / "src" / "enemy.gd"), "content": "x"}),
        Call("webfetch", {"url": f"{fake_model.url}/v1/models", "format": "text"}),
        Say("Done."),
    )
    killed: list[int] = []

    def when_step(step: int, deadline: float) -> bool:
        while time.monotonic() < deadline:
            if any(r.step == step and r.reply is not None for r in fake_model.seen("oc_core_killed")):
                return True
            time.sleep(0.05)
        return False

    def kill_the_core(process: subprocess.Popen) -> None:
        deadline = time.monotonic() + 180
        for step, then_down in ((1, False), (3, True)):
            if not when_step(step, deadline):
                return
            time.sleep(1)  # inside the tool's sleep: its PreToolUse was decided, its PostToolUse is to come
            if then_down:
                down.write_text("")
            for pid in core_pids(process.pid):
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)

    run = run_opencode(work, home, f"{marker} go", during=kill_the_core)
    assert run.returncode == 0, run.stderr[-3000:]
    assert len(killed) == 2 and len(set(killed)) == 2  # the second kill hit a new core: it was restarted
    results = fake_model.tool_results("oc_core_killed")
    assert (work / "notes.txt").exists()
    # restarted after the first kill: the policy decides again
    assert not (work / "src" / "player.gd").exists()
    assert "Build role cannot write game code directly (player.gd). Dispatch a Worker subagent." in results
    # down after the second: the write rules fail closed, with a reason that says why
    assert not (work / "src" / "enemy.gd").exists()
    [down_reason] = [text for text in results if "hookgate could not decide this PreToolUse" in text]
    assert "check_file_permissions" in down_reason and "fail closed" in down_reason
    # ... and no gate on WebFetch fails closed: the fetch ran (the fake server's answer came back)
    assert '"object": "list"' in results[-1]
    log = "\n".join(hookgate_log(run.stderr))
    assert "started again on the next event" in log


REWRITE_DRAFTS = '''from hookgate import modify, register_hook

def approve(event):
    return modify({**event.tool_input, "file_path": event.tool_input["file_path"].replace("draft.txt", "approved/release.txt")})

register_hook("release-path", "pre_tool_use", {"tool": "Write", "path_pattern": "draft.txt"}, None, approve)
'''


def test_a_python_policy_rewrites_the_call_and_opencode_runs_the_rewritten_one(project, fake_model: FakeModel) -> None:
    work, home = project
    policies = work / ".hookgate" / "policies"
    policies.mkdir()
    (policies / "release.py").write_text(REWRITE_DRAFTS)
    marker = fake_model.script("oc_rewrite", Call("write", {"filePath": str(work / "draft.txt"), "content": "v1\n"}),
                               Say("Written."))
    run = run_opencode(work, home, f"{marker} write the draft")
    assert run.returncode == 0, run.stderr[-3000:]
    assert not (work / "draft.txt").exists()
    assert (work / "approved" / "release.txt").read_text() == "v1\n"


PROMPT_GUARD = ('grep -q "SECRET" && { echo "hookgate test: no secrets in prompts" >&2; exit 2; }; exit 0')


def test_a_prompt_a_command_hook_refuses_never_reaches_the_model(project, fake_model: FakeModel) -> None:
    work, home = project
    (work / ".hookgate" / "hooks.json").write_text(json.dumps(
        {"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": PROMPT_GUARD}]}]}}))
    marker = fake_model.script("oc_prompt", Say("I saw the secret."))
    run = run_opencode(work, home, f"{marker} the SECRET is 42")
    assert run.returncode == 1  # `opencode run` fails the prompt with the plugin's error
    assert "hookgate test: no secrets in prompts" in run.stderr
    assert fake_model.seen("oc_prompt") == []  # not even a title request: the prompt was never stored
    [block] = [r for r in metrics(work) if r["event"] == "hook_block"]
    assert block["hook_event"] == "UserPromptSubmit"


def test_opencode_runs_a_custom_tools_code_when_it_starts_so_no_agent_may_write_one(project, fake_model: FakeModel) -> None:
    """OpenCode imports the project's custom tools when it starts, before and outside every tool
    call (and one named after a built-in tool replaces it): what the runtime runs by itself."""
    work, home = project
    for folder in ("tool", "tools"):
        (work / ".opencode" / folder).mkdir(parents=True, exist_ok=True)
        (work / ".opencode" / folder / "probe.ts").write_text(
            f'import {{ writeFileSync }} from "fs"\nwriteFileSync({json.dumps(str(work / f"loaded-{folder}"))}, "x")\n'
            'export default { description: "a probe", args: {}, async execute() { return "ok" } }\n')
    target = work / ".opencode" / "tools" / "bash.ts"
    marker = fake_model.script("oc_tool", Call("write", {"filePath": str(target), "content": "export default {}\n"}),
                               Say("I will ask the user to add it."))
    run = run_opencode(work, home, f"{marker} add a tool")
    assert run.returncode == 0, run.stderr[-3000:]
    loaded = sorted(path.name for path in work.glob("loaded-*"))
    assert loaded, f"OpenCode ran neither folder's tool module; stderr tail:\n{run.stderr[-2000:]}"
    assert not target.exists()
    assert any(result.startswith("What the runtime runs by itself (bash.ts") for result in fake_model.tool_results("oc_tool"))
    print(f"OpenCode imported the custom tools of: {', '.join(name.removeprefix('loaded-') for name in loaded)}")
