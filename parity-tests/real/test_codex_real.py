"""The real Codex CLI (pinned 0.171) with `hookgate install codex`, driven by the scripted fake model.

Each scenario checks the side effect on disk, what reached the model and what hookgate recorded.
Trust is Codex's own word: `codex app-server`'s `hooks/list`, and runs without
`--dangerously-bypass-hook-trust`."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from drivers.codex import (PATCH_MODEL, codex, hookgate, hooks_list, install_hooks, native_binary, one_hook,
                           output_schemas, render_probe, run_codex, write_config)
from harness.fakemodel import Call, FakeModel, Say
from harness.runtimes import metrics, new_project
from hookgate.model.verdicts import Allow, Ask, Block, Context, Modify, Retry
from hookgate_codex import dialect
from hookgate_codex.install import REGISTRATIONS, hook_command, is_ours, registrations

pytestmark = pytest.mark.real

EVENTS = {event for event, *_ in REGISTRATIONS}


WORKER_REPORT = """## Report: M1 Player movement
### Status: DONE
### Files Changed
- `src/player.gd`: movement
### Tests
test_player.gd (gdunit): 5 tests -- 5 passed, 0 failed
### Build
build OK
"""


@pytest.fixture
def project(tmp_path: Path, fake_model: FakeModel) -> tuple[Path, Path]:
    """A git project in role `build`, ready to dispatch (gdd completed), hookgate installed in the
    Codex user config."""
    work, home = new_project(tmp_path)
    write_config(home, fake_model)
    hookgate("install", "codex", "--user", cwd=work, home=home)
    for name in ("project.godot", "GDD.md", "PLAN.md", "STRUCTURE.md"):
        (work / name).write_text("")
    hookgate("stage", "complete", "gdd", cwd=work, home=home)
    hookgate("role", "set", "build", cwd=work, home=home)
    return work, home


def ours(hooks: list[dict]) -> list[dict]:
    return [h for h in hooks if is_ours(h)]


def codex_event(name: str) -> str:
    return name[0].upper() + name[1:]  # hooks/list spells events camelCase


def blocks(work: Path) -> list[dict]:
    return [m for m in metrics(work) if m["event"] == "hook_block"]


def test_codex_itself_trusts_every_hook_hookgate_installs(tmp_path: Path, fake_model: FakeModel) -> None:
    work, home = new_project(tmp_path)
    write_config(home, fake_model)
    hookgate("install", "codex", "--user", cwd=work, home=home)
    user_hooks = ours(hooks_list(home, work))
    assert {codex_event(h["eventName"]) for h in user_hooks} == EVENTS and len(user_hooks) == len(EVENTS)
    assert all(h["trustStatus"] == "trusted" and h["enabled"] for h in user_hooks), user_hooks

    # a project install: Codex loads it only once the project is trusted; doctor says how, and its
    # command really does it
    hookgate("install", "codex", "--project", str(work), cwd=work, home=home)
    assert len(ours(hooks_list(home, work))) == len(EVENTS)  # the project's hooks are not loaded yet
    doctor = hookgate("doctor", "--project", str(work), cwd=work, home=home, check=False)
    assert doctor.returncode == 1 and "has never been trusted" in doctor.stdout
    fix = re.search(r"without the dialog: (codex exec [^)]*)\)", doctor.stdout)
    assert fix, doctor.stdout
    command = shlex.split(fix.group(1))
    assert command[0] == "codex" and command[-1] == "ok"
    marker = fake_model.script("cx_trust", Say("ok"))
    done = codex(*command[1:-1], marker, cwd=tmp_path, home=home)  # -C names the project; the marker drives the fake model
    assert done.returncode == 0, done.stderr
    both = ours(hooks_list(home, work))
    assert len(both) == 2 * len(EVENTS)
    assert all(h["trustStatus"] == "trusted" for h in both), [h for h in both if h["trustStatus"] != "trusted"]
    # trusted; what doctor still finds is that Codex now loads hookgate twice, as its list shows
    after = hookgate("doctor", "--project", str(work), cwd=work, home=home, check=False)
    problems = [line.strip() for line in after.stdout.splitlines() if line.strip().startswith("FAIL")]
    assert after.returncode == 1 and len(problems) == 1, after.stdout
    assert " ".join(problems[0].split()).startswith("FAIL decided once codex: hookgate is registered 2 times"), after.stdout
    hookgate("uninstall", "codex", "--user", cwd=work, home=home)
    assert len(ours(hooks_list(home, work))) == len(EVENTS)
    assert hookgate("doctor", "--project", str(work), cwd=work, home=home, check=False).returncode == 0


def test_allowed_command_and_patch_run_with_the_trust_install_recorded(project: tuple[Path, Path], fake_model: FakeModel) -> None:
    work, home = project
    marker = fake_model.script(
        "cx_allowed",
        Call("exec_command", {"cmd": f"echo ok > {work / 'ran.txt'}"}),
        Call("apply_patch", "*** Begin Patch\n*** Add File: notes.txt\n+ok\n*** End Patch\n"),
        Say("done"),
    )
    run = run_codex(work, home, f"{marker} go", model=PATCH_MODEL, bypass_hook_trust=False)
    assert run.returncode == 0, run.stderr
    assert (work / "ran.txt").read_text() == "ok\n" and (work / "notes.txt").read_text() == "ok\n"
    assert "hook: PreToolUse Completed" in run.stderr  # hookgate ran, without any trust bypass
    # SessionStart's context reached the model's first request
    assert "[hookgate v" in json.dumps(fake_model.seen("cx_allowed")[0].body["input"])
    writes = [m for m in metrics(work) if m["event"] == "file_write"]
    assert [(m["file"], m.get("via"), m["runtime"], m["agent_id"]) for m in writes] == \
        [("ran.txt", "Bash", "codex", "main"), ("notes.txt", None, "codex", "main")]
    assert blocks(work) == []


def test_patch_adding_a_forbidden_file_is_blocked_whole_and_the_model_is_told_why(
        project: tuple[Path, Path], fake_model: FakeModel) -> None:
    work, home = project
    patch = "*** Begin Patch\n*** Add File: notes.txt\n+ok\n*** Add File: src/player.gd\n+extends Node\n*** End Patch\n"
    marker = fake_model.script("cx_patch", Call("apply_patch", patch), Say("ok"))
    run = run_codex(work, home, f"{marker} write the player", model=PATCH_MODEL)
    assert run.returncode == 0, run.stderr
    assert not (work / "src" / "player.gd").exists() and not (work / "notes.txt").exists()
    results = fake_model.tool_results("cx_patch")
    reason = "Build role cannot write game code directly (player.gd). Dispatch a Worker subagent."
    assert any(r.startswith("Command blocked by PreToolUse hook: " + reason) for r in results), results
    assert [(b["gate"], b["runtime"], b["agent_id"]) for b in blocks(work)] == [("check_file_permissions", "codex", "main")]


@pytest.mark.parametrize("command", [
    "echo 'extends Node' > src/player.gd",
    # Codex itself runs an apply_patch heredoc given to the shell as a patch; hooks see it as Bash
    "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: src/player.gd\n+extends Node\n*** End Patch\nEOF\n",
], ids=["redirect", "apply_patch-heredoc"])
def test_a_bash_write_to_a_forbidden_path_is_blocked_and_the_model_is_told_why(
        project: tuple[Path, Path], fake_model: FakeModel, command: str) -> None:
    work, home = project
    (work / "src").mkdir()
    marker = fake_model.script("cx_bash_write", Call("exec_command", {"cmd": command}), Say("ok"))
    run = run_codex(work, home, f"{marker} write the player")
    assert run.returncode == 0, run.stderr
    assert not (work / "src" / "player.gd").exists()
    (result,) = fake_model.tool_results("cx_bash_write")
    assert result.startswith("Command blocked by PreToolUse hook: Build role cannot write game code directly "
                             "(player.gd). Dispatch a Worker subagent.") and result.endswith(f"Command: {command}")
    assert [(b["gate"], b["runtime"], b["agent_id"]) for b in blocks(work)] == [("check_shell_writes", "codex", "main")]


@pytest.mark.parametrize(("model", "write", "gate"), [
    (PATCH_MODEL, Call("apply_patch", "*** Begin Patch\n*** Add File: MEMORY.md\n+remember\n*** End Patch\n"),
     "check_file_permissions"),
    (None, Call("exec_command", {"cmd": "echo remember >> MEMORY.md"}), "check_shell_writes"),  # no apply_patch offered
], ids=["apply_patch", "bash"])
def test_subagent_writing_memory_is_blocked_with_its_identity(
        project: tuple[Path, Path], fake_model: FakeModel, model: str | None, write: Call, gate: str) -> None:
    work, home = project
    sub = fake_model.script("cx_sub_memory", write, Say("Subagent done."))
    marker = fake_model.script(
        "cx_main_memory",
        Call("spawn_agent", {"message": f"{sub} note progress"}, namespace="multi_agent_v1"),
        Call("wait_agent", {"targets": ["{{last_json.agent_id}}"]}, namespace="multi_agent_v1"),
        Say("all done"),
    )
    run = run_codex(work, home, f"{marker} delegate", model=model)
    assert run.returncode == 0, run.stderr
    assert not (work / "MEMORY.md").exists()
    assert any("Subagents cannot write project memory (MEMORY.md)" in r for r in fake_model.tool_results("cx_sub_memory"))
    spawned = json.loads(fake_model.tool_results("cx_main_memory")[0])["agent_id"]
    (block,) = blocks(work)
    assert (block["gate"], block["runtime"], block["agent_id"], block["agent_type"]) == (gate, "codex", spawned, "default")
    attempt = [m for m in metrics(work) if m["event"] == "file_write" and m["agent_id"] == spawned]
    assert attempt and attempt[0]["is_subagent"] is True


def test_completion_is_held_until_the_bound_then_released_unverified(project: tuple[Path, Path], fake_model: FakeModel) -> None:
    """build: a worker ran (recognised by its message prefix: Codex types every child "default"),
    no verifier or reviewer. Each stop is held and the reason becomes Codex's continuation prompt;
    after 5 holds the stop goes through, recorded `unverified`."""
    work, home = project
    worker = fake_model.script("cx_worker", Say(WORKER_REPORT))
    marker = fake_model.script(
        "cx_hold",
        Call("spawn_agent", {"message": f"worker: M1\n{worker} implement M1"}, namespace="multi_agent_v1"),
        Call("wait_agent", {"targets": ["{{last_json.agent_id}}"]}, namespace="multi_agent_v1"),
        Say("All finished."),
    )
    run = run_codex(work, home, f"{marker} build it")
    assert run.returncode == 0, run.stderr
    records = metrics(work)
    starts = [m for m in records if m["event"] == "subagent_start"]
    assert [(s["agent_type"], s["role"]) for s in starts] == [("default", "worker")]
    assert [m["event"] for m in records if m["event"] == "worker_done"] == ["worker_done"]
    holds = [m for m in records if m["event"] == "hook_block" and m["gate"] == "check_completion"]
    assert len(holds) == 5 and all("0 verifiers" in h["reason"] and "0 reviewers" in h["reason"] for h in holds)
    released = [m for m in records if m["event"] == "hook_force_allow"]
    assert [(r["gate"], r["outcome_kind"], r["count"]) for r in released] == [("check_completion", "unverified", 5)]
    # each hold reached the model as its next user turn
    last = fake_model.seen("cx_hold")[-1]
    assert sum("Cannot finish build yet" in t for t in last.user_texts) == 5
    assert run.stderr.count("hook: Stop Blocked") == 5


def test_a_hookgate_that_cannot_start_blocks_the_tool_instead_of_allowing_it(
        tmp_path: Path, fake_model: FakeModel) -> None:
    """Codex fails open on a crashed hook; hookgate's gating registrations turn that into a block."""
    work, home = new_project(tmp_path)
    write_config(home, fake_model)
    broken = tmp_path / "broken-hookgate"
    broken.write_text("#!/bin/sh\necho 'Traceback: hookgate is broken' >&2\nexit 1\n")
    broken.chmod(0o755)
    hooks = {"hooks": {"PreToolUse": registrations(str(broken))["PreToolUse"]}}
    (home / ".codex" / "hooks.json").write_text(json.dumps(hooks))
    assert hooks["hooks"]["PreToolUse"][0]["hooks"][0]["command"] == hook_command(str(broken), "PreToolUse")
    marker = fake_model.script("cx_broken", Call("exec_command", {"cmd": f"echo hi > {work / 'ran.txt'}"}), Say("ok"))
    run = run_codex(work, home, f"{marker} go")
    assert run.returncode == 0, run.stderr
    assert not (work / "ran.txt").exists()
    (result,) = fake_model.tool_results("cx_broken")
    assert result.startswith("Command blocked by PreToolUse hook: ") and "hookgate could not run (exit 1)" in result


