"""`hookgate hook claude|codex|gemini [--event NAME]`: the client every hook call runs, and the
client side of the warm protocol (hookgate.warm.server is the other side).

A call first goes to the project's warm core if one runs (hookgate.warm.server: the same
`hookgate.stdin.evaluate`, in a process that has done its imports already); otherwise it is
evaluated here, and a core is started in the background for the calls that follow
(HOOKGATE_WARM=off: never). Argument parsing is by hand: argparse costs more than the decision
itself. `--event` names the event the registration is for, so that a payload that cannot be
read still gets the fail mode of that event's gates.

The command and its client of the core are one module, which the registered command (`launched`)
and core/bin/hookgate import straight, past the command table: each module a process imports
costs it about 0.2 ms, and a warm call is about a bare interpreter start. It imports nothing a bare
interpreter has not already loaded but `_socket`, the runtime names and the private-directory
check (tests/test_hook_path_is_light.py holds it to that): not even `os`, which an interpreter
started without `site` has not loaded and which costs as much as the rest of the client; the calls
it makes are `posix`'s, which `os` re-exports. Starting a core, off the answer's path, uses `os`.
It forwards what the in-process path would read (the raw payload, the runtime, the event hint,
the environment, the working directory and the umask) and writes back what the core's fork of
itself answered; the core runs the very function the in-process path runs.

Every failure of the warm path is quiet and fast: no core, a stale socket, a core of another
hookgate (version, install or interpreter) or one that does not acknowledge within ACK_TIMEOUT all
mean "evaluate in-process", which is always correct, only slower. (A core's fork killed in the
middle of a call leaves the caller to decide it in-process too; what the fork had already recorded
stays, so such a call can appear twice in the metrics.)
"""

import posix
import sys

from hookgate.private import fnv1a64, owned_private_dir
from hookgate.runtimes import STDIN

TYPE_CHECKING = False  # typing's own flag, without importing typing on the hook path
if TYPE_CHECKING:
    from typing import Callable, Mapping, NoReturn

PROTOCOL = b"hookgate-warm/1"
ACK = b"+"  # a fork of a live core took the connection; from here on the client waits for its answer
OK = b"ok"  # the answer's status; anything else says why the core refused (the client then evaluates)
# A live core acknowledges within milliseconds; these only bound a core that is wedged.
CONNECT_TIMEOUT = 1.0
ACK_TIMEOUT = 3.0

# Why a call was not answered by a core (`ask` returns one of these instead of an answer).
OFF = "off"  # HOOKGATE_WARM=off, or no safe place for the socket
ABSENT = "absent"  # no core listens: worth starting one
UNUSABLE = "unusable"  # a core is there but did not answer this call

Answer = tuple[bytes, bytes, int]  # stdout, stderr, exit code


USAGE = f"usage: hookgate hook {'|'.join(STDIN)} [--event EVENT_NAME] < payload.json\n"
# True once the answer is written out and the process holds nothing else to finish (see
# _nothing_left): the registered command (core/bin/hookgate) then leaves without tearing the
# interpreter down, which costs a call decided in-process about a tenth of its time
may_leave_now = False


def main(args: list[str]) -> int:
    """`args`: the command line after `hookgate` (["hook", "claude", ...]). The registered command
    calls this straight, not through hookgate.cli, so it ends a closed pipe and an interrupt as
    that does."""
    try:
        return _hook(args)
    except BrokenPipeError:  # the runtime stopped reading: nobody is left to answer
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        return 130


def launched(run: "Callable[[list[str]], int]" = main) -> "NoReturn":
    """The whole of a registered hook command (`python -S -P -c CODE hook claude ...`,
    hookgate.cli.install.hook_command), which puts hookgate's folder on sys.path and calls this,
    and the end of core/bin/hookgate, which runs `run` (its command table for any other command):
    the call, then the exit, at once when nothing is left to finish. A command line of a few
    statements, not a script: Python compiles a script on every start, and core/bin/hookgate's
    took about 0.4 ms of a warm call's 10."""
    code = run(sys.argv[1:])
    if may_leave_now:
        posix._exit(code)
    sys.exit(code)


