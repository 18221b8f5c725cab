"""The exporter of the long-running cores: spans through the OpenTelemetry SDK to an OTLP/HTTP
endpoint, behind a bounded queue a decision never waits on.

A decision only puts its summary (a small dict) in the queue; the export thread makes the spans
and sends them. Making a span costs more than the rest of the export path together (the SDK
checks every attribute), so the deciding thread never makes one; and while the endpoint is down
(after a failed export, for 1 s, doubling to 30 s) the thread makes none at all and counts the
summaries as failed."""

from __future__ import annotations

import logging
import queue
import threading
import time
from pathlib import Path
from typing import Any, Mapping

import msgspec
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SpanExportResult

from .. import __version__
from ..store import locked

# the SDK logs every failed export; hookgate counts them instead (the otel_export record), and a
# core's stderr is the runtime's hook log
logging.getLogger("opentelemetry").setLevel(logging.CRITICAL)

BATCH = 256
FLUSH_EVERY = 0.5  # seconds between the export thread's rounds (it is never woken per decision)
COUNTS_EVERY = 60.0  # seconds between otel_export records while the counts change
PAUSE_FIRST, PAUSE_MAX = 1.0, 30.0  # seconds a down endpoint is left alone after a failed export


class _Collect(SpanProcessor):
    """Hands each ended span to the export thread's batch (only that thread makes spans)."""

    def __init__(self) -> None:
        self.spans: list[ReadableSpan] = []

    def on_end(self, span: ReadableSpan) -> None:
        self.spans.append(span)


class Exporter:
    def __init__(self, url: str, *, queue: int, timeout: float, metrics: Path, env: Mapping[str, str]) -> None:
        self.url = url
        self.metrics = metrics
        wait = float(env["OTEL_EXPORTER_OTLP_TIMEOUT"]) / 1000 if env.get("OTEL_EXPORTER_OTLP_TIMEOUT") else timeout
        self.exporter = OTLPSpanExporter(endpoint=url, timeout=wait)
        resource = Resource.create({"service.name": env.get("OTEL_SERVICE_NAME") or "hookgate",
                                    "service.version": __version__})
        self.provider = TracerProvider(resource=resource, shutdown_on_exit=False)
        self._collect = _Collect()
        self.provider.add_span_processor(self._collect)
        self.tracer = self.provider.get_tracer("hookgate", __version__)
        self.queue = _queue(queue)
        self.exported = self.failed = self.dropped = 0
        self.dropped_before = 0  # dropped before they reached the queue (a warm fork's full pipe)
        self._paused_until = 0.0
        self._backoff = PAUSE_FIRST
        self._counted: tuple[int, int, int] = (0, 0, 0)
        self._counted_at = time.monotonic()
        self._busy = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="hookgate-otel", daemon=True)
        self._thread.start()

    # -- the deciding side: never waits ---------------------------------------------------------
    def listener(self, events: Any, decisions: Any, verdict: Any, seconds: float) -> None:
        """A hookcall.DECISION_LISTENERS entry: export a decision made in this process."""
        from .summary import summary

        self.submit(summary(events, decisions, verdict, seconds))

    def submit(self, fields: dict[str, Any]) -> None:
        try:
            self.queue.put_nowait(fields)
        except queue.Full:
            self.dropped += 1

    # -- the export thread ----------------------------------------------------------------------
    def _run(self) -> None:
        while True:
            stopping = self._stop.wait(FLUSH_EVERY)
            self._busy = True
            while batch := self._take():
                self._export(batch)
            self._busy = False
            if time.monotonic() - self._counted_at >= COUNTS_EVERY:
                self.record()
            if stopping:
                return

    def _take(self) -> list[dict[str, Any]]:
        batch: list[dict[str, Any]] = []
        while len(batch) < BATCH:
            try:
                batch.append(self.queue.get_nowait())
            except queue.Empty:
                break
        return batch

    def _export(self, batch: list[dict[str, Any]]) -> None:
        if time.monotonic() < self._paused_until:  # the endpoint is down: count, make and send nothing
            self.failed += len(batch)
            return
        try:
            for fields in batch:
                self._span(fields)
            spans, self._collect.spans = self._collect.spans, []
            ok = self.exporter.export(spans) == SpanExportResult.SUCCESS
        except Exception:  # an exporter bug or a dead endpoint: counted, never raised into a decision
            self._collect.spans = []
            ok = False
        if ok:
            self.exported += len(batch)
            self._backoff = PAUSE_FIRST
        else:
            self.failed += len(batch)
            self._paused_until = time.monotonic() + self._backoff
            self._backoff = min(self._backoff * 2, PAUSE_MAX)

    def _span(self, fields: dict[str, Any]) -> None:
        attributes = {f"hookgate.{key}": value for key, value in fields.items()
                      if key not in ("start_ns", "end_ns") and value is not None}
        attributes["session.id"] = fields.get("session_id", "")
        span = self.tracer.start_span("hookgate.decision", start_time=int(fields.get("start_ns") or time.time_ns()),
                                      attributes=attributes)
        span.end(end_time=int(fields.get("end_ns") or time.time_ns()))

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until everything queued has been exported or counted (benchmarks, tests)."""
        deadline = time.monotonic() + timeout
        while (not self.queue.empty() or self._busy) and time.monotonic() < deadline:
            time.sleep(0.005)
        return self.queue.empty() and not self._busy

    # -- counts and the end -----------------------------------------------------------------------
    def counts(self) -> dict[str, Any]:
        return {"exported": self.exported, "failed": self.failed, "dropped": self.dropped + self.dropped_before,
                "queued": self.queue.qsize(), "endpoint": self.url}

    def record(self) -> None:
        """Append the counts to the lifetime log, when they changed since the last record."""
        counts = self.counts()
        now = (counts["exported"], counts["failed"], counts["dropped"])
        self._counted_at = time.monotonic()
        if now == self._counted:
            return
        self._counted = now
        ts = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()) + f".{int(time.time() * 1000) % 1000:03d}Z"
        try:
            self.metrics.parent.mkdir(parents=True, exist_ok=True)
            record = {"ts": ts, "event": "otel_export", "session_id": "", "runtime": "", **counts}  # of no one session
            locked.append(self.metrics, msgspec.json.encode(record) + b"\n")
        except OSError:
            pass

    def shutdown(self, timeout: float = 5.0) -> None:
        """Send what is queued (within `timeout`), count what is left as dropped, record the counts."""
        self._stop.set()
        self._thread.join(timeout)
        self.dropped += self.queue.qsize()
        while self._take():
            pass
        try:
            self.exporter.shutdown()  # type: ignore[no-untyped-call]  # the SDK leaves it untyped
        except Exception:
            pass
        self.record()


def _queue(size: int) -> "queue.Queue[dict[str, Any]]":
    return queue.Queue(maxsize=max(1, size))
