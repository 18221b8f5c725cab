"""Running the matched handlers: all started together, each through the shell, each under its own
timeout. Whatever happens to a handler becomes its Outcome; nothing here raises for a handler's
sake, and no handler process outlives the call."""

from __future__ import annotations

import os
import signal
import threading
from typing import Any, Mapping, Sequence

import msgspec

from .spec import Handler

# Claude Code runs command hooks through bash; hooks written for it may rely on bash syntax
SHELL = "/bin/bash" if os.path.exists("/bin/bash") else None
_GRACE = 2.0  # seconds to collect a killed handler's pipes


class Outcome(msgspec.Struct, frozen=True, kw_only=True):
    handler: Handler
    exit_code: int | None = None  # None: it did not finish, see `error`
    stdout: bytes = b""
    stderr: bytes = b""
    error: str | None = None  # it could not start, or timed out


def run_all(handlers: Sequence[Handler], stdin: bytes, cwd: str, env: Mapping[str, str]) -> list[Outcome]:
    """Outcomes in the order of `handlers`."""
    # imported here, not at the top: every hook call loads this module, few of them run a handler
    import subprocess

    outcomes: list[Outcome | None] = [None] * len(handlers)
    started: list[tuple[int, Any]] = []
    try:
        for i, handler in enumerate(handlers):
            try:
                process = subprocess.Popen(
                    handler.command, shell=True, executable=SHELL, cwd=cwd, env=dict(env),
                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                    start_new_session=True,  # its own process group, so a timeout kills what it spawned too
                )
            except OSError as exc:
                outcomes[i] = Outcome(handler=handler, error=f"could not start ({exc.strerror or exc})")
                continue
            started.append((i, process))
        waiters = [
            threading.Thread(target=_collect, args=(process, handlers[i], stdin, outcomes, i), daemon=True)
            for i, process in started
        ]
        for waiter in waiters:
            waiter.start()
        for waiter in waiters:
            waiter.join()
    finally:  # also when the engine's own deadline interrupts the wait: no handler outlives the call
        for _, process in started:
            if process.poll() is None:
                _signal_group(process)
    return [o or Outcome(handler=h, error="interrupted") for o, h in zip(outcomes, handlers)]


def _collect(process: Any, handler: Handler, stdin: bytes, outcomes: list[Outcome | None], i: int) -> None:
    import subprocess

    try:
        out, err = process.communicate(stdin, timeout=handler.timeout)
        outcomes[i] = Outcome(handler=handler, exit_code=process.returncode, stdout=out, stderr=err)
    except subprocess.TimeoutExpired:
        _kill(process)
        outcomes[i] = Outcome(handler=handler, error=f"timed out after {handler.timeout:g}s")
    except Exception as exc:  # an outcome for every handler, whatever its pipes did
        _kill(process)
        outcomes[i] = Outcome(handler=handler, error=f"{type(exc).__name__}: {exc}")


def _signal_group(process: Any) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _kill(process: Any) -> None:
    _signal_group(process)
    try:
        process.communicate(timeout=_GRACE)  # reap it and drain its pipes
    except Exception:  # a grandchild that left the group still holds a pipe: give up on it
        for pipe in (process.stdin, process.stdout, process.stderr):
            if pipe:
                pipe.close()
