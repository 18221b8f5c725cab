"""The policy in force: every gate hookgate ships or the project adds, with the config's
per-gate settings (enabled, fail_mode, timeout, priority, block_limit) applied."""

from __future__ import annotations

from typing import Iterable

import msgspec

from .config.schema import Config
from .engine.gate import Gate, Observer
from .engine.loop import Engine
from .errors import ConfigError


def builtin_gates() -> tuple[Gate, ...]:
    from .pipeline import GATES

    return GATES


def builtin_observers() -> tuple[Observer, ...]:
    from .pipeline import OBSERVERS

    return OBSERVERS


def build_engine(config: Config, extra: Iterable[Gate] = ()) -> Engine:
    gates = [*builtin_gates(), *extra]
    known = {gate.id for gate in gates}
    unknown = sorted(set(config.gates) - known)
    if unknown:
        raise ConfigError(f"unknown gate(s) {unknown} - at `$.gates`; known: {', '.join(sorted(known))}")
    return Engine(
        (configured(gate, config) for gate in gates if _enabled(gate, config)),
        builtin_observers(),
    )


def configured(gate: Gate, config: Config) -> Gate:
    settings = config.gates.get(gate.id)
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
