"""What `pip install` of a wheel gives a user is what the repository proves: the same parity
report, in every format, with the shipped proof map naming a test for every enforced and
degraded cell; and its doctor names the runtime versions it finds."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from wheel_support import ROOT, installed_wheel

REPO_HOOKGATE = Path(sys.executable).with_name("hookgate")


@pytest.fixture(scope="module")
def wheel_hookgate(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return installed_wheel(tmp_path_factory.mktemp("wheel"))


def parity(hookgate: Path, fmt: str, cwd: Path) -> str:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(cwd)}  # nothing of the checkout's environment
    done = subprocess.run([str(hookgate), "parity", "--format", fmt], capture_output=True, text=True, cwd=cwd,
                          env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("fmt", ["md", "json", "html"])
def test_an_installed_wheel_gives_the_repositorys_parity_report(wheel_hookgate: Path, fmt: str,
                                                                tmp_path: Path) -> None:
    assert not wheel_hookgate.resolve().is_relative_to(ROOT)
    shipped = parity(wheel_hookgate, fmt, tmp_path)
    assert shipped == parity(REPO_HOOKGATE, fmt, ROOT)
    assert "no test" not in shipped


def test_the_installed_report_names_a_real_test_for_every_enforced_and_degraded_cell(
        wheel_hookgate: Path, tmp_path: Path) -> None:
    report = json.loads(parity(wheel_hookgate, "json", tmp_path))
    cells = [c for by_runtime in report["cells"].values() for c in by_runtime.values()]
    backed = [c for c in cells if c["status"] != "not enforceable"]
    assert backed and all(c["proof"] and c["proof"].startswith("parity-tests/real/") for c in backed)
    assert all(c["proof"] for c in cells)
    assert {rt["key"] for rt in report["runtimes"]} >= {"claude-2.1.332", "claude-2.1.290", "codex-0.171.0",
                                                        "codex-0.160.0", "opencode-1.18.33"}
    assert [rt["key"] for rt in report["unsupported"]] == ["opencode-2"]


def test_the_installed_doctor_names_each_runtime_version(wheel_hookgate: Path, tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for command, output in (("claude", "2.1.332 (Claude Code)"), ("codex", "codex-cli 0.999.0")):
        fake = bin_dir / command
        fake.write_text(f"#!/bin/sh\necho '{output}'\n")
        fake.chmod(0o755)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(tmp_path)}
    done = subprocess.run([str(wheel_hookgate), "doctor", "--project", str(tmp_path)], capture_output=True,
                          text=True, env=env, timeout=120)
    assert "claude 2.1.332" in done.stdout and "proven" in done.stdout, done.stdout
    assert "codex 0.999.0" in done.stdout and "newer than the version proven (0.171.0)" in done.stdout
    assert "these cells are unverified for you" in done.stdout
    assert "opencode is not on PATH" in done.stdout
