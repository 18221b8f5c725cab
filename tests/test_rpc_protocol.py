"""JSON-RPC 2.0 message parsing: every malformed input becomes the standard error, never an exception."""

import msgspec
import pytest

from hookgate.model.verdicts import Block
from hookgate.rpc import protocol
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
