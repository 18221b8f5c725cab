"""`hookgate doctor`'s checks of the Python policies: policies that do not load, hooks on event
names no supported runtime emits, and chains slower than the runtime waits for hookgate."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from ..commandhooks.lint import hook_budgets
from ..commandhooks.spec import Problem
from ..config.schema import Config
from ..store.project import Project
from . import loaded
from .events import EVENT_MAP


def lint(config: Config, project: Project, budgets: Mapping[str, float] | None = None) -> list[Problem]:
    registry, errors = loaded(config, project)
    where = str(project.policy_dir)
    problems = [Problem(severity="error", file=where, where="", detail=f"does not load, so gating events are blocked: {e}")
                for e in errors]
    chains: dict[str, list[Any]] = {}
    for hook in registry.hooks():
        chains.setdefault(hook.event, []).append(hook)
        if not EVENT_MAP[hook.event]:
            problems.append(Problem(severity="warning", file=hook.origin or "the process", where=f"hook {hook.id!r}",
                                    detail=f"{hook.event} is emitted by no supported runtime, so this hook never fires"))
    limits = hook_budgets() if budgets is None else budgets
    for name, hooks in chains.items():
        total = sum(h.options.timeout_ms for h in hooks) / 1000
        budget = min((limits[e] for e in EVENT_MAP[name] if e in limits), default=None)
        if budget is not None and total + 1 > budget:
            problems.append(Problem(
                severity="warning", file=", ".join(sorted({h.origin or "the process" for h in hooks})), where=name,
                detail=f"suspicious timeouts: the {name} hooks may take {total:g}s together ({', '.join(h.id for h in hooks)}), "
                       f"but the runtime gives hookgate's whole call {budget:g}s (set options.timeout_ms lower)"))
    return problems


def doctor_check(setup: Any) -> list[Problem]:
    """The `hookgate doctor` check: `setup.project` is the project folder. An invalid config is the
    config check's finding, not this one's."""
    from ..config.load import load_config
    from ..errors import ConfigError

    project = Project(Path(setup.project))
    try:
        config = load_config(project.config_path)
    except ConfigError:
        return []
    return lint(config, project)
