"""The effect check, end to end: the PreToolUse hook through the runtime's stdin dialect, the
command in real bash, the after-hook; then the files' bytes and modes compared with what they were.
The commands write protected files in forms a syntax gate cannot read (variables, globs,
interpreters, programs that write on their own), so it is the effect that is judged."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from effect_support import DIALECTS, Project, read, state
from hookgate.hookcall import handle
from hookgate.effect.store import store_for

RUNTIMES = ["claude", "codex"]
WORKER = ("agent-w1", "worker")
GD = "extends Node\nvar speed = 1\n"


# the syntax gate off: every command reaches the effect check, which is what is tested here
NO_SYNTAX_GATE = "[gates.check_shell_writes]\nenabled = false\n"


def build_project(root: Path, runtime: str, syntax_gate: bool = False) -> Project:
    project = Project(root, runtime).role("build")
    if not syntax_gate:
        project.config(NO_SYNTAX_GATE)
    project.write("src/player.gd", GD)
    project.write("src/enemy.gd", GD.replace("1", "2"), mode=0o640)
    project.write("scenes/main.tscn", "[gd_scene]\n")
    project.write("PLAN.md", "- [ ] pending\n")
    project.write("notes.txt", "notes\n")
    return project


@pytest.fixture(params=RUNTIMES)
def project(request, tmp_path) -> Project:
    return build_project(tmp_path / "game", request.param)


def only_changed(before: dict, after: dict) -> set[str]:
    return {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}


WRITES_GAME_CODE = {
    "variable target": "p=src/player.gd; echo 'var hacked = true' >> $p",
    "glob with sed -i": "sed -i 's/speed/SPEED/' src/*.gd",
    "python heredoc": "python3 - <<'EOF'\nimport pathlib\np = pathlib.Path('src') / ('play' + 'er.gd')\np.write_text('pwned')\nEOF",
    "brace expansion": "for f in src/{player,enemy}.gd; do printf 'x' > \"$f\"; done",
    "perl -i": "perl -pi -e 's/Node/Node2D/' src/enemy.gd",
    "find -exec": "find . -name '*.gd' -exec sed -i 's/extends/#/' {} +",
    "touch -r hides mtime": "f=src/player.gd; cp $f /tmp/hg-ref.$$; echo evil >> $f; touch -r /tmp/hg-ref.$$ $f; rm /tmp/hg-ref.$$",
    "chmod only": "f=src/enemy.gd; chmod 755 $f",
    "delete": "f=src/player.gd; rm $f",
    "delete a folder": "d=src; rm -r $d",
    "rename away": "f=src/player.gd; mv $f src/player.bak",
    "replace by a symlink": "f=src/player.gd; rm $f; ln -s /etc/hostname $f",
    "tscn via xargs": "echo scenes/main.tscn | xargs sed -i 's/gd_scene/x/'",
    "eval": "eval \"$(printf 'echo x > src/%s' player.gd)\"",
}


@pytest.mark.parametrize("command", WRITES_GAME_CODE.values(), ids=WRITES_GAME_CODE.keys())
def test_a_protected_file_written_by_the_lead_is_put_back(project, command):
    before = state(project.root)
    out = project.bash(command)
    assert not out.pre_blocked, out.pre_reason
    after = state(project.root)
    # what is left changed is only what the lead may write (a renamed-away copy under another name)
    assert only_changed(before, after) <= {"src/player.bak"}, only_changed(before, after)
    assert all(before[k] == after[k] for k in before if k.endswith((".gd", ".tscn")))
    assert out.post_blocked and "put back" in out.post_reason
    assert "Dispatch a Worker subagent" in out.post_reason  # how to do it the allowed way
    reverted = [m for m in project.metrics() if m["event"] == "write_reverted"]
    assert reverted and all(m["command"] == command for m in reverted)


def test_a_created_game_file_is_removed(project):
    before = state(project.root)
    out = project.bash("n=src/new; echo 'extends Node' > $n.gd; mkdir -p lib/deep; cp src/player.gd lib/deep/copy.gd")
    assert out.post_blocked and "src/new.gd was created" in out.post_reason
    assert "lib/deep/copy.gd was created" in out.post_reason
    after = state(project.root)
    assert only_changed(before, after) == set()


def test_a_command_that_changes_files_and_fails_is_checked_too(project):
    before = state(project.root)
    out = project.bash("sed -i 's/speed/SPEED/' src/*.gd; exit 3")
    assert out.exit_code == 3
    assert out.post_blocked
    assert state(project.root) == before


def test_the_allowed_part_of_a_call_stands(project):
    before = state(project.root)
    out = project.bash("sed -i 's/pending/verified/' *.md; p=src/player.gd; echo x >> $p; echo more >> notes.txt")
    after = state(project.root)
    assert only_changed(before, after) == {"PLAN.md", "notes.txt"}
    assert after["PLAN.md"][0] == b"- [ ] verified\n"
    assert out.post_blocked and "src/player.gd" in out.post_reason and "PLAN.md" not in out.post_reason


def test_modes_are_put_back_exactly(project):
    project.bash("chmod 600 src/*.gd; echo x >> src/enemy.gd" if False else "for f in src/*.gd; do chmod 600 $f; done")
    assert os.stat(project.root / "src/enemy.gd").st_mode & 0o777 == 0o640
    assert os.stat(project.root / "src/player.gd").st_mode & 0o777 == 0o644


def test_harmless_commands_are_not_refused_nor_reverted(project):
    for command in ("ls -la src", "cat src/*.gd > /dev/null", "cp src/player.gd /tmp/hg-player.gd.bak.$$",
                    "p=PLAN.md; sed -i 's/pending/done/' $p", "mkdir -p build && echo ok > build/log.txt",
                    "git status 2>/dev/null; true", "touch src/player.gd"):
        before = state(project.root)
        out = project.bash(command)
        assert not out.pre_blocked and not out.post_blocked, (command, out)
        changed = only_changed(before, state(project.root))
        assert changed <= {"PLAN.md", "build/log.txt", "src/player.gd"}, (command, changed)
    assert not [m for m in project.metrics() if m["event"] == "write_reverted"]


def test_a_worker_may_write_game_code_but_not_the_plan(project):
    before = state(project.root)
    out = project.bash("for f in src/*.gd PLAN.md; do echo '# edited' >> \"$f\"; done", agent=WORKER)
    after = state(project.root)
    assert only_changed(before, after) == {"src/player.gd", "src/enemy.gd"}
    assert out.post_blocked and "PLAN.md" in out.post_reason and "planning documents" in out.post_reason


def test_no_role_no_check(project):
    project.role(None)
    out = project.bash("p=src/player.gd; echo x >> $p")
    assert not out.post_blocked
    assert (project.root / "src/player.gd").read_text().endswith("x\n")


def test_the_check_can_be_switched_off(project):
    project.config(NO_SYNTAX_GATE + "[effect]\nenabled = false\n")
    out = project.bash("p=src/player.gd; echo x >> $p")
    assert not out.post_blocked
    assert (project.root / "src/player.gd").read_text().endswith("x\n")


def test_hard_link_and_dev_shm_symlink_writes_are_seen(project, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    before = state(project.root)
    out = project.bash(f"ln src/player.gd {outside}/link; echo evil >> {outside}/link")
    assert out.post_blocked and state(project.root) == before
    assert (outside / "link").read_text().endswith("evil\n")  # the link keeps its bytes, the file is put back
    shm = Path("/dev/shm") if os.path.isdir("/dev/shm") else tmp_path
    link = shm / f"hg-effect-{os.getpid()}"
    out = project.bash(f"ln -sf $PWD/src/enemy.gd {link}; echo evil >> {link}; rm {link}")
    assert out.post_blocked and state(project.root) == before


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@t"})


@pytest.mark.parametrize("command", ["git stash", "git checkout -- .", "git restore src", "git reset --hard"])
def test_git_rewriting_the_tree_is_put_back(project, command):
    git(project.root, "init", "-q")
    git(project.root, "add", "-A")
    git(project.root, "commit", "-qm", "start")
    # the user's own edit, made outside any checked call, is the state to keep
    (project.root / "src/player.gd").write_text(GD + "# user's work\n")
    before = state(project.root)
    out = project.bash(command)
    assert out.post_blocked, out
    assert state(project.root) == before


def test_what_git_runs_by_itself_is_put_back_though_git_is_a_skipped_folder(project):
    git(project.root, "init", "-q")
    config = (project.root / ".git" / "config").read_bytes()
    out = project.bash("d=.git; printf '[core]\\n\\tfsmonitor = rm -f PLAN.md\\n' >> $d/config; "
                       "printf '#!/bin/sh\\n' > $d/hooks/post-checkout; echo x > $d/description")
    assert out.post_blocked and "put back" in out.post_reason, out
    assert (project.root / ".git" / "config").read_bytes() == config
    assert not (project.root / ".git" / "hooks" / "post-checkout").exists()
    # the rest of .git stays unscanned: git's own bookkeeping is none of the check's business
    assert (project.root / ".git" / "description").read_text() == "x\n"


def test_a_submodules_config_and_hooks_are_put_back_and_its_git_data_is_not_scanned(project, tmp_path):
    lib = tmp_path / "lib"
    lib.mkdir()
    git(lib, "init", "-q")
    git(lib, "commit", "-q", "--allow-empty", "-m", "lib")
    git(project.root, "init", "-q")
    git(project.root, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "addons/lib")
    modules = project.root / ".git" / "modules" / "addons" / "lib"
    config = (modules / "config").read_bytes()
    # git's own work in the submodule (its index, refs, logs and objects) is none of the check's
    out = project.bash("git -C addons/lib -c user.name=t -c user.email=t@t commit -q --allow-empty -m two")
    assert not out.post_blocked, out
    assert not [m for m in project.metrics() if m["event"] == "write_reverted"]
    out = project.bash("d=.git/modules/addons/lib; printf '[core]\\n\\tfsmonitor = rm -f PLAN.md\\n' >> $d/config; "
                       "printf '#!/bin/sh\\n' > $d/hooks/post-checkout")
    assert out.post_blocked and "put back" in out.post_reason, out
    assert (modules / "config").read_bytes() == config
    assert not (modules / "hooks" / "post-checkout").exists()
    store = store_for(str(project.root))
    (index_file,) = store.dir.glob("index-*.msgpack")
    index = store.load_index(index_file.stem.removeprefix("index-"))
    scanned = {rel for rel in index.dirs if rel.startswith(".git/")}
    assert ".git/modules/addons/lib/hooks" in scanned
    assert not {rel for rel in scanned if rel.rsplit("/", 1)[-1] in ("objects", "refs", "logs")}, scanned


def test_tar_extract_over_protected_files(project, tmp_path):
    evil = tmp_path / "evil"
    (evil / "src").mkdir(parents=True)
    (evil / "src/player.gd").write_text("evil\n")
    (evil / "src/extra.gd").write_text("evil\n")
    subprocess.run(["tar", "-cf", str(tmp_path / "evil.tar"), "-C", str(evil), "src"], check=True)
    before = state(project.root)
    out = project.bash(f"tar -xf {tmp_path / 'evil.tar'}")
    assert out.post_blocked and state(project.root) == before


def test_a_file_changed_between_calls_is_kept_as_the_new_state(project):
    project.bash("true")  # the first reading
    (project.root / "src/player.gd").write_text("the user's edit\n")  # not in any call
    out = project.bash("p=src/player.gd; echo x >> $p")
    assert out.post_blocked
    assert (project.root / "src/player.gd").read_text() == "the user's edit\n"


def test_a_tampered_copy_is_not_restored(project):
    project.bash("true")
    store = store_for(project.root).blobs
    command = f"p=src/player.gd; echo x >> $p; for b in {store}/*; do chmod u+w $b; printf evil > $b; done"
    out = project.bash(command)
    assert out.post_blocked and "could NOT put them back" in out.post_reason
    assert "altered" in out.post_reason
    assert "evil" not in (project.root / "src/player.gd").read_text()
    assert any(m["event"] == "write_revert_failed" for m in project.metrics())


def test_with_the_syntax_gate_on_what_it_cannot_read_is_put_back(tmp_path):
    project = build_project(tmp_path / "game", "claude", syntax_gate=True)
    before = state(project.root)
    # a path the shell gate cannot know before the call (it is computed by the program)
    out = project.bash("python3 - <<'EOF'\nimport pathlib\npathlib.Path('src', 'play' + 'er.gd').write_text('x')\nEOF")
    assert not out.pre_blocked and out.post_blocked
    assert state(project.root) == before


def test_a_patch_by_the_lead_that_slips_past_is_put_back(tmp_path):
    """NotebookEdit / MCP tools: any wrapped tool's effect is checked, not only Bash."""
    project = build_project(tmp_path / "game", "claude")
    before = state(project.root)
    call = "toolu_mcp1"
    tool_input = {"path": "src/player.gd", "content": "x"}
    assert not project.hook(project.tool_payload("PreToolUse", "mcp__fs__write_file", tool_input, call))[0]
    (project.root / "src/player.gd").write_text("written by the MCP server\n")  # what the server did
    blocked, reason, _ = project.hook(project.tool_payload("PostToolUse", "mcp__fs__write_file", tool_input, call,
                                                           tool_response="ok"))
    assert blocked and "src/player.gd" in reason
    assert state(project.root) == before


