"""Loading a project's Python policies: the modules named in `[policies] modules` of the config,
then `.hookgate/policies/*.py` in name order, each run afresh into a fresh registry.

Loading is a pure function of the files: every load re-reads and re-runs every policy from its
source (never a cached module or a stale bytecode file), so a changed policy takes effect on the
next load, and a removed one is gone. A policy that fails to load contributes no hook at all; its
error is returned, and the gates then fail closed (see __init__.py).
"""

from __future__ import annotations

import sys
import types
from functools import partial
from pathlib import Path
from typing import Callable, Sequence

from ..startup import complete_sys_path, msgspec_as_imported
from . import policy_files
from .hooks import PROCESS, Registry, loading_into

POLICY_DIR = "policies"
FILE_MODULE_PREFIX = "hookgate_policies."


def load(policy_dir: Path | None, modules: Sequence[str] = ()) -> tuple[Registry, list[str]]:
    """The registry the policies build (starting from the process's own hooks) and the errors of
    those that failed, one line each."""
    complete_sys_path()  # a policy may import whatever a plain start of Python could,
    msgspec_as_imported()  # and hand msgspec what a plain import of it understands
    registry = PROCESS.copy()
    errors: list[str] = []
    with loading_into(registry):
        for name in modules:
            _run(registry, f"module {name}", partial(_exec_module, name), errors)
        for path in policy_files(policy_dir):
            _run(registry, str(path), partial(_exec_file, path), errors)
    return registry, errors


def _run(registry: Registry, origin: str, execute: Callable[[], None], errors: list[str]) -> None:
    before = registry.hooks()
    registry.origin = origin
    try:
        execute()
    except (Exception, SystemExit) as exc:  # a policy's own failure, reported; never hookgate's
        registry.reset(before)
        errors.append(f"{origin}: {_describe(exc)}")
    finally:
        registry.origin = ""


def _exec_file(path: Path) -> None:
    name = FILE_MODULE_PREFIX + path.stem
    module = types.ModuleType(name)
    module.__file__ = str(path)
    code = compile(path.read_bytes(), str(path), "exec")
    _exec(module, lambda: exec(code, module.__dict__))


def _exec_module(name: str) -> None:
    import importlib.util

    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError(f"no module named {name!r} (is it installed, or on PYTHONPATH?)")
    module = importlib.util.module_from_spec(spec)
    get_source = getattr(spec.loader, "get_source", None)
    source = get_source(name) if get_source else None
    if source is None:  # no source to read (a compiled module): the loader's own way
        _exec(module, lambda: spec.loader.exec_module(module))  # type: ignore[union-attr]
        return
    code = compile(source, spec.origin or name, "exec")
    _exec(module, lambda: exec(code, module.__dict__))


def _exec(module: types.ModuleType, run: Callable[[], None]) -> None:
    """Run a policy's code as `module`, registered in sys.modules under its name (its classes and
    dataclasses need that), and forgotten again when it fails."""
    sys.modules[module.__name__] = module
    try:
        run()
    except BaseException:
        sys.modules.pop(module.__name__, None)
        raise


def _describe(exc: BaseException) -> str:
    if isinstance(exc, SyntaxError):
        return f"SyntaxError: {exc.msg} (line {exc.lineno})"
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