# -- every answer the dialect gives is one the pinned binary accepts -----------------------------

CODEX_EVENTS = ("PreToolUse", "PermissionRequest", "PostToolUse", "UserPromptSubmit", "SessionStart", "SessionEnd",
                "SubagentStart", "SubagentStop", "Stop", "PreCompact", "PostCompact", "Interrupt")
VERDICTS = (
    Allow(), Allow(message="fyi"), Context(context="hint", message="fyi"), Block(reason="no"), Block(reason=""),
    Retry(reason="busy", delay_ms=1500), Ask(reason="sure?"), Modify(updated_input={"command": "ls"}),
    Modify(updated_input={"description": "d", "prompt": "worker: p", "subagent_type": "worker", "message": "m"}),
    Modify(updated_input={"file_path": "/w/a.gd", "content": "", "patch": "*** Begin Patch\n"}),
    Modify(updated_input={"path": "a.png", "file_path": "/w/a.png"}),
)
# what Codex 0.171 rejects although its schema allows it (strings in the binary: "PreToolUse hook
# returned unsupported ...", "... without a non-empty ...")
REJECTED = {
    "PreToolUse": lambda out: (
        out.get("continue") is False or "stopReason" in out or "suppressOutput" in out or out.get("decision") == "approve"
        or out.get("hookSpecificOutput", {}).get("permissionDecision") == "ask"
        or (out.get("hookSpecificOutput", {}).get("permissionDecision") == "allow")
        != ("updatedInput" in out.get("hookSpecificOutput", {}))
        or (out.get("hookSpecificOutput", {}).get("permissionDecision") == "deny"
            and not out["hookSpecificOutput"].get("permissionDecisionReason"))),
    "PermissionRequest": lambda out: any(k in out.get("hookSpecificOutput", {}).get("decision", {}) for k in
                                         ("updatedInput", "updatedPermissions", "interrupt")),
    "Stop": lambda out: out.get("decision") == "block" and not out.get("reason"),
    "SubagentStop": lambda out: out.get("decision") == "block" and not out.get("reason"),
}


