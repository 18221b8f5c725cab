"""Which test proves which cell: generated data (proofs.json, beside this module) that ships with
the package, so an installed `hookgate parity` names the same tests as the repository's. The test
suite writes it (parity-tests/proofmap.py: the scenario tier's cells and the tests' `proves`
markers) and fails while it is stale, as it does for PARITY.md.

Each claim is "<row glob>@<runtime glob>"; the runtime glob matches a table's key
("claude-2.1.332") or its runtime's name ("claude": every version of it). Tests under
parity-tests/real/ drive a real runtime binary; an enforced or degraded cell must be claimed by
one of those.
"""

from __future__ import annotations

from fnmatch import fnmatchcase
from functools import cache
from pathlib import Path

import msgspec

from .capabilities import Runtime

PROOFS = Path(__file__).resolve().with_name("proofs.json")
REAL_DIR = "parity-tests/real/"


class Claim(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    pattern: str  # "<row glob>@<runtime glob>"
    test: str     # pytest node id, relative to the repository

    @property
    def real(self) -> bool:
        return self.test.startswith(REAL_DIR)

    def covers(self, row: str, table: Runtime) -> bool:
        row_glob, _, runtime_glob = self.pattern.partition("@")
        runtime_glob = runtime_glob or "*"
        return fnmatchcase(row, row_glob) and (fnmatchcase(table.key, runtime_glob)
                                               or fnmatchcase(table.runtime, runtime_glob))


@cache
def claims() -> tuple[Claim, ...]:
    return tuple(msgspec.json.decode(PROOFS.read_bytes(), type=list[Claim]))


def proof_for(row: str, table: Runtime, needs_real: bool, found: tuple[Claim, ...]) -> str | None:
    """The test that proves this cell: a real-runtime test where one is required, else any."""
    for claim in found:
        if claim.covers(row, table) and (claim.real or not needs_real):
            return claim.test
    return None
