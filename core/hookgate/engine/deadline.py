"""Run a gate under a deadline without paying for a thread on every call.

On the main thread a SIGALRM timer interrupts the gate (two syscalls per call, so the in-process
engine keeps its speed); elsewhere the gate runs on a helper thread that is abandoned, not killed,
when it overruns.
"""

from __future__ import annotations

import signal
from typing import TYPE_CHECKING, Any, Callable, TypeVar

if TYPE_CHECKING:  # the C module has no stubs; its signal() is signal.signal without the enum wrapping
    _signal = signal
else:
    import _signal  # signal.signal wraps every handler in an enum lookup that costs more than the gate

T = TypeVar("T")


class GateTimeout(Exception):
    def __init__(self, seconds: float) -> None:
        super().__init__(f"timed out after {seconds:g}s")
        self.seconds = seconds


def call_with_deadline(fn: Callable[..., T], seconds: float | None, *args: Any) -> T:
    if not seconds or seconds <= 0:
        return fn(*args)
    if hasattr(signal, "setitimer"):
        return _with_alarm(fn, seconds, args)
    return _with_thread(fn, seconds, args)


def _with_alarm(fn: Callable[..., T], seconds: float, args: tuple[Any, ...]) -> T:
    armed = True

    def on_alarm(signum: int, frame: Any) -> None:
        if armed:  # a late alarm after the gate returned must not hit the caller
            raise GateTimeout(seconds)

    try:
        previous = _signal.signal(signal.SIGALRM, on_alarm)
    except ValueError:  # not the main thread, the only one signals reach
        return _with_thread(fn, seconds, args)
    try:
        signal.setitimer(signal.ITIMER_REAL, seconds)
        try:
            return fn(*args)
        finally:
            armed = False
            signal.setitimer(signal.ITIMER_REAL, 0)
    finally:
        _signal.signal(signal.SIGALRM, previous)


def _with_thread(fn: Callable[..., T], seconds: float, args: tuple[Any, ...]) -> T:
    import threading  # only off the main thread; a hook process never gets here

    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append((True, fn(*args)))
        except BaseException as exc:  # handed back to the caller below
            outcome.append((False, exc))

    worker = threading.Thread(target=run, name="hookgate-gate", daemon=True)
    worker.start()
    worker.join(seconds)
    if not outcome:
        raise GateTimeout(seconds)
    ok, value = outcome[0]
    if ok:
        result: T = value
        return result
    raise value
