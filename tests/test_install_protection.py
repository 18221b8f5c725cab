"""What every hookgate process runs besides its own package is protected as its install is: the
interpreter its launcher names, the site-packages of its dependencies, the standard library. On an
installed wheel, each plant is first made for real to show what it does to a decision (a hook
whose interpreter became /bin/true answers nothing, which Claude Code takes for an allow; a line
added to msgspec runs in every hook process), then asked of the hook with a role active."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Iterator

import pytest

from wheel_support import installed_wheel

POLICY = "hookgate's policy and install"


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return installed_wheel(tmp_path_factory.mktemp("wheel")).parent.parent


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Path]:
    work = tmp_path / "game"
    (work / ".hookgate").mkdir(parents=True)
    (work / "src").mkdir()
    (work / ".hookgate" / "config.toml").write_text('preset = "godot"\n')
    (work / ".hookgate" / "current_role").write_text("build\n")
    yield work


def site_of(venv: Path) -> Path:
    (site,) = venv.glob("lib/python*/site-packages")
    return site


def hook(venv: Path, work: Path, tool: str, **tool_input: str) -> subprocess.CompletedProcess[bytes]:
    """The installed hook as Claude Code runs it (its launcher, by the path registered), cold."""
    payload = {"session_id": "s1", "cwd": str(work), "hook_event_name": "PreToolUse", "tool_name": tool,
               "tool_input": tool_input}
    env = {"PATH": "/usr/bin:/bin", "HOME": str(work.parent), "HOOKGATE_WARM": "off"}
    return subprocess.run([str(venv / "bin" / "hookgate"), "hook", "claude"], input=json.dumps(payload).encode(),
                          cwd=work, env=env, capture_output=True, timeout=60)


def refusal(done: subprocess.CompletedProcess[bytes]) -> str:
    specific = json.loads(done.stdout or b"{}").get("hookSpecificOutput", {})
    return specific.get("permissionDecisionReason", "") if specific.get("permissionDecision") == "deny" else ""


def plants(venv: Path, marker: Path) -> list[tuple[str, Path]]:
    """(the command an agent runs, the file it changes)."""
    site = site_of(venv)
    return [
        (f"ln -sf /bin/true {venv}/bin/python", venv / "bin" / "python"),
        (f"echo \"open('{marker}', 'w').write('ran')\" >> {site}/msgspec/__init__.py",
         site / "msgspec" / "__init__.py"),
    ]


def test_each_plant_changes_what_a_hook_decides(venv: Path, project: Path, tmp_path: Path) -> None:
    """Ground truth, on the installed wheel itself (each plant taken back after)."""
    forbidden = {"file_path": str(project / "src" / "player.gd"), "content": "x"}
    assert "Build role cannot write game code" in refusal(hook(venv, project, "Write", **forbidden))
    marker = tmp_path / "planted-line-ran"
    (interpreter, python), (line, msgspec_init) = plants(venv, marker)
    saved = msgspec_init.read_bytes()
    target = os.readlink(python)
    try:
        subprocess.run(["bash", "-c", interpreter], check=True)
        done = hook(venv, project, "Write", **forbidden)
        assert (done.returncode, done.stdout, refusal(done)) == (0, b"", "")  # what a runtime takes for an allow
    finally:
        python.unlink()
        python.symlink_to(target)
    try:
        subprocess.run(["bash", "-c", line], check=True)
        hook(venv, project, "Write", **forbidden)
        assert marker.read_text() == "ran"
    finally:
        msgspec_init.write_bytes(saved)
        shutil.rmtree(site_of(venv) / "msgspec" / "__pycache__", ignore_errors=True)


def test_each_plant_is_refused_while_a_role_is_active(venv: Path, project: Path, tmp_path: Path) -> None:
    site = site_of(venv)
    for command, changed in plants(venv, tmp_path / "marker"):
        before = (os.readlink(changed) if changed.is_symlink() else None, changed.read_bytes())
        reason = refusal(hook(venv, project, "Bash", command=command))
        assert reason.startswith(POLICY) and f"({changed.name})" in reason, (command, reason)
        assert (os.readlink(changed) if changed.is_symlink() else None, changed.read_bytes()) == before
    stdlib = subprocess.run([str(venv / "bin" / "python"), "-c", "import os; print(os.path.dirname(os.__file__))"],
                            capture_output=True, text=True, check=True).stdout.strip()
    real_python = os.path.realpath(venv / "bin" / "python")
    for path in (site / "evil.pth", site / "msgspec" / "_core.py", f"{stdlib}/os.py", real_python,
                 venv / "bin" / "python3"):
        assert refusal(hook(venv, project, "Write", file_path=str(path), content="x")).startswith(POLICY), path
    # what is only read, and the venv's other programs, pass
    assert refusal(hook(venv, project, "Bash", command=f"cat {site}/msgspec/__init__.py")) == ""
    assert refusal(hook(venv, project, "Write", file_path=str(venv / "bin" / "mytool"), content="x")) == ""
