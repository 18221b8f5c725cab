"""Gemini CLI's plug: its captured payloads (parity-tests/payloads/gemini_0.61.0.hooks.jsonl, taken
from the pinned binary) decoded to canonical events, its answers in the forms Gemini CLI honours,
and its settings.json install given back byte for byte."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from hookgate import lifecycle
from hookgate.checks import Setup
from hookgate.model.verdicts import ALLOW, Ask, Block, Modify, Retry, Verdict
from hookgate_gemini import checks, dialect, install
from support import HOOKGATE

CAPTURED = Path(__file__).resolve().parents[1] / "parity-tests" / "payloads" / "gemini_0.61.0.hooks.jsonl"


def captured(event: str, tool: str | None = None) -> dict:
    for line in CAPTURED.read_text().splitlines():
        payload = json.loads(line)["payload"]
        if payload["hook_event_name"] == event and tool in (None, payload.get("tool_name")):
            return payload
    raise LookupError(event, tool)


def decoded(payload: dict):
    (event,) = dialect.decode(json.dumps(payload).encode())
    return event


def test_the_dialect_names_gemini_events_as_the_lifecycle_column_does():
    assert {r.on("gemini"): r.event for r in lifecycle.for_runtime("gemini")} == dialect.EVENTS


@pytest.mark.parametrize(("tool", "canonical", "keys"), [
    ("write_file", "Write", {"file_path": "/srv/capture/project/hello.txt", "content": "hello\n"}),
    ("replace", "Edit", {"file_path": "/srv/capture/project/hello.txt", "old_string": "hello", "new_string": "bye"}),
    ("run_shell_command", "Bash", {"command": "echo hi"}),
    ("read_file", "Read", {"file_path": "/srv/capture/project/hello.txt"}),
    ("invoke_agent", "Agent", {"subagent_type": "worker", "prompt": "SCENARIO:cap_sub go",
                               "description": "SCENARIO:cap_sub go"}),
])
def test_each_captured_tool_call_is_its_canonical_tool(tool, canonical, keys):
    for gemini_event, event_name in (("BeforeTool", "PreToolUse"), ("AfterTool", "PostToolUse")):
        event = decoded(captured(gemini_event, tool))
        assert (event.name, event.runtime, event.tool_name) == (event_name, "gemini", canonical)
        assert keys.items() <= event.tool_input.items()
        assert event.agent_id is None  # Gemini CLI gives no subagent identity


def test_a_tool_hookgate_does_not_know_keeps_its_name_and_input():
    event = decoded(captured("BeforeTool", "complete_task"))
    assert (event.tool_name, event.tool_input) == ("complete_task", {"result": "sub report"})


def test_the_lifecycle_events_decode_with_their_fields():
    assert decoded(captured("SessionStart")).source == "startup"
    assert decoded(captured("BeforeAgent")).prompt == "SCENARIO:cap_main go"
    stop = decoded(captured("AfterAgent"))
    assert (stop.name, stop.last_assistant_message, stop.stop_hook_active) == ("Stop", "done", False)
    assert decoded(captured("PreCompress")).trigger == "auto"
    assert decoded(captured("SessionEnd")).reason == "exit"
    assert decoded(captured("AfterTool", "write_file")).tool_response["llmContent"].startswith("Successfully")


def test_an_unknown_event_stays_unknown_and_garbage_is_refused():
    unknown = decoded({"hook_event_name": "BeforeModel", "session_id": "s"})
    assert type(unknown).__name__ == "UnknownEvent" and unknown.name == "BeforeModel"
    from hookgate.errors import PayloadError
    for raw in (b"", b"[1]", b'{"hook_event_name": ', b'{"hook_event_name": "BeforeTool"}'):
        with pytest.raises(PayloadError):
            dialect.decode(raw)


def answer(event: str, verdict: Verdict) -> tuple[int, dict, str]:
    done = dialect.render(event, verdict)
    return done.exit_code, json.loads(done.stdout) if done.stdout else {}, done.stderr


def test_refusals_are_exit_2_with_the_reason_where_gemini_honours_them():
    for event in ("PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop"):
        assert answer(event, Block(reason="no")) == (2, {}, "no")
    assert answer("PreToolUse", Retry(reason="busy", delay_ms=1500)) == (2, {}, "busy (temporary: retry in 1.5s)")
    code, _, reason = answer("PreToolUse", Ask(reason="sure?"))
    assert code == 2 and "sure?" in reason and "ask the user" in reason
    # advisory events: nothing Gemini would read as a refusal
    for event in ("PreCompact", "SessionEnd", "SessionStart", "Notification"):
        assert answer(event, Block(reason="no"))[0] == 0


def test_a_rewrite_is_tool_input_in_geminis_keys():
    code, out, _ = answer("PreToolUse", Modify(updated_input={"command": "echo ok"}))
    assert (code, out) == (0, {"hookSpecificOutput": {"hookEventName": "BeforeTool", "tool_input": {"command": "echo ok"}}})
    agent = decoded(captured("BeforeTool", "invoke_agent")).tool_input
    _, out, _ = answer("PreToolUse", Modify(updated_input={**agent, "prompt": "other"}))
    assert out["hookSpecificOutput"]["tool_input"] == {"agent_name": "worker", "prompt": "other"}


def test_a_rewritten_call_is_paired_by_the_id_its_aftertool_will_carry():
    """AfterTool carries the input as the rewrite left it (measured on the pinned binary: the
    real effect test of a rewritten call fails without this pairing)."""
    given = {"session_id": "s", "cwd": "/p", "tool_name": "replace",
             "tool_input": {"file_path": "a.md", "old_string": "x", "new_string": "y"}}
    before = json.dumps({**given, "hook_event_name": "BeforeTool"}).encode()
    rewrite = {"file_path": "/p/a.md", "old_string": "x", "new_string": "z", "replace_all": True}
    merged = {**given["tool_input"], **dialect.gemini_input(rewrite)}
    (after,) = dialect.decode(json.dumps({**given, "hook_event_name": "AfterTool", "tool_input": merged,
                                          "tool_response": {}}).encode())
    (pre,) = dialect.decode(before)
    assert dialect.call_id_after(before, rewrite) == after.tool_use_id != pre.tool_use_id
    assert dialect.call_id_after(b"not json", rewrite) is None


def test_context_goes_where_gemini_passes_it_on():
    for event, name in (("SessionStart", "SessionStart"), ("UserPromptSubmit", "BeforeAgent"), ("PostToolUse", "AfterTool")):
        assert answer(event, Verdict(context="note"))[1] == {
            "hookSpecificOutput": {"hookEventName": name, "additionalContext": "note"}}
    assert answer("PreToolUse", Verdict(context="note"))[1] == {"systemMessage": "note"}
    assert answer("PreToolUse", ALLOW) == (0, {}, "")


# -- install ---------------------------------------------------------------------------------------

USER_SETTINGS = """{
  "theme":   "Dracula",
  "hooks": {"BeforeTool": [{"matcher": "write_file", "hooks": [{"type": "command", "command": "./mine.sh"}]}]}
}
"""


def test_install_merges_and_uninstall_gives_back_the_bytes(tmp_path):
    path = install.config_path(tmp_path)
    path.parent.mkdir()
    original = USER_SETTINGS  # laid out by hand: uninstall keeps the layout
    path.write_text(original)
    assert install.install(path, "/opt/hookgate")
    settings = json.loads(path.read_text())
    assert settings["theme"] == "Dracula"
    assert settings["hooks"]["BeforeTool"][0]["hooks"][0]["command"] == "./mine.sh"
    ours = settings["hooks"]["BeforeTool"][1]["hooks"][0]
    assert ours["timeout"] == 120_000 and ours["name"] == "hookgate-PreToolUse"
    assert ours["command"].startswith("sh -c ") and ours["command"].endswith(" hookgate /opt/hookgate")
    assert set(settings["hooks"]) == {r.on("gemini") for r in lifecycle.for_runtime("gemini")}
    assert not install.install(path, "/opt/hookgate")  # idempotent
    assert install.stale_events(path) == []
    assert install.installed_events(path) == set(dialect.EVENTS.values())
    assert install.uninstall(path)
    assert path.read_text() == original


def test_the_fail_closed_wrapper_blocks_when_hookgate_cannot_run(tmp_path):
    handler = install.registrations(str(tmp_path / "missing-hookgate"))["BeforeTool"][0]["hooks"][0]
    done = subprocess.run(["sh", "-c", handler["command"]], input=b"{}", capture_output=True, timeout=30)
    assert done.returncode == 2 and b"PreToolUse is blocked until it is repaired" in done.stderr
    plain = install.registrations(str(tmp_path / "missing-hookgate"))["AfterTool"][0]["hooks"][0]["command"]
    assert not plain.startswith("sh -c ")  # only the gating events fail closed


def test_the_cli_installs_for_gemini_and_notes_the_folder_trust(tmp_path):
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "GEMINI_CLI_HOME": str(home)}
    done = subprocess.run([HOOKGATE, "install", "gemini", "--project", str(work)], env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "only in a trusted folder" in done.stdout
    assert install.installed_events(work / ".gemini" / "settings.json") == set(dialect.EVENTS.values())
    setup = Setup(project=work, env=env)
    assert [f.status for f in checks.check_registration(setup)] == ["ok"]
    assert [f.status for f in checks.check_trust(setup)] == ["fail"]
    (home / ".gemini").mkdir(parents=True)
    (home / ".gemini" / "trustedFolders.json").write_text(json.dumps({str(tmp_path): "TRUST_PARENT"}))
    assert [f.status for f in checks.check_trust(setup)] == ["ok"]
    (home / ".gemini" / "settings.json").write_text(json.dumps({"hooksConfig": {"enabled": False}}))
    assert [f.status for f in checks.check_enabled(setup)] == ["fail"]
    done = subprocess.run([HOOKGATE, "uninstall", "gemini", "--project", str(work)], env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0 and not (work / ".gemini" / "settings.json").exists() or \
        install.installed_events(work / ".gemini" / "settings.json") == set()


def test_a_changed_registration_is_stale(tmp_path):
    path = tmp_path / "settings.json"
    install.install(path, "hookgate")
    settings = json.loads(path.read_text())
    settings["hooks"]["AfterAgent"][0]["hooks"][0]["timeout"] = 5
    path.write_text(json.dumps(settings))
    assert install.stale_events(path) == ["Stop"]


def test_hook_gemini_imports_no_heavy_module(tmp_path):
    """The Gemini dialect is on the hook path of every tool call: it stays as light as Claude's."""
    import os
    import sys

    from test_hook_path_is_light import HEAVY, PROBE, probe_report

    (tmp_path / ".hookgate").mkdir()
    (tmp_path / ".hookgate" / "current_role").write_text("build\n")
    payload = json.dumps({**captured("BeforeTool", "write_file"), "cwd": str(tmp_path),
                          "tool_input": {"file_path": "src/a.gd", "content": ""}}).encode()
    env = {**os.environ, "HOOKGATE_WARM": "off", "HOME": str(tmp_path)}
    probe = PROBE.replace('"hook", "claude"', '"hook", "gemini", "--event", "PreToolUse"')
    done = subprocess.run([sys.executable, "-c", f"PAYLOAD={payload!r}\n" + probe], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60, env=env)
    assert "Build role cannot write game code directly" in done.stderr  # the probe really decided: exit 2
    imported = set(probe_report(done.stderr)["modules"])
    assert "hookgate_gemini.dialect" in imported
    assert {m for m in imported if m.split(".")[0] in HEAVY or m in HEAVY} == set()


def test_a_settings_file_with_comments_is_refused_and_left_as_it_is(tmp_path):
    """Gemini CLI reads comments in settings.json; hookgate reads plain JSON and changes nothing."""
    path = tmp_path / "settings.json"
    path.write_text('// mine\n{"theme": "Dracula"}\n')
    with pytest.raises(ValueError, match="not valid JSON"):
        install.install(path, "hookgate")
    assert path.read_text() == '// mine\n{"theme": "Dracula"}\n'
