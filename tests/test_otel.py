"""OpenTelemetry export from the long-running cores, against a real OTLP/HTTP receiver on
127.0.0.1 (tests/otlp_receiver.py decodes the protobuf as a collector does): every decision of a
session arrives as a span with its fields and a hash of its input, never the input; a dead
endpoint changes no verdict and its losses are counted in the lifetime log."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from otlp_receiver import Receiver, dead_endpoint
from rpc_support import Core, pre_bash, pre_write, root  # noqa: F401 (a fixture)
from warm_support import Warm, warm  # noqa: F401 (a fixture)

SECRET_CONTENT = "the-content-itself-is-never-exported"


def session(project: Path) -> list[dict[str, Any]]:
    """A short session: a start, an allowed write, a refused one, a shell write, a stop."""
    start = {"hook_event_name": "SessionStart", "session_id": "otel-1", "cwd": str(project), "runtime": "opencode",
             "source": "startup"}
    allowed = pre_write(project, "docs/notes.md", session="otel-1", tool_use_id="call-ok")
    allowed["tool_input"]["content"] = SECRET_CONTENT
    refused = pre_write(project, "src/player.gd", session="otel-1", tool_use_id="call-refused")
    shell = pre_bash(project, session="otel-1", command="echo x > src/enemy.gd")
    stop = {"hook_event_name": "Stop", "session_id": "otel-1", "cwd": str(project), "runtime": "opencode"}
    return [start, allowed, refused, shell, stop]


def lifetime(project: Path) -> list[dict[str, Any]]:
    path = project / ".hookgate" / "metrics.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def serve_session(project: Path, endpoint: str | None) -> list[str]:
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint} if endpoint else {}
    core = Core(project, "--no-reload", env=env)
    try:
        core.initialize()
        verdicts = [core.evaluate(event)["kind"] for event in session(project)]
        core.request("shutdown")
    finally:
        assert core.close() == 0, "".join(core.stderr_lines)
    return verdicts


@pytest.fixture
def receiver():
    running = Receiver()
    yield running
    running.close()


def test_serve_exports_every_decision_of_a_session(root: Path, receiver: Receiver) -> None:  # noqa: F811
    verdicts = serve_session(root, receiver.url)
    spans = receiver.wait(len(verdicts))
    assert len(spans) == len(verdicts) == 5
    assert [s["hookgate.event"] for s in spans] == ["SessionStart", "PreToolUse", "PreToolUse", "PreToolUse", "Stop"]
    assert [s["hookgate.verdict"] for s in spans] == verdicts
    assert verdicts[2] == "block" and verdicts[3] == "block"
    refused = spans[2]
    assert refused["name"] == "hookgate.decision"
    assert refused["hookgate.gate"] == "check_file_permissions" and refused["hookgate.tool"] == "Write"
    assert refused["hookgate.tool_use_id"] == "call-refused" and refused["hookgate.runtime"] == "opencode"
    assert refused["hookgate.session_id"] == refused["session.id"] == "otel-1"
    assert refused["hookgate.agent"] == "main" and "check_file_permissions" in refused["hookgate.gates"]
    assert spans[3]["hookgate.gate"] == "check_shell_writes"
    assert all(len(s["hookgate.input_sha256"]) == 64 for s in spans)
    assert len({s["hookgate.input_sha256"] for s in spans}) == 5
    assert all(s["end"] >= s["start"] > 0 and s["hookgate.duration_ms"] >= 0 for s in spans)
    assert receiver.resources[0]["service.name"] == "hookgate"
    assert not any(SECRET_CONTENT.encode() in body for body in receiver.bodies), "the input itself was exported"
    counts = [r for r in lifetime(root) if r["event"] == "otel_export"]
    assert counts and counts[-1]["exported"] == 5 and counts[-1]["failed"] == counts[-1]["dropped"] == 0


def test_a_dead_endpoint_changes_no_verdict_and_its_losses_are_counted(root: Path, tmp_path_factory) -> None:  # noqa: F811
    other = tmp_path_factory.mktemp("no-otel")
    (other / ".hookgate").mkdir()
    (other / ".hookgate" / "current_role").write_text("build\n")
    without = serve_session(other, None)
    with_dead = serve_session(root, dead_endpoint())
    assert with_dead == without
    counts = [r for r in lifetime(root) if r["event"] == "otel_export"]
    assert counts, "the losses were not recorded"
    assert counts[-1]["exported"] == 0 and counts[-1]["failed"] + counts[-1]["dropped"] == 5
    assert not [r for r in lifetime(other) if r["event"] == "otel_export"]


def test_a_full_queue_drops_and_counts_instead_of_waiting(root: Path) -> None:  # noqa: F811
    (root / ".hookgate" / "config.toml").write_text(f'[otel]\nendpoint = "{dead_endpoint()}"\nqueue = 1\ntimeout = 2\n')
    core = Core(root, "--no-reload")
    try:
        core.initialize()
        started = time.monotonic()
        kinds = [core.evaluate(pre_write(root, f"docs/n{i}.md", session="q"))["kind"] for i in range(40)]
        took = time.monotonic() - started
        core.request("shutdown")
    finally:
        assert core.close() == 0
    assert set(kinds) == {"allow"}
    counts = [r for r in lifetime(root) if r["event"] == "otel_export"][-1]
    assert counts["exported"] == 0 and counts["failed"] + counts["dropped"] == 40
    assert counts["dropped"] > 0, counts  # a queue of one, behind a 2 s export: most were dropped, not waited for
    print(f"40 decisions behind a dead endpoint and a queue of 1: {took:.2f} s")


def test_the_warm_core_exports_the_decisions_its_forks_make(tmp_path: Path, warm: Warm, receiver: Receiver) -> None:  # noqa: F811
    (tmp_path / ".hookgate").mkdir()
    (tmp_path / ".hookgate" / "current_role").write_text("build\n")
    env = warm.env(OTEL_EXPORTER_OTLP_ENDPOINT=receiver.url)
    assert warm.warm("start", tmp_path, OTEL_EXPORTER_OTLP_ENDPOINT=receiver.url).returncode == 0
    calls = [
        {"hook_event_name": "PreToolUse", "session_id": "w1", "cwd": str(tmp_path), "tool_name": "Write",
         "tool_use_id": f"toolu_{n}", "tool_input": {"file_path": f"src/f{n}.gd", "content": SECRET_CONTENT}}
        for n in range(3)
    ] + [{"hook_event_name": "PreToolUse", "session_id": "w1", "cwd": str(tmp_path), "tool_name": "Read",
          "tool_use_id": "toolu_read", "tool_input": {"file_path": "README.md"}}]
    for call in calls:
        out, err, code = warm.hook("claude", call, tmp_path, env)
        assert code == 0, err
    assert warm.answered(tmp_path, len(calls)) >= len(calls)  # the core's forks decided them
    spans = receiver.wait(len(calls))
    ours = [s for s in spans if s["hookgate.session_id"] == "w1"]
    assert [s["hookgate.tool_use_id"] for s in ours] == [c["tool_use_id"] for c in calls]
    assert [s["hookgate.verdict"] for s in ours] == ["block", "block", "block", "allow"]
    assert {s["hookgate.runtime"] for s in ours} == {"claude"}
    assert not any(SECRET_CONTENT.encode() in body for body in receiver.bodies)
    assert warm.warm("stop", tmp_path).returncode == 0
    deadline = time.monotonic() + 15
    while not [r for r in lifetime(tmp_path) if r["event"] == "otel_export"] and time.monotonic() < deadline:
        time.sleep(0.1)
    counts = [r for r in lifetime(tmp_path) if r["event"] == "otel_export"]
    assert counts and counts[-1]["exported"] >= len(calls), counts


def test_no_endpoint_no_export_and_no_sdk_import() -> None:
    from hookgate.otel import endpoint

    class Config:
        class otel:
            endpoint = ""

    assert endpoint(Config, {}) is None
    assert endpoint(Config, {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://h:4318/"}) == "http://h:4318/v1/traces"
    assert endpoint(Config, {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://h/x"}) == "http://h/x"
    assert endpoint(Config, {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://h", "OTEL_SDK_DISABLED": "true"}) is None
    Config.otel.endpoint = "http://c:1"
    assert endpoint(Config, {}) == "http://c:1/v1/traces"
