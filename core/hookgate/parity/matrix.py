"""The parity matrix, computed: for each row x runtime, enforced / degraded (how) / not enforceable
(why), from the capability tables and the rows' needs. Never written by hand."""

from __future__ import annotations

from typing import Literal

import msgspec

from .capabilities import Runtime, runtimes, table, unsupported
from .proofs import claims, proof_for
from .rows import Row, all_rows

Status = Literal["enforced", "degraded", "not enforceable"]


class Cell(msgspec.Struct, frozen=True):
    row: str
    runtime: str
    status: Status
    notes: tuple[str, ...] = ()  # how it degrades, or why it cannot be enforced
    proof: str | None = None     # the test that shows it, on this runtime


class Matrix(msgspec.Struct, frozen=True):
    runtimes: tuple[Runtime, ...]
    rows: tuple[Row, ...]
    cells: dict[str, dict[str, Cell]]  # row id -> table key ("claude-2.1.332") -> cell
    unsupported: tuple[Runtime, ...] = ()  # version lines not supported yet: no cells, a reason

    def at(self, row: str, runtime: str) -> Cell:
        """A cell by table key, or by runtime name for its newest version."""
        return self.cells[row][table(runtime).key]


def cell(row: Row, runtime: Runtime) -> Cell:
    why: list[str] = []
    how: list[str] = []
    if not row.events:
        why.append("no runtime emits this event")
    else:
        firing = [(e, runtime.capability("fires", e)) for e in row.events]
        live = [(e, c) for e, c in firing if c.level != "none"]
        if not live:
            why.extend(f"{e} never fires: {c.note}" for e, c in firing)
        elif all(c.level == "degraded" for _, c in live):
            how.extend(f"{e}: {c.note}" for e, c in live)
    for need in row.needs:
        if need.capability == "fires" and need.event in row.events:
            continue  # said above
        capability = runtime.capability(need.capability, need.event)
        label = f"{need.capability.replace('_', ' ')} on {need.event}"
        if capability.level == "degraded":
            how.append(f"{label}: {capability.note}")
        elif capability.level == "none":
            (how if need.optional else why).append(f"no {label}: {capability.note}")
    status: Status = "not enforceable" if why else "degraded" if how else "enforced"
    return Cell(row=row.id, runtime=runtime.key, status=status, notes=tuple(dict.fromkeys(why or how)))


def compute() -> Matrix:
    tables = runtimes()
    rows = tuple(all_rows())
    found = claims()
    cells: dict[str, dict[str, Cell]] = {}
    for row in rows:
        cells[row.id] = {}
        for runtime in tables:
            computed = cell(row, runtime)
            # an enforced or degraded cell is only as good as a real run of that runtime showing it
            needs_real = computed.status != "not enforceable"
            proof = proof_for(row.id, runtime, needs_real, found)
            cells[row.id][runtime.key] = msgspec.structs.replace(computed, proof=proof)
    return Matrix(runtimes=tables, rows=rows, cells=cells, unsupported=unsupported())
