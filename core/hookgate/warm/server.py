"""The warm core: a process per project that has imported hookgate once, and forks itself for
each hook call.

A fork begins where a cold `hookgate hook` process would be once its imports are done; it takes
the caller's working directory, umask and environment, runs the in-process path's own function
(`hookgate.stdin.evaluate`) on the caller's payload, sends back the answer and exits. Nothing
of one call survives into the next: policies, hooks.json and config are read from the files on
every call, as in-process (config.load keeps a cache keyed on the files' identity, which a fork
inherits once the core has filled it). Gate deadlines work as in-process too: the fork runs the
decision on its main thread.

Forks are made ahead of time: READY of them wait in a blocking accept() on the shared socket
(the kernel wakes one per call), each having decided one scratch call already, so the pages a
decision touches are copied before a caller waits, not while it does. A fork marks its slot
TAKEN in a page it shares with the core when it takes a call (the core sees it on its next tick:
a long call gets a replacement, without waking the core in the middle of every call), and wakes
the core through a pipe once it has answered, to be replaced at once. A fork that asks the core
about a change feed wakes it mid-call too; its replacement still waits for its answer (or a tick
after its last question), so that the copy and the scratch decision do not compete with it.

The core holds `<socket>.lock` for its whole life, so exactly one core serves a socket and a
socket file without a lock holder is stale. It leaves when idle, when its socket file is removed
or replaced, when its project folder is gone (a demo's or a test's temporary project), when
hookgate's own code changes under it, or on SIGTERM; waiting forks notice
within a TICK that it is gone and leave too, and a call one of them already took is answered.
"""

from __future__ import annotations

import fcntl
import gc
import io
import mmap
import os
import select
import shutil
import signal
import socket
import struct
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Mapping, cast

from ..effect import feed
from ..engine.deadline import keep_timer
from ..runtimes import PACKAGES
from .. import client

IDLE_SECONDS = 600.0  # HOOKGATE_WARM_IDLE overrides
TICK = 1.0  # how often the core looks at its forks, its socket, its code and its project's config
READY = 2  # forks waiting for a call
MAX_FORKS = 64  # forks alive at once; more calls wait in the listen backlog
MAX_FAILED_FORKS = 8  # forks in a row that died without answering: something is broken, leave
READ_TIMEOUT = 10.0  # a caller that connects and never finishes its request
CONTROL = {b"!status", b"!stop"}
CALL_NOTE = b"."  # what a fork writes on the pipe after answering a hook call (anything else: not a call)
FREE, WAITING, TAKEN = 0, 1, 2  # a fork's slot on the board


