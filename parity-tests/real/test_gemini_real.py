"""What the pinned Gemini CLI does with each kind of hook answer, measured on the real binary against
the fake model: the answers hookgate's Gemini dialect renders (a refusal, a rewrite, an ask, context),
a hook that fails or times out, the fail-closed wrapper hookgate installs, a held stop, and the
folder trust a project's hooks need. The capability table (gemini-0.61.0.toml) records these."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest

from drivers import gemini
from harness.fakemodel import Call, FakeModel, Say
from harness.runtimes import metrics, new_project
from hookgate.model.verdicts import Ask, Block, Context, Modify, Verdict

pytestmark = pytest.mark.real


def render_probe(verdict: Verdict, log: Path) -> str:
    """A hook command that logs its payload and answers with `verdict` as hookgate's Gemini dialect
    renders it (a retried AfterAgent is let go, or a refused stop would never end)."""
    script = ("import json, sys; from hookgate_gemini.dialect import EVENTS, render; "
              "import msgspec; from hookgate.model.verdicts import ALLOW, AnyVerdict; "
              "payload = json.loads(sys.stdin.read()); open(sys.argv[2], 'a').write(json.dumps(payload) + '\\n'); "
              "verdict = ALLOW if payload.get('stop_hook_active') else msgspec.json.decode(sys.argv[1], type=AnyVerdict); "
              "answer = render(EVENTS[payload['hook_event_name']], verdict); "
              "sys.stdout.buffer.write(answer.stdout); sys.stderr.write(answer.stderr); sys.exit(answer.exit_code)")
    return shlex.join([sys.executable, "-c", script, msgspec.json.encode(verdict).decode(), str(log)])


def session(tmp_path: Path, hooks: dict[str, list[dict[str, Any]]]) -> tuple[Path, Path]:
    work, home = new_project(tmp_path)
    gemini.configure(work, home)
    gemini.user_hooks(home, hooks)
    return work, home


def seen(fake: FakeModel, marker: str) -> str:
    return "\n".join(json.dumps(r.body) for r in fake.seen(marker))


def logged(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


@pytest.mark.proves("check_hookgate_commands@gemini")
def test_a_refusal_blocks_the_tool_and_its_reason_is_the_tools_error(tmp_path: Path, fake_model: FakeModel) -> None:
    log = tmp_path / "hooks.jsonl"
    work, home = session(tmp_path, gemini.one_hook("BeforeTool", render_probe(Block(reason="REFUSED-BY-PROBE"), log)))
    marker = fake_model.script("gm_block", Call("run_shell_command", {"command": "echo x > blocked.txt"}), Say("ok"))
    run = gemini.run_gemini(work, home, fake_model, f"{marker} go")
    assert run.returncode == 0, run.stderr[-2000:]
    assert not (work / "blocked.txt").exists()
    assert "Tool execution blocked: REFUSED-BY-PROBE" in fake_model.tool_results("gm_block")[-1]


def test_a_rewrite_runs_the_rewritten_call(tmp_path: Path, fake_model: FakeModel) -> None:
    log = tmp_path / "hooks.jsonl"
    rewrite = Modify(updated_input={"command": "echo rewritten > rewritten.txt"})
    work, home = session(tmp_path, gemini.one_hook("BeforeTool", render_probe(rewrite, log)))
    marker = fake_model.script("gm_modify", Call("run_shell_command", {"command": "echo x > original.txt"}), Say("ok"))
    run = gemini.run_gemini(work, home, fake_model, f"{marker} go")
    assert run.returncode == 0, run.stderr[-2000:]
    assert (work / "rewritten.txt").read_text() == "rewritten\n" and not (work / "original.txt").exists()


def test_ask_is_refused_and_the_model_is_told_to_ask_the_user(tmp_path: Path, fake_model: FakeModel) -> None:
    log = tmp_path / "hooks.jsonl"
    work, home = session(tmp_path, gemini.one_hook("BeforeTool", render_probe(Ask(reason="deploy?"), log)))
    marker = fake_model.script("gm_ask", Call("run_shell_command", {"command": "echo x > asked.txt"}), Say("ok"))
    gemini.run_gemini(work, home, fake_model, f"{marker} go")
    assert not (work / "asked.txt").exists()
    assert "ask the user in the conversation" in fake_model.tool_results("gm_ask")[-1]


def test_context_reaches_the_model_after_a_tool_and_not_before_it(tmp_path: Path, fake_model: FakeModel) -> None:
    log = tmp_path / "hooks.jsonl"
    hooks = {**gemini.one_hook("BeforeTool", render_probe(Context(context="BEFORE-CONTEXT"), log)),
             **gemini.one_hook("AfterTool", render_probe(Context(context="AFTER-CONTEXT"), log))}
    work, home = session(tmp_path, hooks)
    marker = fake_model.script("gm_context", Call("run_shell_command", {"command": "echo ran"}), Say("ok"))
    run = gemini.run_gemini(work, home, fake_model, f"{marker} go")
    text = seen(fake_model, "gm_context")
    assert "AFTER-CONTEXT" in text and "BEFORE-CONTEXT" not in text
    assert "BEFORE-CONTEXT" in run.stderr  # shown to the user instead (systemMessage)


def test_a_post_tool_refusal_replaces_the_result_the_model_sees(tmp_path: Path, fake_model: FakeModel) -> None:
    log = tmp_path / "hooks.jsonl"
    work, home = session(tmp_path, gemini.one_hook("AfterTool", render_probe(Block(reason="RESULT-WITHHELD"), log)))
    marker = fake_model.script("gm_post", Call("run_shell_command", {"command": "echo SECRET-OUTPUT > out.txt; "
                                                                                "cat out.txt"}), Say("ok"))
    gemini.run_gemini(work, home, fake_model, f"{marker} go")
    assert (work / "out.txt").exists()  # the tool ran
    text = seen(fake_model, "gm_post")
    assert "RESULT-WITHHELD" in text and "SECRET-OUTPUT\\n" not in text.replace("echo SECRET-OUTPUT", "")


def test_a_prompt_refusal_never_reaches_the_model(tmp_path: Path, fake_model: FakeModel) -> None:
    log = tmp_path / "hooks.jsonl"
    work, home = session(tmp_path, gemini.one_hook("BeforeAgent", render_probe(Block(reason="NO-PROMPT"), log)))
    marker = fake_model.script("gm_prompt", Say("never"))
    gemini.run_gemini(work, home, fake_model, f"{marker} go")
    assert fake_model.seen("gm_prompt") == [] and [p["hook_event_name"] for p in logged(log)] == ["BeforeAgent"]


def test_a_stop_refusal_is_the_next_prompt_and_the_retry_says_so(tmp_path: Path, fake_model: FakeModel) -> None:
    log = tmp_path / "hooks.jsonl"
    work, home = session(tmp_path, gemini.one_hook("AfterAgent", render_probe(Block(reason="NOT-DONE-YET"), log)))
    marker = fake_model.script("gm_stop", Say("finished"))
    run = gemini.run_gemini(work, home, fake_model, f"{marker} go")
    assert run.returncode == 0, run.stderr[-2000:]
    stops = [p for p in logged(log) if p["hook_event_name"] == "AfterAgent"]
    assert [p["stop_hook_active"] for p in stops] == [False, True]
    assert any("NOT-DONE-YET" in texts for r in fake_model.seen("gm_stop") for texts in r.user_texts)


@pytest.mark.parametrize("code", [3, 127])
def test_any_other_failing_exit_blocks_the_call(tmp_path: Path, fake_model: FakeModel, code: int) -> None:
    """Unlike its docs' "other: warning": only exit 1 lets the call through on 0.61.0."""
    work, home = session(tmp_path, gemini.one_hook("BeforeTool", f"cat > /dev/null; echo why-{code} >&2; exit {code}"))
    marker = fake_model.script("gm_exit", Call("run_shell_command", {"command": "echo x > ran.txt"}), Say("ok"))
    gemini.run_gemini(work, home, fake_model, f"{marker} go")
    assert not (work / "ran.txt").exists()
    assert f"Tool execution blocked: why-{code}" in fake_model.tool_results("gm_exit")[-1]


