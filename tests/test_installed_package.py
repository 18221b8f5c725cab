"""What `pip install` of a wheel gives a user is what the repository proves: the same parity
report, in every format, with the shipped proof map naming a test for every enforced and
degraded cell; and its doctor names the runtime versions it finds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from wheel_support import ROOT, built_wheel, checkout_copy, installed_wheel

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


def test_a_wheel_holds_no_module_the_sources_have_lost_since_an_earlier_build(tmp_path: Path) -> None:
    """setuptools builds a wheel from build/lib and never takes out of it what the sources lost
    (pypa/setuptools#1871): the build backend empties it first, or a module removed since the last
    `pip install .` of a checkout would still be installed, and still be importable."""
    source = checkout_copy(tmp_path / "source")
    removed = source / "core" / "hookgate" / "removed_since.py"
    removed.write_text("GONE = False\n")
    before = built_wheel(source, tmp_path / "before")
    with zipfile.ZipFile(before) as wheel:
        shipped_before = set(wheel.namelist())
    assert "hookgate/removed_since.py" in shipped_before  # the module is packaged while it is there
    removed.unlink()
    assert (source / "build" / "lib" / "hookgate" / "removed_since.py").exists()  # the earlier build left it

    after = built_wheel(source, tmp_path / "after")
    with zipfile.ZipFile(after) as wheel:
        shipped_after = set(wheel.namelist())
    assert "hookgate/removed_since.py" not in shipped_after
    # and nothing else changed: the same files, only the metadata's list of them differs
    assert {n for n in shipped_before - shipped_after if not n.endswith("RECORD")} == {"hookgate/removed_since.py"}
    assert {n for n in shipped_after - shipped_before if not n.endswith("RECORD")} == set()


def test_the_sdist_builds_the_wheel_the_checkout_builds(tmp_path: Path) -> None:
    """An sdist holds the build backend pyproject.toml names (MANIFEST.in): without it no wheel
    could be built from the sdist. The wheel pip builds from it ships what the checkout's ships."""
    source = checkout_copy(tmp_path / "source")
    sdists = tmp_path / "sdist"
    sdists.mkdir()
    subprocess.run([sys.executable, "-c", "import sys, setuptools_fresh; setuptools_fresh.build_sdist(sys.argv[1])",
                    str(sdists)], cwd=source, env={**os.environ, "PYTHONPATH": str(source / "build-backend")},
                   check=True, capture_output=True, timeout=300)
    (sdist,) = sdists.glob("hookgate-*.tar.gz")
    with tarfile.open(sdist) as archive:
        archive.extractall(tmp_path / "unpacked", filter="data")
    (unpacked,) = (tmp_path / "unpacked").iterdir()
    from_sdist, from_checkout = built_wheel(unpacked, tmp_path / "from-sdist"), built_wheel(source, tmp_path / "from-checkout")
    with zipfile.ZipFile(from_sdist) as a, zipfile.ZipFile(from_checkout) as b:
        assert sorted(a.namelist()) == sorted(b.namelist())
        # the files themselves (the metadata's file list and top-level names are setuptools' own)
        assert all(a.read(name) == b.read(name) for name in a.namelist() if ".dist-info/" not in name)
