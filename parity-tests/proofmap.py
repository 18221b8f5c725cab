"""The proof map the package ships (hookgate/parity/proofs.json): which test shows which cell.

Two sources: the scenario tier, whose cells are the rows each runtime version's scenario moves
prove (scenarios.proved_rows), run by one parametrized test per runtime (real/test_scenarios.py);
and the other tests' `@pytest.mark.proves("<row>@<runtime>", ...)` markers, read from their source
(no import, no collection). `python parity-tests/proofmap.py` rewrites the file;
test_proof_map.py fails while it is stale.
"""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "parity-tests"))

from hookgate.parity.capabilities import proven  # noqa: E402
from hookgate.parity.proofs import PROOFS  # noqa: E402
from scenarios import proved_rows  # noqa: E402

SCENARIO_TIER = "parity-tests/real/test_scenarios.py"
RUNTIMES = ("claude", "codex", "gemini", "opencode")


def scenario_cells(runtime: str) -> list[tuple[str, str]]:
    """(version, row) for every proven version of `runtime` and every row its scenarios show:
    the parameters of test_scenarios.py's test for that runtime."""
    return [(table.version, row) for table in proven(runtime) for row in sorted(proved_rows(table.key))]


def scenario_test(runtime: str, version: str, row: str) -> str:
    return f"{SCENARIO_TIER}::test_{runtime}[{version}-{row}]"


def claims(root: Path = ROOT) -> list[dict[str, str]]:
    found = [{"pattern": f"{row}@{runtime}-{version}", "test": scenario_test(runtime, version, row)}
             for runtime in RUNTIMES for version, row in scenario_cells(runtime)]
    for path in sorted((root / "parity-tests").rglob("test_*.py")):
        found += _marked_in(path, path.relative_to(root).as_posix())
    return found


def _marked_in(path: Path, relative: str) -> list[dict[str, str]]:
    tree = ast.parse(path.read_text(), filename=relative)
    found: list[dict[str, str]] = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    found += _marked(item, f"{relative}::{node.name}::{item.name}", node.decorator_list)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found += _marked(node, f"{relative}::{node.name}", [])
    return found


def _marked(function: ast.FunctionDef | ast.AsyncFunctionDef, node_id: str,
            inherited: list[ast.expr]) -> list[dict[str, str]]:
    found = []
    for decorator in [*inherited, *function.decorator_list]:
        if (isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Attribute)
                and decorator.func.attr == "proves"):
            for arg in decorator.args:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    found.append({"pattern": arg.value, "test": node_id})
    return found


def rendered() -> str:
    return json.dumps(claims(), indent=1) + "\n"


if __name__ == "__main__":
    PROOFS.write_text(rendered())
    print(f"written: {PROOFS.relative_to(ROOT)}")
