"""The type checker holds the core: mypy, strict, over what pyproject.toml's [tool.mypy] names
(all of the core and every runtime plug), with warn_unused_ignores, so a `type: ignore` the types
no longer need fails too."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_mypy_is_clean_on_the_checked_modules():
    done = subprocess.run([sys.executable, "-m", "mypy", "--no-error-summary"], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_checked_modules_are_the_whole_core_and_every_plug():
    import tomllib

    from hookgate.runtimes import PLUGS

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    assert config["strict"] is True and config["warn_unused_ignores"] is True
    assert set(config["files"]) == {"core/hookgate", *(f"adapters/{p.name}/{p.package}" for p in PLUGS)}
    assert not config.get("exclude") and not config.get("overrides")
