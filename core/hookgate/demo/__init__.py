"""`hookgate demo`: one scripted GodotMaker-style build session, played through every runtime's
adapter (each plug's `demo` face) on an embedded default project, then the parity report.

Nothing is mocked: each act is a real hook call the way that runtime makes it, decided by the
godot preset, and the demo checks every verdict against what the preset must answer."""

from __future__ import annotations

import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Iterable, TextIO

from ..runtimes import NAMES as RUNTIMES, plug
from ..store.project import Project
from .session import ACTS, FILES, ROLE, Outcome


def prepare(root: Path) -> None:
    for name, text in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    Project(root).set_role(ROLE)


def hookgate_command() -> list[str]:
    script = Path(sys.executable).with_name("hookgate")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "hookgate"]


def play(base: Path) -> dict[str, list[Outcome]]:
    """Each runtime plays the acts through its plug's demo face, in its own copy of the project, so
    their sessions cannot mix."""
    command = hookgate_command()
    results: dict[str, list[Outcome]] = {}
    for runtime in RUNTIMES:
        root = base / runtime
        root.mkdir(parents=True)
        prepare(root)
        results[runtime] = plug(runtime).module("demo").play(ACTS, root, command)
    return results


def stop_cores(roots: Iterable[Path]) -> None:
    """Stop the warm cores the demo's hook calls started: their projects are played out, and the
    core of a kept one would otherwise wait out its idle time (a deleted one's leaves by itself)."""
    from .. import client

    for root in roots:
        path = client.locate(str(root))
        if path is not None:
            client.stop(path)


def report(results: dict[str, list[Outcome]], base: Path, out: TextIO) -> int:
    """Print the session act by act; return how many verdicts differ from the expected ones."""
    width = max(len(act.title) for act in ACTS)
    out.write(f"{'':4}{'what the agent does':<{width}}  " + "".join(f"{r:<10}" for r in RUNTIMES) + "\n")
    wrong = 0
    for number, act in enumerate(ACTS):
        outcomes = [results[r][number] for r in RUNTIMES]
        cells = []
        for outcome in outcomes:
            ok = outcome.verdict in (act.expect, "n/a")
            wrong += not ok
            cells.append(f"{outcome.verdict.upper() if outcome.verdict == 'block' else outcome.verdict:<10}"
                         if ok else f"{outcome.verdict + '(!)':<10}")
        who = f"[{act.agent[1]}] " if act.agent else ""
        out.write(f"{number + 1:>2}. {(who + act.title):<{width}}  " + "".join(cells) + "\n")
        reason = next((o.reason for o in outcomes if o.verdict == "block" and o.reason), "")
        if reason:
            lines = [line.strip(" -") for line in reason.splitlines() if line.strip()]
            out.write(textwrap.indent(textwrap.fill("; ".join(lines[:3]).replace(":;", ":"), width=96), " " * 8) + "\n")
    out.write("\nmetrics records written per runtime: " + ", ".join(
        f"{r} {_records(base / r)}" for r in RUNTIMES) + "\n")
    return wrong


def _records(root: Path) -> int:
    sessions = root / ".hookgate" / "sessions"
    return sum(len(p.read_text().splitlines()) for p in sessions.glob("*/metrics.jsonl")) if sessions.exists() else 0


def parity_summary(out: TextIO) -> None:
    from ..parity.matrix import compute
    from ..parity.render import _summary

    matrix = compute()
    out.write("\nparity: which gate each runtime can enforce (full report: `hookgate parity --format html -o parity.html`)\n")
    for label, tally in _summary(matrix):
        out.write(f"  {label:<18} " + ", ".join(f"{count} {status}" for status, count in tally.items()) + "\n")
    pipeline = [row for row in matrix.rows if row.family == "pipeline"]
    newest = list({rt.runtime: rt for rt in reversed(matrix.runtimes)}.values())[::-1]  # tables come newest first
    out.write(f"\n  {'pipeline gate':<28}" + "".join(f"{rt.label:<18}" for rt in newest) + "\n")
    for row in pipeline:
        out.write(f"  {row.id:<28}" + "".join(f"{matrix.cells[row.id][rt.key].status:<18}" for rt in newest) + "\n")


def main(keep: Path | None, out: TextIO = sys.stdout) -> int:
    with tempfile.TemporaryDirectory(prefix="hookgate-demo-") as tmp:
        base = (keep or Path(tmp)).resolve()
        out.write(f"hookgate demo: a scripted GodotMaker-style build session (role {ROLE!r}), "
                  f"played through the adapters of {', '.join(plug(r).title for r in RUNTIMES)}\nprojects under {base}\n\n")
        try:
            wrong = report(play(base), base, out)
        finally:
            stop_cores(base / runtime for runtime in RUNTIMES)
        parity_summary(out)
        if wrong:
            out.write(f"\n{wrong} verdict(s) differ from what the godot preset must answer\n")
            return 1
    return 0
