"""The warm path: `hookgate hook` answered by the project's core gives the very answers, records and
state the in-process path gives, and every way a core can be missing or wrong ends in-process.

Every call here is a real `hookgate hook` process; a core is a real `hookgate warm serve` process."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable

import pytest

from pipeline_support import Pipeline
from warm_support import Warm, normalised_files, warm  # noqa: F401 (a fixture)

WRITE_FORBIDDEN = {"hook_event_name": "PreToolUse", "tool_name": "Write",
                   "tool_input": {"file_path": "src/player.gd", "content": "extends Node\n"}}
BLOCKED = (b'{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny",'
           b'"permissionDecisionReason":"Build role cannot write game code directly (player.gd). '
           b'Dispatch a Worker subagent."},'
           b'"systemMessage":"hookgate: run `hookgate explain s1 --last-block` to see why"}')


# -- the scenario table: one session through every gate family, cold then warm --------------------

POLICY = '''\
import os, sys
from hookgate import block, modify, register_hook

print("guard policy loaded", file=sys.stderr)
register_hook("no-publish", "pre_tool_use", {"tool": "Bash", "command_pattern": r"npm publish"}, None,
              lambda event: block(f"CI publishes (policy cwd {os.getcwd()}, step {os.environ.get('HG_STEP')})"))
register_hook("draft-path", "pre_tool_use", {"tool": "Write", "path_pattern": "draft.txt"}, None,
              lambda event: modify({**event.tool_input, "file_path": "docs/draft.txt"}))
'''
# a command hook that refuses `rm -rf`, naming the step (the caller's environment) and its folder
RM_GUARD = ("""sh -c 'case "$(cat)" in *"rm -rf"*) echo "no rm -rf (step $HG_STEP in $PWD)" >&2; exit 2;; esac'""")


def pipeline_project(root: Path) -> None:
    """Role build, ready to dispatch, a command hook and a Python policy."""
    Pipeline(root).role("build").ready_to_dispatch()
    (root / ".hookgate" / "hooks.json").write_text(json.dumps({"hooks": {"PreToolUse": [
        {"matcher": "Bash", "hooks": [{"type": "command", "command": RM_GUARD}]}]}}))
    (root / ".hookgate" / "policies").mkdir()
    (root / ".hookgate" / "policies" / "guard.py").write_text(POLICY)
    (root / "src").mkdir()
    (root / "assets").mkdir()


def broken_config_project(root: Path) -> None:
    Pipeline(root).role("build")
    (root / ".hookgate" / "config.toml").write_text('[gates.check_file_permissions]\nfail_mod = "closed"\n')


WORKER_REPORT = ("## Report: M1 Player movement\n### Status: DONE\n### Files Changed\n- `src/player.gd`: movement\n"
                 "### Tests\ntest_player.gd (gdunit): 5 tests -- 5 passed, 0 failed\n### Build\nbuild OK\n")
PATCH = "*** Begin Patch\n*** Add File: notes.txt\n+ok\n*** Update File: src/player.gd\n@@\n-a\n+b\n*** End Patch\n"

# (runtime, --event hint, payload or raw bytes, the caller's cwd below the project)
Step = tuple[str, str, "dict[str, Any] | bytes", str]
PIPELINE_STEPS: list[Step] = [
    ("claude", "SessionStart", {"hook_event_name": "SessionStart", "source": "startup"}, "."),
    ("claude", "PreToolUse", WRITE_FORBIDDEN, "."),                                                   # role write
    ("claude", "PreToolUse", {"hook_event_name": "PreToolUse", "tool_name": "Write",
                              "tool_input": {"file_path": "docs/notes.md", "content": "x"}}, "."),
    ("claude", "PreToolUse", {"hook_event_name": "PreToolUse", "tool_name": "Bash",
                              "tool_input": {"command": "echo x > src/player.gd"}}, "."),              # shell write
    ("claude", "PreToolUse", {"hook_event_name": "PreToolUse", "tool_name": "Read",
                              "tool_input": {"file_path": "assets/hero.png"}}, "."),                   # asset read
    ("claude", "PreToolUse", {"hook_event_name": "PreToolUse", "tool_name": "Write",
                              "tool_input": {"file_path": ".hookgate/stage.jsonl",
                                             "content": '{"role": "build"}\n'}}, "."),                 # stage log
    ("claude", "PreToolUse", {"hook_event_name": "PreToolUse", "tool_name": "Agent", "tool_input": {
        "description": "worker: M1", "prompt": "implement M1", "subagent_type": "worker"}}, "."),      # dispatch
    ("claude", "SubagentStart", {"hook_event_name": "SubagentStart", "agent_id": "w1", "agent_type": "worker"}, "."),
    ("claude", "PreToolUse", {"hook_event_name": "PreToolUse", "agent_id": "w1", "agent_type": "worker",
                              "tool_name": "Write", "tool_input": {"file_path": "MEMORY.md", "content": "x"}}, "."),
    ("claude", "SubagentStop", {"hook_event_name": "SubagentStop", "agent_id": "w1", "agent_type": "worker",
                                "stop_hook_active": False, "last_assistant_message": "done, I think"}, "."),
    ("claude", "SubagentStop", {"hook_event_name": "SubagentStop", "agent_id": "w1", "agent_type": "worker",
                                "stop_hook_active": True, "last_assistant_message": WORKER_REPORT}, "."),
    ("claude", "Stop", {"hook_event_name": "Stop", "stop_hook_active": False,
                        "last_assistant_message": "All finished."}, "."),                              # completion
    ("claude", "PreToolUse", {"hook_event_name": "PreToolUse", "tool_name": "Bash",
                              "tool_input": {"command": "rm -rf build"}}, "src"),                      # command hook
    ("claude", "PreToolUse", {"hook_event_name": "PreToolUse", "tool_name": "Bash",
                              "tool_input": {"command": "npm publish"}}, "src"),                       # policy block
    ("claude", "PreToolUse", {"hook_event_name": "PreToolUse", "tool_name": "Write",
                              "tool_input": {"file_path": "draft.txt", "content": "x"}}, "."),         # policy modify
    ("claude", "PreToolUse", b'{"hook_event_name": "PreToolUse", "tool', "."),                          # unreadable
    ("claude", "", {"hook_event_name": "SomethingNew", "x": 1}, "."),                                   # unknown event
    ("codex", "PreToolUse", {"hook_event_name": "PreToolUse", "tool_name": "apply_patch",
                             "tool_input": {"command": PATCH}, "turn_id": "t1"}, "."),                 # Codex patch
    ("codex", "PreToolUse", {"hook_event_name": "PreToolUse", "tool_name": "Bash",
                             "tool_input": {"command": "ls"}, "turn_id": "t1"}, "."),
    ("codex", "Stop", {"hook_event_name": "Stop", "stop_hook_active": False, "turn_id": "t1"}, "."),
]
BROKEN_CONFIG_STEPS: list[Step] = [
    ("claude", "PreToolUse", WRITE_FORBIDDEN, "."),
    ("claude", "Stop", {"hook_event_name": "Stop", "stop_hook_active": False}, "."),
    ("codex", "PreToolUse", {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}}, "."),
]
SCENARIOS: dict[str, tuple[Callable[[Path], None], list[Step]]] = {
    "pipeline, command hooks and policies": (pipeline_project, PIPELINE_STEPS),
    "invalid config": (broken_config_project, BROKEN_CONFIG_STEPS),
}


def play(warm: Warm, root: Path, steps: list[Step], cold: bool) -> list[tuple[bytes, bytes, int]]:
    replies = []
    for number, (runtime, hint, payload, below) in enumerate(steps):
        if isinstance(payload, dict):
            payload = {"session_id": "s1", "cwd": str(root), **payload}
        env = (warm.cold if cold else warm.env)(HG_STEP=str(number))
        replies.append(warm.hook(runtime, payload, root / below, env, hint or None))
    return replies


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_every_gate_family_answers_the_same_warm_and_cold(warm: Warm, tmp_path: Path, scenario: str) -> None:
    setup, steps = SCENARIOS[scenario]
    template, root = tmp_path / "template", tmp_path / "project"
    template.mkdir()
    setup(template)

    shutil.copytree(template, root)
    cold = play(warm, root, steps, cold=True)
    cold_files = normalised_files(root)
    assert warm.sockets() == []  # HOOKGATE_WARM=off: no core was started

    shutil.rmtree(root)
    shutil.copytree(template, root)  # the same path: answers that name it stay comparable
    assert warm.warm("start", root).returncode == 0
    warm_replies = play(warm, root, steps, cold=False)
    assert warm.answered(root, len(steps)) == len(steps)  # every call went to the core

    for step, cold_reply, warm_reply in zip(steps, cold, warm_replies):
        assert warm_reply == cold_reply, step
    assert normalised_files(root) == cold_files
    # the table means something: it refuses, rewrites, holds and fails the way each gate should
    codes = [code for _, _, code in cold]
    outs = b"".join(out for out, _, _ in cold)
    if scenario == "invalid config":
        assert codes == [0, 0, 2] and b'"permissionDecision":"deny"' in cold[0][0]  # the gating events fail closed
        assert all(b"unknown field `fail_mod`" in err for _, err, _ in cold)
        return
    assert b"Build role cannot write game code directly" in outs
    assert b"Subagents cannot write project memory" in outs
    assert b"Cannot finish build yet" in outs
    assert b"docs/draft.txt" in outs  # the policy's rewrite
    assert f"no rm -rf (step 12 in {root})".encode() in outs  # the command hook saw the step's environment
    assert f"policy cwd {root / 'src'}, step 13".encode() in outs  # the policy ran in the caller's cwd
    assert all(b"guard policy loaded" in err for _, err, _ in cold[1:15])
    assert codes[15] == 2 and b"hookgate could not decide this call" in cold[15][1]  # unreadable: fails closed
    assert codes[17] == 2 and b"player.gd" in cold[17][1]  # Codex: the whole patch is refused


# -- auto-start, and every way a core can be missing or wrong ------------------------------------------

def build_project(root: Path) -> Path:
    Pipeline(root).role("build")
    return root


def payload(root: Path, session: str = "s1") -> dict[str, Any]:
    return {"session_id": session, "cwd": str(root), **WRITE_FORBIDDEN}


def wait_for(condition: Callable[[], bool], seconds: float = 30.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def core_running(warm: Warm, root: Path) -> bool:
    return warm.warm("status", root).returncode == 0


def test_a_cold_call_starts_the_core_and_the_next_calls_are_warm(warm: Warm, tmp_path: Path) -> None:
    root = build_project(tmp_path)
    assert warm.hook("claude", payload(root), root, warm.env())[0] == BLOCKED  # in-process: no core yet
    assert wait_for(lambda: core_running(warm, root))
    for _ in range(3):
        assert warm.hook("claude", payload(root), root, warm.env())[0] == BLOCKED
    assert warm.answered(root, 3) == 3
    assert len(warm.sockets()) == 1


def test_a_burst_of_cold_calls_starts_one_core(warm: Warm, tmp_path: Path) -> None:
    root = build_project(tmp_path)
    with ThreadPoolExecutor(8) as pool:
        replies = list(pool.map(lambda _: warm.hook("claude", payload(root), root, warm.env()), range(8)))
    assert all(reply == (BLOCKED, b"", 0) for reply in replies)
    assert wait_for(lambda: core_running(warm, root))
    time.sleep(1.5)  # a second core would have come up by now
    [path] = warm.sockets()
    table = [line.split(None, 2) for line in subprocess.run(["ps", "-ww", "-eo", "pid=,ppid=,args="],
                                                             capture_output=True, text=True).stdout.splitlines()]
    serving = {int(pid): int(ppid) for pid, ppid, args in table if f"--socket {path}" in args}
    cores = [pid for pid, ppid in serving.items() if ppid not in serving]
    assert len(cores) == 1, serving


def test_an_edit_of_a_project_file_applies_to_the_next_warm_call(warm: Warm, tmp_path: Path) -> None:
    root = build_project(tmp_path)
    assert warm.warm("start", root).returncode == 0
    allowed = {"session_id": "s1", "cwd": str(root), "hook_event_name": "PreToolUse", "tool_name": "Bash",
               "tool_input": {"command": "echo deploy"}}  # (make would be unknown: refused under build)
    assert warm.hook("claude", allowed, root, warm.env()) == (b"", b"", 0)
    # a command hook appears
    hooks = root / ".hookgate" / "hooks.json"
    hooks.write_text(json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "echo 'no deploys today' >&2; exit 2"}]}]}}))
    assert b"no deploys today" in warm.hook("claude", allowed, root, warm.env())[0]
    hooks.unlink()
    # a Python policy appears, then changes
    policy = root / ".hookgate" / "policies" / "p.py"
    policy.parent.mkdir()
    policy.write_text("from hookgate import block, register_hook\n"
                      "register_hook('d', 'pre_tool_use', {'tool': 'Bash'}, None, lambda e: block('policy one'))\n")
    assert b"policy one" in warm.hook("claude", allowed, root, warm.env())[0]
    policy.write_text(policy.read_text().replace("policy one", "policy two"))
    assert b"policy two" in warm.hook("claude", allowed, root, warm.env())[0]
    policy.unlink()
    # the config: cached once it has settled, and still every edit counts at once
    config = root / ".hookgate" / "config.toml"
    config.write_text("[gates.check_file_permissions]\nenabled = false\n")
    time.sleep(2.5)  # past config.cache.RACY_SECONDS: the core caches it now
    assert warm.hook("claude", payload(root), root, warm.env()) == (b"", b"", 0)
    assert warm.hook("claude", payload(root), root, warm.env()) == (b"", b"", 0)
    config.write_text("[gates.check_file_permissions]\nenabled = true\n")  # within the same second
    assert warm.hook("claude", payload(root), root, warm.env())[0] == BLOCKED
    assert warm.answered(root, 7) == 7  # all of them warm


def test_the_projects_own_modules_never_shadow_the_cores(warm: Warm, tmp_path: Path) -> None:
    root = build_project(tmp_path)
    (root / "msgspec.py").write_text("raise ImportError('the project shadowed msgspec')\n")
    (root / "hookgate").mkdir()
    (root / "hookgate" / "__init__.py").write_text("raise ImportError('the project shadowed hookgate')\n")
    assert warm.hook("claude", payload(root), root, warm.env())[0] == BLOCKED
    assert wait_for(lambda: core_running(warm, root))  # started from the project's folder, and up
    assert warm.hook("claude", payload(root), root, warm.env())[0] == BLOCKED
    assert warm.answered(root, 1) == 1


@pytest.mark.parametrize("breakage", ["client.ask = broken", "client.ask = lambda *a: client.ABSENT; client.start = broken"])
def test_a_failing_warm_client_leaves_the_call_to_the_in_process_path(warm: Warm, tmp_path: Path, breakage: str) -> None:
    root = build_project(tmp_path)
    probe = ("import io, sys\nimport hookgate.client as client\n"
             "def broken(*args): raise RuntimeError('a bug in the client')\n"
             f"{breakage}\n"
             f"sys.argv = ['hookgate', 'hook', 'claude']; sys.stdin = io.TextIOWrapper(io.BytesIO({json.dumps(payload(root)).encode()!r}))\n"
             "from hookgate.cli import main; sys.exit(main())")
    done = subprocess.run([sys.executable, "-c", probe], cwd=root, env=warm.env(), capture_output=True, timeout=60)
    assert (done.stdout, done.stderr, done.returncode) == (BLOCKED, b"", 0)


def test_hookgate_warm_off_never_starts_or_uses_a_core(warm: Warm, tmp_path: Path) -> None:
    root = build_project(tmp_path)
    for _ in range(3):
        assert warm.hook("claude", payload(root), root, warm.cold())[0] == BLOCKED
    time.sleep(0.5)
    assert warm.sockets() == [] and not core_running(warm, root)


def test_a_stale_socket_is_answered_in_process_and_replaced_by_a_live_core(warm: Warm, tmp_path: Path) -> None:
    root = build_project(tmp_path)
    assert warm.warm("start", root).returncode == 0
    [path] = warm.sockets()
    warm.warm("stop", root)
    # a core that died without cleaning up: its socket file stays, nobody listens
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(path))
    stale.close()
    lock = path.with_suffix(".lock")
    os.utime(lock, (0, 0))  # its start long ago
    assert path.exists() and not core_running(warm, root)
    assert warm.hook("claude", payload(root), root, warm.env())[0] == BLOCKED
    assert wait_for(lambda: core_running(warm, root))  # the cold call started a core in its place
    assert warm.hook("claude", payload(root), root, warm.env())[0] == BLOCKED
    assert warm.answered(root, 1) == 1


def other_hookgate(tmp_path: Path, version: str) -> Path:
    """A copy of this hookgate that calls itself another version (what an upgrade leaves running)."""
    import hookgate

    copy = tmp_path / "other" / "hookgate"
    shutil.copytree(Path(hookgate.__file__).parent, copy, ignore=shutil.ignore_patterns("__pycache__"))
    init = copy / "__init__.py"
    init.write_text(init.read_text().replace(f'__version__ = "{hookgate.__version__}"', f'__version__ = "{version}"'))
    return copy.parent


def test_a_core_of_another_hookgate_is_never_used(warm: Warm, tmp_path: Path) -> None:
    root = build_project(tmp_path / "project")
    assert warm.warm("start", root).returncode == 0
    [path] = warm.sockets()
    warm.warm("stop", root)
    # a core of version 9.9 on this project's socket (the path names the version, so only a
    # hash collision or a hand-made core gets it there; the client must check anyway)
    other = other_hookgate(tmp_path, "9.9")
    code = f"import sys; sys.path.insert(0, {str(other)!r}); from hookgate.warm.server import serve; " \
           f"sys.exit(serve({str(path)!r}, {str(root)!r}, 60))"
    core = subprocess.Popen([sys.executable, "-c", code], env=warm.env(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    try:
        assert wait_for(lambda: len(children(core.pid)) == 2)  # primed, two forks waiting
        forks = set(children(core.pid))
        reply = warm.hook("claude", payload(root), root, warm.env())
        assert reply == (BLOCKED, b"", 0)  # decided in-process, by this hookgate
        # ... although the other core was reached (a fork took the call, refused it and left)
        assert wait_for(lambda: len(forks - set(children(core.pid))) == 1, 10)
        assert warm.warm("status", root).returncode == 3  # this hookgate's status is refused too
        assert core.poll() is None
        assert not any(p.parent == path.parent and p != path for p in warm.sockets())  # no second core started
    finally:
        core.terminate()
        assert core.wait(10) == 0, core.stderr.read()  # type: ignore[union-attr]


def test_a_core_leaves_when_its_own_code_changes(warm: Warm, tmp_path: Path) -> None:
    root = build_project(tmp_path / "project")
    other = other_hookgate(tmp_path, "0.0.0-dev")
    path = warm.runtime_dir / "hookgate" / "dev.sock"
    path.parent.mkdir(mode=0o700)
    code = f"import sys; sys.path.insert(0, {str(other)!r}); from hookgate.warm.server import serve; " \
           f"sys.exit(serve({str(path)!r}, {str(root)!r}, 60))"
    core = subprocess.Popen([sys.executable, "-c", code], env=warm.env(), stdout=subprocess.DEVNULL)
    try:
        assert wait_for(lambda: bool(children(core.pid)))  # primed: its forks wait for calls
        (other / "hookgate" / "hookcall.py").touch()  # an edit of an editable install, an upgrade
        assert core.wait(15) == 0
        assert not path.exists()
    finally:
        if core.poll() is None:
            core.kill()


def test_an_idle_core_leaves_with_its_forks_and_its_socket(warm: Warm, tmp_path: Path) -> None:
    root = build_project(tmp_path)
    assert warm.warm("start", root, HOOKGATE_WARM_IDLE="2").returncode == 0
    [path] = warm.sockets()
    pid = int(path.with_suffix(".lock").read_text())
    assert warm.hook("claude", payload(root), root, warm.env())[0] == BLOCKED
    forks = children(pid)
    assert forks  # forks wait for the next call
    assert wait_for(lambda: not path.exists(), 20)
    assert wait_for(lambda: not alive(pid) and not any(map(alive, forks)), 10)
    assert warm.hook("claude", payload(root), root, warm.cold())[0] == BLOCKED


def test_a_core_leaves_when_its_project_is_gone(warm: Warm, tmp_path: Path) -> None:
    root = build_project(tmp_path / "project")
    assert warm.warm("start", root).returncode == 0
    [path] = warm.sockets()
    pid = int(path.with_suffix(".lock").read_text())
    assert warm.hook("claude", payload(root), root, warm.env())[0] == BLOCKED
    forks = children(pid)
    shutil.rmtree(root)  # a temporary project, removed: nobody will call this core again
    assert wait_for(lambda: not path.exists() and not alive(pid) and not any(map(alive, forks)), 15)


def test_stop_and_status(warm: Warm, tmp_path: Path) -> None:
    root = build_project(tmp_path)
    assert warm.warm("status", root).returncode == 3
    started = warm.warm("start", root)
    assert started.returncode == 0 and "running (pid" in started.stdout
    pid = started.stdout.split("pid ")[1].split(",")[0]
    again = warm.warm("start", root)
    assert again.returncode == 0 and f"pid {pid}," in again.stdout  # a second start finds the first core
    assert warm.warm("stop", root).stdout.strip().endswith("stopped")
    assert warm.warm("status", root).returncode == 3 and warm.sockets() == []


def exited(pid: int) -> bool:
    """Whether the process has exited (reaped, or a zombie its new parent has not reaped yet)."""
    try:
        return "zombie" in Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return True


def test_stopped_means_the_core_is_gone(warm: Warm, tmp_path: Path) -> None:
    """`warm stop` returns once the core has let go of its lock, not only of its socket (which it
    removes first): a core started right after it must not find the lock taken and leave."""
    root = build_project(tmp_path)
    for _ in range(3):  # the core's teardown after removing its socket is short: try it a few times
        started = warm.warm("start", root)
        assert started.returncode == 0, started.stdout
        pid = int(started.stdout.split("pid ")[1].split(",")[0])
        assert warm.warm("stop", root).stdout.strip().endswith("stopped")
        assert exited(pid)
        [lock] = (warm.runtime_dir / "hookgate").glob("*.lock")
        fd = os.open(lock, os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # free: a new core would take it
        finally:
            os.close(fd)


def test_concurrent_callers_each_get_their_own_answer(warm: Warm, tmp_path: Path) -> None:
    root = build_project(tmp_path)
    assert warm.warm("start", root).returncode == 0
    allowed = {"hook_event_name": "PreToolUse", "tool_name": "Write", "tool_input": {"file_path": "docs/a.md"}}

    def call(i: int) -> tuple[int, tuple[bytes, bytes, int]]:
        body = payload(root, f"s{i}") if i % 2 else {"session_id": f"s{i}", "cwd": str(root), **allowed}
        return i, warm.hook("claude", body, root, warm.env())

    with ThreadPoolExecutor(16) as pool:
        replies = dict(pool.map(call, range(32)))
    for i, (out, err, code) in replies.items():
        assert (out, err, code) == ((BLOCKED.replace(b"explain s1 ", f"explain s{i} ".encode()) if i % 2 else b""), b"", 0), i
    assert warm.answered(root, 32) == 32
    for i in range(32):  # each session got exactly its own call
        records = Pipeline(root, f"s{i}").metrics()
        assert [r["event"] for r in records] == (["file_write", "hook_block"] if i % 2 else ["file_write"])


def test_an_unsafe_runtime_directory_is_never_used(warm: Warm, tmp_path: Path) -> None:
    root = build_project(tmp_path)
    (warm.runtime_dir / "hookgate").mkdir(mode=0o777)
    os.chmod(warm.runtime_dir / "hookgate", 0o777)  # anyone could listen there
    assert warm.hook("claude", payload(root), root, warm.env())[0] == BLOCKED
    time.sleep(0.5)
    assert warm.sockets() == []


def children(pid: int) -> list[int]:
    found = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True).stdout
    return [int(p) for p in found.split()]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    state = subprocess.run(["ps", "-o", "stat=", "-p", str(pid)], capture_output=True, text=True).stdout.strip()
    return bool(state) and not state.startswith("Z")


# a core (this script) that forks and dies while its fork is still priming, before it waits
ORPHANED_WHILE_PRIMING = """
import os, sys, time
from hookgate.warm.server import orphan_watch
core = os.getpid()
fork = os.fork()
if fork == 0:
    time.sleep(0.5)  # priming (touch_pages) when its core is killed
    with orphan_watch(core):
        time.sleep(60)  # waiting for a call, as in accept()
    os._exit(3)
