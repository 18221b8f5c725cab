"""The exporter of the long-running cores: spans through the OpenTelemetry SDK to an OTLP/HTTP
endpoint, behind a bounded queue a decision never waits on."""

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
FLUSH_EVERY = 0.5  # seconds a span may wait for its batch
COUNTS_EVERY = 60.0
PAUSE_FIRST, PAUSE_MAX = 1.0, 30.0  # seconds a down endpoint is left alone after a failed export  # seconds between otel_export records while the counts change


class BoundedProcessor(SpanProcessor):
    """Ends of spans go into a queue of fixed size (full: dropped, counted); one thread exports."""

    def __init__(self, exporter: Any, size: int) -> None:
        self.exporter = exporter
        self.queue: queue.Queue[ReadableSpan] = queue.Queue(maxsize=max(1, size))
        self.exported = self.failed = self.dropped = 0
        # after a failed export the endpoint is left alone for a while (doubling up to PAUSE_MAX)
        self._paused_until = 0.0
        self._backoff = PAUSE_FIRST
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="hookgate-otel", daemon=True)
        self._thread.start()

    def on_end(self, span: ReadableSpan) -> None:
        try:
            self.queue.put_nowait(span)
        except queue.Full:
            self.dropped += 1

    def _run(self) -> None:
        while not self._stop.is_set() or not self.queue.empty():
            batch = self._take()
            if batch:
                self._export(batch)

    def _take(self) -> list[ReadableSpan]:
        try:
            batch = [self.queue.get(timeout=FLUSH_EVERY)]
        except queue.Empty:
            return []
        while len(batch) < BATCH:
            try:
                batch.append(self.queue.get_nowait())
            except queue.Empty:
                break
        return batch

    def _export(self, batch: list[ReadableSpan]) -> None:
        if time.monotonic() < self._paused_until:  # the endpoint is down: count, do not encode and retry each
            self.failed += len(batch)
            return
        try:
            ok = self.exporter.export(batch) == SpanExportResult.SUCCESS
        except Exception:  # an exporter bug or a dead endpoint: counted, never raised into a decision
            ok = False
        if ok:
            self.exported += len(batch)
            self._backoff = PAUSE_FIRST
        else:
            self.failed += len(batch)
            self._paused_until = time.monotonic() + self._backoff
            self._backoff = min(self._backoff * 2, PAUSE_MAX)

    def shutdown(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self._thread.join(timeout)
        self.dropped += self.queue.qsize()  # what could not be sent before the core left
        try:
            self.exporter.shutdown()
        except Exception:
            pass

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        deadline = time.monotonic() + timeout_millis / 1000
        while not self.queue.empty() and time.monotonic() < deadline:
            time.sleep(0.02)
        return self.queue.empty()


class Exporter:
    def __init__(self, url: str, *, queue: int, timeout: float, metrics: Path, env: Mapping[str, str]) -> None:
        self.url = url
        self.metrics = metrics
        self.dropped_before = 0  # dropped before the span was made (a fork's full pipe)
        wait = float(env["OTEL_EXPORTER_OTLP_TIMEOUT"]) / 1000 if env.get("OTEL_EXPORTER_OTLP_TIMEOUT") else timeout
        self.processor = BoundedProcessor(OTLPSpanExporter(endpoint=url, timeout=wait), queue)
        resource = Resource.create({"service.name": env.get("OTEL_SERVICE_NAME") or "hookgate",
                                    "service.version": __version__})
        self.provider = TracerProvider(resource=resource, shutdown_on_exit=False)
        self.provider.add_span_processor(self.processor)
        self.tracer = self.provider.get_tracer("hookgate", __version__)
        self._counted: tuple[int, int, int] = (0, 0, 0)
        self._counted_at = time.monotonic()

    def listener(self, events: Any, decisions: Any, verdict: Any, seconds: float) -> None:
        """A hookcall.DECISION_LISTENERS entry: export a decision made in this process."""
        from .summary import summary

        self.submit(summary(events, decisions, verdict, seconds))

    def submit(self, fields: dict[str, Any]) -> None:
        """One decided call's span; never blocks (the queue drops when full)."""
        attributes = {f"hookgate.{key}": value for key, value in fields.items()
                      if key not in ("start_ns", "end_ns") and value is not None}
        attributes["session.id"] = fields.get("session_id", "")
        span = self.tracer.start_span("hookgate.decision", start_time=int(fields.get("start_ns") or time.time_ns()),
                                      attributes=attributes)
        span.end(end_time=int(fields.get("end_ns") or time.time_ns()))
        self.maybe_record()

    def counts(self) -> dict[str, Any]:
        p = self.processor
        return {"exported": p.exported, "failed": p.failed, "dropped": p.dropped + self.dropped_before,
                "queued": p.queue.qsize(), "endpoint": self.url}

    def maybe_record(self) -> None:
        if time.monotonic() - self._counted_at >= COUNTS_EVERY:
            self.record()

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
        self.processor.shutdown(timeout)
        self.record()