def test_what_a_skill_s_command_wrote_when_it_loaded_is_put_back(tmp_path):
    """Claude Code runs a skill file's !`command` lines when the Skill tool loads it: no Bash call
    to judge, so the Skill call is wrapped by default."""
    project = build_project(tmp_path / "game", "claude")
    before = state(project.root)
    call, tool_input = "toolu_skill1", {"skill": "tune"}
    assert not project.hook(project.tool_payload("PreToolUse", "Skill", tool_input, call))[0]
    (project.root / "src/player.gd").write_text("written by the skill's command\n")
    blocked, reason, _ = project.hook(project.tool_payload("PostToolUse", "Skill", tool_input, call,
                                                           tool_response={"success": True, "commandName": "tune"}))
    assert blocked and "src/player.gd" in reason
    assert state(project.root) == before


def test_a_codex_patch_is_read_once_and_its_allowed_file_stands(tmp_path):
    project = build_project(tmp_path / "game", "codex")
    patch = "*** Begin Patch\n*** Add File: notes2.txt\n+ok\n*** Update File: notes.txt\n@@\n-notes\n+more notes\n*** End Patch\n"
    call = "call_patch1"
    tool_input = {"command": patch}
    assert not project.hook(project.tool_payload("PreToolUse", "apply_patch", tool_input, call))[0]
    calls = list(store_for(project.root).calls.glob("*.msgpack"))
    assert len(calls) == 1  # two file events, one reading
    (project.root / "notes2.txt").write_text("ok\n")
    (project.root / "notes.txt").write_text("more notes\n")
    (project.root / "src/player.gd").write_text("changed beside the patch\n")  # what no patch names
    blocked, reason, _ = project.hook(project.tool_payload("PostToolUse", "apply_patch", tool_input, call,
                                                           tool_response="Success"))
    assert blocked and "src/player.gd" in reason and "notes" not in reason
    assert (project.root / "src/player.gd").read_text() == GD
    assert (project.root / "notes.txt").read_text() == "more notes\n"


def test_a_call_refused_before_it_runs_leaves_no_reading_and_excuses_nothing(project):
    project.config("")  # the syntax gate on: it refuses this literal write
    out = project.bash("echo x > src/player.gd", agent=WORKER)
    assert not out.pre_blocked  # a worker may write game code
    out = project.bash("echo x >> PLAN.md", agent=WORKER)
    assert out.pre_blocked
    assert list(store_for(project.root).calls.glob("*.msgpack")) == []
    ledger = store_for(project.root).ledger_path.read_text()
    assert ledger.count('"agent"') == 1  # only the worker call that ran was noted as running


