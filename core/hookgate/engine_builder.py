"""The policy in force: the gates of every source (the pipeline pack, the project's command hooks,
its registered Python hooks), with the config's per-gate settings applied (enabled, fail_mode,
timeout, priority, block_limit)."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

import msgspec

from .config.schema import Config
from .engine.gate import Gate, Observer
from .engine.loop import Engine
from .errors import ConfigError, GateError
from .runtimes import stop_block_caps

if TYPE_CHECKING:
    from types import ModuleType

    from .store.project import Project

# Each source is a module with `gates(config, project)` and `observers(config, project)` (and
# optionally `preload()`, below); a source adds its gates here and nowhere else.
GATE_SOURCES: tuple[str, ...] = (
    "hookgate.pipeline",
    "hookgate.commandhooks",
    "hookgate.python_hooks",
    "hookgate.effect",
)


def preload_sources() -> None:
    """Import what each source loads only when a call needs it (a check on its first matching
    event, the hooks.json reader, the policy registry): the warm core does, once, so that none of
    its forks pays for it. A source says what that is in its `preload()`."""
    for name in GATE_SOURCES:
        preload = getattr(import_module(name), "preload", None)
        if preload is not None:
            preload()


def build_engine(config: Config, project: "Project | None" = None) -> Engine:
    gates: list[Gate] = []
    observers: list[Observer] = []
    for source in _sources():
        gates.extend(source.gates(config, project))
        observers.extend(source.observers(config, project))
    # The sources hand out the same gate objects while nothing they read changed (the pipeline's
    # are constants, the effect check's are kept per config); the same objects under the same
    # config are the same engine, without configuring the gates and hashing them field by field.
    # (The entry holds the objects whose ids it is keyed on, so no id is reused while it lives.)
    quick = (id(config), *map(id, gates), None, *map(id, observers))
    known = _BY_IDENTITY.get(quick)
    if known is not None:
        return known[1]
    engine = _engine(config, gates, observers)
    if len(_BY_IDENTITY) >= MAX_ENGINES:
        _BY_IDENTITY.clear()
    _BY_IDENTITY[quick] = ((config, *gates, *observers), engine)
    return engine


def _engine(config: Config, gates: list[Gate], observers: list[Observer]) -> Engine:
    known = {gate.id for gate in gates}
    unknown = sorted(set(config.gates) - known)
    if unknown:
        raise ConfigError(f"unknown gate(s) {unknown} - at `$.gates`; known: {', '.join(sorted(known))}")
    in_force = tuple(configured(gate, config) for gate in gates if _enabled(gate, config))
    caps = stop_block_caps()
    # An engine is a pure function of its gates and observers (frozen structs, compared field by
    # field, their checks by identity), so the same ones give the same engine: a hook call of an
    # unchanged project does not sort and compile them again. A changed config, hooks.json or
    # policy makes different gates, and so a new engine.
    key: tuple[object, ...] | None = (in_force, tuple(observers), tuple(sorted(caps.items())))
    try:
        engine = _ENGINES.get(key) if key is not None else None
    except TypeError:  # a gate holding something unhashable: built afresh every time
        engine, key = None, None
    if engine is None:
        try:
            engine = Engine(in_force, observers, stop_block_caps=caps)
        except GateError as exc:  # a bound the config set past a runtime's own limit
            raise ConfigError(f"{exc} - at `$.gates.{exc.gate_id}`") from None
        if key is not None:
            if len(_ENGINES) >= MAX_ENGINES:
                _ENGINES.clear()
            _ENGINES[key] = engine
    return engine


def _sources() -> tuple[ModuleType, ...]:
    global _SOURCES
    if not _SOURCES:
        _SOURCES = tuple(import_module(name) for name in GATE_SOURCES)
    return _SOURCES


MAX_ENGINES = 32  # distinct policies kept in one process (the warm core's forks start with its own)
_ENGINES: dict[tuple[object, ...], Engine] = {}
_BY_IDENTITY: dict[tuple[object, ...], tuple[tuple[object, ...], Engine]] = {}
_SOURCES: tuple[ModuleType, ...] = ()


def configured(gate: Gate, config: Config) -> Gate:
    settings = config.gates.get(gate.id)
    mode = (settings.mode if settings is not None else None) or config.mode
    if mode != gate.mode:
        gate = msgspec.structs.replace(gate, mode=mode)
    if settings is None:
        return gate
    changes: dict[str, object] = {}
    for field in ("fail_mode", "timeout", "priority"):
        value = getattr(settings, field)
        if value is not None:
            changes[field] = value
    if settings.block_limit is not None:
        if gate.block_limit is None:
            raise ConfigError(f"gate {gate.id} has no block limit to change - at `$.gates.{gate.id}.block_limit`")
        changes["block_limit"] = msgspec.structs.replace(gate.block_limit, limit=settings.block_limit)
    try:
        return msgspec.structs.replace(gate, **changes) if changes else gate
    except Exception as exc:  # GateError: e.g. a closed fail mode on a gate that may not block
        raise ConfigError(f"{exc} - at `$.gates.{gate.id}`") from None


def _enabled(gate: Gate, config: Config) -> bool:
    settings = config.gates.get(gate.id)
    return settings is None or settings.enabled
