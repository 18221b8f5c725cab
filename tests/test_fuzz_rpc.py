"""Hostile frames into `hookgate serve --stdio`, one long-running core: every line gets a JSON-RPC
answer or is a notification, stdout carries nothing but frames, the loop goes on, and a canonical
event the core cannot read gets its event's fail mode, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rpc_support import Core

# standard JSON-RPC error codes, and the verdict kinds of model/verdicts.py
ERROR_CODES = {-32700, -32600, -32601, -32602, -32603}
VERDICT_KINDS = {"allow", "context", "modify", "ask", "retry", "block"}

scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=40)
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                      max_leaves=15)
odd_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=120) | st.sampled_from(
    ["\x00", "\u202e", "x" * 100_000, "../../etc/passwd", "🦀" * 200])


@st.composite
def frames(draw) -> bytes:
    """One line for the core: garbage, broken JSON-RPC, or an evaluate of a broken event."""
    shape = draw(st.sampled_from(["bytes", "json", "truncated", "rpc", "event", "deep"]))
    if shape == "bytes":
        return draw(st.binary(max_size=300)).replace(b"\n", b" ")
    if shape == "json":
        return json.dumps(draw(values)).encode()
    if shape == "deep":
        depth = draw(st.integers(100, 100_000))
        return b'{"jsonrpc": "2.0", "id": 1, "method": "evaluate", "params": ' + b"[" * depth + b"]" * depth + b"}"
    if shape == "rpc":
        message = {"jsonrpc": draw(st.sampled_from(["2.0", "1.0", None, 2])), "method": draw(
            st.sampled_from(["evaluate", "initialize", "nope", ""]) | odd_text), "params": draw(values)}
        if draw(st.booleans()):
            message["id"] = draw(st.integers() | st.text(max_size=10) | st.none() | st.floats(allow_nan=False))
        return json.dumps(message).encode()
    event = {"hook_event_name": draw(st.sampled_from(["PreToolUse", "Stop", "SubagentStop", "Bogus", ""]) | odd_text),
             "session_id": draw(odd_text), "cwd": draw(odd_text), "tool_name": draw(odd_text | st.just("Write")),
             "tool_input": draw(values | st.just({"file_path": "src/a.gd", "content": ""}))}
    raw = json.dumps({"jsonrpc": "2.0", "id": "fuzz", "method": "evaluate", "params": {"event": event}}).encode()
    return raw[: draw(st.integers(1, len(raw)))] if shape == "truncated" else raw


@pytest.fixture(scope="module")
def core(tmp_path_factory: pytest.TempPathFactory):
    root: Path = tmp_path_factory.mktemp("fuzz-rpc")
    (root / ".hookgate").mkdir()
    (root / ".hookgate" / "current_role").write_text("build\n")
    core = Core(root, "--no-reload")
    core.initialize()
    yield core
    assert core.close() == 0
    assert not any("Traceback" in line for line in core.stderr_lines), "".join(core.stderr_lines)[-3000:]


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(frame=frames())
def test_a_hostile_frame_never_breaks_the_loop(core: Core, frame: bytes) -> None:
    before = len(core.raw_lines)
    core.send_raw(frame + b"\n")
    # the loop goes on: a well-formed request right after gets its own, correct answer
    # an id no hostile frame can carry (theirs are numbers or at most 10 characters), so the probe's
    # answer is never confused with the error a hostile frame got under the same id
    probe = core.send("evaluate", {"event": {"hook_event_name": "PreToolUse", "session_id": "probe", "tool_name": "Write",
                                             "tool_input": {"file_path": "src/player.gd", "content": ""}}},
                      request_id=f"probe-after-frame-{before}")
    answer = core.answer(probe)
    assert answer["result"]["kind"] == "block"  # the role rules still hold
    for line in core.raw_lines[before:]:  # nothing but frames on stdout
        for message in (lambda m: m if isinstance(m, list) else [m])(json.loads(line)):
            assert message.get("jsonrpc") == "2.0"
            if "error" in message:
                assert message["error"]["code"] in ERROR_CODES or message["error"]["code"] <= -32000
            elif "result" in message and isinstance(message["result"], dict) and "kind" in message["result"]:
                assert message["result"]["kind"] in VERDICT_KINDS
