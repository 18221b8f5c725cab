"""The adversarial shell corpus: a GodotMaker-style fixture, real bash, and the full hook cycle.

Ground truth is what real bash does: each case runs in a fresh copy of the fixture and every
protected file's bytes and mode are compared before and after. Then the same case goes through
the hook cycle of a runtime dialect on another fresh copy: PreToolUse (through
hookgate.hookcall.handle with the captured payload shapes of parity-tests/payloads), the command
in real bash if it was not refused, PostToolUse (PostToolUseFailure on Claude Code when it
failed), so that an effect check acts where one exists; then the protected files are compared
with the state before the call.
"""

from __future__ import annotations

import functools
import hashlib
import http.server
import io
import json
import os
import shutil
import stat
import subprocess
import sys
import tarfile
import threading
import time
import tomllib
import zipfile
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any, Callable

from hookgate.effect.tree import RACY_NS
from hookgate.hookcall import handle

HERE = Path(__file__).parent
PAYLOADS = HERE.parent / "parity-tests" / "payloads"
CASES_FILE = HERE / "shell_corpus" / "cases.toml"
BIG_TREE_FILES = 2500          # more than the 2000 files the old tree walk stopped at
BIG_COMMAND_CHARS = 105_000    # over the reader's limit, under what `bash -c` accepts in one argument
# git's bookkeeping; the files hookgate itself writes on every call (its records, the effect
# check's store, which session owns the role): none of them is the command's doing
SKIPPED = (".git/", ".hookgate/sessions/", ".hookgate/metrics.jsonl/", ".hookgate/effect/", ".hookgate/role_owner.json/")
# but what git runs by itself: the programs its config names (core.fsmonitor, diff.external) and its hooks,
# the project's and those of a repository cloned inside it (addons/lib, which `git -C` runs)
GIT_PROGRAMS = (".git/config/", ".git/config.worktree/", ".git/hooks/")
NESTED_REPOSITORY = "addons/lib"
# and what the git hooks managers' hooks run once installed: the commands their configs name
# (pre-commit's one name; lefthook's names from its documentation, lefthook.dev/configuration)
HOOK_MANAGERS = (".pre-commit-config.yaml", *(f"{folder}{stem}.{ext}" for stem in ("lefthook", "lefthook-local")
                 for ext in ("yml", "yaml", "toml", "json", "jsonc") for folder in ("", ".", ".config/")))
HOOK_MANAGER_FOLDERS = (".lefthook/", ".lefthook-local/")

# What each actor may not write, as the godot preset says (kept here, independent of hookgate's
# matcher, so the ground truth does not come from the code under test).
PLANNING_DOCS = ("plan.md", "structure.md", "style.md", "assets.md", "gap.md", "scenes.md", "toc.md", "roadmap.md")


def protected(actor: str, rel: str) -> bool:
    rel = rel.lower()
    if _git_program(rel) or rel in HOOK_MANAGERS or rel.startswith(HOOK_MANAGER_FOLDERS):
        return True  # for every agent: git runs them on its own, at any later git command
    name = rel.rsplit("/", 1)[-1]
    in_e2e = rel.startswith("e2e/") or "/e2e/" in rel
    if actor == "lead":
        return in_e2e or name.endswith((".gd", ".tscn", ".tres"))
    return (in_e2e or name == "memory.md" or rel.startswith("memory/") or rel.startswith(".hookgate/")
            or "/.hookgate/" in rel or name in PLANNING_DOCS or name == "project.godot")


# -- the cases ----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Case:
    family: str
    source: str
    actor: str      # "lead" | "worker"
    expect: str     # "write" | "harmless": the author's intent only
    template: str   # the command with {root}, {out}, {url}, {big} still in it
    big: bool = False
    detached: bool = False  # it leaves work running after bash returned: run with run_detached

    @property
    def id(self) -> str:
        return f"{self.family}[{self.actor}]:{self.template[:60]!r}"


