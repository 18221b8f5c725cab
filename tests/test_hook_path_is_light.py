"""The stdin hook path runs on every tool call of every agent: prove it imports nothing heavy, and
that the warm client (hookgate.client) imports nothing but itself and `_socket`."""

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from warm_support import Warm, warm  # noqa: F401 (a fixture)
from support import handler_argv
from hookgate.installers import plugin_hooks
from wheel_support import installed_wheel

ROOT = Path(__file__).resolve().parents[1]

HEAVY = {"asyncio", "watchfiles", "concurrent", "multiprocessing", "argparse", "subprocess", "http", "email",
         "urllib", "xml", "sqlite3", "ssl", "hookgate.rpc", "hookgate.cli.install", "hookgate.cli.demo"}

PROBE = r"""
import io, json, sys
before = set(sys.modules)
sys.argv = ["hookgate", "hook", "claude"]
sys.stdin = io.TextIOWrapper(io.BytesIO(PAYLOAD))
from hookgate.client import main  # as the registered command (core/bin/hookgate) imports it
code = main(sys.argv[1:])
sys.stdout.flush()
leaves = sys.modules["hookgate.client"].may_leave_now
print("\n" + json.dumps({"modules": sorted(set(sys.modules) - before), "leaves_at_once": leaves}), file=sys.stderr)
"""


# all the warm client may add to a bare interpreter: the command's own module, the runtime
# names and the private-directory check (both import-free), and a socket; not the command table
# (hookgate.cli), and not even `os` (the registered path, below, starts without site, which would
# have loaded it). Each module costs a warm call about 0.2 ms of its 15 or so.
WARM_CLIENT = {"hookgate", "hookgate.client", "hookgate.runtimes", "hookgate.private", "_socket"}
OURS = {m for m in WARM_CLIENT if m.startswith("hookgate")}


def probe(tmp_path, env, tool_name="Write", tool_input=None, decision="deny", **fields):
    """The modules one `hookgate hook claude` call imports, in-process; the call's decision is
    checked (a Write of game code under the build role is refused; pass decision=None for one
    that goes through, which answers nothing). `fields`: more of the payload (a tool_use_id)."""
    return set(probed(tmp_path, env, tool_name, tool_input, decision, **fields)["modules"])