class Core:
    def __init__(self, path: str, project: str, idle: float) -> None:
        self.path = path
        self.project = project
        self.idle = idle
        self.identity = client.identity()
        self.started = time.time()
        self.started_ns = time.time_ns()
        self.failed = 0
        self.last_call = time.monotonic()
        self.inode = -1
        # Shared with the forks: one byte per fork, which it marks TAKEN when it accepts a call
        # (the core reads it on its next tick, without being woken in the middle of the call),
        # then the count of calls answered. A fork that answered wakes the core through a pipe,
        # so it is replaced at once.
        self.board = mmap.mmap(-1, MAX_FORKS + 8)
        self.slots: dict[int, int] = {}  # pid -> slot
        # pid -> the core's end of a socket pair each fork asks the effect check's change feeds
        # over (hookgate.effect.feed: the core alone reads the inotify queue, for all its forks)
        self.feeds: dict[int, socket.socket] = {}
        # OpenTelemetry (hookgate.otel): the forks send each decision's summary down this pipe
        self.exporter = None
        self.telemetry: tuple[int, int] | None = None
        self.telemetry_buffer = bytearray()

    @property
    def served(self) -> int:
        return int.from_bytes(self.board[MAX_FORKS:], "little")

    @served.setter
    def served(self, count: int) -> None:
        self.board[MAX_FORKS:] = count.to_bytes(8, "little")

    # -- life ------------------------------------------------------------------------------------
    def run(self) -> int:
        lock = take_lock(client.lock_path(self.path))
        if lock is None:
            return 0  # another core serves this socket
        scratch = tempfile.mkdtemp(prefix="hookgate-core-")
        listener = self.bind()
        answered_r, answered_w = os.pipe()
        os.set_blocking(answered_r, False)
        signal.signal(signal.SIGTERM, _exit_on_signal)
        try:
            prime(self.project, scratch)
            feed.enable()  # after priming: the scratch project's readings keep no feed
            self.start_telemetry()
            gc.collect()
            gc.freeze()  # a fork's collections then skip (and never copy) what the core holds
            checked = time.monotonic()
            asked = -TICK  # when a fork last asked about a feed
            replenish = True
            while self.failed < MAX_FAILED_FORKS:
                if replenish:
                    self.fork_ready(listener, [lock, answered_r, *self.telemetry[:1]] if self.telemetry else
                                    [lock, answered_r], answered_w, scratch)
                waiting = [answered_r, *self.telemetry[:1]] if self.telemetry else [answered_r]
                watched: list[Any] = [*waiting, *self.feeds.values()]
                readable, _, _ = select.select(watched, [], [], TICK)
                if self.answer_feeds(readable):
                    asked = time.monotonic()
                answered = self.reap(answered_r)
                self.export()
                now = time.monotonic()
                # A fork's feed question wakes the core in the middle of that fork's call. A fork
                # made then (a copy of the core, then its scratch decision) would hold the answer to
                # the call's next question and compete with the call for the CPU: the taken fork is
                # replaced once a call is answered, or a tick after the last question.
                replenish = answered or now - asked >= TICK
                if TAKEN in self.board[:MAX_FORKS]:
                    self.last_call = now
                if now - checked >= TICK:
                    checked = now
                    if not self.still_ours() or not os.path.isdir(self.project) or code_changed_since(self.started_ns):
                        break
                    refresh_config(self.project)
                    tidy_scratch(scratch)
                elif answered:  # a call may have written a new effect reading: the next forks start with it
                    refresh_config(self.project)
                if now - self.last_call > self.idle:
                    break
        finally:
            if self.still_ours():
                os.unlink(self.path)
            listener.close()
            shutil.rmtree(scratch, ignore_errors=True)
            if self.exporter is not None:
                self.export()
                self.exporter.shutdown()
        return 0

    def start_telemetry(self) -> None:
        """Export decisions when the environment or config asks for it (and hookgate[otel] is there)."""
        try:
            from hookgate.otel import exporter_for

            self.exporter = exporter_for(self.project, os.environ, log=lambda line: sys.stderr.write(line + "\n"))
        except Exception:  # export is never a reason for the core not to serve
            self.exporter = None
        if self.exporter is not None:
            import hookgate.otel.pipe  # noqa: F401 (imported once here, not in every fork)

            read, write = os.pipe()
            os.set_blocking(read, False)
            os.set_blocking(write, False)
            self.telemetry = (read, write)

    def export(self) -> None:
        if self.exporter is None or self.telemetry is None:
            return
        from hookgate.otel.pipe import read_lines

        for fields in read_lines(self.telemetry[0], self.telemetry_buffer):
            try:
                self.exporter.submit(fields)
            except Exception:
                self.exporter.dropped_before += 1

    def bind(self) -> socket.socket:
        try:
            os.unlink(self.path)  # we hold the lock: a socket file here is stale
        except FileNotFoundError:
            pass
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)
        try:
            listener.bind(self.path)
        finally:
            os.umask(old)
        listener.listen(128)
        self.inode = os.stat(self.path).st_ino
        return listener

    def still_ours(self) -> bool:
        try:
            return os.stat(self.path).st_ino == self.inode
        except FileNotFoundError:
            return False

    def reap(self, answered: int) -> bool:
        """Count the answers (a byte each on the pipe) and free the slots of the forks that exited;
        whether any call was answered."""
        try:
            notes = os.read(answered, 4096)
        except BlockingIOError:
            notes = b""
        if notes and self.exporter is not None:
            from hookgate.otel.pipe import DROPPED_NOTE

            self.exporter.dropped_before += notes.count(DROPPED_NOTE)
        if notes:
            self.served += notes.count(CALL_NOTE)
            self.failed = 0
            self.last_call = time.monotonic()
        while self.slots:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            slot = self.slots.pop(pid, None)
            channel = self.feeds.pop(pid, None)
            if channel is not None:
                channel.close()
            if slot is not None:
                if self.board[slot] == WAITING:  # it died before it took a call
                    self.failed += 1
                self.board[slot] = FREE
        return bool(notes)

    def answer_feeds(self, readable: list[Any]) -> bool:
        """A fork's question about a change feed (effect/feed.CoreFeed), answered at once: the fork
        waits for it in the middle of its call. A fork that left or sent nonsense is let go.
        Whether any fork asked."""
        asked = False
        for pid, channel in list(self.feeds.items()):
            if channel not in readable:
                continue
            asked = True
            try:
                request = feed.receive_frame(channel)
                feed.send_frame(channel, feed.answer(request))
            except Exception:  # the fork left (its pair closed), or the question was not one
                channel.close()
                del self.feeds[pid]
        return asked

    # -- the forks -------------------------------------------------------------------------------
    def fork_ready(self, listener: socket.socket, close: list[int], answered: int, scratch: str) -> None:
        core = os.getpid()
        while len(self.slots) < MAX_FORKS and sum(self.board[s] == WAITING for s in self.slots.values()) < READY:
            slot = next(i for i in range(MAX_FORKS) if i not in self.slots.values())
            self.board[slot] = WAITING
            ours, theirs = socket.socketpair()
            ours.settimeout(feed.REPLY_SECONDS)  # a fork that stops halfway through a question
            pid = os.fork()
            if pid:
                theirs.close()
                self.slots[pid] = slot
                self.feeds[pid] = ours
                continue
            try:  # the fork: whatever happens, it never returns into the core's loop
                for fd in close:
                    os.close(fd)
                ours.close()
                for other in self.feeds.values():  # the other forks' pairs are theirs and the core's
                    other.close()
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                self.wait_for_call(listener, slot, answered, scratch, core, theirs)
            finally:
                os._exit(0)

    def wait_for_call(self, listener: socket.socket, slot: int, answered: int, scratch: str, core: int,
                      feeds: socket.socket) -> None:
        self.answered = answered
        if not select.select([listener], [], [], 0)[0]:  # with a caller already waiting, serve it now
            touch_pages(scratch)
        feed.use_core(feeds)  # after the scratch call: a caller's readings ask the core's feeds
        self.printed = _capture()  # made before a caller waits: it does not depend on the call
        gc.freeze()
        with orphan_watch(core):
            conn, _ = listener.accept()
        self.board[slot] = TAKEN
        listener.close()
        # at once: the caller learns a live core took its call while it is still sending it
        conn.sendall(client.ACK)
        note = None
        try:
            note = self.answer(conn)
        finally:
            # the caller reads to the end of the stream: close it now, not when the exit of this
            # fork has torn its copy of the core down (a millisecond or two, on every call)
            conn.close()
            os.write(answered, note or b"!")

    def answer(self, conn: socket.socket) -> bytes | None:
        """Answer one request; CALL_NOTE when it was a hook call."""
        conn.settimeout(READ_TIMEOUT)
        if peer_uid(conn) != os.geteuid():
            return self.refuse(conn, b"refused: another user")
        data = bytearray()
        while chunk := conn.recv(1 << 16):
            data += chunk
        parts = client.unpack(bytes(data))
        if len(parts) < 7 or parts[0] != client.PROTOCOL or parts[1] != self.identity:
            return self.refuse(conn, b"refused: another hookgate")
        runtime, hint, cwd, umask, raw, env = parts[2], parts[3], parts[4], parts[5], parts[6], parts[7:]
        if runtime in CONTROL:
            self.control(conn, runtime)
            return None
        try:
            os.chdir(cwd)
        except OSError:
            return self.refuse(conn, b"refused: no such working directory")
        os.umask(int(umask))
        take_environment(dict(entry.split(b"=", 1) for entry in env if b"=" in entry))
        conn.settimeout(None)
        printed_out, printed_err = self.printed
        from hookgate.stdin import evaluate

        if self.telemetry is not None:  # this call's decision goes to the core's exporter
            from hookgate.hookcall import DECISION_LISTENERS
            from hookgate.otel.pipe import fork_listener

            DECISION_LISTENERS.append(fork_listener(self.telemetry[1], self.answered))

        stdout, stderr, code = evaluate(runtime.decode(), raw, hint.decode())
        conn.sendall(client.pack([client.OK, printed_out.getvalue() + stdout, printed_err.getvalue() + stderr,
                                  str(code).encode()]))
        return CALL_NOTE

    @staticmethod
    def refuse(conn: socket.socket, why: bytes) -> None:
        conn.sendall(client.pack([why]))

    def control(self, conn: socket.socket, command: bytes) -> None:
        if command == b"!stop":
            os.kill(os.getppid(), signal.SIGTERM)
        status = (f"pid {os.getppid()}, up {time.time() - self.started:.0f}s, {self.served} calls answered, "
                  f"exits after {self.idle:g}s idle")
        conn.sendall(client.pack([client.OK, status.encode(), b"", b"0"]))


