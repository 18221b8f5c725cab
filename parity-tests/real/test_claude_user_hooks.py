"""Users' own rules on the real Claude Code, beyond what the scenario tier shows: a command hook from
hooks.json blocks a tool call and sees the HOOKGATE_* environment and the project as its cwd, the
global ~/.hookgate/hooks.json runs beside the project's, and a registered Python hook's rewrite is
what the tool ran with and what every later hook saw. (The same rules on every runtime and
version: real/test_scenarios.py.)"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest

from drivers.claude import run_claude
from harness.fakemodel import Call, FakeModel, Say
from harness.runtimes import Run, hookgate, metrics, new_project

pytestmark = pytest.mark.real


@dataclass(frozen=True)
class Runtime:
    install: Callable[[Path, Path], object]  # (work, home): register hookgate with the runtime
    run: Callable[[Path, Path, FakeModel, str], Run]  # (work, home, fake model, prompt)
    shell: Callable[[str], Call]  # how its model asks for a shell command
    write: Callable[[str, str], Call]  # how its model asks to write a file


RUNTIMES: dict[str, Runtime] = {
    "claude": Runtime(
        install=lambda work, home: hookgate("install", "claude", "--project", str(work), cwd=work),
        run=run_claude,
        shell=lambda command: Call("Bash", {"command": command, "description": "run it"}),
        write=lambda path, content: Call("Write", {"file_path": path, "content": content}),
    ),
}

GUARD = """\
import json, os, sys
payload = json.load(sys.stdin)
with open(".hookgate/guard.log", "a") as log:
    log.write(json.dumps({"payload": payload, "env": {k: v for k, v in os.environ.items() if k.startswith("HOOKGATE_")},
                          "cwd": os.getcwd()}) + "\\n")
if "touch" in payload["tool_input"].get("command", ""):
    print("command hooks forbid touch here", file=sys.stderr)
    sys.exit(2)
"""

AUDIT = "cat >> \"$HOOKGATE_PROJECT_DIR/.hookgate/audit.jsonl\"; echo >> \"$HOOKGATE_PROJECT_DIR/.hookgate/audit.jsonl\""

REWRITE = """\
from hookgate import modify, register_hook


def approve(event):
    path = event.tool_input["file_path"].replace("draft.txt", "release.txt")
    return modify({**event.tool_input, "file_path": path, "content": "ready\\n"})


register_hook("release-path", "pre_tool_use", {"tool": "Write", "path_pattern": "draft.txt"}, {"priority": 50}, approve)
"""


@pytest.fixture(params=sorted(RUNTIMES))
def runtime(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def project(tmp_path: Path, runtime: str) -> tuple[Path, Path]:
    work, home = new_project(tmp_path)
    RUNTIMES[runtime].install(work, home)
    state = work / ".hookgate"
    state.mkdir(exist_ok=True)
    (state / "guard.py").write_text(GUARD)
    (state / "hooks.json").write_text(json.dumps(
        {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "python3 .hookgate/guard.py"}]}]}}
    ))
    (home / ".hookgate").mkdir()  # the global file: no outer "hooks" key
    (home / ".hookgate" / "hooks.json").write_text(json.dumps(
        {"PostToolUse": [{"matcher": "", "hooks": [{"type": "command", "command": AUDIT}]}]}
    ))
    (state / "policies").mkdir()
    (state / "policies" / "release.py").write_text(REWRITE)
    return work, home


def test_a_command_hook_blocks_a_tool_call(runtime: str, project: tuple[Path, Path], fake_model: FakeModel) -> None:
    work, home = project
    rt = RUNTIMES[runtime]
    marker = fake_model.script(
        f"{runtime}_cmd_block", rt.shell("touch forbidden.txt"), rt.shell("echo fine > allowed.txt"), Say("done"),
    )
    result = rt.run(work, home, fake_model, f"{marker} touch a file")
    assert result.returncode == 0, result.stderr
    assert not (work / "forbidden.txt").exists()
    assert (work / "allowed.txt").read_text() == "fine\n"
    assert any("command hooks forbid touch here" in r for r in fake_model.tool_results(f"{runtime}_cmd_block"))

    calls = [json.loads(line) for line in (work / ".hookgate" / "guard.log").read_text().splitlines()]
    assert [c["payload"]["tool_input"]["command"] for c in calls] == ["touch forbidden.txt", "echo fine > allowed.txt"]
    first = calls[0]
    assert first["payload"]["hook_event_name"] == "PreToolUse" and first["payload"]["tool_name"] == "Bash"
    assert Path(first["cwd"]).resolve() == work.resolve()
    assert first["env"]["HOOKGATE_HOOK_EVENT"] == "PreToolUse"
    assert first["env"]["HOOKGATE_SESSION_ID"] == first["payload"]["session_id"] != ""
    assert Path(first["env"]["HOOKGATE_PROJECT_DIR"]).resolve() == work.resolve()
    blocks = [m for m in metrics(work) if m["event"] == "hook_block"]
    assert [(b["gate"], b["reason"]) for b in blocks] == [("command_hooks.pre_tool_use", "command hooks forbid touch here")]

    # the global file's PostToolUse hook saw only the call that ran
    audit = [json.loads(line) for line in (work / ".hookgate" / "audit.jsonl").read_text().splitlines() if line.strip()]
    assert [(a["tool_name"], a["tool_input"]["command"]) for a in audit if a["tool_name"] == "Bash"] == [
        ("Bash", "echo fine > allowed.txt")
    ]


def test_a_registered_python_hook_rewrites_a_tool_call(runtime: str, project: tuple[Path, Path], fake_model: FakeModel) -> None:
    work, home = project
    rt = RUNTIMES[runtime]
    marker = fake_model.script(f"{runtime}_py_rewrite", rt.write(str(work / "draft.txt"), "wip\n"), Say("done"))
    result = rt.run(work, home, fake_model, f"{marker} write the draft")
    assert result.returncode == 0, result.stderr
    assert not (work / "draft.txt").exists()
    assert (work / "release.txt").read_text() == "ready\n"
    # what the tool ran with is what the runtime reported afterwards, to the global audit hook too
    audit = [json.loads(line) for line in (work / ".hookgate" / "audit.jsonl").read_text().splitlines() if line.strip()]
    assert [a["tool_input"]["file_path"] for a in audit if a["tool_name"] == "Write"] == [str(work / "release.txt")]
    writes = [m for m in metrics(work) if m["event"] == "file_write"]
    assert [w["file"] for w in writes] == ["release.txt"]  # the pipeline gates judged the rewritten input
