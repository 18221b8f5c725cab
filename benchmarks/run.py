"""hookgate benchmarks: one command, a table on stdout, the figures as JSON.

    python benchmarks/run.py [--rounds N] [--json PATH]

Machines here are shared and noisy, so every figure is a ratio against a baseline measured in the
same run, with the commands interleaved round by round. hookgate is measured as users run it: a
regular (not editable) install in a venv of its own, built on first use under benchmarks/.venv.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH_VENV = ROOT / "benchmarks" / ".venv"


def bench_python() -> Path:
    """A venv with hookgate installed the way users install it; rebuilt when the source changed."""
    python = BENCH_VENV / "bin" / "python"
    stamp = BENCH_VENV / "source-stamp"
    sources = sorted(p for d in ("core", "adapters/claude", "adapters/codex") for p in (ROOT / d).rglob("*")
                     if p.is_file() and "__pycache__" not in p.parts)
    digest = str(max(p.stat().st_mtime_ns for p in sources)) + str(len(sources))
    if not python.exists() or not stamp.exists() or stamp.read_text() != digest:
        print("building the benchmark venv (a regular install of this checkout)...", file=sys.stderr)
        if not python.exists():
            subprocess.run([sys.executable, "-m", "venv", str(BENCH_VENV)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "--force-reinstall", "--no-deps", str(ROOT)],
                       check=True, stdout=subprocess.DEVNULL)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "msgspec", "watchfiles"], check=True,
                       stdout=subprocess.DEVNULL)
        stamp.write_text(digest)
    return python


def time_commands(commands: dict[str, tuple[list[str], bytes]], rounds: int, cwd: Path) -> dict[str, list[float]]:
    """Run every command once per round, interleaved, and keep each one's wall times."""
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(rounds):
        for name, (argv, stdin) in commands.items():
            start = time.perf_counter()
            done = subprocess.run(argv, input=stdin, cwd=cwd, capture_output=True)
            times[name].append(time.perf_counter() - start)
            if done.returncode not in (0, 2):
                raise SystemExit(f"{name} failed ({done.returncode}): {done.stderr.decode()[-500:]}")
    return times


def stdin_hook(python: Path, rounds: int) -> dict[str, object]:
    hookgate = python.with_name("hookgate")
    with tempfile.TemporaryDirectory(prefix="hookgate-bench-") as tmp:
        root = Path(tmp)
        (root / ".hookgate").mkdir()
        (root / ".hookgate" / "current_role").write_text("build\n")
        payload = json.dumps({
            "session_id": "bench", "cwd": str(root), "hook_event_name": "PreToolUse", "tool_name": "Write",
            "tool_input": {"file_path": str(root / "src" / "player.gd"), "content": "extends Node\n"},
        }).encode()
        commands = {
            "python -c pass": ([str(python), "-c", "pass"], b""),
            'python -c "import msgspec"': ([str(python), "-c", "import msgspec"], b""),
            "hookgate hook claude (cold)": ([str(hookgate), "hook", "claude"], payload),
        }
        times = time_commands(commands, rounds, root)
    medians = {name: statistics.median(values) for name, values in times.items()}
    bare, floor = medians["python -c pass"], medians['python -c "import msgspec"']
    return {
        "medians_ms": {k: round(v * 1000, 2) for k, v in medians.items()},
        "ratios": {
            "cold hook / bare python": round(medians["hookgate hook claude (cold)"] / bare, 2),
            "cold hook / msgspec-import floor": round(medians["hookgate hook claude (cold)"] / floor, 2),
        },
        "rounds": rounds,
    }


def opencode_hook(python: Path, calls: int) -> dict[str, object]:
    """tool.execute.before -> core -> verdict through the real plugin under Node, against one Python
    process per call (what GodotMaker's adapter does), interleaved in the same run."""
    hookgate = python.with_name("hookgate")
    with tempfile.TemporaryDirectory(prefix="hookgate-bench-oc-") as tmp:
        root = Path(tmp)
        (root / ".hookgate").mkdir()
        (root / ".hookgate" / "current_role").write_text("build\n")
        done = subprocess.run(["node", str(ROOT / "benchmarks" / "opencode_bench.mjs"), str(hookgate), str(root), str(calls)],
                              capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        raise SystemExit(f"opencode benchmark failed ({done.returncode}): {done.stderr[-1000:]}")
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    plugin, spawned = figures["plugin"], figures["process_per_call"]
    return {
        "ms": {
            "plugin -> core p50": round(plugin["p50_ms"], 3), "plugin -> core p99": round(plugin["p99_ms"], 3),
            "process per call p50": round(spawned["p50_ms"], 2), "process per call p99": round(spawned["p99_ms"], 2),
        },
        "ratios": {
            "process per call / plugin, p50": round(spawned["p50_ms"] / plugin["p50_ms"], 1),
            "process per call / plugin, p99": round(spawned["p99_ms"] / plugin["p99_ms"], 1),
        },
        "calls": plugin["calls"],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--json", type=Path, default=ROOT / "benchmarks" / "results" / "latest.json")
    parser.add_argument("--opencode-calls", type=int, default=300, help="interleaved calls per side in the OpenCode section")
    ns = parser.parse_args()
    python = bench_python()
    results = {"stdin_hook": stdin_hook(python, ns.rounds), "machine": {"cpus": os.cpu_count()}}
    print(f"\nstdin hook latency, median of {ns.rounds} interleaved rounds (absolute ms are for this machine only)")
    for name, ms in results["stdin_hook"]["medians_ms"].items():
        print(f"  {name:<34} {ms:8.1f} ms")
    for name, ratio in results["stdin_hook"]["ratios"].items():
        print(f"  {name:<34} {ratio:8.2f}x")
    results["opencode_hook"] = opencode = opencode_hook(python, ns.opencode_calls)
    print(f"\nOpenCode tool.execute.before -> verdict, {opencode['calls']} interleaved calls per side")
    for name, ms in opencode["ms"].items():
        print(f"  {name:<34} {ms:8.2f} ms")
    for name, ratio in opencode["ratios"].items():
        print(f"  {name:<34} {ratio:8.1f}x")
    ns.json.parent.mkdir(parents=True, exist_ok=True)
    ns.json.write_text(json.dumps(results, indent=2) + "\n")
    print(f"\nwritten: {ns.json.relative_to(ROOT) if ns.json.is_relative_to(ROOT) else ns.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