def load_cases() -> list[Case]:
    data = tomllib.loads(CASES_FILE.read_text())
    targets = data["targets"]
    cases: list[Case] = []
    for family in data["family"]:
        actors = family["actor"] if isinstance(family["actor"], list) else [family["actor"]]
        for actor in actors:
            for command in family["cases"]:
                command = command.strip("\n") if "\n" in command else command.strip(" ")
                for target in (targets[actor] if "{t}" in command else [None]):
                    text = command.replace("{t}", target) if target else command
                    cases.append(Case(family["name"], family["source"], actor, family["expect"], text,
                                      big=family.get("fixture") == "big" or text.startswith("rm -rf bulk"),
                                      detached=family.get("detached", False)))
    return cases


# -- the fixture -----------------------------------------------------------------------------------------

PROJECT_FILES = {
    "PLAN.md": "# Plan\n- [ ] player: pending\n- [ ] enemy: pending\n",
    "STRUCTURE.md": "# Structure\nsrc/player.gd\n",
    "MEMORY.md": "# Memory\nabc\n",
    "GDD.md": "# GDD\n",
    "project.godot": "config_version=5\n",
    "memory/notes.md": "notes\n",
    "src/player.gd": "extends Node2D\nfunc jump():\n\tpass\n",
    "src/enemy.gd": "extends Node2D\nfunc attack():\n\tpass\n",
    "src/main.tscn": "[gd_scene format=3]\n",
    "src/util/helpers.gd": "extends RefCounted\n",
    "e2e/test_play.gd": "extends SceneTree\n",
    "e2e/linked.gd": "extends SceneTree # has a second name outside the project\n",
    "docs/notes.md": "a note about x\n",
    "docs/guide.md": "guide\nline two\n",
    "build/out.log": "log\n",
    "notes.txt": "n\n",
    ".hookgate/current_role": "build\n",
    ".hookgate/evaluation.json": '{"verdict": "playable"}\n',
    ".hookgate/stage.jsonl": '{"role": "gdd", "ts": "2026-01-01T00:00:00Z"}\n',
    ".gitignore": ".hookgate/sessions/\nbuild/\n",
    "scripts/bump.sh": "#!/bin/sh\necho bump >> src/player.gd\necho bump >> PLAN.md\n",
    "scripts/ok.sh": "#!/bin/sh\nmkdir -p build && echo ok > build/ok.txt\n",
    "Makefile": ("all: gen\ngen:\n\techo '# gen' >> src/player.gd\n\techo 'extends Node' > src/gen.gd\n"
                 "plan:\n\techo '- [x] done' >> PLAN.md\ndocs:\n\tmkdir -p docs && echo out > docs/out.md\n"),
}
OUTSIDE_FILES = {
    "evil.gd": "extends Node # replaced\n",
    "player.gd": "extends Node # downloaded\n",
    "test_play.gd": "extends SceneTree # downloaded\n",
    "newplan.md": "# Replaced plan\n",
    "PLAN.md": "# an unrelated PLAN.md outside the project\n",
    "list.txt": "src/player.gd\n",
    "evil.sh": "rm -f src/player.gd\n",
    "script.py": "open('PLAN.md', 'w').write('x')\nopen('src/player.gd', 'a').write('x')\n",
    "harmless.py": "import os\nos.makedirs('build', exist_ok=True)\nopen('build/py.txt', 'w').write('x')\n",
    "empty.c": "int hookgate_corpus;\n",
    "srcdir/src/player.gd": "extends Node # from srcdir\n",
    "srcdir/PLAN.md": "# plan from srcdir\n",
    "srcdir/e2e/test_play.gd": "extends SceneTree # from srcdir\n",
    "docsdir/docs/extra.md": "extra\n",
    "change.patch": ("--- a/src/enemy.gd\n+++ b/src/enemy.gd\n@@ -1,3 +1,3 @@\n extends Node2D\n-func attack():\n"
                     "+func attack_hard():\n \tpass\n"),
    "enemy.diff": "--- enemy.gd\n+++ enemy.gd\n@@ -1,3 +1,3 @@\n extends Node2D\n-func attack():\n+func strike():\n \tpass\n",
    "plan.patch": ("--- a/STRUCTURE.md\n+++ b/STRUCTURE.md\n@@ -1,2 +1,2 @@\n # Structure\n-src/player.gd\n"
                   "+src/hero.gd\n"),
    "docs.patch": "--- a/docs/guide.md\n+++ b/docs/guide.md\n@@ -1,2 +1,2 @@\n guide\n-line two\n+line 2\n",
}
ARCHIVE_WRITES = {"src/player.gd": "extends Node # from the archive\n", "PLAN.md": "# plan from the archive\n",
                  "e2e/test_play.gd": "extends SceneTree # from the archive\n"}