def serve(path: str, project: str, idle: float | None = None) -> int:
    """Run a core on `path` until it has a reason to leave (see the module doc)."""
    _close_inherited_fds()
    os.chdir("/")  # hold no project directory open
    if idle is None:
        try:
            idle = float(os.environ.get("HOOKGATE_WARM_IDLE") or IDLE_SECONDS)
        except ValueError:
            idle = IDLE_SECONDS
    return Core(path, project, idle).run()


class orphan_watch:
    """A blocking accept() wakes one waiting fork per call (polling with a timeout would wake them
    all); a timer interrupts it every TICK to see whether the core is still there, and a fork
    whose core is gone leaves. The core's pid is the one taken before the fork: a core killed
    while its fork was still priming has made the fork init's child already, and a pid read then
    would be init's, which never goes away."""

    def __init__(self, core: int) -> None:
        self.core = core

    def __enter__(self) -> None:
        def check(signum: int, frame: object) -> None:
            if os.getppid() != self.core:
                os._exit(0)

        signal.signal(signal.SIGALRM, check)
        signal.setitimer(signal.ITIMER_REAL, TICK, TICK)
        check(signal.SIGALRM, None)  # already gone: do not wait a TICK for it

    def __exit__(self, *exc: object) -> None:
        signal.setitimer(signal.ITIMER_REAL, 0)
        # the gates' handler in place of this one: the call's decision then need not swap it in and out
        keep_timer()


