"""hookgate's few error types; each carries the thing at fault so callers can say what went wrong."""

from __future__ import annotations


class HookgateError(Exception):
    """Base of every error hookgate raises on purpose."""


class PayloadError(HookgateError):
    """A runtime sent something that is not a usable hook payload."""

    def __init__(self, message: str, raw: bytes = b"") -> None:
        super().__init__(message)
        self.raw = raw


class ConfigError(HookgateError):
    """A config file is invalid; `source` names the file and the message names the field."""

    def __init__(self, message: str, source: str = "") -> None:
        super().__init__(f"{source}: {message}" if source else message)
        self.source = source


class GateError(HookgateError):
    """A gate is declared wrongly (caught at registration, never at decision time)."""

    def __init__(self, message: str, gate_id: str) -> None:
        super().__init__(f"gate {gate_id!r}: {message}")
        self.gate_id = gate_id