@pytest.mark.parametrize("failure", ["exit 1", "sleep 30"], ids=["crash", "timeout"])
def test_a_hook_that_fails_or_times_out_lets_the_call_run(tmp_path: Path, fake_model: FakeModel, failure: str) -> None:
    """Why hookgate's BeforeTool registration goes through the exit-2 wrapper: Gemini CLI itself
    fails open on exit 1, what a crashed program exits with (and on a timeout, which no wrapper can
    turn around)."""
    hook = gemini.one_hook("BeforeTool", f"cat > /dev/null; {failure}", timeout_ms=3000)
    work, home = session(tmp_path, hook)
    marker = fake_model.script("gm_fail", Call("run_shell_command", {"command": "echo x > ran.txt"}), Say("ok"))
    gemini.run_gemini(work, home, fake_model, f"{marker} go")
    assert (work / "ran.txt").read_text() == "x\n"


def test_a_hookgate_that_crashes_blocks_the_tool_instead_of_allowing_it(tmp_path: Path,
                                                                         fake_model: FakeModel) -> None:
    """hookgate replaced by a program that exits 1: the turn goes on (BeforeAgent has no wrapper, and
    Gemini CLI takes exit 1 as a warning), the tool call is refused by the wrapper's exit 2."""
    work, home = new_project(tmp_path)
    gemini.configure(work, home)
    gemini.hookgate("install", "gemini", "--project", str(work), cwd=work, home=home)
    path = work / ".gemini" / "settings.json"
    path.write_text(path.read_text().replace(str(gemini.HOOKGATE), "false"))
    marker = fake_model.script("gm_broken", Call("run_shell_command", {"command": "echo x > ran.txt"}), Say("ok"))
    gemini.run_gemini(work, home, fake_model, f"{marker} go")
    assert not (work / "ran.txt").exists()
    assert "PreToolUse is blocked until it is repaired" in fake_model.tool_results("gm_broken")[-1]


