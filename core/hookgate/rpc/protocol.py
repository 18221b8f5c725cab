"""JSON-RPC 2.0 messages without any I/O: a frame (one line of JSON) in, the requests it holds out;
a result or an error in, a frame out. Nothing here can raise on bad input: a frame that is not a
valid request becomes an `Invalid` carrying the standard error to answer with."""

from __future__ import annotations

from typing import Any, Union

import msgspec

# the standard codes (JSON-RPC 2.0 §5.1), plus the server errors this server uses (-32000..-32099)
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
SERVER_NOT_INITIALIZED = -32002  # the LSP's code for "initialize first"
SHUTTING_DOWN = -32001

Id = Union[int, str, None]

_encoder = msgspec.json.Encoder()
_NO_ID = object()  # a notification: no answer is sent


class RpcError(Exception):
    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def to_json(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


class Request(msgspec.Struct, frozen=True):
    method: str
    params: Any = None
    id: Any = _NO_ID

    @property
    def is_notification(self) -> bool:
        return self.id is _NO_ID


class Invalid(msgspec.Struct, frozen=True):
    """A message that cannot be served; answered with `error` (id null when it could not be read)."""

    error: RpcError
    id: Id = None


Message = Union[Request, Invalid]


def parse(frame: bytes) -> tuple[list[Message], bool]:
    """The messages of one frame, and whether it was a batch (whose answers go back as one array)."""
    try:
        data = msgspec.json.decode(frame)
    except (msgspec.DecodeError, RecursionError) as exc:  # RecursionError: absurdly deep nesting
        return [Invalid(RpcError(PARSE_ERROR, f"parse error: {exc}"))], False
    if isinstance(data, list):
        if not data:
            return [Invalid(RpcError(INVALID_REQUEST, "invalid request: empty batch"))], False
        return [_message(item) for item in data], True
    return [_message(data)], False


def _message(data: Any) -> Message:
    if not isinstance(data, dict):
        return Invalid(RpcError(INVALID_REQUEST, f"invalid request: expected an object, got {_type(data)}"))
    raw_id = data.get("id", _NO_ID)
    if raw_id is not _NO_ID and not _valid_id(raw_id):
        return Invalid(RpcError(INVALID_REQUEST, f"invalid request: `id` must be a string, number or null, got {_type(raw_id)}"))
    answer_id = None if raw_id is _NO_ID else raw_id
    if data.get("jsonrpc") != "2.0":
        return Invalid(RpcError(INVALID_REQUEST, 'invalid request: `jsonrpc` must be "2.0"'), answer_id)
    method = data.get("method")
    if not isinstance(method, str) or not method:
        return Invalid(RpcError(INVALID_REQUEST, "invalid request: `method` must be a non-empty string"), answer_id)
    params = data.get("params")
    if params is not None and not isinstance(params, (dict, list)):
        return Invalid(RpcError(INVALID_REQUEST, f"invalid request: `params` must be an object or array, got {_type(params)}"), answer_id)
    return Request(method=method, params=params, id=raw_id)


def _valid_id(value: Any) -> bool:
    return value is None or isinstance(value, str) or (isinstance(value, (int, float)) and not isinstance(value, bool))


def _type(value: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number")


def result(request_id: Id, value: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": value}


def error(request_id: Id, err: RpcError) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": err.to_json()}


def notification(method: str, params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "params": params}


def encode(message: Any) -> bytes:
    """One frame: the message as JSON on one line (JSON never needs a raw newline)."""
    return _encoder.encode(message) + b"\n"
