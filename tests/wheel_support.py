"""hookgate as a user gets it: a wheel built from the checkout, installed in a fresh venv outside
it. The dependencies come offline, as wheels repacked from this environment's installed
distributions (their files and dist-info, unchanged, so RECORD's hashes still hold), given to pip
with --no-index --find-links."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import zipfile
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_NAME = re.compile(r"[A-Za-z0-9._-]+")


def repack(name: str, folder: Path) -> Path:
    """A wheel of the installed distribution `name`."""
    dist = distribution(name)
    tag = next(line.split(": ", 1)[1] for line in (dist.read_text("WHEEL") or "").splitlines()
               if line.startswith("Tag: "))
    wheel = folder / f"{dist.metadata['Name'].replace('-', '_')}-{dist.version}-{tag}.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as out:
        for file in dist.files or []:
            source = Path(str(dist.locate_file(file)))
            # scripts are recorded outside site-packages (../../bin/...): pip writes them anew
            if source.is_file() and "__pycache__" not in file.parts and ".." not in file.parts:
                out.write(source, file.as_posix())
    return wheel


def runtime_dependencies(name: str = "hookgate") -> list[str]:
    """`name`'s required distributions, transitively (extras left out), as installed here."""
    found: list[str] = []
    todo = [name]
    while todo:
        for requirement in distribution(todo.pop()).requires or []:
            if "extra ==" in requirement:
                continue
            match = _NAME.match(requirement)
            dependency = match.group(0) if match else ""
            try:
                distribution(dependency)
            except PackageNotFoundError:
                continue  # a marker excludes it here (typing_extensions on a newer Python, say)
            if dependency.lower() not in (f.lower() for f in found):
                found.append(dependency)
                todo.append(dependency)
    return found


def built_wheel(source: Path, folder: Path) -> Path:
    """The wheel pip builds from the source tree `source` (as `pip install .` there does), in a new `folder`."""
    folder.mkdir()
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(folder), str(source)],
                   check=True, capture_output=True, timeout=300)
    (wheel,) = folder.glob("hookgate-*.whl")
    return wheel


def checkout_copy(destination: Path) -> Path:
    """The checkout's sources as a clone of it with its uncommitted changes would hold them (no
    build output, venvs or packages: what git ignores stays behind)."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            check=True, capture_output=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():  # a file deleted but not yet staged is still listed
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination / name)
    return destination


def installed_wheel(tmp: Path) -> Path:
    """A fresh venv outside the checkout with the checkout's wheel and its dependencies; returns
    its `hookgate`."""
    wheels = tmp / "wheels"
    built_wheel(ROOT, wheels)
    for dependency in runtime_dependencies():
        repack(dependency, wheels)
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "-q",
                    "--no-index", "--find-links", str(wheels), "hookgate"], check=True, capture_output=True,
                   timeout=300)
    return venv / "bin" / "hookgate"