def test_the_store_does_not_grow_without_bound(project, tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    (home / ".bashrc").write_text("alias ll='ls -l'\n")  # a protected file outside the project: its copy is kept too
    monkeypatch.setenv("HOME", str(home))
    project.config(NO_SYNTAX_GATE + "[effect]\nmax_blobs = 3\n")
    for i in range(6):
        project.write("src/player.gd", f"extends Node # {i}\n")  # a new version between calls
        project.bash("true")
    store = store_for(project.root)
    blobs = {path.name for path in store.blobs.iterdir()}
    outside = {f.digest for path in store.dir.glob("index-*.msgpack") for f in store._load(path).outside.values()}
    assert outside <= blobs  # the copies of the files outside the project (.bashrc, hookgate's launcher) stay
    assert len(blobs - outside) <= 3 + 1  # the project's: those the readings refer to, pruned past the limit
    out = project.bash("p=src/player.gd; echo x >> $p; echo 'rm -f PLAN.md' >> ~/.bashrc")
    assert out.post_blocked and (project.root / "src/player.gd").read_text() == "extends Node # 5\n"
    assert (home / ".bashrc").read_text() == "alias ll='ls -l'\n"


def test_the_readings_of_rules_no_call_uses_are_removed_after_a_day(tmp_path):
    """Each role, subagent type and edit of the rules has a reading of its own, which the warm core
    preloads and whose copies are kept: those no call used for a day go with the manifests of calls
    whose after-event never came; the reading in use stays, however old. Rules used again start
    from a new reading, and still put a write back."""
    project = Project(tmp_path / "game").role("build")
    project.config(NO_SYNTAX_GATE)
    project.write("src/player.gd", GD)
    project.bash("true")
    edited = NO_SYNTAX_GATE + '[pipeline.roles.build]\nrules = [{ deny = ["notes/*"], reason = "no notes ({file})" }]\n'
    project.config(edited)
    project.bash("true")
    assert not project.hook(project.tool_payload("PreToolUse", "Bash", {"command": "true"}, "toolu_lost"))[0]
    store = store_for(project.root)
    readings = sorted(store.dir.glob("index-*.msgpack"), key=lambda path: path.stat().st_ctime_ns)
    assert len(readings) == 2 and len(list(store.calls.iterdir())) == 1
    in_use = store._load(readings[-1]).key
    store.prune(in_use)
    assert sorted(store.dir.glob("index-*.msgpack"), key=lambda path: path.stat().st_ctime_ns) == readings
    store.prune(in_use, now=time.time() + 2 * 86_400)
    assert list(store.dir.glob("index-*.msgpack")) == [readings[-1]] and list(store.calls.iterdir()) == []
    project.config(NO_SYNTAX_GATE)
    out = project.bash("p=src/player.gd; echo x >> $p")
    assert out.post_blocked and (project.root / "src/player.gd").read_text() == GD
    assert len(list(store.dir.glob("index-*.msgpack"))) == 2


def _last_used(store_dir: Path, seconds_ago: float) -> None:
    when = time.time() - seconds_ago
    for path in [*store_dir.iterdir(), store_dir]:  # the folder last: touching a file inside moves nothing
        os.utime(path, (when, when), follow_symlinks=False)


def test_the_stores_of_projects_that_are_gone_are_removed(tmp_path):
    """A store is kept by its project's path, outside the project: deleting the project leaves it.
    When a project makes its first store, the stores of gone projects unused for a day go, and so do
    stores that name no project (made before the note) once unused for 30 days; nothing else."""
    from hookgate.effect.store import GONE_ROOT_SECONDS, UNNAMED_IDLE_SECONDS

    day = 86_400
    projects = {name: build_project(tmp_path / name, "claude") for name in ("gone", "gone_lately", "live")}
    for project in projects.values():
        assert not project.bash("echo x > notes.txt").post_blocked  # a checked call: the store is made
    stores = {name: store_for(project.root).dir for name, project in projects.items()}
    folder = stores["live"].parent
    assert (stores["gone"] / "root").read_text() == f"{projects['gone'].root.resolve()}\n"
    shutil.rmtree(projects["gone"].root)
    shutil.rmtree(projects["gone_lately"].root)
    _last_used(stores["gone"], GONE_ROOT_SECONDS + day)
    _last_used(stores["gone_lately"], GONE_ROOT_SECONDS - 3600)
    _last_used(stores["live"], 365 * day)
    for name, idle in (("unnamed_old", UNNAMED_IDLE_SECONDS + day), ("unnamed_young", UNNAMED_IDLE_SECONDS - day)):
        (folder / name).mkdir()
        (folder / name / "ledger.jsonl").write_text('{"t":0,"end":"s/c"}\n')
        _last_used(folder / name, idle)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "root").write_text("/nonexistent\n")
    (folder / "a_link").symlink_to(elsewhere)
    _last_used(elsewhere, 365 * day)
    # a note the agent could plant (it runs as the same user): a FIFO must not hang the hook; it
    # names no root, so the store counts as unnamed and young
    (folder / "fifo_note").mkdir()
    os.mkfifo(folder / "fifo_note" / "root")
    _last_used(folder / "fifo_note", GONE_ROOT_SECONDS + day)

    newcomer = build_project(tmp_path / "newcomer", "claude")
    newcomer.bash("true")

    left = {entry.name for entry in folder.iterdir()}
    assert left == {stores["gone_lately"].name, stores["live"].name, "unnamed_young", "a_link",
                    "fifo_note", store_for(newcomer.root).dir.name}
    assert (elsewhere / "root").exists()  # a link is not followed
    out = projects["live"].bash("p=src/player.gd; echo x >> $p")  # the live project's store still works
    assert out.post_blocked and (projects["live"].root / "src/player.gd").read_text() == GD


def test_in_godotmaker_mode_hookgates_own_files_are_not_put_back(tmp_path):
    """GodotMaker's layout keeps the session's records in `.godotmaker/` itself: a worker may not
    write that folder, yet hookgate's own writes there on every call are not the call's."""
    import json as _json

    from hookgate.hookcall import handle
    from hookgate_claude import dialect

    root = tmp_path / "gm"
    (root / ".godotmaker").mkdir(parents=True)
    (root / ".godotmaker" / "current_role").write_text("build\n")
    (root / "src").mkdir()
    (root / "src/player.gd").write_text(GD)
    env = {"HOOKGATE_PROJECT_DIR": str(root), "HOOKGATE_WARM": "off"}

    def hook(event, command, call, **extra):
        payload = {"hook_event_name": event, "session_id": "gm-1", "cwd": str(root), "tool_name": "Bash",
                   "tool_input": {"command": command}, "tool_use_id": call, "agent_id": "w1", "agent_type": "worker",
                   **extra}
        answer = handle(dialect, _json.dumps(payload).encode(), env)
        return _json.loads(answer.stdout) if answer.stdout else {}

    computed = "python3 -c \"import pathlib; pathlib.Path('.godotmaker', 'current_' + 'role').write_text('verify')\""
    for i, command in enumerate(["echo hi", computed]):
        hook("PreToolUse", command, f"c{i}")
        subprocess.run(["bash", "-c", command], cwd=root, check=True)
        out = hook("PostToolUse", command, f"c{i}", tool_response="ok")
        if i == 0:
            assert out.get("decision") != "block", out
    assert out.get("decision") == "block" and ".godotmaker/current_role" in out["reason"]
    assert (root / ".godotmaker" / "current_role").read_text() == "build\n"
    assert (root / ".godotmaker" / "metrics_current.jsonl").read_text().count("write_reverted") == 1