def _kebab(event: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"-\1", event).lower()


def _conforms(value, schema, root) -> bool:
    if "$ref" in schema:
        return _conforms(value, root["definitions"][schema["$ref"].rsplit("/", 1)[-1]], root)
    if "allOf" in schema:
        return value is None or all(_conforms(value, s, root) for s in schema["allOf"])
    if "const" in schema and value != schema["const"] or "enum" in schema and value not in schema["enum"]:
        return False
    kind = schema.get("type")
    if kind == "object":
        if not isinstance(value, dict) or any(k not in value for k in schema.get("required", ())):
            return False
        props = schema.get("properties", {})
        if schema.get("additionalProperties") is False and set(value) - set(props):
            return False
        return all(_conforms(v, props[k], root) for k, v in value.items() if k in props)
    return {"string": isinstance(value, str), "boolean": isinstance(value, bool)}.get(kind, True)


@pytest.fixture(scope="module")
def schemas() -> dict:
    return output_schemas()


@pytest.mark.parametrize("event", CODEX_EVENTS)
def test_every_rendered_answer_is_one_codex_accepts(event: str, schemas: dict) -> None:
    strings = native_binary().read_bytes()
    for verdict in VERDICTS:
        answer = dialect.render(event, verdict)
        if answer.exit_code == 2:
            # Codex reads exit 2 as this event's refusal, and only with a non-empty stderr
            assert f"{event} hook exited with code 2 but did not write".encode() in strings, (event, verdict)
            assert answer.stderr.strip() and not answer.stdout, (event, verdict)
            continue
        assert answer.exit_code == 0, (event, verdict)
        if not answer.stdout:
            continue
        out = json.loads(answer.stdout)
        schema = schemas.get(f"{_kebab(event)}.command.output")
        assert schema is not None, f"Codex defines no output for {event}, yet hookgate wrote {out}"
        assert _conforms(out, schema, schema), (event, verdict, out)
        assert not REJECTED.get(event, lambda _: False)(out), (event, verdict, out)


