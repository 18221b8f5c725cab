"""A real OTLP/HTTP trace receiver on 127.0.0.1 for the tests: it decodes what it is sent with the
OpenTelemetry protobuf definitions (opentelemetry-proto), the way a collector does."""

from __future__ import annotations

import gzip
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (ExportTraceServiceRequest,
                                                                      ExportTraceServiceResponse)


def _value(any_value: Any) -> Any:
    kind = any_value.WhichOneof("value")
    if kind == "array_value":
        return [_value(v) for v in any_value.array_value.values]
    return getattr(any_value, kind) if kind else None


class Receiver:
    def __init__(self) -> None:
        self.spans: list[dict[str, Any]] = []
        self.resources: list[dict[str, Any]] = []
        self.requests = 0
        self.bodies: list[bytes] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                receiver.record(self.path, self.headers.get("Content-Type"), body)
                answer = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._lock = threading.Lock()
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def record(self, path: str, content_type: str | None, body: bytes) -> None:
        assert path == "/v1/traces" and content_type == "application/x-protobuf", (path, content_type)
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        with self._lock:
            self.requests += 1
            self.bodies.append(body)
            for resource_spans in request.resource_spans:
                resource = {a.key: _value(a.value) for a in resource_spans.resource.attributes}
                self.resources.append(resource)
                for scope in resource_spans.scope_spans:
                    for span in scope.spans:
                        self.spans.append({"name": span.name, "start": span.start_time_unix_nano,
                                           "end": span.end_time_unix_nano,
                                           **{a.key: _value(a.value) for a in span.attributes}})

    def wait(self, count: int, timeout: float = 30) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout
        while len(self.spans) < count and time.monotonic() < deadline:
            time.sleep(0.05)
        return list(self.spans)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def dead_endpoint() -> str:
    """A URL nobody listens on (a port just bound and released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"