def probed(tmp_path, env, tool_name="Write", tool_input=None, decision="deny", **fields):
    """What `probe` reads of the call: the modules it imported, and whether the command may leave
    at once after it (hookgate.client.may_leave_now)."""
    (tmp_path / ".hookgate").mkdir(exist_ok=True)
    (tmp_path / ".hookgate" / "current_role").write_text("build\n")
    tool_input = tool_input if tool_input is not None else {"file_path": "src/a.gd", "content": ""}
    payload = json.dumps({"hook_event_name": "PreToolUse", "session_id": "s", "cwd": str(tmp_path),
                          "tool_name": tool_name, "tool_input": tool_input, **fields}).encode()
    done = subprocess.run([sys.executable, "-c", f"PAYLOAD={payload!r}\n" + PROBE], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 0, done.stderr
    if decision is None:
        assert "permissionDecision" not in done.stdout, done.stdout
    else:
        assert f'"permissionDecision":"{decision}"' in done.stdout, done.stdout  # the probe really decided
    return probe_report(done.stderr)


def probe_report(stderr: str) -> dict:
    """What PROBE prints last on stderr: {"modules": [...], "leaves_at_once": bool}."""
    report = json.loads(stderr.strip().splitlines()[-1])
    assert set(report) == {"modules", "leaves_at_once"} and report["modules"], report
    return report


def test_a_cold_call_leaves_without_the_interpreters_teardown(tmp_path, warm):
    """The teardown of a cold call's modules costs about a tenth of it: nothing on the cold path
    of hookgate's own gates may register an exit handler or leave a thread running, or every cold
    call pays it again (core/bin/hookgate leaves at once only when nothing is left to finish)."""
    for tool_name, tool_input, decision in (("Write", None, "deny"), ("Bash", {"command": "echo hi > src/a.gd"}, "deny"),
                                            ("Bash", {"command": "ls"}, None)):
        assert probed(tmp_path, warm.cold(), tool_name, tool_input, decision)["leaves_at_once"] is True


def test_hook_claude_imports_no_heavy_module(tmp_path, warm):
    imported = probe(tmp_path, warm.cold())  # in-process, the way the first call of a session runs
    heavy = {m for m in imported if m.split(".")[0] in HEAVY or m in HEAVY}
    assert heavy == set()


# what only some events need: each is imported by the gate whose event and matcher a call meets
SHELL_READER = {"hookgate.pipeline.shell", "hookgate.pipeline.shell_lexer", "hookgate.pipeline.shell_programs",
                "hookgate.pipeline.shell_writes", "hookgate.pipeline.self_protect", "hookgate.shellwords"}
# what the shell reader imports only for a command that needs it: a glob, `hookgate` named, a patch
SHELL_ON_USE = {"glob", "shlex", "hookgate.formats.apply_patch"}
SUBAGENT_CHECKS = {"hookgate.pipeline.subagent_stop", "hookgate.pipeline.reports", "hookgate.pipeline.report_checks",
                   "hookgate.pipeline.outcome", "hookgate.pipeline.completion", "hookgate.pipeline.diagnostics"}
OTHER_EVENTS = {"hookgate.pipeline.assets", "hookgate.pipeline.stage_checks"}  # a Read; a stage completion
# a project without hooks.json or policies: neither their reader nor the registry is loaded
HOOK_SOURCES = {"hookgate.commandhooks.spec", "hookgate.commandhooks.gate", "hookgate.commandhooks.run",
                "hookgate.python_hooks.hooks", "hookgate.python_hooks.chain", "hookgate.python_hooks.load"}


def test_a_cold_write_imports_only_the_checks_of_a_write(tmp_path, warm):
    imported = probe(tmp_path, warm.cold())
    assert {"hookgate.pipeline.permissions", "hookgate.pipeline.stages", "hookgate.pipeline.session"} <= imported
    assert imported & (SHELL_READER | SUBAGENT_CHECKS | OTHER_EVENTS | HOOK_SOURCES) == set()
    # the gates' deadlines use the C module of `signal` (no enums built), the pins no `threading`
    assert imported & {"signal", "threading"} == set()


def test_a_cold_bash_call_imports_the_shell_reader_and_not_the_others(tmp_path, warm):
    imported = probe(tmp_path, warm.cold(), "Bash", {"command": "echo hi > src/a.gd"})
    assert SHELL_READER <= imported
    assert imported & (SUBAGENT_CHECKS | OTHER_EVENTS | HOOK_SOURCES) == set()
    assert imported & SHELL_ON_USE == set()
    imported = probe(tmp_path, warm.cold(), "Bash", {"command": "ls"}, decision=None)  # and one it lets through
    assert SHELL_READER <= imported and imported & (SUBAGENT_CHECKS | HOOK_SOURCES | SHELL_ON_USE) == set()
    # each on use: a glob that reaches a protected file is expanded, a patch's files read
    (tmp_path / "src").mkdir(exist_ok=True)
    (tmp_path / "src" / "a.gd").write_text("")
    assert "glob" in probe(tmp_path, warm.cold(), "Bash", {"command": "sed -i s/a/b/ src/*.gd"})
    patch = "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: src/b.gd\n+x\n*** End Patch\nEOF"
    assert "hookgate.formats.apply_patch" in probe(tmp_path, warm.cold(), "Bash", {"command": patch})


# one cold call in-process, noting hookgate's annotations read from strings: msgspec builds a
# struct's decoder from its annotations, and typing.NamedTuple checks its fields' at class creation;
# one kept as a string (`from __future__ import annotations`) becomes a typing.ForwardRef compiled
# and evaluated in every cold hook process. (Where typing or msgspec made one for code of their
# own or of the standard library, its first other frame is not hookgate's.)
# (PROBE's call, with the strings printed after its report)
STRING_ANNOTATIONS = r"""
import sys, typing
strings = []
forward_ref = typing.ForwardRef.__init__
def noted(self, arg, *args, **kwargs):
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.endswith(("typing.py", "_utils.py", "_core.py")):
        frame = frame.f_back
    if frame is not None and "/hookgate/" in frame.f_code.co_filename:
        strings.append(f"{arg} ({frame.f_code.co_filename.rpartition('/hookgate/')[2]}:{frame.f_lineno})")
    forward_ref(self, arg, *args, **kwargs)
typing.ForwardRef.__init__ = noted
""" + PROBE + r"""
print(json.dumps(strings), file=sys.stderr)
"""


def test_the_hook_path_decodes_with_annotations_it_need_not_compile(tmp_path, warm):
    """A Write, and a Bash call's before and after (the effect check reads back its snapshot and the
    ledger), each decoded in a fresh process: no struct on the way has string annotations."""
    (tmp_path / ".hookgate").mkdir()
    (tmp_path / ".hookgate" / "current_role").write_text("build\n")
    bash = {"tool_name": "Bash", "tool_input": {"command": "echo hi > notes.txt"}, "tool_use_id": "b1"}
    calls = [({"hook_event_name": "PreToolUse", "tool_name": "Write",
               "tool_input": {"file_path": "src/a.gd", "content": ""}}, '"permissionDecision":"deny"'),
             ({"hook_event_name": "PreToolUse", **bash}, None),
             ({"hook_event_name": "PostToolUse", **bash, "tool_response": {"stdout": ""}}, None)]
    for call, answer in calls:
        payload = json.dumps({"session_id": "s", "cwd": str(tmp_path), **call}).encode()
        done = subprocess.run([sys.executable, "-c", f"PAYLOAD={payload!r}\n" + STRING_ANNOTATIONS], cwd=tmp_path,
                              capture_output=True, text=True, timeout=60, env=warm.cold())
        assert done.returncode == 0 and (answer is None or answer in done.stdout), done
        assert json.loads(done.stderr.strip().splitlines()[-1]) == [], (call["hook_event_name"], done.stderr)
    assert "b1" in (tmp_path / ".hookgate" / "sessions" / "s" / "decisions.jsonl").read_text()  # both halves decided


def test_a_cold_bash_call_loads_neither_openssl_nor_a_toml_reader(tmp_path, warm):
    """The effect check wraps a Bash call under a role: it names its kept copies by SHA-256 (hashlib
    would load OpenSSL) and asks the capability tables (TOML) which after-events the runtime sends.
    Once hookgate's cache holds that answer (the first call fills it), a cold call needs neither;
    nor the change feed, which only a process living across calls keeps."""
    probe(tmp_path, warm.cold(), "Bash", {"command": "ls"}, decision=None, tool_use_id="t1")
    imported = probe(tmp_path, warm.cold(), "Bash", {"command": "ls"}, decision=None, tool_use_id="t2")
    assert {"hookgate.effect.after", "hookgate.effect.check", "hookgate.digest"} <= imported  # the check ran
    assert imported & {"hashlib", "_hashlib", "tomllib", "hookgate.effect.feed"} == set()
    kept = list((warm.home / ".local" / "state" / "hookgate" / "effect").glob("*/calls/*.msgpack"))
    assert kept  # and it kept the call's reading, under a digest's name


def test_hooks_json_and_policies_still_load_their_gates_on_the_cold_path(tmp_path, warm):
    """The sources that stay unloaded without a hooks.json or a policy load as soon as there is one."""
    (tmp_path / ".hookgate").mkdir()
    (tmp_path / ".hookgate" / "hooks.json").write_text(json.dumps({"PreToolUse": [
        {"matcher": "Write", "hooks": [{"type": "command", "command": "echo 'hooks.json says no' >&2; exit 2"}]}]}))
    imported = probe(tmp_path, warm.cold(), "Write", {"file_path": "docs/a.md", "content": ""})
    assert {"hookgate.commandhooks.spec", "hookgate.commandhooks.gate"} <= imported
    (tmp_path / ".hookgate" / "hooks.json").unlink()
    (tmp_path / ".hookgate" / "policies").mkdir()
    (tmp_path / ".hookgate" / "policies" / "p.py").write_text(
        "from hookgate import register_hook, block\n"
        "register_hook('no-md', 'pre_tool_use', {'tool': 'Write'}, None, lambda e: block('policy says no'))\n")
    imported = probe(tmp_path, warm.cold(), "Write", {"file_path": "docs/a.md", "content": ""})
    assert {"hookgate.python_hooks.hooks", "hookgate.python_hooks.chain"} <= imported


def test_the_warm_core_imports_once_what_a_cold_call_defers(tmp_path):
    """What a cold call imports only when its event needs it, the warm core imports while it
    primes, so that no fork pays for it (its scratch project has no hooks.json and no policy)."""
    script = ("import json, sys\nfrom hookgate.warm.server import prime\nprime(sys.argv[1], sys.argv[2])\n"
              "print(json.dumps(sorted(sys.modules)))")
    (tmp_path / "project").mkdir()
    (tmp_path / "scratch").mkdir()
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path / "project"), str(tmp_path / "scratch")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    deferred = SHELL_READER | SHELL_ON_USE | SUBAGENT_CHECKS | OTHER_EVENTS | HOOK_SOURCES
    assert deferred - set(json.loads(done.stdout.splitlines()[-1])) == set()