def test_a_codex_patch_refused_for_one_file_leaves_no_reading(tmp_path):
    project = build_project(tmp_path / "game", "codex")
    patch = ("*** Begin Patch\n*** Add File: notes2.txt\n+ok\n*** Add File: src/evil.gd\n+x\n"
             "*** Add File: notes3.txt\n+ok\n*** End Patch\n")
    blocked, reason, _ = project.hook(project.tool_payload("PreToolUse", "apply_patch", {"command": patch}, "call_p2"))
    assert blocked and "evil.gd" in reason
    assert list(store_for(project.root).calls.glob("*.msgpack")) == []
    ledger = store_for(project.root).ledger_path.read_text().splitlines()
    opened = [line for line in ledger if '"agent"' in line]
    assert all(any('"end"' in later for later in ledger[ledger.index(line):]) for line in opened)


def test_a_reading_read_again_is_the_file_as_it_is_now(tmp_path):
    """The store keeps decoded readings by the tag each write draws (effect/store.py): a replaced
    reading, one written by another process, and one rewritten in place under a new tag with the
    same size and mtime, are read afresh; one without a tag (an older hookgate's) is decoded."""
    import os as _os
    import subprocess
    import sys

    import msgspec

    from hookgate.effect import store as store_module
    from hookgate.effect.store import MAGIC, Store
    from hookgate.effect.tree import File, Index

    store = Store(tmp_path / "effect")
    first = Index(key="k", t=1, files={"a.gd": File(1, 2, 3, 4, 0o100644, "aa")})
    store.save_index(first)
    assert store.load_index("k") == first
    assert store.load_index("k") is store.load_index("k")  # decoded once
    second = Index(key="k", t=2, files={"b.gd": File(5, 6, 7, 8, 0o100644, "bb")})
    store.save_index(second)
    assert store.load_index("k") == second
    # another process replaces it (the warm core's forks, the OpenCode core and a cold hook share a store)
    code = ("import sys; from pathlib import Path; from hookgate.effect.store import Store; "
            "from hookgate.effect.tree import File, Index; "
            "Store(Path(sys.argv[1])).save_index(Index(key='k', t=9, files={'z.gd': File(9, 9, 9, 9, 0o100644, 'zz')}))")
    subprocess.run([sys.executable, "-c", code, str(store.dir)], check=True)
    assert store.load_index("k").t == 9 and list(store.load_index("k").files) == ["z.gd"]
    path = store.index_path("k")
    stat = path.stat()
    third = Index(key="k", t=3, files={"c.gd": File(9, 9, 9, 9, 0o100644, "cc")})
    data = MAGIC + _os.urandom(16) + msgspec.msgpack.encode(third)
    assert len(data) == stat.st_size  # same size, written over the same inode, mtime put back
    with open(path, "r+b") as handle:
        handle.write(data)
    _os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert path.stat().st_ino == stat.st_ino and path.stat().st_mtime_ns == stat.st_mtime_ns
    assert store.load_index("k") == third
    path.write_bytes(msgspec.msgpack.encode(second))  # no tag
    assert store.load_index("k") == second
    store_module._read.clear()  # a fresh process
    store.save_index(first)
    store_module._read.clear()
    assert store.load_index("k") == first


def test_a_calls_manifest_is_not_decoded_again(tmp_path):
    """Linking a call's manifest to the index and claiming it (a rename) move the inode's ctime;
    the reading is still the one decoded: take() returns the very object load_index() did."""
    from hookgate.effect import store as store_module
    from hookgate.effect.store import Store
    from hookgate.effect.tree import File, Index

    store = Store(tmp_path / "effect")
    store.save_index(Index(key="k", t=1, files={"a.gd": File(1, 2, 3, 4, 0o100644, "aa")}))
    store_module._read.clear()  # as a process that did not write it
    loaded = store.load_index("k")
    ctime = store.index_path("k").stat().st_ctime_ns
    store.link_call("k", "s/c1")
    assert store.take("s/c1") is loaded
    assert store.index_path("k").stat().st_ctime_ns >= ctime
    assert store.load_index("k") is loaded
    store.save_index(Index(key="k", t=2), call="s/c2")  # a new reading: its manifest is that one
    assert store.take("s/c2").t == 2 and store.load_index("k").t == 2


def test_the_after_events_read_back_from_the_cache_are_the_tables(tmp_path: Path) -> None:
    """A cold process reads each runtime's after-events from hookgate's cache, not from the TOML
    tables: what it reads back is what the tables say."""
    import sys

    import msgspec

    from hookgate.effect.after import TABLES, _newest
    from hookgate.runtimes import NAMES

    expected = {name: msgspec.to_builtins(_newest(name, sorted(TABLES.glob(f"{name}-*.toml")))) for name in NAMES}
    script = ("import json, sys, msgspec\nfrom hookgate.effect.after import after_hooks\nfrom hookgate.runtimes import NAMES\n"
              "print(json.dumps({n: msgspec.to_builtins(after_hooks(n)) for n in NAMES}), 'tomllib' in sys.modules)")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    runs = [subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60)
            for _ in range(2)]
    (first, parsed), (second, read_back) = [run.stdout.rsplit(" ", 1) for run in runs]
    assert msgspec.json.decode(first) == msgspec.json.decode(second) == expected, runs
    assert (parsed.strip(), read_back.strip()) == ("True", "False")  # the second came from the cache
    assert any(answer["success"] for answer in expected.values())  # the tables do name after-events


@pytest.mark.parametrize("a_ends", ["after b", "before b asks the ledger"])
def test_a_reading_whose_bytes_are_read_while_another_call_writes_is_not_kept(tmp_path, monkeypatch, a_ends):
    """Interleaved as parallel calls can be under load: call b's PreToolUse finds a person's edit
    of src/player.gd; before it reads the file's bytes to keep them, call a begins and appends a
    forbidden line; a's after-hook, which puts the line back, comes after b's or before b asks
    the ledger whether another call ran. Kept as b's starting state, the line would be put back
    by b's after-hook."""
    from hookgate.effect import check, ledger

    project = build_project(tmp_path / "game", "claude")
    project.bash("true")
    project.write("src/player.gd", GD + "# the person's edit\n")
    before = state(project.root)
    write = {"command": "echo evil >> src/player.gd"}
    keep, load = check._keep, ledger.Ledger.load
    a_ran: list = []

    def a_writes(*args, **kwargs):  # b has read the tree, not yet the file's bytes
        monkeypatch.setattr(check, "_keep", keep)
        a_ran.append(project.hook(project.tool_payload("PreToolUse", "Bash", write, "toolu_a")))
        a_ran.append(subprocess.run(["bash", "-c", write["command"]], cwd=project.root, capture_output=True, text=True))
        return keep(*args, **kwargs)

    def a_ends_first(*args, **kwargs):  # b has kept the bytes (a's line in them)
        if len(a_ran) < 2:  # a's own PreToolUse asking
            return load(*args, **kwargs)
        monkeypatch.setattr(ledger.Ledger, "load", load)
        a_ran.append(project.after("toolu_a", write, a_ran[1]))
        return load(*args, **kwargs)

    monkeypatch.setattr(check, "_keep", a_writes)
    if a_ends == "before b asks the ledger":
        monkeypatch.setattr(ledger.Ledger, "load", a_ends_first)
    blocked, _, _ = project.hook(project.tool_payload("PreToolUse", "Bash", {"command": "true"}, "toolu_b"))
    assert not blocked and not a_ran[0][0], a_ran
    if a_ends == "after b":
        a_ran.append(project.after("toolu_a", write, a_ran[1]))
    assert a_ran[2][0]  # a's own after-hook put its line back
    assert state(project.root) == before
    project.after("toolu_b", {"command": "true"}, subprocess.run(["true"], capture_output=True, text=True))
    assert state(project.root) == before


def test_a_link_that_loses_the_race_to_a_save_copies_the_reading_it_opens(tmp_path, monkeypatch):
    """The race the next test provokes, made certain: every link(2) of the index fails as it does
    when a save renames a new index over it. The call still starts from the latest reading (a
    copy of it), the index is untouched, and a store with no index still says so."""
    from hookgate.effect import store as store_module
    from hookgate.effect.store import Store
    from hookgate.effect.tree import Index

    store = Store(tmp_path / "effect")
    store.save_index(Index(key="k", t=7))
    before = store.index_path("k").read_bytes()

    def lost_race(src, dst, *args, **kwargs):
        raise FileNotFoundError(2, "No such file or directory", str(src))

    monkeypatch.setattr(store_module.os, "link", lost_race)
    store.link_call("k", "s/c1")
    assert Path(store.call_path("s/c1")).read_bytes() == before
    assert store.take("s/c1").t == 7
    assert store.index_path("k").read_bytes() == before
    with pytest.raises(FileNotFoundError):
        store.link_call("none", "s/c2")
    assert not store.has_call("s/c2")