def _hook(args: list[str]) -> int:
    rest = args[1:]
    if "-h" in rest or "--help" in rest:  # asked for, not a runtime's bad call
        sys.stdout.write(USAGE + "The runtime runs this with the hook's payload on stdin "
                         "(`hookgate install` registers it).\n")
        return 0
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
        warm = ask(runtime, event_hint, raw)
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
    if warm == ABSENT:
        try:
            start()
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


def ask(runtime: str, event_hint: str, raw: bytes) -> Answer | str:
    """The core's answer to this hook call, or why there is none (OFF, ABSENT, UNUSABLE)."""
    if _environ().get(b"HOOKGATE_WARM") == b"off":
        return OFF
    try:
        posix.lstat(runtime_dir())
    except OSError:
        return ABSENT
    path = locate()
    if path is None:
        return OFF
    return exchange(path, runtime, event_hint, raw)


def exchange(path: str, runtime: str, event_hint: str, raw: bytes) -> Answer | str:
    import _socket

    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.settimeout(CONNECT_TIMEOUT)
        try:
            sock.connect(path)
        except (FileNotFoundError, ConnectionRefusedError):  # never started, or a stale socket file
            return ABSENT
        sock.sendall(request(runtime, event_hint, raw))
        sock.shutdown(_socket.SHUT_WR)
        sock.settimeout(ACK_TIMEOUT)
        if sock.recv(1) != ACK:
            return UNUSABLE
        sock.settimeout(None)  # the decision has its own deadlines, as in-process
        chunks = []
        while chunk := sock.recv(1 << 16):
            chunks.append(chunk)
        answer = unpack(b"".join(chunks))
        if len(answer) != 4 or answer[0] != OK:
            return UNUSABLE
        return answer[1], answer[2], int(answer[3])
    except (OSError, ValueError):  # refused, reset, timed out, a torn answer: in-process instead
        return UNUSABLE
    finally:
        sock.close()


def locate(root: str | None = None) -> str | None:
    """The socket of the core for this project and this hookgate; None when the per-user
    directory is not safely ours or the path would not fit."""
    directory = runtime_dir()
    if not owned_private_dir(directory):
        return None
    key = fnv1a64(b"\0".join([(root or project_root()).encode(), identity()]))
    path = f"{directory}/{key:016x}.sock"
    return path if len(path.encode()) <= MAX_SOCKET_PATH else None


def request(runtime: str, event_hint: str, raw: bytes) -> bytes:
    umask = posix.umask(0)
    posix.umask(umask)
    env = [key + b"=" + value for key, value in _environ().items()]
    return pack([PROTOCOL, identity(), runtime.encode(), event_hint.encode(), posix.getcwdb(),
                 str(umask).encode(), raw, *env])


def _environ() -> "Mapping[bytes, bytes]":
    """This process's environment as bytes: os.environb once `os` is loaded (it may have been
    changed through it), else the one the process started with."""
    os = sys.modules.get("os")
    return os.environb if os is not None else posix.environ


def identity() -> bytes:
    """What must match for a core to answer for this client: the hookgate version, where it is
    installed and the interpreter running it (two checkouts of one version differ in the second)."""
    import hookgate

    return b"\0".join(s.encode() for s in (hookgate.__version__, hookgate.__file__.rpartition("/")[0], sys.executable))


def project_root() -> str:
    """The project a call belongs to, found the way hookgate finds it (store/project.py: a folder
    with .hookgate/ or GodotMaker's .godotmaker/), but
    from the process's cwd: this only routes the call to a core, any core decides it the same."""
    env = _environ()
    given = env.get(b"HOOKGATE_PROJECT_DIR")
    if given:
        import os

        return os.path.abspath(os.fsdecode(given))
    cwd = posix.getcwd()
    directory = cwd
    while True:
        if _is_dir(f"{directory.rstrip('/')}/.hookgate") or _is_dir(f"{directory.rstrip('/')}/.godotmaker"):
            return directory
        parent = directory.rpartition("/")[0] or "/"
        if parent == directory:
            claude = env.get(b"CLAUDE_PROJECT_DIR")
            return claude.decode(errors="surrogateescape") if claude else cwd
        directory = parent