def test_every_declared_check_names_a_function_of_the_pack():
    """pipeline/declared.py names each check, not imports it: every name resolves to a function
    of a pipeline module (a typo or a renamed check fails here, not on the first event it matches)."""
    from hookgate.engine.lazy import Lazy
    from hookgate.pipeline import declared

    checks = [g.check for g in declared.GATES] + [o.observe for o in declared.OBSERVERS]
    assert checks and all(isinstance(check, Lazy) for check in checks)
    for check in checks:
        function = check.resolve()
        assert callable(function) and function.__module__ == check.ref.partition(":")[0], check.ref
        assert function.__module__.startswith("hookgate.pipeline.")
    ids = [g.id for g in declared.GATES] + [o.id for o in declared.OBSERVERS]
    assert len(ids) == len(set(ids))


def test_the_engine_from_the_declarations_decides_as_the_one_from_the_functions(tmp_path):
    """The same gates in the same order, and the same verdicts, as an engine whose pipeline checks
    are the functions themselves; and an engine built twice from the declarations is reused."""
    import msgspec

    from hookgate.config.load import open_project
    from hookgate.engine.context import Context
    from hookgate.engine.lazy import Lazy
    from hookgate.engine.loop import Engine
    from hookgate.engine_builder import build_engine
    from hookgate.model.events import PreToolUse
    from hookgate.pipeline import declared
    from hookgate.runtimes import stop_block_caps
    from support import MemorySession

    (tmp_path / ".hookgate").mkdir()
    (tmp_path / ".hookgate" / "current_role").write_text("build\n")
    project, config = open_project(tmp_path)
    engine = build_engine(config, project)
    assert build_engine(config, project) is engine
    pipeline_ids = {gate.id for gate in declared.GATES}
    others = [gate for gate in engine.gates if gate.id not in pipeline_ids]
    functions = [msgspec.structs.replace(g, check=g.check.resolve()) for g in declared.GATES]
    observers = [msgspec.structs.replace(o, observe=o.observe.resolve()) if isinstance(o.observe, Lazy) else o
                 for o in declared.OBSERVERS]
    direct = Engine([*functions, *others], observers, stop_block_caps=stop_block_caps())
    assert [g.id for g in engine.gates] == [g.id for g in direct.gates]
    calls = [("Write", {"file_path": str(tmp_path / "src" / "a.gd"), "content": ""}),
             ("Write", {"file_path": str(tmp_path / "docs" / "a.md"), "content": ""}),
             ("Bash", {"command": "echo x > src/a.gd"}), ("Bash", {"command": "hookgate uninstall claude"}),
             ("Bash", {"command": "ls"}), ("Read", {"file_path": str(tmp_path / "assets" / "a.png")})]
    refused = []
    for tool_name, tool_input in calls:
        event = PreToolUse(session_id="s", cwd=str(tmp_path), tool_name=tool_name, tool_input=tool_input)
        declared_decision, direct_decision = [
            e.evaluate(event, Context(project=project, session=MemorySession(), config=config)) for e in (engine, direct)]
        assert declared_decision == direct_decision, (tool_name, tool_input)
        refused.append(declared_decision.verdict.refuses)
    assert refused == [True, False, True, True, False, True], refused  # the cases differ, so the test can tell


def test_the_warm_client_imports_only_itself_and_a_socket(tmp_path, warm):
    assert warm.warm("start", tmp_path).returncode == 0
    imported = probe(tmp_path, warm.env())
    assert warm.answered(tmp_path, 1) == 1  # the core answered it
    assert "hookgate.client" in imported and imported <= WARM_CLIENT, imported - WARM_CLIENT


# -- the path a hook registration runs: `python -S -P -c CODE hook ...` (cli/install.py) -------------

