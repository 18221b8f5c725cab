"""`hookgate hook claude|codex [--event NAME]`: the stdin adapter.

Argument parsing is by hand: this runs on every tool call, and argparse costs more than the
decision itself. `--event` names the event the registration is for, so that a payload that cannot
be read still gets the fail mode of that event's gates.

A call first goes to the project's warm core if one runs (hookgate.warm: the same
`hookgate.stdin.evaluate`, in a process that has done its imports already); otherwise it is
evaluated here, and a core is started in the background for the calls that follow
(HOOKGATE_WARM=off: never).
"""

import sys

from hookgate.runtimes import STDIN

USAGE = f"usage: hookgate hook {'|'.join(STDIN)} [--event EVENT_NAME] < payload.json\n"
# True once the answer is written out and the process holds nothing else to finish (see
# _nothing_left): the registered command (core/bin/hookgate) then leaves without tearing the
# interpreter down, which costs a call decided in-process about a tenth of its time
may_leave_now = False


def main(args: list[str]) -> int:
    rest = args[1:]
    if not rest or rest[0] not in STDIN:
        sys.stderr.write(USAGE)
        return 2
    runtime, options = rest[0], rest[1:]
    event_hint = ""
    if options[:1] == ["--event"] and len(options) == 2:
        event_hint = options[1]
    elif options:
        sys.stderr.write(USAGE)
        return 2
    if sys.stdin.isatty():
        sys.stderr.write("hookgate: reading a hook payload from stdin (this command is run by the runtime)\n")
    raw = sys.stdin.buffer.read()
    try:
        from hookgate.warm import client

        warm = client.ask(runtime, event_hint, raw)
    except Exception:  # the warm path is only ever a shortcut
        warm = None
    if isinstance(warm, tuple):
        stdout, stderr, code = warm
    else:
        _find_msgspec()
        from hookgate.startup import import_pathlib_lightly

        import_pathlib_lightly()
        from hookgate.stdin import evaluate

        stdout, stderr, code = evaluate(runtime, raw, event_hint)
    # text a policy printed goes out first, as the warm core sends it (hookgate.warm.server)
    sys.stdout.flush()
    sys.stderr.flush()
    if stdout:
        sys.stdout.buffer.write(stdout)
        sys.stdout.flush()
    if stderr:
        sys.stderr.buffer.write(stderr)
        sys.stderr.flush()
    if warm is not None and warm == client.ABSENT:  # (warm is None: the client did not even load)
        try:
            client.start()
        except Exception:  # the answer is out: nothing here may change its exit code
            pass
    global may_leave_now
    may_leave_now = isinstance(warm, tuple) or _nothing_left()
    return code


def _nothing_left() -> bool:
    """After a decision in this process: whether leaving now loses nothing. hookgate's own files
    are written with os.write, so no byte of them waits in a buffer; what else might wait is
    another's: a project policy's (its open files, its objects' finalizers), whatever registered
    to run at exit (logging, tempfile and weakref.finalize do), a thread still running."""
    import atexit

    if "hookgate.python_hooks.load" in sys.modules or atexit._ncallbacks():
        return False
    threading = sys.modules.get("threading")
    return threading is None or threading.active_count() == 1


def _find_msgspec() -> None:
    """An in-process decision needs msgspec (imported lightly, hookgate.startup): where the
    install's site-packages (on the path the registered command starts with, core/bin/hookgate)
    lacks it, site finds it as it would for a plain start. Nothing else of site is needed unless a
    project's policy loads (python_hooks)."""
    from hookgate.startup import complete_sys_path, import_msgspec_lightly

    try:
        import_msgspec_lightly()
    except ImportError:
        complete_sys_path()
        try:
            import_msgspec_lightly()
        except ImportError:  # hookgate.stdin answers without its core, and says why
            pass
