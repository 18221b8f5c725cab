"""The type checker holds the core: mypy, strict, over the modules pyproject.toml's [tool.mypy]
names (the engine, the model, the format readers, the core's top-level modules), with
warn_unused_ignores, so a `type: ignore` the types no longer need fails too."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_mypy_is_clean_on_the_checked_modules():
    done = subprocess.run([sys.executable, "-m", "mypy", "--no-error-summary"], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_checked_modules_include_the_engine_and_the_model():
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    assert config["strict"] is True and config["warn_unused_ignores"] is True
    assert {"core/hookgate/engine", "core/hookgate/model", "core/hookgate/runtimes.py"} <= set(config["files"])
