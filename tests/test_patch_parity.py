"""One patch, the same canonical events on Codex and on OpenCode.

Codex hands hookgate an apply_patch call in its own payload (`hookgate hook codex`); OpenCode's
plugin sends the raw patch text to the RPC core (`evaluate` with tool_name "apply_patch" and
tool_input {"patch": ...}). Both expand it with the one patch reader (hookgate.formats.apply_patch).
A project Python hook records every PreToolUse event the gates see, through the real hook process
and the real `hookgate serve --stdio` process, and the two records must be equal, event by event;
so must the verdicts the pipeline gives them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hookgate.formats.apply_patch import PatchError, tool_calls, touched_files
from rpc_support import Core, root  # noqa: F401 (a fixture)
from support import run_hook

RECORDER = '''
import json, os
from hookgate import register_hook

def record(event):
    with open(os.path.join(os.environ["PATCH_RECORD"]), "a") as out:
        out.write(json.dumps({"tool_name": event.tool_name, "tool_input": event.tool_input,
                              "session_id": event.session_id, "cwd": event.cwd}) + "\\n")

register_hook("record", "pre_tool_use", {}, None, record)
'''

PATCHES = {
    "add": "*** Begin Patch\n*** Add File: notes/todo.md\n+one\n+two\n*** End Patch\n",
    "update, two chunks": ("*** Begin Patch\n*** Update File: docs/a.md\n@@ intro\n-old\n+new\n same\n@@\n-x\n+y\n"
                           "*** End Patch\n"),
    "delete and move": ("*** Begin Patch\n*** Delete File: old.txt\n*** Update File: a.txt\n*** Move to: b/a.txt\n"
                        "@@\n-1\n+2\n*** End Patch"),
    "absolute path": "*** Begin Patch\n*** Add File: {root}/abs.txt\n+hi\n*** End Patch\n",
    "forbidden file": "*** Begin Patch\n*** Add File: notes.txt\n+ok\n*** Update File: src/player.gd\n@@\n-a\n+b\n*** End Patch\n",
    "no end marker": "*** Begin Patch\n*** Add File: c.txt\n+x\n",
}
UNREADABLE = {
    "no begin marker": "*** Add File: e2e/x.gd\n+x\n*** End Patch\n",
    "stray line": "*** Begin Patch\n*** Add File: a.txt\n+x\nnonsense\n*** End Patch\n",
    "names no file": "*** Begin Patch\n*** End Patch\n",
}


def codex_payload(root: Path, patch: str) -> dict[str, object]:
    return {"hook_event_name": "PreToolUse", "session_id": "codex-s", "turn_id": "t1", "cwd": str(root),
            "model": "gpt-5.5", "permission_mode": "default", "tool_name": "apply_patch",
            "tool_input": {"command": patch}, "tool_use_id": "call_1"}


def opencode_event(root: Path, patch: str) -> dict[str, object]:
    return {"hook_event_name": "PreToolUse", "session_id": "opencode-s", "cwd": str(root), "runtime": "opencode",
            "tool_name": "apply_patch", "tool_input": {"patch": patch}, "tool_use_id": "call_1"}


@pytest.fixture
def project(root: Path) -> Path:
    (root / ".hookgate" / "policies").mkdir()
    (root / ".hookgate" / "policies" / "record.py").write_text(RECORDER)
    return root


def recorded(path: Path, session: str) -> list[dict[str, object]]:
    lines = path.read_text().splitlines() if path.exists() else []
    return [{k: v for k, v in entry.items() if k != "session_id"} for line in lines
            if (entry := json.loads(line))["session_id"] == session]


def test_the_same_patch_is_the_same_events_on_codex_and_opencode(project: Path):
    record = project / "record.jsonl"
    env = {"PATCH_RECORD": str(record), "HOOKGATE_WARM": "off"}
    core = Core(project, "--no-reload", env=env)
    try:
        core.initialize()
        for name, text in PATCHES.items():
            patch = text.format(root=project)
            record.unlink(missing_ok=True)
            codex = run_hook("codex", codex_payload(project, patch), project, "--event", "PreToolUse", env=env)
            opencode = core.evaluate(opencode_event(project, patch))
            codex_events, opencode_events = recorded(record, "codex-s"), recorded(record, "opencode-s")
            assert codex_events == opencode_events, name
            assert [e["tool_name"] for e in codex_events] == [tool for tool, _ in tool_calls(patch, str(project))]
            assert len(codex_events) >= 1 and all(e["tool_input"]["patch"] == patch for e in codex_events)
            # and the pipeline judges them alike: Codex refuses with exit 2 and the reason on stderr
            assert (codex.returncode == 2) == (opencode["kind"] == "block"), name
            if opencode["kind"] == "block":
                assert opencode["reason"] in codex.stderr.decode(), name
    finally:
        core.close()
    assert name == "no end marker"  # every patch ran


def test_a_patch_neither_can_read_takes_the_fail_mode_on_both(project: Path):
    record = project / "record.jsonl"
    env = {"PATCH_RECORD": str(record), "HOOKGATE_WARM": "off"}
    core = Core(project, "--no-reload", env=env)
    try:
        core.initialize()
        for name, patch in UNREADABLE.items():
            with pytest.raises(PatchError):
                tool_calls(patch, str(project))
            codex = run_hook("codex", codex_payload(project, patch), project, "--event", "PreToolUse", env=env)
            opencode = core.evaluate(opencode_event(project, patch))
            assert codex.returncode == 2 and opencode["kind"] == "block", name
            assert "invalid apply_patch call" in codex.stderr.decode() and "invalid apply_patch call" in opencode["reason"]
        assert recorded(record, "codex-s") == recorded(record, "opencode-s") == []  # no gate saw a guessed file
    finally:
        core.close()


def test_the_shell_gate_reads_the_patch_with_the_same_reader():
    patch = PATCHES["delete and move"]
    assert touched_files(patch) == ["old.txt", "a.txt", "b/a.txt"]
    # a text the strict reading refuses still names its files to a gate judging a shell command
    assert touched_files(UNREADABLE["no begin marker"]) == ["e2e/x.gd"]