ARCHIVE_DOCS = {"docs/new.md": "new doc\n"}
GIT_ENV = {"GIT_AUTHOR_NAME": "corpus", "GIT_AUTHOR_EMAIL": "corpus@example.invalid", "GIT_COMMITTER_NAME": "corpus",
           "GIT_COMMITTER_EMAIL": "corpus@example.invalid", "GIT_CONFIG_NOSYSTEM": "1"}


def _write_all(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _archive(out: Path, name: str, files: dict[str, str]) -> None:
    for kind, suffix in (("tar", ".tar"), ("tgz", ".tgz"), ("zip", ".zip")):
        target = out / (name + suffix)
        if kind == "zip":
            with zipfile.ZipFile(target, "w") as archive:
                for rel, text in files.items():
                    archive.writestr(rel, text)
            continue
        with tarfile.open(target, "w:gz" if kind == "tgz" else "w") as archive:
            for rel, text in files.items():
                data = text.encode()
                info = tarfile.TarInfo(rel)
                info.size, info.mode = len(data), 0o644
                archive.addfile(info, io.BytesIO(data))


def build_template(base: Path, big: bool = False) -> Path:
    """base/project (a git repo with uncommitted changes), base/out, base/home, base/tmp."""
    project, out = base / "project", base / "out"
    _write_all(project, PROJECT_FILES)
    (project / "assets").mkdir()
    (project / "assets" / "hero.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(32)))
    for script in ("scripts/bump.sh", "scripts/ok.sh"):
        (project / script).chmod(0o755)
    (project / "links").mkdir()
    (project / "links" / "plan-link.md").symlink_to("../PLAN.md")
    if big:
        for i in range(BIG_TREE_FILES):
            path = project / "bulk" / f"d{i // 100:02d}" / f"f{i:04d}.txt"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("x")
        (project / "bulk" / "zz").mkdir()
        (project / "bulk" / "zz" / "last.gd").write_text("extends Node\n")  # walked after the first 2000
    env = {**os.environ, **GIT_ENV}
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=project, check=True, env=env)
    subprocess.run(["git", "add", "-A"], cwd=project, check=True, env=env)
    subprocess.run(["git", "commit", "-qm", "fixture"], cwd=project, check=True, env=env)
    # an addon cloned inside the project: a repository of its own, which the project's does not track
    lib = project / NESTED_REPOSITORY
    lib.mkdir(parents=True)
    (lib / "plugin.cfg").write_text("[plugin]\nname=\"lib\"\n")
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "addon"]):
        subprocess.run(["git", *args], cwd=lib, check=True, env=env)
    # uncommitted work that git stash / checkout / restore / reset would throw away
    for rel in ("src/player.gd", "PLAN.md", "e2e/test_play.gd"):
        with open(project / rel, "a") as f:
            f.write("uncommitted change\n")
    (project / "e2e" / "untracked.gd").write_text("extends SceneTree\n")
    _write_all(out, OUTSIDE_FILES)
    (out / "evil.sh").chmod(0o755)
    _archive(out, "payload", ARCHIVE_WRITES)
    _archive(out, "payload_docs", ARCHIVE_DOCS)
    (base / "home").mkdir()
    (base / "tmp").mkdir()
    return base