# -- what real Codex does with each kind of answer ------------------------------------------------

def _probe(work: Path, home: Path, fake_model: FakeModel, event: str, verdict, name: str, *steps):
    install_hooks(home, one_hook(event, render_probe(verdict), matcher=None if event in ("Stop", "UserPromptSubmit") else "*"))
    marker = fake_model.script(name, *steps)
    return run_codex(work, home, f"{marker} go")


def test_a_rewrite_runs_the_rewritten_command(tmp_path: Path, fake_model: FakeModel) -> None:
    work, home = new_project(tmp_path)
    write_config(home, fake_model)
    verdict = Modify(updated_input={"command": f"echo rewritten > {work / 'rewritten.txt'}"})
    run = _probe(work, home, fake_model, "PreToolUse", verdict, "cx_modify",
                 Call("exec_command", {"cmd": f"echo original > {work / 'original.txt'}"}), Say("ok"))
    assert run.returncode == 0, run.stderr
    assert (work / "rewritten.txt").read_text() == "rewritten\n" and not (work / "original.txt").exists()


def test_ask_is_refused_and_the_model_is_told_to_ask_the_user(tmp_path: Path, fake_model: FakeModel) -> None:
    work, home = new_project(tmp_path)
    write_config(home, fake_model)
    run = _probe(work, home, fake_model, "PreToolUse", Ask(reason="deleting the build needs a yes"), "cx_ask",
                 Call("exec_command", {"cmd": f"echo hi > {work / 'ran.txt'}"}), Say("ok"))
    assert run.returncode == 0, run.stderr
    assert not (work / "ran.txt").exists()
    (result,) = fake_model.tool_results("cx_ask")
    assert "deleting the build needs a yes" in result and "ask the user in the conversation" in result