def test_a_projects_hooks_run_only_in_a_trusted_folder(tmp_path: Path, fake_model: FakeModel) -> None:
    """What doctor's `gemini trust` check looks at: --skip-trust does not load them either."""
    work, home = new_project(tmp_path)
    gemini.configure(work, home)
    (gemini.gemini_home(home) / "trustedFolders.json").write_text("{}")
    gemini.hookgate("install", "gemini", "--project", str(work), cwd=work, home=home)
    gemini.hookgate("role", "set", "build", cwd=work, home=home)
    (work / "src").mkdir()
    marker = fake_model.script("gm_untrusted", Call("write_file", {"file_path": "src/player.gd", "content": "x\n"}),
                               Say("ok"))
    gemini.run_gemini(work, home, fake_model, f"{marker} go", "--skip-trust")
    assert metrics(work) == [] and (work / "src" / "player.gd").exists()  # no hookgate hook ran
    (work / "src" / "player.gd").unlink()
    gemini.configure(work, home)  # trusted
    marker = fake_model.script("gm_trusted", Call("write_file", {"file_path": "src/player.gd", "content": "x\n"}),
                               Say("ok"))
    gemini.run_gemini(work, home, fake_model, f"{marker} go")
    assert not (work / "src" / "player.gd").exists()
    assert any(m["event"] == "hook_block" and m["gate"] == "check_file_permissions" for m in metrics(work))


def test_an_identical_command_in_the_project_and_the_user_settings_runs_once(tmp_path: Path,
                                                                           fake_model: FakeModel) -> None:
    """What doctor's double-registration check assumes of Gemini CLI (Installs.identical_once)."""
    log = tmp_path / "calls.jsonl"
    command = f"cat >> {log}; echo >> {log}"
    work, home = session(tmp_path, gemini.one_hook("BeforeTool", command))
    (work / ".gemini").mkdir()
    (work / ".gemini" / "settings.json").write_text(json.dumps({"hooks": gemini.one_hook("BeforeTool", command)}))
    marker = fake_model.script("gm_twice", Call("run_shell_command", {"command": "echo x"}), Say("ok"))
    gemini.run_gemini(work, home, fake_model, f"{marker} go")
    assert [json.loads(line)["tool_name"] for line in log.read_text().splitlines() if line.strip()] == \
        ["run_shell_command"]
