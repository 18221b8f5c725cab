"""The rows of the parity matrix: what each gate family needs from a runtime.

A need is "<capability>:<Event>" (capabilities.CAPABILITIES); a trailing "?" marks a need the gate
can do without, in a lesser form (the cell is then degraded, not unenforceable). Every row also
needs at least one of its events to fire.
"""

from __future__ import annotations

import re

import msgspec

from .capabilities import CAPABILITIES

_NEED = re.compile(r"(?P<capability>[a-z_]+):(?P<event>[A-Za-z]+)(?P<optional>\??)")
# older spellings gate authors used
_ALIASES = {"event": "fires"}


class Need(msgspec.Struct, frozen=True):
    capability: str
    event: str
    optional: bool = False


class Row(msgspec.Struct, frozen=True):
    id: str
    family: str
    title: str
    events: tuple[str, ...]
    needs: tuple[Need, ...] = ()


def parse_need(text: str) -> Need:
    match = _NEED.fullmatch(text)
    if not match:
        raise ValueError(f"need {text!r} is not '<capability>:<Event>[?]'")
    capability = _ALIASES.get(match["capability"], match["capability"])
    if capability not in CAPABILITIES:
        raise ValueError(f"need {text!r}: unknown capability; known: {', '.join(CAPABILITIES)}")
    return Need(capability, match["event"], bool(match["optional"]))


def pipeline_rows() -> list[Row]:
    """The pipeline pack's gates, as the godot preset declares them."""
    from ..config.load import preset_config
    from ..pipeline import gates, observers

    config = preset_config()
    rows = [Row(id=g.id, family="pipeline", title=g.description or g.id, events=g.events,
                needs=tuple(parse_need(n) for n in g.needs)) for g in gates(config, None)]
    rows += [Row(id=o.id, family="pipeline", title=o.description or o.id, events=o.events)
             for o in observers(config, None)]
    return rows


def command_hook_rows() -> list[Row]:
    """One row per hooks.json event (seed 002): can a project's command hook on it act?"""
    from ..commandhooks import gate_id
    from ..commandhooks.spec import EVENTS
    from ..model.events import KNOWN_EVENTS

    return [Row(id=gate_id(event), family="command hooks", title=f"hooks.json {event} hooks"
                + (" (may block)" if blocks else ""), events=(event,) if event in KNOWN_EVENTS else (),
                needs=(Need("block", event),) if blocks else ())
            for event, blocks in EVENTS.items()]


def registered_hook_rows() -> list[Row]:
    """One row per register_hook event name (seed 003), plus the input rewrite of the tool events."""
    from ..python_hooks.events import EVENT_MAP, GATING, MODIFIES_TOOL_INPUT

    rows = []
    for name, events in EVENT_MAP.items():
        needs = tuple(Need("block", e) for e in events) if name in GATING else ()
        rows.append(Row(id=f"python_hooks.{name}", family="registered hooks",
                        title=f"register_hook('{name}')" + (" (gating)" if name in GATING else ""),
                        events=events, needs=needs))
        if name in MODIFIES_TOOL_INPUT:
            rows.append(Row(id=f"python_hooks.{name}.modified", family="registered hooks",
                            title=f"register_hook('{name}') returning modified input", events=events,
                            needs=tuple(Need("modify", e) for e in events)))
    return rows


def all_rows() -> list[Row]:
    return [*pipeline_rows(), *command_hook_rows(), *registered_hook_rows()]