def take_environment(env: dict[bytes, bytes]) -> None:
    """Become the caller's environment (os.environ and the C environ subprocesses inherit),
    changing only what differs: the core started from a call of the same runtime."""
    for key in [key for key in os.environb if key not in env]:
        del os.environb[key]
    for key, value in env.items():
        if os.environb.get(key) != value:
            os.environb[key] = value


def take_lock(path: str) -> int | None:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode())
    return fd


def peer_uid(conn: socket.socket) -> int:
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    uid: int = struct.unpack("3i", creds)[1]
    return uid


def prime(project: str, scratch: str) -> None:
    """Do once, in the core, what every call would otherwise pay for: import the whole decision
    path and let it fill its caches (msgspec's type info, compiled regexes, the project's config),
    by deciding a few calls in a scratch project that has no policies and no command hooks (and
    a scratch HOME: no user's global hooks either). The project's own policies never run here:
    they run, afresh, in each call's fork."""
    from hookgate.engine_builder import preload_sources
    from hookgate.hookcall import Dialect, handle
    from hookgate.runtimes import STDIN, plug

    preload_sources()  # what a call imports only on first use (a check its event matches, hooks.json's reader)
    root = Path(scratch)
    (root / ".hookgate").mkdir()
    (root / ".hookgate" / "current_role").write_text("build\n")
    with scratch_environment(scratch):
        for runtime in STDIN:
            dialect = cast(Dialect, plug(runtime).module("dialect"))
            for call in PRIMING_CALLS:
                handle(dialect, _payload(scratch, call))
    refresh_config(project)


def touch_pages(scratch: str) -> None:
    """A fork decides a call in the scratch project before it waits, so the copy-on-write faults
    of a first decision are paid before a caller waits, not while it does."""
    from hookgate.stdin import evaluate

    with scratch_environment(scratch):
        evaluate("claude", _payload(scratch, TOUCH_CALL), "PreToolUse")


def tidy_scratch(scratch: str) -> None:
    """The scratch project's records only grow (each fork's touch_pages adds a few lines)."""
    state = Path(scratch) / ".hookgate"
    try:
        if (state / "metrics.jsonl").stat().st_size > 1 << 20:
            shutil.rmtree(state / "sessions", ignore_errors=True)
            (state / "metrics.jsonl").unlink()
    except FileNotFoundError:
        pass


