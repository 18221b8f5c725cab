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
# True once a warm core's answer is written out: the process then holds nothing of its own to
# finish, and the registered command (core/bin/hookgate) leaves without tearing the interpreter down
answered_by_core = False


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
        finish_startup()
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
    global answered_by_core
    answered_by_core = isinstance(warm, tuple)
    return code


def finish_startup() -> None:
    """A registration starts this command without `site` (core/bin/hookgate): the warm client
    needs nothing of it, but an in-process decision imports msgspec and a project's policies may
    import anything, so it first gets the sys.path a plain start has (venv, .pth files, user site)."""
    if sys.flags.no_site and "site" not in sys.modules:
        import site

        site.main()