def _is_dir(path: str) -> bool:
    try:
        return posix.stat(path).st_mode & 0o170000 == 0o040000
    except OSError:
        return False


# AF_UNIX paths hold at most 107 bytes, so sockets live in a short per-user directory, named
# by a hash of the project and the identity, not in the project itself.
MAX_SOCKET_PATH = 107


def runtime_dir() -> str:
    base = _environ().get(b"XDG_RUNTIME_DIR", b"").decode(errors="surrogateescape")
    if base.startswith("/") and len(base) < 64:
        return f"{base.rstrip('/')}/hookgate" if base.rstrip("/") else "/hookgate"
    return f"/tmp/hookgate-{posix.geteuid()}"


def pack(parts: list[bytes]) -> bytes:
    return b"".join(len(part).to_bytes(4, "big") + part for part in parts)


def unpack(data: bytes) -> list[bytes]:
    parts, at = [], 0
    while at < len(data):
        end = at + 4 + int.from_bytes(data[at:at + 4], "big")
        if end > len(data):
            raise ValueError("torn frame")
        parts.append(data[at + 4:end])
        at = end
    return parts


# A core takes a moment to come up; cold calls meanwhile must not each start another one.
START_BACKOFF = 10.0


def start(root: str | None = None, force: bool = False) -> str | None:
    """Start a core for this project in the background (detached, in its own session, stdio on
    /dev/null) and return its socket at once. The core's lock file doubles as a note of the
    last start, so a burst of cold calls starts one core, and a core that cannot stay up is
    retried only now and then. The core takes the lock; a second one finds it taken and leaves."""
    import os
    import time

    if (os.environ.get("HOOKGATE_WARM") == "off" and not force) or not ensure_runtime_dir():
        return None
    root = root or project_root()
    path = locate(root)
    if path is None:
        return None
    lock = lock_path(path)
    try:
        if not force and os.stat(lock).st_mtime > time.time() - START_BACKOFF:
            return None
    except FileNotFoundError:
        pass
    devnull = [(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDWR, 0), (os.POSIX_SPAWN_DUP2, 0, 1),
               (os.POSIX_SPAWN_DUP2, 0, 2)]
    # -P: the project (this cwd) must not come first on the core's sys.path, as it does not for
    # the hookgate command either; a module the project holds must not shadow hookgate's own
    argv = [sys.executable, "-P", "-m", "hookgate", "warm", "--project", root, "serve", "--socket", path]
    try:
        os.close(os.open(lock, os.O_WRONLY | os.O_CREAT, 0o600))
        os.utime(lock)
        os.posix_spawn(sys.executable, argv, os.environ, file_actions=devnull, setsid=True)
    except (OSError, AttributeError):  # no posix_spawn here, or no room: stay cold
        return None
    return path


def stop(path: str, wait: float = 10.0) -> bool:
    """Stop the core listening on `path` and wait until it is gone; False when none answered.
    Gone means its lock released, not only its socket removed: the core removes the socket
    first and holds the lock until it exits, and a core started meanwhile would find it taken."""
    import os
    import time

    if not isinstance(exchange(path, "!stop", "", b""), tuple):
        return False
    deadline = time.monotonic() + wait
    while (os.path.exists(path) or lock_held(lock_path(path))) and time.monotonic() < deadline:
        time.sleep(0.02)
    return True


def lock_path(socket: str) -> str:
    """Held by the live core for its whole life; holds its pid."""
    return socket[:-len(".sock")] + ".lock"


def lock_held(lock: str) -> bool:
    """Whether a live core holds this lock file (a lock nobody holds names no live core)."""
    import fcntl

    try:
        fd = posix.open(lock, posix.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    finally:
        posix.close(fd)  # and with it the shared lock, if taken


def ensure_runtime_dir() -> bool:
    import os

    directory = runtime_dir()
    try:
        os.mkdir(directory, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return False
    return owned_private_dir(directory)