class scratch_environment:
    def __init__(self, scratch: str) -> None:
        self.env = {"HOME": scratch, "HOOKGATE_PROJECT_DIR": scratch, "HOOKGATE_WARM": "off",
                    "PATH": os.environ.get("PATH", "/usr/bin:/bin")}

    def __enter__(self) -> None:
        self.saved = dict(os.environ)
        os.environ.clear()
        os.environ.update(self.env)

    def __exit__(self, *exc: object) -> None:
        os.environ.clear()
        os.environ.update(self.saved)


# calls through most of the decision path, for prime(), and the most common one, for touch_pages()
PRIMING_CALLS = (
    {"hook_event_name": "SessionStart", "source": "startup"},
    {"hook_event_name": "PreToolUse", "tool_name": "Write", "tool_input": {"file_path": "src/a.gd", "content": ""}},
    {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "echo hi > src/a.gd"}},
    {"hook_event_name": "PostToolUse", "tool_name": "Read", "tool_input": {"file_path": "a.png"}, "tool_response": {}},
    {"hook_event_name": "SubagentStop", "agent_id": "a1", "agent_type": "worker",
     "last_assistant_message": "## Report: x\n### Status: DONE\n"},
    {"hook_event_name": "Stop", "stop_hook_active": False},
)
TOUCH_CALL = PRIMING_CALLS[1]


def _payload(root: str, call: Mapping[str, object]) -> bytes:
    import msgspec

    return msgspec.json.encode({"session_id": "prime", "cwd": root, **call})


def refresh_config(project: str) -> None:
    """Keep the project's config, its rule lists compiled and the effect check's readings decoded
    in the caches the forks inherit (a stat each when nothing changed)."""
    from hookgate.config.load import open_project
    from hookgate.engine_builder import build_engine
    from hookgate.errors import ConfigError
    from hookgate.pipeline.rules import prepare
    from hookgate.python_hooks import policy_files

    try:
        found, config = open_project(Path(project))
    except ConfigError:
        return  # each call reports it, as in-process
    # the rule lists compiled for this project and environment (HOME and the places its patterns
    # name): a fork whose caller has the same environment judges a write without compiling
    prepare(config.pipeline, found.root_text)
    # and the engine of its gates built, unless the project has policies: those run in each
    # call's fork, never in the core
    if not config.policies.modules and not policy_files(found.policy_dir):
        try:
            build_engine(config, found)
        except ConfigError:
            pass  # each call reports it, as in-process
    if config.effect.enabled:  # the effect check ready: its readings decoded, its rules compiled
        from hookgate.effect import prepare as prepare_effect

        prepare_effect(config, found)


def code_changed_since(started_ns: int) -> bool:
    """Whether one of hookgate's own loaded source files changed since the core started (an
    upgrade, an edit of an editable install): the core is then out of date and leaves; the next
    call starts a fresh one."""
    for module in list(sys.modules.values()):
        name, path = getattr(module, "__name__", ""), getattr(module, "__file__", None)
        if path and name.split(".")[0] in ("hookgate", *PACKAGES):
            try:
                if os.stat(path).st_mtime_ns > started_ns:
                    return True
            except OSError:
                return True
    return False


def _capture() -> tuple[io.BytesIO, io.BytesIO]:
    """What the decision prints (a policy's print(), a warning) goes where the in-process path
    would send it: ahead of the answer, on the caller's stdout or stderr."""
    out, err = io.BytesIO(), io.BytesIO()
    sys.stdout = io.TextIOWrapper(out, encoding="utf-8", errors="backslashreplace", write_through=True)
    sys.stderr = io.TextIOWrapper(err, encoding="utf-8", errors="backslashreplace", write_through=True)
    return out, err


def _close_inherited_fds() -> None:
    """A core started from a hook call must not keep any of the runtime's pipes open (the
    runtime would wait for their end): every descriptor Python did not open itself is inherited."""
    try:
        fds = [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:
        return
    for fd in fds:
        if fd > 2:
            try:
                if os.get_inheritable(fd):
                    os.close(fd)
            except OSError:
                pass


def _exit_on_signal(signum: int, frame: object) -> None:
    raise SystemExit(0)