print(fork, flush=True)
"""


def gone(pid: int) -> bool:
    """Exited: no such process, or a zombie its new parent has not reaped yet."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def test_a_fork_whose_core_died_while_it_primed_leaves() -> None:
    """The fork compares its parent with the core's pid taken before the fork: one read in the
    fork after the core died is init's (the fork is init's child by then), and such a fork waited
    for calls forever (seen: forks of cores killed an hour before, still in accept())."""
    core = subprocess.Popen([sys.executable, "-c", ORPHANED_WHILE_PRIMING], stdout=subprocess.PIPE, text=True)
    assert core.stdout is not None
    fork = int(core.stdout.readline())
    assert core.wait(10) == 0
    try:
        assert wait_for(lambda: gone(fork), 10)
    finally:
        if not gone(fork):
            os.kill(fork, signal.SIGKILL)


def test_a_killed_core_leaves_no_fork_behind(warm: Warm, tmp_path: Path) -> None:
    root = build_project(tmp_path)
    assert warm.warm("start", root).returncode == 0
    [path] = warm.sockets()
    pid = int(path.with_suffix(".lock").read_text())
    assert wait_for(lambda: bool(children(pid)))  # primed: its forks wait for calls (slower on a busy machine)
    forks = children(pid)
    os.kill(pid, signal.SIGKILL)
    assert wait_for(lambda: not any(map(alive, forks)), 10)
    # the socket file it could not remove is stale: the next call is in-process and starts a new core
    os.utime(path.with_suffix(".lock"), (0, 0))
    assert warm.hook("claude", payload(root), root, warm.env())[0] == BLOCKED
    assert wait_for(lambda: core_running(warm, root))