SAVE_FOREVER = """
import sys
from pathlib import Path
from hookgate.effect.store import Store
from hookgate.effect.tree import Index
store, t = Store(Path(sys.argv[1])), 1
store.save_index(Index(key="k", t=t))  # an index exists before the first link is tried
print("saving", flush=True)
while True:
    t += 1
    store.save_index(Index(key="k", t=t))
"""


def test_a_call_links_the_latest_reading_while_another_process_saves_one(tmp_path):
    """link(2) fails with ENOENT when another process's save renames a new index over the path
    between its lookup and the link. Under eight sessions at once that refused a PreToolUse (the
    snapshot fails closed). Linking while another process saves as fast as it can: every link
    lands, on a reading; a store with no index at all still says so."""
    import sys
    import time

    from hookgate.effect.store import Store

    store = Store(tmp_path / "effect")
    with pytest.raises(FileNotFoundError):
        store.link_call("k", "s/none")
    saver = subprocess.Popen([sys.executable, "-c", SAVE_FOREVER, str(store.dir)], stdout=subprocess.PIPE, text=True)
    try:
        assert saver.stdout.readline() == "saving\n"
        links, deadline = 0, time.monotonic() + 3
        while time.monotonic() < deadline:
            links += 1
            store.link_call("k", f"s/c{links}")
            assert store.take(f"s/c{links}").key == "k"
    finally:
        saver.kill()
        saver.wait()
    assert links > 300  # the loop ran (the first link failed within a few hundred, eight tries within ~9,000)


def test_a_program_that_detaches_itself_is_the_known_limit(tmp_path):
    """What the README names as the limit on work left running: a program that forks itself off
    (os.fork in code the shell reader cannot read) shows no `&`, setsid or multiplexer, so the call
    runs as one the check covers, and what the child writes after the check stays. (The forms the
    reader sees are refused before they run: the shell corpus's "detached" family.)"""
    project = build_project(tmp_path / "game", "claude", syntax_gate=True)
    code = "import os, sys, time\nif os.fork():\n    sys.exit()\ntime.sleep(0.5)\nopen('src/' + 'player.gd', 'a').write('x')\n"
    outcome = project.bash(f"python3 - > /dev/null 2>&1 <<'EOF'\n{code}EOF")
    assert not outcome.pre_blocked and not outcome.post_blocked
    player = project.root / "src" / "player.gd"
    assert player.read_text() == GD  # the check came before the child wrote
    deadline = time.monotonic() + 10
    while player.read_text() == GD and time.monotonic() < deadline:
        time.sleep(0.05)
    assert player.read_text() == GD + "x"


def _settings_write(settings: dict) -> str:
    """A command that writes the project's local Claude settings (what Claude Code itself writes
    when a permission prompt is answered "don't ask again"), in a form no syntax gate reads."""
    return ("python3 - <<'EOF'\nimport json, pathlib\np = pathlib.Path('.claude', 'settings.local' + '.json')\n"
            f"p.parent.mkdir(exist_ok=True)\np.write_text(json.dumps({settings!r}))\nEOF")


ANSWER = {"permissions": {"allow": ["Bash(npm test)"]}}
HOOKS = {"hooks": {"PreToolUse": []}}


