"""The import structure holds: no module imports one of a higher layer, no import cycle, and the
core never imports a runtime plug (it names them in hookgate.runtimes, by string, and imports
their faces on first use).

A small AST scan over hookgate and the plugs: every `import` and `from ... import`, at the top of
a module or inside a function (a lazy import is still a dependency), with the layer order below
as the data. An import inside `if TYPE_CHECKING:` counts for the layers (a type is a dependency
too) but not for cycles (it never runs).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from hookgate.runtimes import PLUGS

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {"hookgate": ROOT / "core" / "hookgate",
            **{plug.package: ROOT / "adapters" / plug.name / plug.package for plug in PLUGS}}

# Lowest first. A unit is a subpackage or top-level module of hookgate ("__init__" is hookgate's
# own __init__.py: the version and the lazily imported public API), or a runtime plug. A unit
# may import units of its own layer or below.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("__init__", "runtimes", "errors", "private", "waits", "startup", "digest", "environ"),  # import-free: the hook path's first modules
    ("store",),                                # the .hookgate/ files, locked appends
    ("model", "paths", "shellwords", "formats", "lifecycle", "recording"),  # canonical events and verdicts; what hookgate reads; what a session log keeps of them
    ("config",),                               # the checked config
    ("engine",),                               # gates, the call loop, deadlines
    ("pipeline", "commandhooks", "python_hooks", "effect"),  # the gate packs
    ("engine_builder",),                       # the gate packs' gates, configured, in one engine
    ("hookcall", "parity", "checks", "explain", "otel"),  # one decision at the edge; the parity report; doctor's checks; why; export
    ("stdin", "rpc", "installers", "replay"),  # a stdin call in-process; the JSON-RPC core; what plugins share; re-deciding
    ("warm", "client"),                        # the warm core; the hook command, its client
    ("demo",),                                 # the demo's acts, and what the plugs' demo faces share
    tuple(plug.package for plug in PLUGS),     # the runtime plugs
    ("cli", "__main__"),                       # commands
)
RANK = {unit: rank for rank, units in enumerate(LAYERS) for unit in units}


def _module_name(package: str, base: Path, path: Path) -> str:
    parts = [package, *path.relative_to(base).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking_lines(tree: ast.Module) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                lines.update(range(child.lineno, (child.end_lineno or child.lineno) + 1))
    return lines


def imports() -> list[tuple[str, str, bool]]:
    """(importer, imported module, only under TYPE_CHECKING) of every import of our packages."""
    found = []
    for package, base in PACKAGES.items():
        for path in sorted(base.rglob("*.py")):
            module = _module_name(package, base, path)
            here = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
            tree = ast.parse(path.read_text(), str(path))
            typing_only = _type_checking_lines(tree)
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    targets = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom):
                    base_parts = here[:len(here) - node.level + 1] if node.level else []
                    target = ".".join([*base_parts, *([node.module] if node.module else [])])
                    # `from . import x` imports the submodule x when there is one
                    targets = [f"{target}.{alias.name}" if _is_module(f"{target}.{alias.name}") else target
                               for alias in node.names]
                else:
                    continue
                for target in targets:
                    if target.split(".")[0] in PACKAGES:
                        found.append((module, target, node.lineno in typing_only))
    return found


def _is_module(name: str) -> bool:
    package, *rest = name.split(".")
    if package not in PACKAGES:
        return False
    path = PACKAGES[package].joinpath(*rest)
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def unit(module: str) -> str:
    package, *rest = module.split(".")
    return package if package != "hookgate" else (rest[0] if rest else "__init__")


def test_every_unit_has_a_layer():
    units = {unit(importer) for importer, _, _ in imports()} | {unit(target) for _, target, _ in imports()}
    assert units - set(RANK) == set(), "place new packages in LAYERS"


def test_no_import_runs_up_a_layer():
    upward = sorted(f"{importer} -> {target}" for importer, target, _ in imports()
                    if RANK[unit(target)] > RANK[unit(importer)])
    assert upward == []


def test_the_core_never_imports_a_runtime_plug():
    plugs = {plug.package for plug in PLUGS}
    assert sorted(f"{a} -> {b}" for a, b, _ in imports() if unit(a) not in plugs and unit(b) in plugs) == []


def test_no_import_cycles():
    graph: dict[str, set[str]] = {}
    for importer, target, typing_only in imports():
        if not typing_only and importer != target and not importer.startswith(target + "."):
            graph.setdefault(importer, set()).add(target)  # (a module's own package runs first anyway)
    cycles = _cycles(graph)
    assert cycles == [], "\n".join(" -> ".join(cycle) for cycle in cycles)


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each as one cycle's members."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in sorted(graph.get(node, ())):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


@pytest.mark.parametrize("layers, edges, expected", [
    ((("low",), ("high",)), [("hookgate.low.a", "hookgate.high.b")], ["hookgate.low.a -> hookgate.high.b"]),
    ((("low",), ("high",)), [("hookgate.high.b", "hookgate.low.a")], []),
])
def test_the_scan_catches_an_upward_import(layers, edges, expected):
    """The rule the layer test applies, on a made-up graph (the real one must be empty of these)."""
    rank = {u: r for r, units in enumerate(layers) for u in units}
    assert [f"{a} -> {b}" for a, b in edges if rank[unit(b)] > rank[unit(a)]] == expected


def test_the_cycle_finder_finds_cycles():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_the_config_names_the_checks_the_pipeline_implements():
    from hookgate.config.schema import REPORT_CHECK_NAMES, STAGE_CHECK_NAMES
    from hookgate.pipeline.report_checks import REPORT_CHECKS
    from hookgate.pipeline.stage_checks import STAGE_CHECKS

    assert set(STAGE_CHECKS) == set(STAGE_CHECK_NAMES) and set(REPORT_CHECKS) == set(REPORT_CHECK_NAMES)
