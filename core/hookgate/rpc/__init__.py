"""The JSON-RPC core (`hookgate serve --stdio`): protocol (messages), transport (frames on
stdin/stdout), server (methods, concurrency), reload (the policy rebuilt when its files change)."""

from .server import PROTOCOL_VERSION, Server, capabilities

__all__ = ["PROTOCOL_VERSION", "Server", "capabilities"]
