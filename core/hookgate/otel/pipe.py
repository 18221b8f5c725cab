"""The warm core's forks decide; the core exports. A fork hands each decision's summary to the
core through a pipe, one line of at most PIPE_BUF bytes (written whole or not at all), without
waiting: a full pipe drops the summary and says so on the fork's answered note."""

from __future__ import annotations

import os
from typing import Any, Callable

import msgspec

LIMIT = 4096  # PIPE_BUF on Linux: a write this size or smaller is atomic
DROPPED_NOTE = b"d"


def fork_listener(fd: int, answered: int) -> Callable[..., None]:
    from .summary import summary

    def send(events: Any, decisions: Any, verdict: Any, seconds: float) -> None:
        fields = summary(events, decisions, verdict, seconds)
        line = msgspec.json.encode(fields) + b"\n"
        if len(line) > LIMIT:  # ids or gate lists no real call has: keep what fits
            fields.update(gates=[], session_id=fields["session_id"][:256], tool=fields["tool"][:256],
                          agent=fields["agent"][:256], agent_type=fields["agent_type"][:256],
                          tool_use_id=fields["tool_use_id"][:256])
            line = msgspec.json.encode(fields) + b"\n"
        try:
            if len(line) > LIMIT:
                raise BlockingIOError
            os.write(fd, line)
        except (BlockingIOError, OSError):
            os.write(answered, DROPPED_NOTE)

    return send


def read_lines(fd: int, buffer: bytearray) -> list[dict[str, Any]]:
    """Every whole line waiting on the pipe."""
    while True:
        try:
            chunk = os.read(fd, 1 << 16)
        except BlockingIOError:
            break
        if not chunk:
            break
        buffer += chunk
    out = []
    *lines, rest = bytes(buffer).split(b"\n")
    buffer[:] = rest
    for line in lines:
        try:
            out.append(msgspec.json.decode(line))
        except msgspec.DecodeError:
            continue
    return out
