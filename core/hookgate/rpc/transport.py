"""Newline-delimited frames over a pair of byte streams. The transport knows lines, not JSON-RPC.

`StdioTransport.claim()` takes the process's stdout for frames and points file descriptor 1 at
stderr, so nothing else can ever write into the stream: not a stray `print`, not a library, not a
child process a command hook starts (it inherits fd 1, which is now the log)."""

from __future__ import annotations

import os
import sys
import threading
from typing import BinaryIO

# a frame larger than this is refused (its bytes are skipped up to the next newline), so a runaway
# client cannot make the core hold an unbounded line in memory
MAX_FRAME = 64 * 1024 * 1024


class FrameTooLarge(Exception):
    pass


class StdioTransport:
    def __init__(self, reader: BinaryIO, writer: BinaryIO, max_frame: int = MAX_FRAME) -> None:
        self._reader = reader
        self._writer = writer
        self._max_frame = max_frame
        self._write_lock = threading.Lock()

    @classmethod
    def claim(cls) -> "StdioTransport":
        frames_out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
        sys.stdout.flush()
        os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
        sys.stdout = sys.stderr
        return cls(sys.stdin.buffer, frames_out)

    def read_frame(self) -> bytes | None:
        """The next non-blank line without its newline; None at end of input. Blocks.
        Raises FrameTooLarge after skipping the rest of an oversized line."""
        while True:
            line = self._reader.readline(self._max_frame + 1)
            if not line:
                return None
            if len(line) > self._max_frame and not line.endswith(b"\n"):
                self._skip_line()
                raise FrameTooLarge(f"frame larger than {self._max_frame} bytes")
            line = line.strip()
            if line:
                return line

    def _skip_line(self) -> None:
        while True:
            chunk = self._reader.readline(self._max_frame)
            if not chunk or chunk.endswith(b"\n"):
                return

    def write_frame(self, frame: bytes) -> None:
        """Write one whole frame; safe from any thread (frames never interleave)."""
        with self._write_lock:
            self._writer.write(frame)
            self._writer.flush()

    def close(self) -> None:
        with self._write_lock:
            try:
                self._writer.close()
            except OSError:
                pass
