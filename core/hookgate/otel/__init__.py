"""OpenTelemetry export of decisions, from the long-running cores only (the warm core and
`hookgate serve`): every decided call becomes one span `hookgate.decision` with the runtime,
session, agent, event, tool, verdict, deciding gate, the gates that ran, its duration and a hash
of the input (never the input itself).

Configured by the standard variables (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else
OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces; OTEL_EXPORTER_OTLP_HEADERS, OTEL_SDK_DISABLED, ...), else
by `[otel] endpoint` in .hookgate/config.toml. Needs the optional extra `hookgate[otel]`; without
it, or without an endpoint, nothing is exported and nothing is imported.

An endpoint that is down never slows or changes a decision: a decision only puts its span in a
bounded queue (full: the span is dropped and counted); one thread exports, each export bounded
by `[otel] timeout`. The counts (exported, failed, dropped) are appended to the project's lifetime
metrics.jsonl as an `otel_export` record when the core leaves, and at most once a minute while
they change.
"""

from __future__ import annotations

from typing import Any, Mapping

from .summary import summary  # noqa: F401 (re-exported)


def endpoint(config: Any, env: Mapping[str, str]) -> str | None:
    """The OTLP/HTTP traces URL to export to, or None (export off)."""
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    if env.get("OTEL_TRACES_EXPORTER", "").strip().lower() == "none":
        return None
    if env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        return env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"]
    base = env.get("OTEL_EXPORTER_OTLP_ENDPOINT") or getattr(getattr(config, "otel", None), "endpoint", "")
    return base.rstrip("/") + "/v1/traces" if base else None


def exporter_for(project_dir: str, env: Mapping[str, str], log: Any = None) -> Any:
    """The Exporter for this project's cores, or None when export is off or the extra is missing."""
    from ..config.load import open_project
    from ..config.schema import Config
    from ..errors import ConfigError
    from ..store.project import Project

    found = Project.find(project_dir, env)
    try:
        project, config = open_project(found.root)
    except ConfigError:
        project, config = Project.open(found.root), Config()
    url = endpoint(config, env)
    if url is None:
        return None
    try:
        from .export import Exporter
    except ImportError as exc:  # the extra is not installed
        if log:
            log(f"OpenTelemetry export is configured ({url}) but `hookgate[otel]` is not installed: {exc}")
        return None
    return Exporter(url, queue=config.otel.queue, timeout=config.otel.timeout,
                    metrics=project.state_dir / project.layout.lifetime_metrics, env=env)
