"""The runtimes a user has, against the versions the parity report proves: `hookgate doctor`,
`hookgate parity --installed`, and `hookgate install` refusing a version line hookgate cannot run
on (OpenCode 2, shown with a fake `opencode` on PATH: the real one is not on npm)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from hookgate.parity.capabilities import TABLES, proven
from hookgate.parity.installed import judge
from support import HOOKGATE


def fake_runtimes(folder: Path, **outputs: str) -> dict[str, str]:
    """An environment whose PATH has a `<command> --version` printing each given output first."""
    folder.mkdir(exist_ok=True)
    for command, output in outputs.items():
        script = folder / command
        script.write_text(f"#!/bin/sh\n[ \"$1\" = --version ] && echo '{output}' && exit 0\nexit 3\n")
        script.chmod(0o755)
    return {"PATH": f"{folder}:/usr/bin:/bin", "HOME": str(folder)}


def hookgate(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([HOOKGATE, *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=120)


def test_each_version_is_proven_newer_older_or_unsupported() -> None:
    newest, older = proven("claude")
    assert judge("claude", newest.version).standing == "proven"
    assert judge("claude", older.version).standing == "proven" and judge("claude", older.version).table == older
    newer = judge("claude", "2.1.400")
    assert newer.standing == "newer" and f"newer than the version proven ({newest.version})" in newer.message
    assert "these cells are unverified for you" in newer.message and "enforced" in newer.message
    between = judge("claude", "2.1.300")
    assert between.standing == "older" and older.version in between.message
    assert judge("codex", "0.99.0").standing == "older"
    assert judge("opencode", "1.18.33").standing == "proven"
    for v2 in ("2.0.0", "2.0.22", "2.3"):
        assert judge("opencode", v2).standing == "unsupported", v2
    assert judge("opencode", "1.19.0").standing == "newer"  # a newer 1.x is unverified, not refused


@pytest.mark.parametrize("output", ["2.0.22", "opencode 2.1.0"])
def test_install_refuses_opencode_2_and_writes_nothing(tmp_path: Path, output: str) -> None:
    project = tmp_path / "project"
    project.mkdir()
    env = fake_runtimes(tmp_path / "bin", opencode=output)
    done = hookgate("install", "opencode", "--project", str(project), env=env, cwd=project)
    assert done.returncode == 1, done.stdout
    assert "targets the OpenCode 1 plugin API" in done.stderr and "not supported yet" in done.stderr
    assert "Nothing was installed" in done.stderr and "updated" not in done.stdout
    assert list(project.iterdir()) == []


def test_install_goes_ahead_on_opencode_1_and_without_opencode(tmp_path: Path) -> None:
    for name, env in (("v1", fake_runtimes(tmp_path / "bin1", opencode="1.18.33")),
                      ("none", {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})):
        project = tmp_path / name
        project.mkdir()
        done = hookgate("install", "opencode", "--project", str(project), env=env, cwd=project)
        assert done.returncode == 0, done.stderr
        assert (project / ".opencode" / "plugin" / "hookgate.js").is_file()


def test_doctor_says_per_runtime_whether_its_version_is_proven(tmp_path: Path) -> None:
    env = fake_runtimes(tmp_path / "bin", claude="2.1.290 (Claude Code)", codex="codex-cli 0.180.1",
                        opencode="2.0.22")
    done = hookgate("doctor", "--project", str(tmp_path), env=env, cwd=tmp_path)
    lines = [line for line in done.stdout.splitlines() if "versions" in line]
    assert any(line.lstrip().startswith("ok") and "claude 2.1.290" in line and "proven" in line for line in lines)
    assert any(line.lstrip().startswith("info") and "codex 0.180.1" in line
               and "newer than the version proven (0.171.0): these cells are unverified for you" in line
               for line in lines), lines
    assert any(line.lstrip().startswith("FAIL") and "opencode 2.0.22" in line
               and "OpenCode 2 does not load V1 plugins" in line for line in lines), lines
    assert "npm install -g opencode-ai@1.18.33" in done.stdout
    assert done.returncode == 1


def test_parity_installed_lists_each_runtime(tmp_path: Path) -> None:
    env = fake_runtimes(tmp_path / "bin", claude="2.1.100 (Claude Code)", opencode="1.18.33")
    done = hookgate("parity", "--installed", env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    by_runtime = {line.split()[1]: line.split()[0] for line in done.stdout.splitlines()}
    assert by_runtime == {"claude": "older", "codex": "absent", "gemini": "absent", "opencode": "proven"}, done.stdout
    env = fake_runtimes(tmp_path / "bin", opencode="2.0.22")
    assert hookgate("parity", "--installed", env=env, cwd=tmp_path).returncode == 1


def test_parity_diff_prints_what_changed_between_two_tables(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    done = hookgate("parity", "--diff", "opencode-1.18.33", "claude-2.1.332", env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "capability tables: opencode 1.18.33 -> claude 2.1.332" in done.stdout
    assert "PreToolUse.subagent_identity: degraded" in done.stdout and "-> native" in done.stdout
    assert "check_file_permissions: degraded -> enforced" in done.stdout
    # a table file works as well as a key; the same table twice differs in nothing
    same = hookgate("parity", "--diff", "codex-0.171.0", str(TABLES / "codex-0.171.0.toml"), env=env, cwd=tmp_path)
    assert "no capability differs" in same.stdout
    unknown = hookgate("parity", "--diff", "claude-0.0.1", "claude", env=env, cwd=tmp_path)
    assert unknown.returncode == 2 and "no capability table 'claude-0.0.1'" in unknown.stderr