def fresh_copy(template: Path, dest: Path) -> Path:
    """A copy of the fixture, with the links into the project that a copy cannot keep."""
    shutil.copytree(template, dest, symlinks=True)
    project, out = dest / "project", dest / "out"
    os.link(project / "e2e" / "linked.gd", out / "linked.hl")
    (out / "plan.link").symlink_to(project / "PLAN.md")
    (out / "memory.link").symlink_to(project / "memory")
    return dest


def _git_program(rel: str) -> bool:
    return any(f"/{rel}/".find("/" + p) >= 0 for p in GIT_PROGRAMS)


def _skipped(rel: str) -> bool:
    return any((rel + "/").startswith(s) for s in SKIPPED) and not (
        _git_program(rel) or any(p.startswith(rel + "/") for p in GIT_PROGRAMS))


def snapshot(project: Path) -> dict[str, tuple[Any, ...]]:
    """Every file, link, folder and special file of the project: content hash and mode, link target,
    folder mode, the special file's type and mode."""
    state: dict[str, tuple[Any, ...]] = {}
    for folder, dirs, files in os.walk(project):
        rel_folder = os.path.relpath(folder, project)
        for name in dirs + files:
            rel = os.path.normpath(os.path.join(rel_folder, name))
            if _skipped(rel) or rel == ".git":
                continue
            path = os.path.join(folder, name)
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode):
                state[rel] = ("link", os.readlink(path))
            elif stat.S_ISDIR(info.st_mode):
                state[rel] = ("dir", stat.S_IMODE(info.st_mode))
            elif not stat.S_ISREG(info.st_mode):  # a FIFO made where a file was: opening it would wait for a writer
                state[rel] = ("special", stat.S_IFMT(info.st_mode), stat.S_IMODE(info.st_mode))
            else:
                with open(path, "rb") as f:
                    digest = hashlib.sha1(f.read()).hexdigest()
                state[rel] = ("file", digest, stat.S_IMODE(info.st_mode))
        dirs[:] = [d for d in dirs if not _skipped(os.path.normpath(os.path.join(rel_folder, d)))]
    return state