def test_context_on_a_tool_call_reaches_the_model_and_the_tool_runs(tmp_path: Path, fake_model: FakeModel) -> None:
    work, home = new_project(tmp_path)
    write_config(home, fake_model)
    run = _probe(work, home, fake_model, "PreToolUse", Context(context="HOOKGATE-CONTEXT-7", message="note"), "cx_context",
                 Call("exec_command", {"cmd": f"echo hi > {work / 'ran.txt'}"}), Say("ok"))
    assert run.returncode == 0, run.stderr
    assert (work / "ran.txt").exists()
    later = fake_model.seen("cx_context")[-1].body
    assert "HOOKGATE-CONTEXT-7" in json.dumps(later["input"])


def test_a_post_tool_refusal_replaces_the_result_the_model_sees(tmp_path: Path, fake_model: FakeModel) -> None:
    work, home = new_project(tmp_path)
    write_config(home, fake_model)
    run = _probe(work, home, fake_model, "PostToolUse", Block(reason="HOOKGATE-POST-FEEDBACK"), "cx_post",
                 Call("exec_command", {"cmd": "echo secret-output"}), Say("ok"))
    assert run.returncode == 0, run.stderr
    later = json.dumps(fake_model.seen("cx_post")[-1].body["input"])
    assert "HOOKGATE-POST-FEEDBACK" in later


def test_a_prompt_refusal_never_reaches_the_model(tmp_path: Path, fake_model: FakeModel) -> None:
    work, home = new_project(tmp_path)
    write_config(home, fake_model)
    run = _probe(work, home, fake_model, "UserPromptSubmit", Block(reason="HOOKGATE-PROMPT-BLOCK"), "cx_prompt", Say("ok"))
    assert run.returncode == 0 and "hook: UserPromptSubmit Blocked" in run.stderr
    assert fake_model.seen("cx_prompt") == []
    # a parity difference: `codex exec` shows that the prompt was blocked, but not the reason
    assert "HOOKGATE-PROMPT-BLOCK" not in run.stdout + run.stderr


def test_a_subagent_stop_refusal_becomes_the_childs_next_prompt(tmp_path: Path, fake_model: FakeModel) -> None:
    work, home = new_project(tmp_path)
    write_config(home, fake_model)
    install_hooks(home, one_hook("SubagentStop", render_probe(Block(reason="HOOKGATE-REPORT-MISSING"))))
    sub = fake_model.script("cx_sub_stop", Say("Subagent done."))
    marker = fake_model.script(
        "cx_main_stop",
        Call("spawn_agent", {"message": f"{sub} work"}, namespace="multi_agent_v1"),
        Call("wait_agent", {"targets": ["{{last_json.agent_id}}"]}, namespace="multi_agent_v1"),
        Say("all done"),
    )
    run = run_codex(work, home, f"{marker} delegate")
    assert run.returncode == 0, run.stderr
    child_prompts = [t for r in fake_model.seen("cx_sub_stop") for t in r.user_texts]
    assert any("HOOKGATE-REPORT-MISSING" in t for t in child_prompts), child_prompts
    assert len(fake_model.seen("cx_sub_stop")) == 2  # held once, then let go (stop_hook_active)