@pytest.mark.parametrize(("before", "after", "asked_by", "stands"), [
    (None, ANSWER, "s1", True),  # the prompt's answer, in a file it creates
    (HOOKS, {**HOOKS, **ANSWER}, "s1", True),  # added beside the hooks, which stay as they were
    (None, ANSWER, None, False),  # no prompt was shown: the model's own rule
    (None, ANSWER, "s2", False),  # another session's prompt
    (HOOKS, ANSWER, "s1", False),  # the hooks removed with it
    (None, {**ANSWER, "env": {"X": "1"}}, "s1", False),  # a key besides the answer's
], ids=["answer", "answer-beside-hooks", "no-prompt", "another-sessions-prompt", "hooks-removed", "another-key"])
def test_a_permission_answers_rule_stands_and_nothing_else(tmp_path, before, after, asked_by, stands):
    project = build_project(tmp_path / "game", "claude")
    local = tmp_path / "game" / ".claude" / "settings.local.json"
    if before is not None:
        project.write(".claude/settings.local.json", json.dumps(before))
    original = local.read_bytes() if before is not None else None
    command, call = _settings_write(after), "toolu_asked"
    tool_input = {"command": command}
    assert not project.hook(project.tool_payload("PreToolUse", "Bash", tool_input, call))[0]
    if asked_by:
        project.hook({**project.tool_payload("PermissionRequest", "Bash", tool_input, call), "session_id": asked_by})
    done = subprocess.run(["bash", "-c", command], cwd=project.root, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(local.read_text()) == after  # ground truth: the command wrote it
    post_blocked, reason, _ = project.after(call, tool_input, done)
    if stands:
        assert not post_blocked and json.loads(local.read_text()) == after
    else:
        assert post_blocked and ".claude/settings.local.json" in reason
        assert (local.read_bytes() if local.exists() else None) == original


def test_the_protected_files_outside_the_project_are_put_back_too(tmp_path, monkeypatch):
    """The user's runtime settings (hookgate's registration of a --user install) and shell startup
    files lie outside the project, where the scan does not go: they are read by name."""
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    settings = home / ".claude" / "settings.json"
    settings.write_text('{"hooks": {"PreToolUse": []}}\n')
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    (dotfiles / "bashrc").write_text("alias ll='ls -l'\n")
    (home / ".bashrc").symlink_to(dotfiles / "bashrc")  # a dotfile kept elsewhere: its file is read
    monkeypatch.setenv("HOME", str(home))
    project = build_project(tmp_path / "game", "claude")
    before = {path: path.read_bytes() for path in (settings, dotfiles / "bashrc")}
    command = ("python3 - <<'EOF'\nimport os\nh = os.environ['HOME']\n"
               "open(os.path.join(h, '.claude', 'settings' + '.json'), 'w').write('{}')\n"
               "open(os.path.join(h, '.bash' + 'rc'), 'a').write('rm -f PLAN.md\\n')\n"
               "open(os.path.join(h, '.zsh' + 'rc'), 'w').write('rm -f PLAN.md\\n')\nEOF")
    out = project.bash(command, env={"HOME": str(home)})
    assert out.post_blocked and "put back" in out.post_reason, out
    assert {path: path.read_bytes() for path in before} == before
    assert not (home / ".zshrc").exists() and (home / ".bashrc").is_symlink()
    reverted = {m["file"]: m["change"] for m in project.metrics() if m["event"] == "write_reverted"}
    assert reverted == {"settings.json": "changed", "bashrc": "changed", ".zshrc": "created"}, reverted
    # reading them is no change, and with no role there is no check
    assert not project.bash("cat ~/.bashrc ~/.claude/settings.json", env={"HOME": str(home)}).post_blocked
    project.role(None)
    project.bash("echo 'export A=1' >> ~/.bashrc", env={"HOME": str(home)})
    assert (dotfiles / "bashrc").read_text().endswith("export A=1\n")


def test_a_protected_file_outside_the_project_changed_between_calls_is_the_new_state(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    project = build_project(tmp_path / "game", "claude")
    assert not project.bash("true", env={"HOME": str(home)}).post_blocked
    (home / ".bashrc").write_text("# the user's own edit, outside any call\n")
    assert not project.bash("true", env={"HOME": str(home)}).post_blocked
    assert (home / ".bashrc").read_text() == "# the user's own edit, outside any call\n"


# what the runtimes run by themselves from the user's folders, written in forms no syntax gate reads
# (the folder's name assembled in Python): (name, the python code with `h` the home, the files changed)
PLANTED = [
    ("a new skill, its shell line run when it loads",
     "p = os.path.join(h, '.cla' + 'ude', 'skills', 'tidy', 'SKILL.md'); os.makedirs(os.path.dirname(p))\n"
     "open(p, 'w').write('---\\nname: tidy\\n---\\n!`rm -f PLAN.md`\\n')",
     {".claude/skills/tidy/SKILL.md": "created"}),
    ("an existing skill's script appended to",
     "open(os.path.join(h, '.cla' + 'ude', 'skills', 'lint', 'run.sh'), 'a').write('rm -f PLAN.md\\n')",
     {".claude/skills/lint/run.sh": "changed"}),
    ("a user agent deleted", "os.remove(os.path.join(h, '.cla' + 'ude', 'agents', 'reviewer.md'))",
     {".claude/agents/reviewer.md": "deleted"}),
    ("an OpenCode plugin, run when OpenCode starts",
     "p = os.path.join(h, '.config', 'open' + 'code', 'plugin'); os.makedirs(p)\n"
     "open(os.path.join(p, 'x.js'), 'w').write('export const X = async () => ({})')",
     {".config/opencode/plugin/x.js": "created"}),
    ("a file of ~/.bashrc.d, which .bashrc sources", "open(os.path.join(h, '.bash' + 'rc.d', 'a.sh'), 'w').write('rm -f PLAN.md')",
     {".bashrc.d/a.sh": "created"}),
]


def home_with_extensions(home: Path) -> None:
    """A home with a user skill (kept in a dotfiles folder, linked), an agent and a ~/.bashrc.d."""
    dotfiles = home.parent / "dotfiles" / "lint"
    dotfiles.mkdir(parents=True)
    (dotfiles / "SKILL.md").write_text("---\nname: lint\n---\nRun ./run.sh\n")
    (dotfiles / "run.sh").write_text("gdlint .\n")
    (home / ".claude" / "skills").mkdir(parents=True)
    (home / ".claude" / "skills" / "lint").symlink_to(dotfiles)
    (home / ".claude" / "agents").mkdir()
    (home / ".claude" / "agents" / "reviewer.md").write_text("---\nname: reviewer\n---\nReview.\n")
    (home / ".bashrc.d").mkdir()


def home_files(home: Path) -> dict[str, bytes]:
    """Every file in the home, as reached from it (a linked folder followed), by its bytes; hookgate's
    own cache (~/.cache/hookgate) left out."""
    return {os.path.relpath(os.path.join(folder, name), home): Path(folder, name).read_bytes()
            for folder, _, names in os.walk(home, followlinks=True) for name in names
            if not os.path.relpath(folder, home).startswith(".cache")}


@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize(("code", "changed"), [case[1:] for case in PLANTED], ids=[case[0] for case in PLANTED])
def test_the_protected_folders_outside_the_project_are_listed_and_put_back(tmp_path, monkeypatch, runtime, code, changed):
    """The self-protection rules name whole folders outside the project whose files a runtime runs by
    itself (~/.claude/skills/*, ~/.config/opencode/plugin/*, ~/.bashrc.d/*): they are listed around
    each call, and what the call wrote there is put back, whatever form the write took."""
    command = f"python3 - <<'EOF'\nimport os\nh = os.environ['HOME']\n{code}\nEOF"
    outcomes = {}
    for role in (None, "build"):  # with no role, the ground truth: what the code really changes
        home = tmp_path / str(role) / "home"
        home.mkdir(parents=True)
        home_with_extensions(home)
        before = home_files(home)
        monkeypatch.setenv("HOME", str(home))
        project = build_project(tmp_path / str(role) / "game", runtime).role(role)
        outcomes[role] = project.bash(command, env={"HOME": str(home)})
        now = home_files(home)
        found = {rel: "created" if rel not in before else "deleted" if rel not in now else "changed"
                 for rel in before.keys() | now.keys() if before.get(rel) != now.get(rel)}
        if role is None:
            assert found == changed and not outcomes[role].post_blocked
            continue
        assert found == {} and outcomes[role].post_blocked and "put back" in outcomes[role].post_reason, outcomes
        reverted = {os.path.relpath(m["path"], home): m["change"] for m in project.metrics() if m["event"] == "write_reverted"}
        assert reverted == changed, reverted


def test_reading_the_protected_folders_outside_the_project_is_no_change(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    home_with_extensions(home)
    before = home_files(home)
    monkeypatch.setenv("HOME", str(home))
    project = build_project(tmp_path / "game", "claude")
    for command in ("cat ~/.claude/skills/lint/SKILL.md; ls -R ~/.claude", "grep -r name ~/.claude/agents",
                    "touch -c ~/.claude/agents/reviewer.md"):  # only its times move: the bytes are compared
        assert not project.bash(command, env={"HOME": str(home)}).post_blocked, command
    assert home_files(home) == before
    # what a runtime writes there itself during a call (Claude Code's shell snapshot) is not listed
    snapshot = "mkdir -p ~/.claude/shell-snapshots && echo 'export A=1' > ~/.claude/shell-snapshots/s.sh"
    assert not project.bash(snapshot, env={"HOME": str(home)}).post_blocked
    assert (home / ".claude" / "shell-snapshots" / "s.sh").exists()


def test_a_protected_folder_outside_the_project_with_too_many_files_is_left_to_the_syntax_gates(tmp_path, monkeypatch):
    from hookgate.checks import Setup, check_outside_folders

    home = tmp_path / "home"
    (home / ".claude" / "skills" / "big").mkdir(parents=True)
    for i in range(6):
        (home / ".claude" / "skills" / "big" / f"ref{i}.md").write_text("x\n")
    monkeypatch.setenv("HOME", str(home))
    project = build_project(tmp_path / "game", "claude")
    project.config(NO_SYNTAX_GATE + "[effect]\noutside_max_files = 5\n")
    findings = check_outside_folders(Setup(project.root, os.environ))
    assert [f.status for f in findings] == ["info", "ok"], findings
    assert str(home / ".claude" / "skills") in findings[0].message and "more than 5 files" in findings[0].message
    out = project.bash("echo x >> ~/.claude/skills/big/ref0.md", env={"HOME": str(home)})
    assert not out.post_blocked and (home / ".claude" / "skills" / "big" / "ref0.md").read_text() == "x\nx\n"
    project.config(NO_SYNTAX_GATE + "[effect]\noutside_max_files = 6\n")
    assert [f.status for f in check_outside_folders(Setup(project.root, os.environ))] == ["ok"]
    out = project.bash("echo x >> ~/.claude/skills/big/ref0.md", env={"HOME": str(home)})
    assert out.post_blocked and (home / ".claude" / "skills" / "big" / "ref0.md").read_text() == "x\nx\n"


@pytest.mark.parametrize(("command", "gone"), [
    ("git init -q", None),  # its config sets only inert keys, its hooks are samples git never runs
    ("git init -q && git remote add origin https://example.com/game.git", None),
    ("git init -q && git config user.email a@b.c", None),
    ("git init -q && g=git; $g config core.fsmonitor 'rm -f PLAN.md'", ".git/config"),  # a program: the config goes
    ("git init -q && d=.git/hooks; printf '#!/bin/sh\\n' > $d/post-checkout", ".git/hooks/post-checkout"),
])
def test_a_new_repositorys_inert_config_stands_and_a_program_in_it_does_not(tmp_path, command, gone):
    project = build_project(tmp_path / "game", "claude")
    out = project.bash(command)
    reverted = {m["path"] for m in project.metrics() if m["event"] == "write_reverted"}
    assert out.post_blocked == (gone is not None) and reverted == ({gone} if gone else set()), (out, reverted)
    if gone:
        assert not (project.root / gone).exists()
    else:
        assert (project.root / ".git" / "config").exists()
        assert list((project.root / ".git" / "hooks").glob("*.sample"))


# a program planted in a repository cloned inside the project (an addon), in forms no syntax gate
# reads, and the git command that then runs it: (the write, the file it changes, the trigger)
NESTED_PLANTS = [
    ("python3 -c \"open('addons/lib/.git/con' + 'fig', 'a').write('[core]\\n\\tfsmonitor = touch ran.txt\\n')\"",
     "addons/lib/.git/config", "git -C addons/lib status --short"),
    ("d=addons/lib/.git/hooks; printf '#!/bin/sh\\ntouch ran.txt\\n' > $d/post-checkout; chmod +x $d/post-checkout",
     "addons/lib/.git/hooks/post-checkout", "git -C addons/lib checkout -q -b tuned"),
]


@pytest.mark.parametrize(("write", "changed", "trigger"), NESTED_PLANTS, ids=["fsmonitor", "hook"])
def test_a_repository_inside_the_project_has_its_config_and_hooks_put_back_too(tmp_path, write, changed, trigger):
    """Every folder named .git is skipped but for what git runs by itself, at any depth: a
    repository cloned inside the project is one a later `git -C` runs the programs of."""
    for role in (None, "build"):  # with no role, the ground truth: the write makes git run a program
        project = build_project(tmp_path / str(role), "claude").role(role)
        lib = project.write("addons/lib/a.txt", "a\n").parent
        git(lib, "init", "-q")
        git(lib, "add", "a.txt")
        git(lib, "-c", "user.email=a@b.c", "-c", "user.name=a", "commit", "-qm", "start")
        before = (project.root / changed).read_bytes() if (project.root / changed).exists() else None
        out = project.bash(write)
        subprocess.run(["bash", "-c", trigger], cwd=project.root, capture_output=True, check=True)
        ran = (lib / "ran.txt").exists()
        if role is None:
            assert ran and not out.post_blocked
            continue
        assert not ran and out.post_blocked, out
        assert ((project.root / changed).read_bytes() if (project.root / changed).exists() else None) == before
        reverted = {m["path"] for m in project.metrics() if m["event"] == "write_reverted"}
        assert reverted == {changed}


def test_a_program_added_beside_inert_settings_puts_the_config_back(tmp_path):
    project = build_project(tmp_path / "game", "claude")
    git(project.root, "init", "-q")
    config = (project.root / ".git" / "config").read_bytes()
    out = project.bash("g=git; $g remote add origin https://example.com/g.git && $g config alias.st '!rm -f PLAN.md'")
    assert out.post_blocked and (project.root / ".git" / "config").read_bytes() == config


@pytest.mark.parametrize(("edit", "kind"), [
    (lambda root: (root / "src/player.gd").write_text(GD + "# the person's own work\n"), "changed"),
    (lambda root: (root / "src/boss.gd").write_text("extends Node\n# the person's new file\n"), "created"),
])
def test_what_a_put_back_replaces_is_kept_for_the_person_whose_edit_it_may_be(project, edit, kind):
    """A person's edit of a protected file made in their editor while an agent's call runs is
    indistinguishable from the call's write, and is put back: what it replaced or removed is kept
    in the store, and the record and the hook's log say where."""
    call = "toolu_person"
    tool_input = {"command": "true"}
    assert not project.hook(project.tool_payload("PreToolUse", "Bash", tool_input, call))[0]
    edit(project.root)  # the person, while the call runs
    rel = "src/player.gd" if kind == "changed" else "src/boss.gd"
    written = (project.root / rel).read_bytes()
    payload = {"session_id": project.session, "cwd": str(project.root),
               **project.tool_payload("PostToolUse", "Bash", tool_input, call, tool_response="")}
    answer = handle(DIALECTS[project.runtime], json.dumps(payload).encode(),
                    {"HOOKGATE_PROJECT_DIR": str(project.root), "HOOKGATE_WARM": "off"})
    blocked, reason, _ = read(project.runtime, "PostToolUse", answer)
    assert blocked and f"{rel} was" in reason
    assert (project.root / rel).exists() == (kind == "changed")
    (record,) = [m for m in project.metrics() if m["event"] == "write_reverted"]
    assert record["path"] == rel and record["change"] == kind
    displaced = Path(record["displaced"])
    assert displaced.read_bytes() == written and displaced.name.endswith(Path(rel).name)
    assert str(displaced) not in answer.stderr  # not the model's to know (Codex hands it the hook's stderr)
    # the person finds it where the hook's message points: hookgate explain
    explained = subprocess.run([sys.executable, "-m", "hookgate", "explain", project.session, "--tool-use-id", call,
                                "--project", str(project.root)], capture_output=True, text=True, check=True).stdout
    assert f"put back: {rel} ({kind}); what the call left there is kept at {displaced}" in explained, explained


def test_a_deleted_file_put_back_displaces_nothing_and_only_the_newest_copies_are_kept(project, monkeypatch):
    from hookgate.effect import store as effect_store

    out = project.bash("f=src/player.gd; rm $f")
    (record,) = [m for m in project.metrics() if m["event"] == "write_reverted"]
    assert out.post_blocked and record["change"] == "deleted" and "displaced" not in record
    monkeypatch.setattr(effect_store, "MAX_DISPLACED", 3)
    kept = effect_store.store_for(project.root)
    paths = [kept.keep_displaced("PLAN.md", b"%d" % i) for i in range(5)]
    assert sorted(os.listdir(kept.displaced)) == sorted(os.path.basename(p) for p in paths[2:])
    monkeypatch.setattr(effect_store, "MAX_DISPLACED_BYTES", 10)  # and no more bytes than this, the newest first
    paths = [kept.keep_displaced("PLAN.md", b"x" * 4) for _ in range(3)] + [kept.keep_displaced("big.md", b"x" * 20)]
    assert sorted(os.listdir(kept.displaced)) == [os.path.basename(paths[-1])]


@pytest.mark.parametrize(("hooks_path", "hook"), [(".githooks", ".githooks/pre-commit"), (".husky/_", ".husky/pre-commit")],
                         ids=["githooks", "husky"])
def test_the_folder_core_hooks_path_names_is_what_git_runs_by_itself(tmp_path, hooks_path, hook):
    """A repository whose config sets core.hooksPath (a team's .githooks/, husky's .husky/_, whose
    scripts run the hooks of .husky/) has git run the hooks of that folder at the user's next
    commit: they are protected as .git/hooks is (sandy#82: a redirected hooks path is the same
    escape). Where no config names it, the folder is an ordinary one."""
    plant = (f"python3 -c \"import os; p = '{hook}'; os.makedirs(os.path.dirname(p), exist_ok=True); "
             "open(p, 'w').write('#!/bin/sh\\ntouch ran.txt\\n'); os.chmod(p, 0o755)\"")
    for role, named in ((None, True), ("build", False), ("build", True)):
        project = build_project(tmp_path / f"{role}-{named}", "claude").role(role)
        git(project.root, "init", "-q")
        if named:
            git(project.root, "config", "core.hooksPath", hooks_path)
            if hooks_path == ".husky/_":  # husky's runner: each hook of .husky/_ runs the one of .husky/
                project.write(".husky/_/pre-commit", '#!/bin/sh\nh="$(dirname "$(dirname "$0")")/$(basename "$0")"\n'
                                                     'if [ -f "$h" ]; then sh -e "$h"; fi\n', mode=0o755)
        out = project.bash(plant)
        git(project.root, "add", "-A")
        git(project.root, "commit", "-qm", "work")
        ran = (project.root / "ran.txt").exists()
        if role is None or not named:  # the ground truth: git runs it when a config names the folder
            assert ran == named and not out.post_blocked, (role, named, out)
            continue
        assert not ran and out.post_blocked and not (project.root / hook).exists(), out
        assert {m["path"] for m in project.metrics() if m["event"] == "write_reverted"} == {hook}
        # the syntax gate refuses it by name too
        syntax = build_project(tmp_path / "syntax", "claude", syntax_gate=True)
        git(syntax.root, "init", "-q")
        git(syntax.root, "config", "core.hooksPath", hooks_path)
        assert syntax.bash(f"echo 'touch ran.txt' > {hook}").pre_blocked


# a git hooks manager: the config an agent plants a command in (which git runs, through the
# manager's hook, at the next commit), the project's harmless config before, and the planted one
_LEFTHOOK = "pre-commit:\n  commands:\n    ok:\n      run: 'true'\n"
_PLANTED_LEFTHOOK = "pre-commit:\n  commands:\n    plant:\n      run: touch ran.txt\n"
HOOK_MANAGERS = {
    "pre-commit": (".pre-commit-config.yaml", {".pre-commit-config.yaml": "repos: []\n"},
                   "repos:\n- repo: local\n  hooks:\n  - id: plant\n    name: plant\n    entry: touch ran.txt\n"
                   "    language: system\n    always_run: true\n    pass_filenames: false\n"),
    "lefthook": ("lefthook.yml", {"lefthook.yml": _LEFTHOOK}, _PLANTED_LEFTHOOK),
    "lefthook, its .config": (".config/lefthook.yml", {".config/lefthook.yml": _LEFTHOOK}, _PLANTED_LEFTHOOK),
    "lefthook, a local config": ("lefthook-local.yml", {"lefthook.yml": _LEFTHOOK}, _PLANTED_LEFTHOOK),
}


@pytest.mark.parametrize("manager", list(HOOK_MANAGERS))
def test_a_git_hooks_managers_config_is_what_git_runs_by_itself(tmp_path, monkeypatch, manager):
    """pre-commit and lefthook, once their `install` wrote the repository's git hooks, run the
    commands their config names at the user's next commit: a command an agent adds there runs
    outside every tool call. The ground truth is the commit with no role active (the real tools,
    from the test venv); while a role is active the config is put back, and the syntax gate
    refuses the write by name."""
    config, before, planted = HOOK_MANAGERS[manager]
    tool = manager.split(",")[0]
    monkeypatch.setenv("PATH", f"{os.path.dirname(sys.executable)}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("PRE_COMMIT_HOME", str(tmp_path / "pre-commit-cache"))
    plant = f"python3 -c \"import os; os.makedirs(os.path.dirname('{config}') or '.', exist_ok=True); " \
            f"open('{config}', 'w').write({planted!r})\""
    for role in (None, "build"):
        project = build_project(tmp_path / str(role), "claude").role(role)
        for rel, text in before.items():
            project.write(rel, text)
        git(project.root, "init", "-q")
        subprocess.run([tool, "install"], cwd=project.root, check=True, capture_output=True)
        git(project.root, "add", "-A")
        git(project.root, "commit", "-qm", "start")
        out = project.bash(plant)
        git(project.root, "add", "-A")
        git(project.root, "commit", "-qm", "work")
        ran = (project.root / "ran.txt").exists()
        if role is None:  # the ground truth: the commit runs the planted command
            assert ran and not out.post_blocked, out
            continue
        assert not ran and out.post_blocked and "What git runs by itself" in out.post_reason, out
        assert {rel: (project.root / rel).read_text() for rel in before} == before
        assert config in before or not (project.root / config).exists()
        syntax = build_project(tmp_path / "syntax", "claude", syntax_gate=True)
        assert syntax.bash(f"echo 'x' >> {config}").pre_blocked


# A call that rewrites the files the config is read from, and writes a protected file under the
# rules it wrote: (the config before, if the project has one; the command). The writes go through a
# Python heredoc whose paths the shell gate cannot read, so they run and only their effect tells.
_WRITE_PLAYER = "open(os.path.join('sr' + 'c', 'player.gd'), 'a').write('evil')\n"
_CONFIG_AT = "p = os.path.join('.hook' + 'gate', 'config.toml')\n"
REWRITTEN_RULES = {
    "the protection turned off": (
        "", "[pipeline.protect]\nenabled = false\n[pipeline.roles.build]\nrules = []\n"),
    "the effect check turned off, no config before": (
        None, "[effect]\nenabled = false\n"),
    "its after-event gate turned off": (
        "", "[gates.effect_restore]\nenabled = false\n"),
    "the after-event gate in monitor mode": (
        "", "[gates.effect_restore]\nmode = \"monitor\"\n"),
}


@pytest.mark.parametrize("attack", list(REWRITTEN_RULES))
def test_a_call_that_rewrites_the_rules_is_judged_by_the_rules_it_began_under(tmp_path, attack):
    """The config is read again for every event: a call that rewrote it had its after-event judge
    its writes by the rules it wrote, and a protected file it wrote stood, with the new rules for
    every later call. The after-event is decided by the config the call began under (its reading
    keeps the config's bytes): the config and the file are put back. Ground truth: the command
    run with no role changes both; with the shell gate on, as installed."""
    before, planted = REWRITTEN_RULES[attack]
    command = (f"python3 - <<'EOF'\nimport os\n{_CONFIG_AT}open(p, 'a').write({planted!r})\n{_WRITE_PLAYER}EOF")
    for role in (None, "build"):
        project = build_project(tmp_path / str(role), "claude", syntax_gate=True).role(role)
        if before is None:
            (project.root / ".hookgate" / "config.toml").unlink(missing_ok=True)
        else:
            project.config(before)
        project.bash("true")
        start = state(project.root)
        out = project.bash(command)
        if role is None:  # what the command does when nothing stands in its way
            assert {rel for rel in start.keys() | state(project.root).keys()
                    if start.get(rel) != state(project.root).get(rel)} == {".hookgate/config.toml", "src/player.gd"}
            continue
        assert not out.pre_blocked and out.post_blocked, out
        assert "config.toml" in out.post_reason and "player.gd" in out.post_reason, out.post_reason
        assert state(project.root) == start
        assert project.bash("echo x >> src/player.gd").pre_blocked, "the next call meets the rules as they were"


def test_a_settings_command_removed_and_its_script_rewritten_in_one_call_are_both_put_back(tmp_path):
    """The scripts a runtime's settings run are protected (`runtime_scripts`, from the settings
    when the config is read): a call that drops the hook from .claude/settings.json and rewrites
    its script had its after-event read settings that no longer name the script, which stood; the
    settings were put back, naming it again, and the runtime ran the call's code at its next hook."""
    settings = '{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "python3 tools/check.py"}]}]}}\n'
    command = ("python3 - <<'EOF'\nimport os\nopen(os.path.join('.cla' + 'ude', 'settings.json'), 'w').write('{}')\n"
               "open(os.path.join('to' + 'ols', 'check.py'), 'w').write('import os; os.remove(\"PLAN.md\")')\nEOF")
    for role in (None, "build"):
        project = build_project(tmp_path / str(role), "claude", syntax_gate=True).role(role)
        project.write(".claude/settings.json", settings)
        project.write("tools/check.py", "print('ok')\n")
        project.bash("true")
        start = state(project.root)
        out = project.bash(command)
        if role is None:
            assert (project.root / "tools/check.py").read_text() != "print('ok')\n"
            continue
        assert out.post_blocked and "check.py" in out.post_reason, out
        assert state(project.root) == start


def test_rules_a_person_edits_while_a_call_runs_remove_no_file(tmp_path):
    """A person's edit of the config while a call runs is put back by the call's after-event (as
    any edit made then), which judges by the rules the call began under: a file the new rules
    name, there before the call, is not taken as created by it and removed."""
    project = build_project(tmp_path / "p", "claude")
    project.write("notes/a.md", "mine\n")
    project.bash("true")
    assert not project.hook(project.tool_payload("PreToolUse", "Bash", {"command": "true"}, "toolu_a"))[0]
    project.config(NO_SYNTAX_GATE + '[pipeline.roles.build]\nrules = [{ deny = ["notes/*"], reason = "no notes ({file})" }]\n')
    blocked, reason, _ = project.after("toolu_a", {"command": "true"}, subprocess.run(["true"], capture_output=True, text=True))
    assert blocked and "config.toml" in reason and "notes/a.md" not in reason, reason
    assert (project.root / "notes/a.md").read_text() == "mine\n"
