"""Time spent waiting for another process is not a gate's time.

A gate's deadline bounds its own work. A gate that finds the session's state locked by fifteen
other hook processes has done none yet: had the wait counted, a logging gate under contention
timed out, failed open, and its change and its record were lost. So a wait for a file lock
(hookgate.store.locked) stops the clock that deadlines are measured on (hookgate.engine.deadline),
per thread, as only the thread that waits is held up. The wait itself still ends: every holder is
bounded by its own gate's deadline and lets go when it exits; the deadline's alarm ends a wait
longer than MAX_WAIT all the same, in case a holder was stopped.
"""

from __future__ import annotations

import _thread
import time
from contextlib import contextmanager
from typing import Iterator

MAX_WAIT = 30.0  # seconds; the runtimes give a hook call 120 (hookgate/lifecycle.toml)


class _Waits(_thread._local):
    since: float | None = None  # when this thread's running wait began; None: it is not waiting
    waited = 0.0  # the sum of its waits that ended


here = _Waits()  # this thread's (a thread-local)


def clock() -> float:
    """Monotonic seconds of this thread, less its waits (frozen while it waits)."""
    since = here.since
    return (time.monotonic() if since is None else since) - here.waited


def waiting() -> float:
    """How long this thread has been waiting, 0.0 when it is not."""
    since = here.since
    return 0.0 if since is None else time.monotonic() - since


@contextmanager
def not_counted() -> Iterator[None]:
    if here.since is not None:  # within a wait already
        yield
        return
    here.since = since = time.monotonic()
    try:
        yield
    finally:
        here.waited += time.monotonic() - since
        here.since = None
