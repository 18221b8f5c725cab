"""`hookgate doctor [--project DIR]`: does every runtime really run hookgate, and if not, what
exactly fixes it.

The checks are a table (checks()): a name and the function that runs it, imported only when it
runs: the core's own (hookgate.checks), each runtime plug's (`hookgate_<runtime>.checks`, listed
in its CHECKS), and those of the project's command hooks and Python hooks. A check that crashes is
reported as a failed check; the others still run.
"""

from __future__ import annotations

import argparse
import os
from importlib import import_module
from pathlib import Path
from typing import Iterable

from ..checks import Finding, Setup, run as run_checks
from ..runtimes import PLUGS

__all__ = ["Finding", "Setup", "checks", "main", "report", "run"]


def checks() -> list[tuple[str, str]]:
    """(name, "module:function") of every check, in the order the report lists them."""
    table = [("python", "hookgate.checks:check_python"), ("bytecode", "hookgate.checks:check_bytecode"),
             ("node", "hookgate.checks:check_node"),
             ("config", "hookgate.checks:check_config"), ("nested projects", "hookgate.checks:check_nested_projects"),
             ("outside folders", "hookgate.checks:check_outside_folders"),
             ("monitor mode", "hookgate.checks:check_monitor_mode"),
             ("versions", "hookgate.checks:check_runtime_versions")]
    for plug in PLUGS:
        module = f"{plug.package}.checks"
        try:
            table += [(name, f"{module}:{function}") for name, function in getattr(import_module(module), "CHECKS")]
        except Exception:  # a plug whose checks do not load: run() reports why, under the runtime's name
            table.append((plug.name, f"{module}:CHECKS"))
    table += [("decided once", "hookgate.checks:check_decided_once"),
              ("hooks.json", "hookgate.commandhooks.lint:doctor_check"),
              ("python policies", "hookgate.python_hooks.lint:doctor_check")]
    return table


def run(setup: Setup, table: Iterable[tuple[str, str]] | None = None) -> list[tuple[str, Finding]]:
    return run_checks(setup, checks() if table is None else table)


def main(args: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="hookgate doctor", description="check hookgate's installation")
    parser.add_argument("--project", type=Path, default=None, help="project directory (default: found from cwd)")
    ns = parser.parse_args(args[1:])
    from hookgate.store.project import Project

    root = ns.project.resolve() if ns.project else Project.find(None).root
    findings = run(Setup(project=root, env=os.environ))
    print(f"hookgate doctor: {root}")
    print(report(findings))
    failed = sum(1 for _, f in findings if f.status == "fail")
    print(f"\n{failed} problem(s) found" if failed else "\nno problems found")
    return 1 if failed else 0


def report(findings: list[tuple[str, Finding]]) -> str:
    width = max((len(name) for name, _ in findings), default=0)
    lines = []
    for name, finding in findings:
        lines.append(f"  {finding.status.upper() if finding.status == 'fail' else finding.status:<4}  "
                     f"{name:<{width}}  {finding.message}")
        if finding.fix:
            label = "fix" if finding.status == "fail" else "run"
            lines.append(f"  {'':<4}  {'':<{width}}  {label}: {finding.fix}")
    return "\n".join(lines)
