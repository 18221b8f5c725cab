"""The cost of OpenTelemetry export to a decision, run by benchmarks/run.py with the benchmark
venv's interpreter. Prints one JSON object.

A decision as `hookgate serve` makes it (hookcall.decide, records appended, a Write the build role
refuses), taking turns round by round: with no exporter, exporting to a live OTLP/HTTP endpoint on
127.0.0.1, and exporting to a dead one (nothing listens). The figures are ratios of decisions per
second of time spent in decide() (its own export thread runs meanwhile, as in a core); between
rounds each exporter finishes sending (or counting) what its round queued, so no side's export
work lands in another side's round."""

from __future__ import annotations

import json
import socket
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from hookgate import hookcall
from hookgate.model.events import PreToolUse
from hookgate.otel.export import Exporter

ROUNDS = 9
ROUND_SECONDS = 0.5


class Sink(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def dead_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}/v1/traces"


def main() -> int:
    root = Path(tempfile.mkdtemp(prefix="hookgate-otel-bench-"))
    (root / ".hookgate").mkdir()
    (root / ".hookgate" / "current_role").write_text("build\n")
    policy = hookcall.load_policy(str(root), {"HOOKGATE_PROJECT_DIR": str(root)})
    event = PreToolUse(session_id="bench", cwd=str(root), tool_name="Write",
                       tool_input={"file_path": str(root / "src" / "a.gd"), "content": "x"})
    server = ThreadingHTTPServer(("127.0.0.1", 0), Sink)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    metrics = root / ".hookgate" / "otel-counts.jsonl"
    live = Exporter(f"http://127.0.0.1:{server.server_address[1]}/v1/traces", queue=2048, timeout=2.0,
                    metrics=metrics, env={})
    dead = Exporter(dead_url(), queue=2048, timeout=2.0, metrics=metrics, env={})
    sides = {"no export": None, "live endpoint": live, "dead endpoint": dead}
    rates: dict[str, list[float]] = {name: [] for name in sides}
    for _ in range(ROUNDS):
        for name, exporter in sides.items():
            hookcall.DECISION_LISTENERS[:] = [exporter.listener] if exporter else []
            calls, deciding, start = 0, 0.0, time.perf_counter()
            while time.perf_counter() - start < ROUND_SECONDS:
                began = time.perf_counter()
                hookcall.decide(policy, [event])
                deciding += time.perf_counter() - began
                calls += 1
            if exporter:  # between rounds: no side's export work lands in another side's round
                exporter.flush()
            rates[name].append(calls / deciding)
    hookcall.DECISION_LISTENERS[:] = []
    live.shutdown(2.0)
    dead.shutdown(2.0)
    print(json.dumps({
        "rounds": rates,  # each side's rate in every round: benchmarks/run.py takes medians and ratios
        "dead_endpoint_counts": dead.counts(), "live_endpoint_counts": live.counts(),
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
