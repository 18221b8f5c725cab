"""Registered Python hooks (seed 003), as gates of the one engine.

A policy file (`.hookgate/policies/*.py`, or a module named in `[policies] modules`) registers
hooks when it runs:

    from hookgate import register_hook, block

    register_hook("no-publish", "pre_tool_use", {"tool": "Bash", "command_pattern": r"npm publish"},
                  {"priority": 50}, lambda event: block("publishing is done by CI"))

One gate per event name that has hooks and fires somewhere (`python_hooks.pre_tool_use`, ...)
runs that event's chain (chain.py). Gating names fail closed and may block; the others fail open
and only observe or add context. These gates run before every other gate (priority 0), so a
rewritten tool input is what the other gates judge. A policy that does not load blocks every
gating event until it is fixed (`python_hooks.load_error`): its rules are unknown, so nothing
they might forbid is let through.
"""

from __future__ import annotations

import sys
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING

from ..engine.gate import Gate, Observer

if TYPE_CHECKING:
    from ..config.schema import Config
    from ..engine.context import Context
    from ..store.project import Project
    from .hooks import Hook, Registry

__all__ = [
    "EVENT_MAP", "GATING", "NEVER_FIRES", "Hook", "HookDenied", "HookError", "HookMatcher", "HookOptions",
    "block", "hook_count", "hook_denied", "modify", "register_hook", "retry", "skip", "unregister_hook",
    "verdict_json",
]

# name -> the module of this package that defines it, imported on first use: every hook call
# imports this package as a gate source, and most projects register no hook at all
_PUBLIC = {
    **dict.fromkeys(("EVENT_MAP", "GATING", "MODIFIES_TOOL_INPUT", "NEVER_FIRES"), "events"),
    **dict.fromkeys(("Hook", "HookError", "HookMatcher", "HookOptions", "Registry", "canonical_lower", "hook_count",
                     "register_hook", "unregister_hook"), "hooks"),
    **dict.fromkeys(("HookDenied", "block", "hook_denied", "modify", "retry", "skip", "verdict_json"), "results"),
    "RegisteredHooks": "chain",
}

PRIORITY = 0  # before every other gate: see the module doc
LOAD_ERROR_GATE = "python_hooks.load_error"


def __getattr__(name: str) -> object:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{module}"), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *_PUBLIC])


def gates(config: "Config", project: "Project | None") -> tuple[Gate, ...]:
    if not _any_hooks(config, project):
        return ()
    from .events import EVENT_MAP

    registry, errors = loaded(config, project)
    by_name: dict[str, list[Hook]] = {}
    for hook in registry.hooks():
        by_name.setdefault(hook.event, []).append(hook)
    found = [chain_gate(name, hooks) for name, hooks in by_name.items() if EVENT_MAP[name]]
    if errors:
        found.append(load_error_gate(errors))
    return tuple(found)


def _any_hooks(config: "Config", project: "Project | None") -> bool:
    """Whether anything could register a hook: a policy module or file to run, or hooks this
    process registered itself (only possible once it imported the registry: a warm core imports
    it without registering any). Without any, the loader, the registry and the chain are not
    even imported."""
    registry = sys.modules.get(f"{__name__}.hooks")
    return bool(config.policies.modules or (registry is not None and registry.PROCESS.hooks())
                or policy_files(project.policy_dir if project else None))


def observers(config: "Config", project: "Project | None") -> tuple[Observer, ...]:
    return ()


def preload() -> None:
    """The loader, the registry, the chain and the results (the warm core's: its scratch project
    has no policies)."""
    from . import chain, hooks, load, results  # noqa: F401


def loaded(config: "Config", project: "Project | None") -> "tuple[Registry, list[str]]":
    from .load import load

    return load(project.policy_dir if project else None, config.policies.modules)


def policy_files(policy_dir: Path | None) -> list[Path]:
    """The policy files of a project's policy folder, in the order they run."""
    if policy_dir is None:
        return []
    try:
        names = sorted(p for p in policy_dir.iterdir() if p.suffix == ".py" and not p.name.startswith("."))
    except (FileNotFoundError, NotADirectoryError):
        return []
    return [p for p in names if p.is_file()]


def chain_gate(name: str, hooks: "list[Hook]") -> Gate:
    from .chain import RegisteredHooks
    from .events import EVENT_MAP, GATING, MODIFIES_TOOL_INPUT

    events = EVENT_MAP[name]
    gating = name in GATING
    needs = [f"{'block' if gating else 'fires'}:{event}" for event in events]
    if name in MODIFIES_TOOL_INPUT:
        needs += [f"modify:{event}" for event in events]
    return Gate(
        id=f"python_hooks.{name}", events=events, check=RegisteredHooks(name, hooks), priority=PRIORITY,
        matcher=tool_matcher(events, hooks),
        # each handler has its own deadline; this one only bounds the chain as a whole
        timeout=sum(h.options.timeout_ms for h in hooks) / 1000 + 1.0,
        may_block=gating, fail_mode="closed" if gating else "open", needs=tuple(needs),
        description=f"registered hooks on {name}: {', '.join(h.id for h in hooks)}",
    )


def tool_matcher(events: tuple[str, ...], hooks: "list[Hook]") -> str:
    """The chain gate's matcher: the tools its hooks name, so that its fail mode reaches only the
    calls they would judge (a core that cannot answer blocks the Bash call a Bash hook guards, not
    a WebFetch). "" (every call) when any hook names no tool, or one without a canonical spelling
    (an MCP tool), or the event is not a tool event."""
    from ..model.events import KNOWN_EVENTS
    from ..model.tool_inputs import TOOL_INPUTS
    from .hooks import canonical_lower

    if not all(KNOWN_EVENTS[event].match_field == "tool_name" for event in events):
        return ""
    spellings = {name.lower(): name for name in TOOL_INPUTS}
    names = set()
    for hook in hooks:
        spelling = spellings.get(canonical_lower(hook.matcher.tool or ""))
        if spelling is None:
            return ""
        names.add(spelling)
    return "|".join(sorted(names))


def load_error_gate(errors: list[str]) -> Gate:
    from ..model.verdicts import Block
    from .events import EVENT_MAP, GATING

    reason = ("hookgate: a Python policy failed to load, so every gating event is blocked until it is fixed: "
              + "; ".join(errors))

    def refuse(event: object, ctx: "Context") -> Block:
        ctx.warn(reason)
        return Block(reason=reason)

    events = tuple(dict.fromkeys(e for name in sorted(GATING) for e in EVENT_MAP[name]))
    return Gate(id=LOAD_ERROR_GATE, events=events, check=refuse, priority=PRIORITY, may_block=True,
                fail_mode="closed", description="fails closed while a Python policy does not load")
