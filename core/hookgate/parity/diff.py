"""`hookgate parity --diff OLD NEW`: what changed between two capability tables (each a table key,
"claude-2.1.290", or a path to a table file): every capability and limit that differs, then every
cell of the matrix whose status follows it."""

from __future__ import annotations

from pathlib import Path

import msgspec

from .capabilities import CAPABILITIES, Capability, Runtime, table
from .matrix import cell
from .rows import all_rows


def load(name: str) -> Runtime:
    path = Path(name)
    if path.suffix == ".toml" and path.is_file():
        return msgspec.toml.decode(path.read_bytes(), type=Runtime)
    return table(name)


def _text(capability: Capability) -> str:
    return capability.level + (f" ({capability.note})" if capability.note else "")


def changes(old: Runtime, new: Runtime) -> list[str]:
    lines = []
    for event in sorted(set(old.events) | set(new.events)):
        for name in CAPABILITIES:
            before, after = old.capability(name, event), new.capability(name, event)
            if before != after:
                lines.append(f"  {event}.{name}: {_text(before)} -> {_text(after)}")
    for key in sorted(set(old.limits) | set(new.limits)):
        if old.limits.get(key) != new.limits.get(key):
            lines.append(f"  limit {key}: {old.limits.get(key, '(none)')} -> {new.limits.get(key, '(none)')}")
    if old.unsupported != new.unsupported:
        lines.append(f"  not supported yet: {old.unsupported or '(supported)'} -> {new.unsupported or '(supported)'}")
    return lines


def cell_changes(old: Runtime, new: Runtime) -> list[str]:
    lines = []
    for row in all_rows():
        before, after = cell(row, old), cell(row, new)
        if (before.status, before.notes) != (after.status, after.notes):
            why = "; ".join(after.notes) if after.notes else ""
            lines.append(f"  {row.id}: {before.status} -> {after.status}" + (f" ({why})" if why else ""))
    return lines


def render(old_name: str, new_name: str) -> str:
    old, new = load(old_name), load(new_name)
    head = f"capability tables: {old.label} -> {new.label}"
    capabilities, cells = changes(old, new), cell_changes(old, new)
    if not capabilities:
        return f"{head}\n  no capability differs\n"
    out = [head, "capabilities and limits:", *capabilities, "cells:", *(cells or ["  no cell changes status"])]
    return "\n".join(out) + "\n"