def changed(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    return sorted(rel for rel in before.keys() | after.keys() if before.get(rel) != after.get(rel))


# -- running a command ------------------------------------------------------------------------------------

def render(case: Case, base: Path, url: str) -> str:
    return (case.template.replace("{root}", str(base / "project")).replace("{out}", str(base / "out"))
            .replace("{url}", url).replace("{big}", ": " + "x" * BIG_COMMAND_CHARS))


# the interpreter's own folder first: a version manager's shim would cost a second per python3
_PATH = os.pathsep.join([os.path.dirname(os.path.realpath(sys.executable)), os.environ.get("PATH", "/usr/bin:/bin")])


def shell_env(base: Path) -> dict[str, str]:
    return {"PATH": _PATH, "HOME": str(base / "home"), "TMPDIR": str(base / "tmp"),
            "LANG": "C.UTF-8", **GIT_ENV}


def run_bash(command: str, base: Path, detached: bool = False,
             returned: Callable[[subprocess.CompletedProcess[bytes]], None] | None = None) -> subprocess.CompletedProcess[bytes]:
    """`command` in real bash; `returned` is called once bash has returned (the runtime's
    after-event). `detached`: what the command left running is waited for after that, before
    this returns (run_detached), so that what it writes later is in the files looked at next."""
    if detached:
        return run_detached(command, base, returned or (lambda result: None))
    try:
        result = subprocess.run(["bash", "-c", command], cwd=base / "project", env=shell_env(base),
                                stdin=subprocess.DEVNULL, capture_output=True, timeout=30)
    except subprocess.TimeoutExpired as exc:
        result = subprocess.CompletedProcess(exc.cmd, 124, b"", b"timeout")
    if returned:
        returned(result)
    return result


# The runner of a detached case: the subreaper of everything bash starts (prctl
# PR_SET_CHILD_SUBREAPER), so that a job that outlives bash (`&`, setsid, a tmux or screen server)
# is still its child to wait for, however it detached. It prints bash's exit code once bash
# returned, and reaps the rest once told to go on (killing what still runs after 30 s).
RUNNER = r"""
import ctypes, os, signal, subprocess, sys, time
ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)
with open(sys.argv[2], "wb") as output:
    bash = subprocess.Popen(["bash", "-c", sys.argv[1]], stdin=subprocess.DEVNULL, stdout=output, stderr=output)
    try:
        code = bash.wait(timeout=30)
    except subprocess.TimeoutExpired:
        bash.kill()
        bash.wait()
        code = 124
print(code, flush=True)
sys.stdin.readline()
deadline = time.monotonic() + 30
while True:
    try:
        pid, _ = os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        break
    if pid:
        continue
    if time.monotonic() > deadline:
        for entry in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    if int(stat.read().rsplit(")", 1)[1].split()[1]) == os.getpid():
                        os.kill(int(entry), signal.SIGKILL)
            except (OSError, ValueError):
                pass
    time.sleep(0.01)
"""


def run_detached(command: str, base: Path,
                 returned: Callable[[subprocess.CompletedProcess[bytes]], None]) -> subprocess.CompletedProcess[bytes]:
    output = base / "detached-output"
    runner = subprocess.Popen([sys.executable, "-c", RUNNER, command, str(output)], cwd=base / "project",
                              env=shell_env(base), stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert runner.stdin is not None and runner.stdout is not None
    code = int(runner.stdout.readline())
    result = subprocess.CompletedProcess(["bash", "-c", command], code, output.read_bytes(), b"")
    returned(result)
    runner.stdin.write(b"go\n")
    runner.stdin.close()
    assert runner.wait(timeout=60) == 0
    return result


@dataclass
class Truth:
    changed: list[str]
    protected_changed: list[str]
    after: dict[str, Any]
    before: dict[str, Any]
    exit_code: int
    late: list[str]  # the protected files changed after bash had returned (by work it left running)

    @property
    def writes(self) -> bool:
        return bool(self.protected_changed)


def ground_truth(case: Case, template: Path, work: Path, url: str) -> Truth:
    base = fresh_copy(template, work)
    before = snapshot(base / "project")
    returned: list[dict[str, Any]] = []  # a detached case's files as bash returned
    on_return = (lambda _: returned.append(snapshot(base / "project"))) if case.detached else None
    result = run_bash(render(case, base, url), base, case.detached, on_return)
    after = snapshot(base / "project")
    diff = changed(before, after)
    late = [rel for rel in changed(returned[0], after) if protected(case.actor, rel)] if returned else []
    return Truth(diff, [rel for rel in diff if protected(case.actor, rel)], after, before, result.returncode, late)


# -- the hook cycle ---------------------------------------------------------------------------------------------

def _captured(file: str) -> dict[str, dict[str, Any]]:
    """The first captured payload of each (event, main/subagent) for the Bash tool."""
    shapes: dict[str, dict[str, Any]] = {}
    for line in (PAYLOADS / file).read_text().splitlines():
        payload = json.loads(line)["payload"]
        if payload.get("tool_name") != "Bash":
            continue
        key = payload["hook_event_name"] + (":sub" if payload.get("agent_id") else ":main")
        shapes.setdefault(key, payload)
    return shapes


@functools.lru_cache(maxsize=None)
def dialect_shapes(runtime: str) -> tuple[Any, dict[str, dict[str, Any]]]:
    if runtime == "claude":
        from hookgate_claude import dialect
        return dialect, _captured("claude_2.1.332.hooks.jsonl")
    from hookgate_codex import dialect
    return dialect, _captured("codex_0.171.0.hooks.jsonl")


@dataclass
class Cycle:
    refused: bool
    reason: str
    ran: bool
    protected_changed: list[str]
    reverted: bool   # the call was allowed and something it wrote was put back (or it said so)
    records: list[dict[str, Any]] = field(default_factory=list)


def _payload(runtime: str, event: str, actor: str, command: str, base: Path, exit_code: int, output: str,
             call: str | None = None) -> bytes:
    _, shapes = dialect_shapes(runtime)
    who = ":sub" if actor == "worker" else ":main"
    key = event + who
    if key not in shapes:  # Claude's capture holds a failure of the lead only: the same shape with the agent's keys
        shape = dict(shapes[event + ":main"])
        shape.update({k: v for k, v in shapes["PreToolUse" + who].items() if k in ("agent_id", "agent_type")})
    else:
        shape = dict(shapes[key])
    shape.update(session_id="corpus-session", cwd=str(base / "project"), tool_input={**shape["tool_input"], "command": command})
    # one call: its after-event names the call its PreToolUse named (the captured failure is another call's)
    shape["tool_use_id"] = call or shapes["PreToolUse" + who].get("tool_use_id")
    if event == "PostToolUse":
        shape["tool_response"] = ({"stdout": output, "stderr": "", "interrupted": False, "isImage": False,
                                   "noOutputExpected": False} if runtime == "claude" else output)
    if event == "PostToolUseFailure":
        shape["error"] = f"Exit code {exit_code}\n{output}"
    return json.dumps(shape).encode()


def _refusal(runtime: str, answer: Any) -> str | None:
    if runtime == "codex":
        return answer.stderr if answer.exit_code == 2 else None
    if answer.exit_code == 2:
        return answer.stderr
    if not answer.stdout:
        return None
    out = json.loads(answer.stdout)
    specific = out.get("hookSpecificOutput", {})
    if specific.get("permissionDecision") == "deny":
        return specific.get("permissionDecisionReason", "")
    if out.get("decision") == "block":
        return out.get("reason", "")
    return None


def hook_cycle(case: Case, runtime: str, template: Path, work: Path, url: str, truth: Truth,
               settled: bool = False) -> Cycle:
    """`settled`: as a long-lived core decides it with its change feed on (effect/feed.py, which
    the caller enables): the project read and watched by an earlier call, its signatures older
    than a kernel tick, so the case's own readings look only at what the feed saw touched."""
    base = fresh_copy(template, work)
    project = base / "project"
    command = render(case, base, url)
    env = {"HOOKGATE_PROJECT_DIR": str(project), "HOME": str(base / "home")}
    dialect, _ = dialect_shapes(runtime)
    if settled:
        time.sleep(RACY_NS / 1e9 + 0.01)
        for event in ("PreToolUse", "PostToolUse"):
            handle(dialect, _payload(runtime, event, case.actor, "true", base, 0, "", call="toolu_settle"), env)
    before = snapshot(project)
    pre = handle(dialect, _payload(runtime, "PreToolUse", case.actor, command, base, 0, ""), env)
    reason = _refusal(runtime, pre)
    ran = reason is None
    if ran:
        def after_event(result: subprocess.CompletedProcess[bytes]) -> None:
            output = (result.stdout + result.stderr).decode(errors="replace")[:2000]
            event = "PostToolUse" if result.returncode == 0 or runtime == "codex" else "PostToolUseFailure"
            handle(dialect, _payload(runtime, event, case.actor, command, base, result.returncode, output), env)

        run_bash(command, base, case.detached, after_event)
    after = snapshot(project)
    diff = changed(before, after)
    records = _records(project)
    undone = [rel for rel in truth.changed if after.get(rel) == before.get(rel)]
    reverted = ran and (bool(undone) or any(r.get("event") == "write_reverted" for r in records))
    return Cycle(not ran, reason or "", ran, [rel for rel in diff if protected(case.actor, rel)], reverted, records)


def _records(project: Path) -> list[dict[str, Any]]:
    records = []
    for path in (project / ".hookgate" / "sessions").glob("*/metrics.jsonl"):
        records.extend(json.loads(line) for line in path.read_text().splitlines() if line.strip())
    return records


# -- a local HTTP server for curl / wget ---------------------------------------------------------------------------

class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass


def serve(folder: Path) -> tuple[str, http.server.ThreadingHTTPServer]:
    handler = functools.partial(_Quiet, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}", server
