"""Run gates under deadlines without paying for a thread, or even a timer, per gate.

On the main thread one SIGALRM timer serves a whole event (`EventScope`): it is armed once,
for the deadline of the first gate, and each later gate only notes when its own deadline is. When
the timer fires, the handler looks at the gate running now: past its deadline, it is interrupted
(GateTimeout); not yet, the timer is set again for that gate's deadline. So the timer always
fires at or before the running gate's deadline, and every gate stays bounded by its own timeout,
as with a timer per gate, for two timer calls and two handler swaps per event instead of per
gate. A gate that starts with a deadline earlier than the timer's re-arms it. A process that
decides event after event keeps the handler installed (`keep_timer`) and the timer armed across
events: no timer call per event, one per gate timeout.

Deadlines are measured on hookgate.waits' clock, which stands still while the gate waits for a
file lock another process holds: a deadline bounds a gate's own work (the waits module says why),
and the alarm ends a wait longer than waits.MAX_WAIT.

Elsewhere (not the main thread, the only one signals reach) each gate runs on a helper thread that
is abandoned, not killed, when it overruns; there its lock waits count.
"""

from __future__ import annotations

import _thread
import os
from time import monotonic as _monotonic
from typing import TYPE_CHECKING, Any, Callable, TypeVar

if TYPE_CHECKING:  # the C module has no stubs; it is `signal` without the enums
    import signal as _signal
else:
    # not `signal`: its import builds three enums (a millisecond of a cold hook process), and its
    # signal() wraps every handler in an enum lookup that costs more than the gate
    import _signal

from .. import waits

T = TypeVar("T")
# the waits of the thread that reads it: an alarm's, the main thread's
_main_waits = waits.here
_HAS_ALARM = hasattr(_signal, "setitimer")
# a timer that fires this close before the running gate's deadline counts as at it: the
# real-time timer and the monotonic clock need not agree to the microsecond
_SLACK = 0.001


class GateTimeout(Exception):
    def __init__(self, seconds: float, what: str = "timed out") -> None:
        super().__init__(f"{what} after {seconds:g}s")
        self.seconds = seconds


class _Alarm:
    """The one timer of an event on the main thread, and the gate it guards now."""

    __slots__ = ("deadline", "seconds", "armed")

    def __init__(self) -> None:
        self.deadline: float | None = None  # the running gate's, on waits.clock()
        self.seconds = 0.0  # its timeout, for the message
        self.armed: float | None = None  # when the timer fires; None: not armed

    def on_alarm(self, signum: int, frame: Any) -> None:
        self.armed = None
        deadline = self.deadline
        if deadline is None:  # between gates, or a late alarm after the last one returned
            return
        waited = waits.waiting()
        if waited >= waits.MAX_WAIT - _SLACK:
            self.deadline = None
            raise GateTimeout(waits.MAX_WAIT, "waited for a lock")
        left = deadline - waits.clock()
        if left <= _SLACK:
            self.deadline = None  # interrupted once, as a timer per gate did
            raise GateTimeout(self.seconds)
        self.arm(deadline, min(left, waits.MAX_WAIT - waited) if waited else left)

    def arm(self, at: float, seconds: float) -> None:
        self.armed = at
        _signal.setitimer(_signal.ITIMER_REAL, max(seconds, 1e-6))

    def run(self, fn: Callable[..., T], seconds: float | None, *args: Any) -> T:
        if self.deadline is None and seconds and seconds > 0:
            # a gate of the event (no other running): the way every gate takes, so kept short,
            # with waits.clock() written out (its call was a fifth of this way's cost). A gate
            # never starts within a wait: a wait is one flock call, during which only signal
            # handlers run, and none of hookgate's runs a gate.
            deadline = _monotonic() - _main_waits.waited + seconds
            self.deadline = deadline
            self.seconds = seconds
            if self.armed is None or self.armed > deadline:
                self.arm(deadline, seconds)
            try:
                return fn(*args)
            finally:
                self.deadline = None
        return self._within(fn, seconds, args)

    def _within(self, fn: Callable[..., T], seconds: float | None, args: tuple[Any, ...]) -> T:
        """`fn` run from within a running gate (a gate may run another), under its own deadline and
        the gate's, or with no deadline of its own."""
        if not seconds or seconds <= 0:
            return fn(*args)
        outer, outer_seconds = self.deadline, self.seconds
        assert outer is not None  # run() took every call with a deadline of its own that no gate runs
        now = waits.clock()
        deadline = now + seconds
        if outer < deadline:
            deadline = outer  # the inner call cannot outlive the outer one
        else:
            self.deadline, self.seconds = deadline, seconds
        if self.armed is None or self.armed > deadline:
            self.arm(deadline, deadline - now)
        try:
            return fn(*args)
        finally:
            self.deadline, self.seconds = outer, outer_seconds
            if self.armed is None or self.armed > outer:
                self.arm(outer, outer - waits.clock())  # the inner one's timer fired or was later


