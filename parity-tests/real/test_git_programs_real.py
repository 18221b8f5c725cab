"""Whether the pinned runtimes run a program a git config names (core.fsmonitor, run on an index
refresh) by themselves, outside every tool call. Measured: none does in a headless turn. Claude
Code and Codex run `git status` at the start, but each passes `-c core.fsmonitor=` (and
`core.hooksPath=/dev/null`); Gemini CLI runs only `rev-parse`; OpenCode runs git on a snapshot
repository of its own. So hookgate protects the config and hooks (the preset's git_programs) for
the git commands that do run them: the agent's own later ones, judged one call at a time (the
shell gate reads `git status` as harmless), and the user's."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from drivers import claude, codex, gemini, opencode
from harness.fakemodel import FakeModel, Say
from harness.runtimes import new_project

pytestmark = pytest.mark.real

IDENTITY = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}


def planted(work: Path, home: Path, marker: Path) -> None:
    """The repository's config and the user's name a program git runs on an index refresh, as an
    agent could have planted them, in a repository with a change to refresh."""
    program = work.parent / "fsmonitor.sh"
    program.write_text(f"#!/bin/sh\necho \"$@\" >> {marker}\nexit 1\n")
    program.chmod(0o755)
    (work / "notes.txt").write_text("n\n")
    subprocess.run(["git", "add", "-A"], cwd=work, check=True)
    subprocess.run(["git", "commit", "-qm", "start"], cwd=work, check=True, env={**os.environ, **IDENTITY})
    (work / "notes.txt").write_text("changed\n")
    subprocess.run(["git", "config", "core.fsmonitor", str(program)], cwd=work, check=True)
    (home / ".gitconfig").write_text(f"[core]\n\tfsmonitor = {program}\n")


def turn(runtime: str, work: Path, home: Path, fake_model: FakeModel) -> None:
    """One headless turn with no tool call."""
    marker = fake_model.script(f"git_{runtime}", Say("Nothing to do."))
    if runtime == "claude":
        done = claude.run_claude(work, home, fake_model, f"{marker} say hi")
    elif runtime == "codex":
        codex.write_config(home, fake_model)
        done = codex.run_codex(work, home, f"{marker} say hi")
    elif runtime == "gemini":
        gemini.configure(work, home)
        done = gemini.run_gemini(work, home, fake_model, f"{marker} say hi")
    else:
        opencode.configure(work, home, fake_model)
        done = opencode.run_opencode(work, home, f"{marker} say hi")
    assert done.returncode == 0, done.stderr[-3000:]
    assert fake_model.seen(f"git_{runtime}"), f"{runtime} never asked the model; stderr tail:\n{done.stderr[-2000:]}"


@pytest.mark.parametrize("runtime", ["claude", "codex", "gemini", "opencode"])
def test_no_pinned_runtime_runs_a_planted_git_program_by_itself(runtime: str, tmp_path: Path,
                                                                fake_model: FakeModel) -> None:
    work, home = new_project(tmp_path)
    marker = tmp_path / "fsmonitor-ran"
    planted(work, home, marker)
    turn(runtime, work, home, fake_model)
    assert not marker.exists(), f"{runtime} ran the planted core.fsmonitor: {marker.read_text()!r}"
    # the plant is live: the git status an agent's next call would run does run it
    subprocess.run(["git", "status", "--short"], cwd=work, check=True, capture_output=True,
                   env={**os.environ, "HOME": str(home)})
    assert marker.exists()
