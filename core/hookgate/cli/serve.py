"""`hookgate serve --stdio [--project DIR] [--no-reload]`: the JSON-RPC 2.0 core on stdin/stdout.

The OpenCode plugin starts it once and sends it every event; see hookgate/rpc/server.py for the
methods. stdout carries nothing but frames; everything else (warnings, reloads) goes to stderr.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from hookgate.otel.export import Exporter


def main(args: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="hookgate serve", description="the JSON-RPC 2.0 core (the OpenCode plugin runs it)")
    parser.add_argument("--stdio", action="store_true", required=True,
                        help="newline-delimited JSON-RPC frames on stdin/stdout (the only transport)")
    parser.add_argument("--project", type=Path, metavar="DIR", help="the project (default: found from the current directory)")
    parser.add_argument("--no-reload", action="store_true", help="do not watch the policy files")
    ns = parser.parse_args(args[1:])

    from hookgate.config.runtime_scripts import settings_files
    from hookgate.effect import feed
    from hookgate.hookcall import load_policy
    from hookgate.rpc.reload import PolicyHolder, WatchSet
    from hookgate.rpc.server import Server
    from hookgate.rpc.transport import StdioTransport

    transport = StdioTransport.claim()  # from here on, stdout is frames only
    feed.enable()  # this process reads the project on every call of a session: it follows a change feed

    def log(line: str) -> None:
        sys.stderr.write(f"hookgate serve[{os.getpid()}]: {line.removeprefix('hookgate: ')}\n")
        sys.stderr.flush()

    env = dict(os.environ)
    if ns.project:
        env["HOOKGATE_PROJECT_DIR"] = str(ns.project.resolve())
    holder = PolicyHolder(lambda: load_policy(None, env), log)
    project = holder.policy.project
    watch_set = None if ns.no_reload else WatchSet(project, Path.home(), lambda: settings_files(
        holder.policy.config.pipeline.protect.command_settings, project.root, env))
    exporter = _telemetry(str(holder.policy.project.root), env, log)
    try:
        return Server(transport, holder, watch_set=watch_set, log=log).serve()
    finally:
        if exporter is not None:
            exporter.shutdown()


def _telemetry(project: str, env: dict[str, str], log: Callable[[str], None]) -> "Exporter | None":
    """OpenTelemetry export of every decision, when configured (hookgate.otel)."""
    try:
        from hookgate.hookcall import DECISION_LISTENERS
        from hookgate.otel import exporter_for

        exporter: "Exporter | None" = exporter_for(project, env, log)
    except Exception as exc:  # export is never a reason not to serve
        log(f"OpenTelemetry export is off: {type(exc).__name__}: {exc}")
        return None
    if exporter is not None:
        DECISION_LISTENERS.append(exporter.listener)
        log(f"exporting decisions to {exporter.url}")
    return exporter