# the main thread's event scope, with that thread's id: signals only ever reach the main thread,
# and a gate on another thread must not take its deadline from it
_active: tuple[int, _Alarm] | None = None


def _alarm_here() -> _Alarm | None:
    active = _active
    return active[1] if active is not None and active[0] == _thread.get_ident() else None


Bounded = Callable[..., Any]  # (fn, seconds, *args) -> fn(*args), cut at `seconds`

# A process that decides event after event on its main thread keeps one alarm whose handler stays
# installed (`keep_timer`): (that thread's id, the alarm, its handler as installed)
_kept: tuple[int, _Alarm, Callable[[int, Any], None]] | None = None


def keep_timer() -> bool:
    """Install the kept alarm's handler for good, so that an event's scope swaps no handler and
    leaves the timer armed for the next event (EventScope.__exit__): no system call per event
    where there were four (the handler swapped in and out, the timer armed and disarmed). For the
    processes that decide many events, or decide once the caller waits (the RPC core, a warm
    core's fork); an embedding program's own SIGALRM handler is left alone otherwise. A handler
    installed over it later is noticed, and the scopes swap theirs in again. False off the main
    thread."""
    global _kept
    if not _HAS_ALARM:
        return False
    kept = _kept
    if kept is None:
        alarm = _Alarm()
        kept = (_thread.get_ident(), alarm, alarm.on_alarm)
    try:
        _signal.signal(_signal.SIGALRM, kept[2])
    except ValueError:
        return False
    if _kept is None:
        os.register_at_fork(after_in_child=_timer_not_inherited)
    _kept = kept
    return True


def _timer_not_inherited() -> None:
    """A fork starts with no timer armed (the handler is inherited; the timer is not)."""
    if _kept is not None:
        _kept[1].armed = None


class EventScope:
    """The scope of one event's gates (`with EventScope() as bounded`): on the main thread, one
    timer for all of them (see the module's docstring); nested scopes share the outer one.
    `bounded(fn, seconds, *args)` runs a gate under its deadline in this scope (call_with_deadline,
    without looking the scope up per gate). A class, not a generator: it is entered on every event."""

    __slots__ = ("_alarm", "_previous", "_swapped")

    def __enter__(self) -> Bounded:
        global _active
        self._alarm: _Alarm | None = None
        if not _HAS_ALARM or _active is not None:
            return call_with_deadline
        kept, here = _kept, _thread.get_ident()
        if kept is not None and kept[0] == here and _signal.getsignal(_signal.SIGALRM) is kept[2]:
            alarm, self._swapped = kept[1], False
        else:
            alarm, self._swapped = _Alarm(), True
            try:
                self._previous = _signal.signal(_signal.SIGALRM, alarm.on_alarm)
            except ValueError:  # not the main thread: each gate gets a helper thread
                return call_with_deadline
        _active = (here, alarm)
        self._alarm = alarm
        return alarm.run

    def __exit__(self, *exc: object) -> None:
        global _active
        alarm = self._alarm
        if alarm is None:
            return
        _active = None
        alarm.deadline = None
        if not self._swapped:
            # the kept handler stays: so may the timer. The next event's first gate finds it armed
            # before its own deadline and leaves it (one timer call fewer per event, and none to
            # disarm); fired between events, it finds no deadline and returns (once per gate
            # timeout at most, a system call it interrupts restarted by Python)
            return
        if alarm.armed is not None:
            alarm.armed = None
            _signal.setitimer(_signal.ITIMER_REAL, 0)
        _signal.signal(_signal.SIGALRM, self._previous)  # the handler this scope put in place of the program's


def call_with_deadline(fn: Callable[..., T], seconds: float | None, *args: Any) -> T:
    if not seconds or seconds <= 0:
        return fn(*args)
    alarm = _alarm_here()
    if alarm is not None:
        return alarm.run(fn, seconds, *args)
    if _active is None:
        with EventScope():  # a call outside any event's scope: a scope of its own
            alarm = _alarm_here()
            if alarm is not None:
                return alarm.run(fn, seconds, *args)
    return _with_thread(fn, seconds, args)


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

