"""Bytes <-> canonical events. The canonical wire form is Claude Code's payload plus `runtime`
and `identity`, so a Claude payload decodes as it is and the RPC server speaks the same form."""

from typing import Any

import msgspec

from ..errors import PayloadError
from .events import KNOWN_EVENTS, Event, UnknownEvent


class _Envelope(msgspec.Struct):
    hook_event_name: str = ""


_envelope = msgspec.json.Decoder(_Envelope)
# built on first use: a decoder costs msgspec a walk over its event type, and a hook process
# decodes one event
_decoders: dict[str, msgspec.json.Decoder[Event]] = {}
_as_dict = msgspec.json.Decoder(dict[str, Any])
_any = msgspec.json.Decoder()
_encoder = msgspec.json.Encoder()


def decode_event(raw: bytes) -> Event:
    """Decode one canonical (or Claude Code) JSON payload. Raises PayloadError, never anything else."""
    if not raw.strip():
        raise PayloadError("empty payload: expected one JSON object on stdin", raw)
    try:
        name = _envelope.decode(raw).hook_event_name
        decoder = _decoder(name)
        if decoder is not None:
            return decoder.decode(raw)
        fields = _as_dict.decode(raw)
    except (msgspec.DecodeError, RecursionError) as exc:  # RecursionError: absurdly deep nesting
        raise PayloadError(f"invalid payload: {_first_line(exc)}", raw) from None
    if not name:
        raise PayloadError("invalid payload: no hook_event_name", raw)
    return unknown_event(name, fields)


def decode_object(raw: bytes) -> dict[str, Any]:
    """A runtime's own payload (a dialect's input) as one JSON object. Raises PayloadError, never
    anything else: empty, not JSON, absurdly deep, or not an object."""
    if not raw.strip():
        raise PayloadError("empty payload: expected one JSON object on stdin", raw)
    try:
        payload = _any.decode(raw)
    except (msgspec.DecodeError, RecursionError) as exc:  # RecursionError: absurdly deep nesting
        raise PayloadError(f"invalid payload: {exc}", raw) from None
    if not isinstance(payload, dict):
        raise PayloadError(f"invalid payload: expected an object, got {type(payload).__name__}", raw)
    return payload


def _decoder(name: str) -> msgspec.json.Decoder[Event] | None:
    decoder = _decoders.get(name)
    if decoder is None and name in KNOWN_EVENTS:
        decoder = _decoders[name] = msgspec.json.Decoder(KNOWN_EVENTS[name])
    return decoder


def event_from_builtins(obj: Any) -> Event:
    """The same as decode_event, for an already parsed JSON value (RPC params)."""
    if not isinstance(obj, dict):
        raise PayloadError(f"invalid event: expected an object, got {type(obj).__name__}")
    name = obj.get("hook_event_name")
    cls = KNOWN_EVENTS.get(name) if isinstance(name, str) else None
    if cls is None:
        if not isinstance(name, str) or not name:
            raise PayloadError("invalid event: no hook_event_name")
        return unknown_event(name, obj)
    try:
        return msgspec.convert(obj, cls)
    except (msgspec.ValidationError, RecursionError) as exc:
        raise PayloadError(f"invalid {name} event: {_first_line(exc)}") from None


def unknown_event(name: str, fields: dict[str, Any]) -> UnknownEvent:
    def text(key: str) -> str:
        value = fields.get(key)
        return value if isinstance(value, str) else ""

    agent_id = text("agent_id") or None
    return UnknownEvent(
        event_name=name, fields=fields, session_id=text("session_id"), cwd=text("cwd"),
        agent_id=agent_id, agent_type=text("agent_type") or None,
    )


def encode_event(event: Event) -> bytes:
    return _encoder.encode(event)


def _first_line(exc: Exception) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