@pytest.fixture(scope="module")
def wheel_hookgate(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A regular install (an editable one keeps hookgate out of site-packages: its registrations
    are the plain command, and none of this applies)."""
    return installed_wheel(tmp_path_factory.mktemp("wheel"))


def registered(hookgate: Path, project: Path, env: dict[str, str], event: str = "PreToolUse") -> list[str]:
    """What `hookgate install claude` registers for `event`, as Claude Code starts it (its argv)."""
    done = subprocess.run([str(hookgate), "install", "claude", "--project", str(project)], env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    return handler_argv(next(h for entry in settings["hooks"][event] for h in entry["hooks"]))


def run_registered(command: list[str] | str, payload: bytes, project: Path, env: dict[str, str],
                   importtime: bool = False) -> tuple[dict, set[str], subprocess.CompletedProcess[bytes]]:
    """A registered command as Claude Code runs it (an argv in exec form; a command line through
    sh), with -X importtime when asked (it lists every module the process imports, on stderr)."""
    argv = ["sh", "-c", command] if isinstance(command, str) else command
    if importtime:
        env = {**env, "PYTHONPROFILEIMPORTTIME": "1"}
    done = subprocess.run(argv, input=payload, cwd=project, env=env, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    modules = {line.rsplit("|", 1)[1].strip() for line in done.stderr.decode().splitlines()
               if line.startswith("import time:") and "self [us]" not in line}
    return json.loads(done.stdout), modules, done


def write_payload(project: Path) -> bytes:
    (project / ".hookgate").mkdir(exist_ok=True)
    (project / ".hookgate" / "current_role").write_text("build\n")
    return json.dumps({"hook_event_name": "PreToolUse", "session_id": "s", "cwd": str(project),
                       "tool_name": "Write", "tool_input": {"file_path": "src/a.gd", "content": ""}}).encode()


def test_a_registration_starts_hookgate_without_site_or_a_script(wheel_hookgate: Path, tmp_path: Path,
                                                                  warm: Warm) -> None:
    """No `site`, nothing of the working directory on sys.path (-P), and a command line of a few
    statements instead of core/bin/hookgate, which Python would compile on every start."""
    command = registered(wheel_hookgate, tmp_path, warm.env())
    python = wheel_hookgate.with_name("python")
    where = "import hookgate, pathlib; print(pathlib.Path(hookgate.__file__).resolve().parent.parent)"
    site_packages = subprocess.run([str(python), "-c", where], capture_output=True, text=True, timeout=60).stdout.strip()
    code = f'import sys; sys.path.append("{site_packages}"); from hookgate.client import launched; launched()'
    assert command == [str(python), "-S", "-P", "-c", code, "hook", "claude", "--event", "PreToolUse"]


def test_the_registered_warm_path_imports_neither_site_nor_os(wheel_hookgate: Path, tmp_path: Path,
                                                              warm: Warm) -> None:
    env = {**warm.env(), "PATH": "/usr/bin:/bin"}  # nothing of the checkout's venv
    payload = write_payload(tmp_path)
    command = registered(wheel_hookgate, tmp_path, env)
    started = subprocess.run([str(wheel_hookgate), "warm", "--project", str(tmp_path), "start"], env=env,
                             capture_output=True, text=True, timeout=60)
    assert started.returncode == 0, started.stderr
    answer, modules, _ = run_registered(command, payload, tmp_path, env, importtime=True)
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert answered_by(wheel_hookgate, tmp_path, env, 1), "the core answered it"
    ours = {m for m in modules if m.startswith("hookgate")}
    assert ours == OURS, ours ^ OURS
    assert {"site", "os", "msgspec", "hookgate.stdin"} & modules == set(), modules


@pytest.mark.parametrize("on_path", ["bin", "a link to it", "a copy of it", "by name"])
def test_the_plugin_channels_warm_path_imports_neither_site_nor_os(wheel_hookgate: Path, tmp_path: Path, warm: Warm,
                                                                  on_path: str) -> None:
    """The plugin channels' command (the Claude Code plugin's PreToolUse, run by sh as the runtime
    runs it) finds the installed hookgate on PATH, its folder or a link to it as pipx makes one,
    and starts it as a registration does: without site. A copy of the launcher away from its
    install finds it through site, and still decides. `by name` is what it ran before, the plain
    `hookgate` whose interpreter runs site, as a control that the test can tell them apart."""
    from hookgate_claude import plugin

    project = tmp_path / "project"
    project.mkdir()
    payload = write_payload(project)
    folder = wheel_hookgate.parent
    if on_path == "a link to it":
        folder = tmp_path / "links"
        folder.mkdir()
        (folder / "hookgate").symlink_to(wheel_hookgate)
    if on_path == "a copy of it":
        folder = tmp_path / "elsewhere" / "bin"
        folder.mkdir(parents=True)
        shutil.copy2(wheel_hookgate, folder / "hookgate")
    env = {**warm.env(), "PATH": f"{folder}:/usr/bin:/bin"}
    started = subprocess.run([str(wheel_hookgate), "warm", "--project", str(project), "start"], env=env,
                             capture_output=True, text=True, timeout=60)
    assert started.returncode == 0, started.stderr
    command = plugin.hook_command("PreToolUse") if on_path != "by name" else "hookgate hook claude --event PreToolUse"
    answer, modules, _ = run_registered(command, payload, project, env, importtime=True)
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert answered_by(wheel_hookgate, project, env, 1), "the core answered it"
    if on_path in ("by name", "a copy of it"):
        assert "site" in modules
    else:
        ours = {m for m in modules if m.startswith("hookgate")}
        assert ours == OURS, ours ^ OURS
        assert {"site", "os", "msgspec", "hookgate.stdin"} & modules == set(), modules


def test_a_warm_answer_leaves_the_registered_command_as_the_in_process_one_does(wheel_hookgate: Path,
                                                                               tmp_path: Path,
                                                                               warm: Warm) -> None:
    """The registered command leaves at once after writing a core's answer (core/bin/hookgate):
    the same stdout, stderr and exit code as a call decided in-process, for a refused call that
    exits 0 and one the fail mode blocks with exit 2 and a message on stderr."""
    env = {**warm.env(), "PATH": "/usr/bin:/bin"}
    refused = write_payload(tmp_path)
    command = registered(wheel_hookgate, tmp_path, env)
    started = subprocess.run([str(wheel_hookgate), "warm", "--project", str(tmp_path), "start"], env=env,
                             capture_output=True, text=True, timeout=60)
    assert started.returncode == 0, started.stderr
    answers = {}
    for name, call_env in (("warm", env), ("in-process", {**env, "HOOKGATE_WARM": "off"})):
        for payload in (refused, b"{not json"):
            done = subprocess.run(command, input=payload, cwd=tmp_path, env=call_env,
                                  capture_output=True, timeout=120)
            answers.setdefault(name, []).append((done.stdout, done.stderr, done.returncode))
    assert answers["warm"] == answers["in-process"]
    (deny, _, deny_code), (_, blocked, blocked_code) = answers["warm"]
    assert b'"permissionDecision":"deny"' in deny and deny_code == 0
    assert blocked_code == 2 and b"fail closed" in blocked, blocked
    assert answered_by(wheel_hookgate, tmp_path, env, 2), "the core answered the warm two"


def answered_by(hookgate: Path, project: Path, env: dict[str, str], count: int) -> bool:
    """Whether the project's core (of this install) has answered `count` calls; a fork tells its
    core after its caller has the answer, so this waits a moment for it."""
    deadline = time.monotonic() + 10
    while True:
        status = subprocess.run([str(hookgate), "warm", "--project", str(project), "status"], env=env,
                                capture_output=True, text=True, timeout=60).stdout
        if f" {count} calls answered" in status:
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)


def test_the_registered_cold_path_finds_its_packages(wheel_hookgate: Path, tmp_path: Path, warm: Warm) -> None:
    """No warm core: the call is decided in-process. Its gates need msgspec, which the install's
    own site-packages holds, and no more of site; a project policy gets what site adds (a .pth
    file's path here), as a plain start has it, and so does a msgspec found only through site."""
    env = {**warm.cold(), "PATH": "/usr/bin:/bin"}
    payload = write_payload(tmp_path)
    command = registered(wheel_hookgate, tmp_path, env)
    answer, modules, _ = run_registered(command, payload, tmp_path, env, importtime=True)
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert {"msgspec", "hookgate.stdin"} <= modules and "site" not in modules
    assert "pathlib" in modules and {"urllib.parse", "ipaddress"} & modules == set()  # hookgate.startup
    # msgspec without typing_extensions (installed here for watchfiles' anyio), so without the
    # inspect and ast it imports (-X importtime lists typing_extensions itself, as a failed import),
    # and without its own type introspection and JSON Schema helpers, or platform (hookgate.startup)
    site_packages = next(wheel_hookgate.parent.parent.glob("lib/python*/site-packages"))
    assert list(site_packages.glob("typing_extensions.py"))
    assert {"inspect", "ast", "dis", "msgspec.inspect", "msgspec._json_schema", "textwrap", "platform"} & modules == set()

    extra = tmp_path / "extra"
    (extra / "house_rules").mkdir(parents=True)
    (extra / "house_rules" / "__init__.py").write_text("DENY = 'house rule: no scenes'\n")
    (site_packages / "house-rules.pth").write_text(f"{extra}\n")
    # a project policy importing a module only site (the .pth) puts on the path
    (tmp_path / ".hookgate" / "policies").mkdir()
    (tmp_path / ".hookgate" / "policies" / "house.py").write_text(
        "from house_rules import DENY\nfrom hookgate import register_hook, block\n\n"
        "register_hook('no-scenes', 'pre_tool_use', {'tool': 'Write', 'path_pattern': '*.tscn'}, None,\n"
        "              lambda e: block(DENY))\n")
    try:
        answer, modules, _ = run_registered(command, payload, tmp_path, env, importtime=True)
        assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"
        assert {"site", "msgspec", "hookgate.stdin"} <= modules
        scene = json.loads(payload)
        scene["tool_input"]["file_path"] = "docs/a.tscn"
        answer, _, _ = run_registered(command, json.dumps(scene).encode(), tmp_path, env)
        assert "house rule: no scenes" in json.dumps(answer), answer
    finally:
        (site_packages / "house-rules.pth").unlink()
    (tmp_path / ".hookgate" / "policies" / "house.py").unlink()

    # msgspec where only site finds it (another folder a .pth names), as a distribution may lay it out
    moved = tmp_path / "elsewhere"
    moved.mkdir()
    (site_packages / "msgspec").rename(moved / "msgspec")
    (site_packages / "elsewhere.pth").write_text(f"{moved}\n")
    try:
        answer, modules, _ = run_registered(command, payload, tmp_path, env, importtime=True)
        assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"
        assert {"site", "msgspec", "hookgate.stdin"} <= modules
    finally:
        (site_packages / "elsewhere.pth").unlink()
        (moved / "msgspec").rename(site_packages / "msgspec")


MSGSPEC_STATE = r"""
import json, sys
LEFT_OUT = {"typing_extensions", "inspect", "ast", "msgspec.inspect", "msgspec._json_schema", "textwrap", "platform"}
if sys.argv[1] == "plain":
    import msgspec
    light = None
else:
    if sys.argv[1] == "after typing_extensions":
        import typing_extensions
    from hookgate.startup import import_msgspec_lightly, msgspec_as_imported
    import_msgspec_lightly()
    import msgspec._utils
    light = [sorted(LEFT_OUT & set(sys.modules)), msgspec._utils._get_type_hints.__module__]
    msgspec_as_imported()  # what loading a project's policy does first
import msgspec._utils as helpers, msgspec._json_schema, platform, uuid
print(json.dumps({"light": light, "hints": helpers._get_type_hints.__module__,
                  "required": repr(helpers.Required), "not_required": repr(helpers.NotRequired),
                  "inspect": msgspec.inspect is sys.modules["msgspec.inspect"],
                  "schema": [msgspec.json.schema is msgspec._json_schema.schema,
                             msgspec.json.schema_components is msgspec._json_schema.schema_components],
                  "json": msgspec.json is sys.modules["msgspec.json"], "uuid": [uuid._LINUX, uuid._AIX],
                  "platform": platform.system()}))
"""


@pytest.mark.parametrize("how", ["light", "after typing_extensions"])
def test_msgspec_imported_lightly_is_msgspec_as_imported_once_a_policy_loads(how: str) -> None:
    """hookgate.startup leaves typing_extensions, msgspec's introspection and schema helpers and
    platform out while msgspec loads on the cold path; a policy about to run gets msgspec as a plain
    import makes it (its helpers read typing_extensions; its package and json module hold the real
    helpers). Where typing_extensions is loaded already, msgspec takes it as a plain import does."""
    def state(mode: str) -> dict:
        done = subprocess.run([sys.executable, "-c", MSGSPEC_STATE, mode], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    plain, light = state("plain"), state(how)
    assert plain.pop("light") is None
    assert plain["hints"] == "typing_extensions"  # installed here: what the plain import takes
    assert plain["inspect"] and plain["schema"] == [True, True] and plain["json"]
    assert light.pop("light") == ([[], "typing"] if how == "light" else
                                  [["ast", "inspect", "typing_extensions"], "typing_extensions"])
    assert light == plain


STOOD_IN_USE = r"""
import json, sys
from hookgate.startup import import_msgspec_lightly
import_msgspec_lightly()
import msgspec
stood_in = [isinstance(msgspec.inspect, type(sys)) and "msgspec.inspect" not in sys.modules,
            "msgspec._json_schema" not in sys.modules]
class Point(msgspec.Struct):
    x: int
    y: float = 0.0
print(json.dumps({"stood_in": stood_in, "schema": msgspec.json.schema(Point),
                  "components": msgspec.json.schema_components([Point]),
                  "fields": [field.name for field in msgspec.inspect.type_info(Point).fields],
                  "now": ["msgspec.inspect" in sys.modules, "msgspec._json_schema" in sys.modules]}))
"""


def test_what_a_stand_in_is_asked_after_msgspec_loaded_is_the_real_modules() -> None:
    """The stand-ins are gone from sys.modules once msgspec is loaded; hookgate's own code or
    anything else that uses msgspec's introspection or schema afterwards gets the real helpers."""
    done = subprocess.run([sys.executable, "-c", STOOD_IN_USE], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    used = json.loads(done.stdout)
    assert used.pop("stood_in") == [True, True]
    assert used.pop("now") == [True, True]

    plain = subprocess.run([sys.executable, "-c", STOOD_IN_USE.replace(
        "from hookgate.startup import import_msgspec_lightly\nimport_msgspec_lightly()\n", "")],
        capture_output=True, text=True, timeout=60)
    assert plain.returncode == 0, plain.stderr
    expected = json.loads(plain.stdout)
    assert expected.pop("stood_in") == [False, False] and expected.pop("now") == [True, True]
    assert used == expected and used["fields"] == ["x", "y"]


def test_a_msgspec_that_needs_typing_extensions_is_imported_the_plain_way(tmp_path: Path) -> None:
    """Should a msgspec ever import typing_extensions without a fallback, hiding it must not cost
    the cold path its msgspec (the decision would fail for want of its core)."""
    (tmp_path / "msgspec").mkdir()
    (tmp_path / "msgspec" / "__init__.py").write_text("import typing_extensions\nNEEDS_IT = True\n")
    probe = ("import sys, json\nfrom hookgate import startup\nstartup.import_msgspec_lightly()\nimport msgspec\n"
             "print(json.dumps([msgspec.NEEDS_IT, 'typing_extensions' in sys.modules, "
             "'typing_extensions' in startup._stood_in]))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [True, True, False]


def test_a_cold_answer_leaves_without_teardown_and_loses_nothing(wheel_hookgate: Path, tmp_path: Path,
                                                              warm: Warm) -> None:
    """A call decided in-process leaves as soon as its answer is out (core/bin/hookgate): what
    hookgate recorded is all there. Where a project policy ran, the process finishes as usual:
    the policy's unclosed, buffered file is still flushed."""
    env = {**warm.cold(), "PATH": "/usr/bin:/bin"}
    payload = write_payload(tmp_path)
    command = registered(wheel_hookgate, tmp_path, env)
    answer, _, _ = run_registered(command, payload, tmp_path, env)
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"
    session = tmp_path / ".hookgate" / "sessions" / "s"
    assert [json.loads(line)["event"] for line in (session / "metrics.jsonl").read_text().splitlines()] == ["file_write", "hook_block"]
    assert len((session / "decisions.jsonl").read_text().splitlines()) == 1

    trail = tmp_path / "policy-trail.txt"
    (tmp_path / ".hookgate" / "policies").mkdir()
    (tmp_path / ".hookgate" / "policies" / "trail.py").write_text(
        "from hookgate import register_hook\n\n"
        f"TRAIL = open({str(trail)!r}, 'a')  # buffered, never closed: the interpreter's teardown flushes it\n\n"
        "def note(event):\n    TRAIL.write('saw ' + event.tool_name + '\\n')\n\n"
        "register_hook('trail', 'pre_tool_use', {'tool': 'Write'}, None, note)\n")
    answer, _, _ = run_registered(command, payload, tmp_path, env)
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert trail.read_text() == "saw Write\n"


def test_a_call_leaves_at_once_only_while_nothing_is_left_to_run() -> None:
    """What else may still have to run before the process ends: an exit handler, another thread."""
    script = ("import atexit, threading\nfrom hookgate import client as hook\n"
              "seen = [hook._nothing_left()]\n"
              "done = threading.Event()\nthread = threading.Thread(target=done.wait)\nthread.start()\n"
              "seen.append(hook._nothing_left())\ndone.set()\nthread.join()\nseen.append(hook._nothing_left())\n"
              "atexit.register(print, 'at exit')\nseen.append(hook._nothing_left())\n"
              "print(seen)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.stdout.split("\n")[:2] == ["[True, False, True, False]", "at exit"], done.stderr


@pytest.mark.parametrize("runtime, folder, event, tool, tool_input", [
    ("codex", ".codex/hooks.json", "PreToolUse", "Bash", {"command": "echo x > src/a.gd"}),
    ("gemini", ".gemini/settings.json", "BeforeTool", "write_file", {"file_path": "src/a.gd", "content": ""}),
])
def test_the_shell_form_registrations_run_the_same_command_line(wheel_hookgate: Path, tmp_path: Path, warm: Warm,
                                                                runtime: str, folder: str, event: str, tool: str,
                                                                tool_input: dict) -> None:
    """Codex and Gemini CLI run a handler through a shell, a gating event's inside hookgate's
    fail-closed wrapper (`sh -c SCRIPT hookgate COMMAND...`): the command line's statements reach
    Python whole, and the call is decided, in-process and by the core."""
    env = warm.env()
    write_payload(tmp_path)
    done = subprocess.run([str(wheel_hookgate), "install", runtime, "--project", str(tmp_path)], env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    settings = json.loads((tmp_path / folder).read_text())
    command = next(h for entry in settings["hooks"][event] for h in entry["hooks"])["command"]
    assert command.startswith("sh -c ") and " -S -P -c " in command, command
    payload = json.dumps({"hook_event_name": event, "session_id": f"shell-{runtime}", "cwd": str(tmp_path),
                          "tool_name": tool, "tool_input": tool_input, "tool_use_id": "c1"}).encode()
    for call_env in ({**env, "HOOKGATE_WARM": "off"}, env):  # in-process, then through a core
        if call_env is env:
            started = subprocess.run([str(wheel_hookgate), "warm", "--project", str(tmp_path), "start"],
                                     env=env, capture_output=True, text=True, timeout=60)
            assert started.returncode == 0, started.stderr
        called = subprocess.run(["sh", "-c", command], input=payload, cwd=tmp_path, env=call_env, capture_output=True,
                                timeout=120)
        said = (called.stdout + called.stderr).decode()
        assert "Build role cannot write game code directly (a.gd)" in said, said
        assert "could not run" not in said, said
    assert answered_by(wheel_hookgate, tmp_path, env, 1), "the core answered the second call"


def test_modules_beside_the_command_or_in_the_project_shadow_nothing(wheel_hookgate: Path, tmp_path: Path,
                                                                     warm: Warm) -> None:
    """Python puts a script's folder, or for `-c` the working directory, first on sys.path. Neither
    is there for the registered command (-P), nor for core/bin/hookgate (it takes its folder off): a
    `hookgate.py` or `msgspec.py` in the install's bin/ (a /usr/local/bin anyone's tool writes to)
    or in the project the agent works in is never imported, warm or cold, and the call is decided
    as without them."""
    env = {**warm.env(), "PATH": "/usr/bin:/bin"}
    payload = write_payload(tmp_path)
    command = registered(wheel_hookgate, tmp_path, env)
    planted = [folder / name for folder in (wheel_hookgate.parent, tmp_path)
               for name in ("hookgate.py", "msgspec.py", "hookgate_claude.py")]
    for module in planted:
        module.write_text("raise SystemExit('shadowed: ' + __file__)\n")
    try:
        for call_env in ({**env, "HOOKGATE_WARM": "off"}, env):  # in-process, then through a core
            if call_env is env:
                started = subprocess.run([str(wheel_hookgate), "warm", "--project", str(tmp_path), "start"],
                                         env=env, capture_output=True, text=True, timeout=60)
                assert started.returncode == 0, started.stderr
            answer, _, done = run_registered(command, payload, tmp_path, call_env)
            assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"
            assert b"shadowed" not in done.stderr, done.stderr
        assert answered_by(wheel_hookgate, tmp_path, env, 1), "the core answered the second call"
        listed = subprocess.run([str(wheel_hookgate), "--version"], env=env, capture_output=True, text=True,
                                timeout=60)
        assert listed.returncode == 0 and listed.stdout.startswith("hookgate "), listed  # the plain command too
    finally:
        for module in planted:
            module.unlink()


@pytest.mark.real
def test_the_real_claude_code_runs_the_site_less_registration(wheel_hookgate: Path, tmp_path: Path) -> None:
    """The pinned Claude Code, driven by the scripted fake model, runs what a regular install
    registers (`python -S -P -c CODE hook claude ...`): a forbidden Write is refused with the
    role's reason, an allowed one goes through, on the cold path and then the warm one."""
    from harness.runtimes import base_env, new_project

    work, home = new_project(tmp_path)
    env = {**base_env(home), "XDG_RUNTIME_DIR": ""}  # the hooks' environment (drivers/claude.py)
    wheel_command(wheel_hookgate, work, env, "install", "claude", "--project", str(work))
    settings = json.loads((work / ".claude" / "settings.json").read_text())
    commands = [handler_argv(h) for entries in settings["hooks"].values() for entry in entries for h in entry["hooks"]]
    assert commands and all(command[1] == "-S" for command in commands), commands
    claude_refuses_cold_then_warm(wheel_hookgate, work, home, env)


def wheel_command(wheel_hookgate: Path, work: Path, env: dict[str, str], *args: str) -> str:
    done = subprocess.run([str(wheel_hookgate), *args], cwd=work, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def claude_refuses_cold_then_warm(wheel_hookgate: Path, work: Path, home: Path, env: dict[str, str]) -> None:
    """Two sessions of the pinned Claude Code in `work`, the first cold (its calls start the core),
    the second warm: in each a forbidden Write is refused with the role's reason and an allowed one
    goes through."""
    from drivers.claude import run_claude
    from harness.fakemodel import Call, FakeModel, Say

    try:
        with FakeModel() as model:
            for turn in ("cold", "warm"):
                # a new session drops the role an earlier one owned
                wheel_command(wheel_hookgate, work, env, "role", "set", "build")
                target, allowed = work / "src" / f"{turn}.gd", work / f"{turn}.txt"
                marker = model.script(f"site_less_{turn}",
                                      Call("Write", {"file_path": str(target), "content": "extends Node\n"}),
                                      Call("Write", {"file_path": str(allowed), "content": "ok\n"}), Say("done"))
                run = run_claude(work, home, model, f"{marker} write both")
                assert run.returncode == 0, run.stderr
                assert not target.exists() and allowed.read_text() == "ok\n"
                results = model.tool_results(f"site_less_{turn}")
                assert any(f"Build role cannot write game code directly ({turn}.gd)" in r for r in results), results
        answered = re.search(r"(\d+) calls answered", wheel_command(wheel_hookgate, work, env, "warm", "status"))
        assert answered and int(answered.group(1)) >= 3, "the second session's calls went to the warm core"
    finally:
        subprocess.run([str(wheel_hookgate), "warm", "stop"], cwd=work, env=env, capture_output=True, timeout=60)


@pytest.mark.real
def test_the_real_claude_code_runs_the_plugin_channels_command(wheel_hookgate: Path, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The pinned Claude Code with hookgate from its plugin channel (this checkout as the
    marketplace) and a regular install's bin/ on PATH: the plugin's command starts that install's
    interpreter with the statements a registration runs, not the launcher script. A forbidden Write
    is refused with the role's reason and an allowed one goes through, cold and then warm."""
    from drivers.claude import install_plugin
    from harness.runtimes import base_env, new_project

    work, home = new_project(tmp_path)
    monkeypatch.setenv("PATH", f"{wheel_hookgate.parent}:/usr/bin:/bin")  # what the runtime and its hooks see
    env = {**base_env(home), "XDG_RUNTIME_DIR": ""}
    install_plugin(work, home)
    (installed,) = (home / ".claude" / "plugins" / "cache").rglob("hooks/hooks.json")
    handler = json.loads(installed.read_text())["hooks"]["PreToolUse"][0]["hooks"][0]
    assert plugin_hooks.SITELESS in handler["args"][-1]
    assert not (work / ".claude").exists()  # whatever guards the session below is the plugin
    claude_refuses_cold_then_warm(wheel_hookgate, work, home, env)


@pytest.mark.real
def test_the_real_codex_runs_the_plugin_channels_command(wheel_hookgate: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The pinned Codex with hookgate from its plugin channel (this checkout's marketplace, the
    plugin's hooks reviewed) and a regular install's bin/ on PATH runs the plugin's line, quoted
    for a shell, through its own: a Bash write of game code under the build role is refused with
    the role's reason, and a write every role may make goes through."""
    from drivers.codex import add_plugin, hookgate, run_codex
    from harness.fakemodel import Call, FakeModel, Say
    from harness.runtimes import new_project
    from hookgate_codex import plugin

    work, home = new_project(tmp_path)
    monkeypatch.setenv("PATH", f"{wheel_hookgate.parent}:/usr/bin:/bin")  # what the runtime and its hooks see
    with FakeModel() as model:
        add_plugin(work, home, model)  # Codex's copy of the plugin is what the checkout ships
        assert plugin_hooks.SITELESS in shlex.split(plugin.hook_command("PreToolUse"))[-1]
        hookgate("install", "codex", "--plugin", cwd=work, home=home)
        hookgate("role", "set", "build", cwd=work, home=home)
        target, allowed = work / "src" / "player.gd", work / "notes.txt"
        marker = model.script("plugin_codex", Call("exec_command", {"cmd": f"mkdir -p src && echo x > {target}"}),
                              Call("exec_command", {"cmd": f"echo ok > {allowed}"}), Say("done"))
        run = run_codex(work, home, f"{marker} write the player", bypass_hook_trust=False)
        assert run.returncode == 0, run.stderr[-2000:]
        assert not target.exists() and allowed.read_text() == "ok\n"
        results = model.tool_results("plugin_codex")
        assert any("Build role cannot write game code directly (player.gd)" in r for r in results), results


@pytest.mark.real
def test_the_real_gemini_cli_runs_the_extensions_command(wheel_hookgate: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The pinned Gemini CLI with hookgate from its extension channel (this checkout's extension,
    its folder trusted) and a regular install's bin/ on PATH runs the extension's site-less line
    through its shell: a write of game code under the build role is refused with the role's
    reason, and a write every role may make goes through."""
    from drivers import gemini
    from harness.fakemodel import Call, FakeModel, Say
    from harness.runtimes import new_project
    from hookgate_gemini import extension

    work, home = new_project(tmp_path)
    (work / "src").mkdir()
    monkeypatch.setenv("PATH", f"{wheel_hookgate.parent}:/usr/bin:/bin")  # what the runtime and its hooks see
    with FakeModel() as model:
        gemini.configure(work, home)
        gemini.install_extension(work, home)  # the installed copy is what the checkout ships
        assert plugin_hooks.SITELESS in shlex.split(extension.hook_command("PreToolUse"))[-1]
        gemini.hookgate("role", "set", "build", cwd=work, home=home)
        marker = model.script("plugin_gemini", Call("write_file", {"file_path": "src/player.gd", "content": "x\n"}),
                              Call("write_file", {"file_path": "notes.txt", "content": "ok\n"}), Say("ok"))
        run = gemini.run_gemini(work, home, model, f"{marker} write both")
        assert run.returncode == 0, run.stderr[-2000:]
        assert not (work / "src" / "player.gd").exists() and (work / "notes.txt").read_text() == "ok\n"
        results = model.tool_results("plugin_gemini")
        assert any("Build role cannot write game code directly (player.gd)" in r for r in results), results


@pytest.mark.real
@pytest.mark.parametrize("runtime", ["codex", "gemini"])
def test_the_real_shell_runtimes_run_the_site_less_registration(wheel_hookgate: Path, tmp_path: Path,
                                                                runtime: str) -> None:
    """The pinned Codex and Gemini CLI, driven by the scripted fake model, run the command line a
    regular install registers through their shells (a gating event's inside hookgate's fail-closed
    wrapper): a Bash write of game code under the build role is refused with the role's reason."""
    from drivers import codex, gemini
    from harness.fakemodel import Call, FakeModel, Say
    from harness.runtimes import new_project

    work, home = new_project(tmp_path)
    (work / "src").mkdir()
    runtime_env = codex.env(home) if runtime == "codex" else gemini.env(home)
    with FakeModel() as model:
        if runtime == "codex":
            codex.write_config(home, model)
        else:
            gemini.configure(work, home)
        wheel_command(wheel_hookgate, work, runtime_env, "install", runtime, "--user")
        wheel_command(wheel_hookgate, work, runtime_env, "role", "set", "build")
        settings = (codex.codex_home(home) / "hooks.json" if runtime == "codex"
                    else gemini.gemini_home(home) / "settings.json")
        commands = [h["command"] for entries in json.loads(settings.read_text())["hooks"].values()
                    for entry in entries for h in entry["hooks"]]
        assert commands and all(" -S -P -c " in command for command in commands), commands
        write = (Call("exec_command", {"cmd": "echo x > src/player.gd"}) if runtime == "codex"
                 else Call("run_shell_command", {"command": "echo x > src/player.gd"}))
        marker = model.script(f"site_less_{runtime}", write, Say("ok"))
        run = (codex.run_codex(work, home, f"{marker} write the player") if runtime == "codex"
               else gemini.run_gemini(work, home, model, f"{marker} write the player"))
        assert run.returncode == 0, run.stderr[-2000:]
        assert not (work / "src" / "player.gd").exists()
        results = model.tool_results(f"site_less_{runtime}")
        assert any("Build role cannot write game code directly (player.gd)" in r for r in results), results


# -- pathlib without urllib.parse (hookgate.startup.import_pathlib_lightly) ------------------------

LIGHTLY = r"""
import json, sys
from hookgate.startup import import_pathlib_lightly
import_pathlib_lightly()
import pathlib
loaded = {"pathlib": pathlib.__file__, "urllib.parse": "urllib.parse" in sys.modules}
if sys.argv[1] == "import":  # something imports urllib.parse after pathlib: the real module
    import urllib.parse
    loaded["urlsplit"] = urllib.parse.urlsplit("http://h/p").path
loaded["uri"] = pathlib.Path("/a b/c").as_uri()
loaded["real"] = hasattr(sys.modules["urllib.parse"], "urlsplit")
print(json.dumps(loaded))
"""


@pytest.mark.parametrize("then", ["as_uri", "import"])
def test_pathlib_loads_without_urllib_and_as_uri_still_works(tmp_path: Path, then: str) -> None:
    done = subprocess.run([sys.executable, "-S", "-c", LIGHTLY, then], capture_output=True, text=True, timeout=60,
                          env={"PYTHONPATH": str(ROOT / "core")}, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    loaded = json.loads(done.stdout)
    assert loaded["urllib.parse"] is False  # pathlib is in, urllib.parse is not
    assert loaded["uri"] == "file:///a%20b/c" and loaded["real"] is True
    if then == "import":
        assert loaded["urlsplit"] == "/p"


def test_a_pathlib_that_wants_more_of_urllib_is_imported_the_plain_way(tmp_path: Path) -> None:
    """Should a Python's pathlib take another name of urllib.parse, the stand-in cannot give it:
    pathlib is then imported as usual (here a pathlib that does, first on the path)."""
    (tmp_path / "pathlib.py").write_text("from urllib.parse import quote_from_bytes, urlsplit\n"
                                         "def as_uri(): return urlsplit('file:///x').path\n")
    probe = ("import sys\nsys.path.insert(0, sys.argv[1])\n"
             "from hookgate.startup import import_pathlib_lightly\nimport_pathlib_lightly()\n"
             "import pathlib\nprint(pathlib.__file__, pathlib.as_uri(), hasattr(sys.modules['urllib.parse'], 'urlsplit'))")
    done = subprocess.run([sys.executable, "-S", "-c", probe, str(tmp_path)], capture_output=True, text=True,
                          timeout=60, env={"PYTHONPATH": str(ROOT / "core")}, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(tmp_path / "pathlib.py"), "/x", "True"]
