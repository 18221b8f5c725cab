"""Which test proves which cell. A test claims cells with a marker:

    @pytest.mark.proves("check_file_permissions@claude", "python_hooks.*@codex")

Each claim is "<row id>@<runtime>" and may use shell globs. The claims are read from the test
files' source (no import, no collection), so `hookgate parity` stays fast and needs no pytest.
Tests under parity-tests/real/ drive a real runtime binary; an enforced or degraded cell must be
claimed by one of those.
"""

from __future__ import annotations

import ast
from fnmatch import fnmatchcase
from pathlib import Path

import msgspec

REPO = Path(__file__).resolve().parents[3]
TEST_DIRS = ("parity-tests",)
REAL_DIR = "parity-tests/real/"


class Claim(msgspec.Struct, frozen=True):
    pattern: str  # "<row glob>@<runtime glob>"
    test: str     # pytest node id, relative to the repository

    @property
    def real(self) -> bool:
        return self.test.startswith(REAL_DIR)

    def covers(self, row: str, runtime: str) -> bool:
        row_glob, _, runtime_glob = self.pattern.partition("@")
        return fnmatchcase(row, row_glob) and fnmatchcase(runtime, runtime_glob or "*")


def claims(root: Path = REPO) -> list[Claim]:
    found: list[Claim] = []
    for folder in TEST_DIRS:
        for path in sorted((root / folder).rglob("test_*.py")):
            found += _claims_in(path, path.relative_to(root).as_posix())
    return found


def _claims_in(path: Path, relative: str) -> list[Claim]:
    tree = ast.parse(path.read_text(), filename=relative)
    found: list[Claim] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    found += _marked(item, f"{relative}::{node.name}::{item.name}", node.decorator_list)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.col_offset == 0:
            found += _marked(node, f"{relative}::{node.name}", [])
    return found


def _marked(function: ast.FunctionDef | ast.AsyncFunctionDef, node_id: str, inherited: list[ast.expr]) -> list[Claim]:
    found = []
    for decorator in [*inherited, *function.decorator_list]:
        if (isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Attribute)
                and decorator.func.attr == "proves"):
            for arg in decorator.args:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    found.append(Claim(pattern=arg.value, test=node_id))
    return found


def proof_for(row: str, runtime: str, needs_real: bool, found: list[Claim]) -> str | None:
    """The test that proves this cell: a real-runtime test where one is required, else any."""
    for claim in found:
        if claim.covers(row, runtime) and (claim.real or not needs_real):
            return claim.test
    return None
