"""JSON-RPC 2.0 message parsing: every malformed input becomes the standard error, never an exception;
and the core's one-pass reader of evaluate requests reads as the general reader does."""

import json
from pathlib import Path

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hookgate.errors import PayloadError
from hookgate.model.codec import event_from_builtins
from hookgate.model.events import KNOWN_EVENTS
from hookgate.model.verdicts import Block
from hookgate.rpc import protocol, server
from hookgate.rpc.protocol import Invalid, Request


def parse_one(frame: bytes):
    messages, batch = protocol.parse(frame)
    assert not batch and len(messages) == 1
    return messages[0]


def test_a_request_and_a_notification():
    request = parse_one(b'{"jsonrpc":"2.0","id":7,"method":"evaluate","params":{"event":{}}}')
    assert request == Request(method="evaluate", params={"event": {}}, id=7)
    assert not request.is_notification
    note = parse_one(b'{"jsonrpc":"2.0","method":"ping"}')
    assert note.is_notification


@pytest.mark.parametrize("frame, code, message_part", [
    (b"{not json", protocol.PARSE_ERROR, "parse error"),
    (b'"just a string"', protocol.INVALID_REQUEST, "expected an object, got a string"),
    (b"[]", protocol.INVALID_REQUEST, "empty batch"),
    (b'{"id":1,"method":"x"}', protocol.INVALID_REQUEST, "`jsonrpc` must be"),
    (b'{"jsonrpc":"1.0","id":1,"method":"x"}', protocol.INVALID_REQUEST, "`jsonrpc` must be"),
    (b'{"jsonrpc":"2.0","id":1}', protocol.INVALID_REQUEST, "`method` must be"),
    (b'{"jsonrpc":"2.0","id":1,"method":""}', protocol.INVALID_REQUEST, "`method` must be"),
    (b'{"jsonrpc":"2.0","id":1,"method":"x","params":3}', protocol.INVALID_REQUEST, "`params` must be"),
    (b'{"jsonrpc":"2.0","id":{"a":1},"method":"x"}', protocol.INVALID_REQUEST, "`id` must be"),
    (b'{"jsonrpc":"2.0","id":true,"method":"x"}', protocol.INVALID_REQUEST, "`id` must be"),
])
def test_invalid_frames_carry_the_standard_code(frame, code, message_part):
    invalid = parse_one(frame)
    assert isinstance(invalid, Invalid)
    assert invalid.error.code == code
    assert message_part in invalid.error.message


def test_an_invalid_request_keeps_its_id_when_it_can_be_read():
    invalid = parse_one(b'{"jsonrpc":"2.0","id":"abc","method":5}')
    assert isinstance(invalid, Invalid) and invalid.id == "abc"
    unreadable_id = parse_one(b'{"jsonrpc":"2.0","id":[1],"method":"x"}')
    assert unreadable_id.id is None


def test_a_batch_holds_good_and_bad_members():
    messages, batch = protocol.parse(b'[{"jsonrpc":"2.0","id":1,"method":"a"}, 5, {"jsonrpc":"2.0","method":"n"}]')
    assert batch
    assert [type(m).__name__ for m in messages] == ["Request", "Invalid", "Request"]


def test_frames_are_one_line_and_verdicts_keep_their_tag():
    frame = protocol.encode(protocol.result(3, Block(reason="no\nway")))
    assert frame.endswith(b"\n") and frame.count(b"\n") == 1
    decoded = msgspec.json.decode(frame)
    assert decoded["result"] == {"kind": "block", "reason": "no\nway", "message": None, "context": None}
    error = msgspec.json.decode(protocol.encode(protocol.error(None, protocol.RpcError(-32600, "bad", {"x": 1}))))
    assert error == {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "bad", "data": {"x": 1}}}


# --- the one-pass reader of evaluate requests (rpc/server.py) against the general reader ------
PAYLOADS = Path(__file__).resolve().parents[1] / "parity-tests" / "payloads"
json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
                           max_leaves=8)
FIELDS = ["session_id", "cwd", "runtime", "agent_id", "agent_type", "identity", "tool_name", "tool_input", "tool_use_id",
          "tool_response", "prompt", "source", "reason", "stop_hook_active", "last_assistant_message", "trigger", "message"]


def general_reading(frame: bytes):
    """What the server read before the one-pass reader: the general parse, then the event's conversion."""
    (message,), batch = protocol.parse(frame)
    assert not batch and isinstance(message, Request) and message.method == "evaluate"
    return message.id, event_from_builtins(message.params["event"])


def assert_read_alike(frame: bytes) -> bool:
    """If the one-pass reader takes the frame, the general reader reads the same request and event
    from it (any other frame goes to the general reader itself). Whether it took it."""
    messages, _ = server.parse(frame)
    if not isinstance(messages[0], server.EvaluateRequest):
        return False
    message = messages[0]
    try:
        request_id, event = general_reading(frame)
    except PayloadError as exc:
        raise AssertionError(f"the one-pass reader took an event the general reader refuses: {exc}") from None
    assert (request_id, event) == (message.id, message.params.event)
    assert type(request_id) is type(message.id)
    return True


def test_every_captured_claude_payload_is_read_in_one_pass_as_the_general_reader_reads_it():
    taken = 0
    for file in sorted(PAYLOADS.glob("claude_*.hooks.jsonl")):
        for n, line in enumerate(file.read_text().splitlines()):
            event = json.loads(line)["payload"]
            for request_id in (n, f"call-{n}"):
                frame = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "evaluate", "params": {"event": event}})
                taken += assert_read_alike(frame.encode())
    assert taken > 50


@settings(max_examples=800, deadline=None)
@given(name=st.sampled_from([*KNOWN_EVENTS, "Unknown", "Bogus", ""]),
       fields=st.dictionaries(st.sampled_from(FIELDS), json_values | st.text(max_size=12), max_size=8),
       request_id=st.integers(-2**70, 2**70) | st.text(max_size=6) | st.none() | st.booleans() | st.floats(allow_nan=False) | st.just("absent"),
       jsonrpc=st.sampled_from(["2.0", "2.0", "1.0", None]), method=st.sampled_from(["evaluate", "evaluate", "ping", "Evaluate"]),
       extra=st.dictionaries(st.sampled_from(["x", "params2", "result"]), json_values, max_size=2))
def test_the_one_pass_reader_takes_nothing_the_general_reader_reads_otherwise(name, fields, request_id, jsonrpc, method, extra):
    message = {"jsonrpc": jsonrpc, "method": method, "params": {"event": {"hook_event_name": name, **fields}}, **extra}
    if request_id != "absent":
        message["id"] = request_id
    assert_read_alike(json.dumps(message).encode())
