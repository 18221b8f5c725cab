"""What differs between the pinned versions of a runtime beyond the scenario tier, each table's
`limits` checked against that version's binary:

- `hookgate_cannot_run` ("blocks" or "lets the call through"): what a crash of hookgate itself
  does. On Claude Code hookgate registers its gating events with onFailure: "block", which Claude
  Code honours from 2.1.295 on; on Codex through an exit-2 wrapper.
- `project_trust` (Codex): whether `codex exec --trust`, the dialog-free command doctor prints for
  an untrusted project, exists in that version."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from drivers import codex
from drivers.claude import run_claude
from harness.fakemodel import Call, FakeModel, Say
from harness.runtimes import new_project
from hookgate.parity.capabilities import Runtime, proven
from hookgate_claude.install import registrations
from hookgate_codex.install import registrations as codex_registrations
from hookgate_codex.install import trust_project_command

pytestmark = pytest.mark.real


@pytest.mark.parametrize("table", proven("claude"), ids=lambda t: t.key)
def test_a_hookgate_that_cannot_run_is_what_the_table_says(table: Runtime, tmp_path: Path,
                                                           fake_model: FakeModel) -> None:
    blocks = str(table.limits["hookgate_cannot_run"]).startswith("blocks")
    work, home = new_project(tmp_path)
    broken = tmp_path / "broken-hookgate"
    broken.write_text("#!/bin/sh\ntouch \"$0.ran\"\necho 'Traceback: hookgate is broken' >&2\nexit 1\n")
    broken.chmod(0o755)
    hooks = {"PreToolUse": registrations(str(broken))["PreToolUse"]}  # what install writes, onFailure included
    assert hooks["PreToolUse"][0]["hooks"][0]["onFailure"] == "block"
    (work / ".claude").mkdir()
    (work / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))
    marker = fake_model.script("cc_broken", Call("Bash", {"command": f"echo hi > {work / 'ran.txt'}",
                                                          "description": "write"}), Say("ok"))
    run = run_claude(work, home, fake_model, f"{marker} go", version=table.version)
    assert run.returncode == 0, run.stderr
    (result,) = fake_model.tool_results("cc_broken")
    assert (tmp_path / "broken-hookgate.ran").exists()  # the runtime did start the hook, and it failed
    if blocks:
        assert not (work / "ran.txt").exists()
        assert 'blocking because onFailure is "block"' in result and "hookgate is broken" in result
    else:
        assert (work / "ran.txt").read_text() == "hi\n"  # the broken hook ran, and the tool ran anyway
        assert "hookgate is broken" not in result


@pytest.mark.parametrize("table", proven("codex"), ids=lambda t: t.key)
def test_a_hookgate_that_cannot_run_on_codex_is_what_the_table_says(table: Runtime, tmp_path: Path,
                                                                    fake_model: FakeModel) -> None:
    blocks = str(table.limits["hookgate_cannot_run"]).startswith("blocks")
    work, home = new_project(tmp_path)
    codex.write_config(home, fake_model)
    broken = tmp_path / "broken-hookgate"
    broken.write_text("#!/bin/sh\ntouch \"$0.ran\"\necho 'Traceback: hookgate is broken' >&2\nexit 1\n")
    broken.chmod(0o755)
    hooks = {"PreToolUse": codex_registrations(str(broken))["PreToolUse"]}  # what install writes
    (home / ".codex" / "hooks.json").write_text(json.dumps({"hooks": hooks}))
    marker = fake_model.script("cx_broken", Call("exec_command", {"cmd": f"echo hi > {work / 'ran.txt'}"}), Say("ok"))
    run = codex.run_codex(work, home, f"{marker} go", version=table.version)
    assert run.returncode == 0, run.stderr
    (result,) = fake_model.tool_results("cx_broken")
    assert (tmp_path / "broken-hookgate.ran").exists()
    if blocks:
        assert not (work / "ran.txt").exists()
        assert result.startswith("Command blocked by PreToolUse hook: ") and "hookgate could not run (exit 1)" in result
    else:
        assert (work / "ran.txt").read_text() == "hi\n"


@pytest.mark.parametrize("table", proven("codex"), ids=lambda t: t.key)
def test_the_dialog_free_trust_command_is_what_the_table_says(table: Runtime, tmp_path: Path,
                                                              fake_model: FakeModel) -> None:
    exists = str(table.limits["project_trust"]).startswith("codex exec --trust")
    work, home = new_project(tmp_path)
    config = codex.write_config(home, fake_model)
    command = shlex.split(re.search(r"without the dialog: (codex exec [^)]*)\)", trust_project_command(work)).group(1))
    marker = fake_model.script("cx_trust", Say("ok"))
    done = codex.codex(*command[1:-1], marker, cwd=tmp_path, home=home, version=table.version)
    trusted = f'[projects."{work}"]' in config.read_text() and 'trust_level = "trusted"' in config.read_text()
    if exists:
        assert done.returncode == 0 and trusted, done.stderr
    else:
        assert done.returncode == 2 and "unexpected argument '--trust'" in done.stderr and not trusted, done.stderr
