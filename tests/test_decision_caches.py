"""What a decision caches (the rule lists compiled per config, root and environment in
pipeline/rules.py; the engine per set of gates in engine_builder.py; the filesystem's answers a
long-running core keeps, store/kept.py) never outlives what it was built from: a config, role,
policy, filesystem or environment change between two calls of one process (the in-process
engine, a warm core's fork, the OpenCode core) is seen by the second call. Every test runs twice:
in a process that asks the filesystem on every decision, and in one that keeps its answers."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Iterator

import pytest

from hookgate.config.cache import RACY_SECONDS
from hookgate.hookcall import handle
from hookgate.store import kept
from hookgate_claude import dialect
from support import decider as reused  # one policy held across decisions, as a core holds it


def decide(root: Path, path: str) -> str | None:
    """The deny reason for a main-agent Write of `path`, or None when it may go ahead."""
    raw = json.dumps({"session_id": "s", "cwd": str(root), "hook_event_name": "PreToolUse", "tool_name": "Write",
                      "tool_input": {"file_path": path, "content": "x"}}).encode()
    answer = handle(dialect, raw, {**os.environ, "HOOKGATE_PROJECT_DIR": str(root)})
    specific = json.loads(answer.stdout or b"{}").get("hookSpecificOutput", {})
    return specific.get("permissionDecisionReason") if specific.get("permissionDecision") == "deny" else None


@pytest.fixture(autouse=True, params=["asked every time", "answers kept"])
def answers(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The process keeps the filesystem's answers across decisions (as the OpenCode core does), or not."""
    monkeypatch.setattr(kept, "_kept", None)
    if request.param == "answers kept":
        assert kept.keep_answers() is not None, "no inotify here"
    yield
    if kept.current() is not None:
        kept.current().close()


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    project = tmp_path / "game"
    (project / ".hookgate").mkdir(parents=True)
    (project / ".hookgate" / "current_role").write_text("build\n")
    return project


def settled() -> None:
    """Past the age below which nothing is cached (config/cache.py), so the next calls do hit."""
    time.sleep(RACY_SECONDS + 0.2)


CONFIG = """[pipeline.roles.build]
rules = [{{ deny = ["{pattern}"], reason = "no {pattern} in build" }}]
"""


@pytest.mark.parametrize("wait", [False, True], ids=["at once", "after the config was cached"])
def test_a_config_change_between_two_calls_is_seen_by_the_second(root: Path, wait: bool) -> None:
    config = root / ".hookgate" / "config.toml"
    config.write_text(CONFIG.format(pattern="*.txt"))
    if wait:
        settled()
    assert decide(root, "notes.txt") == "no *.txt in build"
    assert decide(root, "notes.txt") == "no *.txt in build"  # the compiled rules reused
    assert decide(root, "notes.md") is None
    config.write_text(CONFIG.format(pattern="*.md"))
    assert decide(root, "notes.txt") is None
    assert decide(root, "notes.md") == "no *.md in build"


@pytest.mark.parametrize("wait", [False, True], ids=["at once", "after the role file settled"])
def test_a_role_change_between_two_calls_is_seen_by_the_second(root: Path, wait: bool) -> None:
    role = root / ".hookgate" / "current_role"
    if wait:
        settled()
    assert decide(root, "src/player.gd") is not None  # build: game code goes through a worker
    role.write_text("scaffold\n")
    assert decide(root, "src/player.gd") is None
    role.write_text("build\n")
    assert decide(root, "src/player.gd") is not None
    role.unlink()
    assert decide(root, "src/player.gd") is None


def test_a_home_change_between_two_calls_moves_the_protected_place(root: Path, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """`~/.claude/settings.json` is compiled into the rule list for the HOME of the call."""
    first, second = tmp_path / "home", tmp_path / "other-home"
    assert "protected" in (decide(root, str(first / ".claude" / "settings.json")) or "")
    assert decide(root, str(second / ".claude" / "settings.json")) is None
    monkeypatch.setenv("HOME", str(second))
    assert decide(root, str(first / ".claude" / "settings.json")) is None
    assert "protected" in (decide(root, str(second / ".claude" / "settings.json")) or "")


@pytest.mark.parametrize("reuse", [False, True], ids=["a call each", "one policy reused"])
def test_a_place_named_by_a_variable_set_unset_and_moved_between_two_calls(root: Path, tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch,
                                                                          reuse: bool) -> None:
    """`$CODEX_HOME/hooks.json` protects nothing while CODEX_HOME is unset (the compiled rules
    are keyed on the variable, unset included), then the place it names, wherever it moves."""
    judge = reused(root) if reuse else (lambda path: decide(root, path))
    first, second = tmp_path / "codex-a", tmp_path / "codex-b"
    monkeypatch.delenv("CODEX_HOME", raising=False)
    assert judge(str(first / "hooks.json")) is None
    monkeypatch.setenv("CODEX_HOME", str(first))
    assert "protected" in (judge(str(first / "hooks.json")) or "")
    assert judge(str(second / "hooks.json")) is None
    monkeypatch.setenv("CODEX_HOME", str(second))
    assert judge(str(first / "hooks.json")) is None
    assert "protected" in (judge(str(second / "hooks.json")) or "")
    monkeypatch.delenv("CODEX_HOME")
    assert judge(str(second / "hooks.json")) is None


def test_a_policy_added_or_removed_between_two_calls_changes_the_engine(root: Path) -> None:
    policies = root / ".hookgate" / "policies"
    policies.mkdir()
    assert decide(root, "notes.txt") is None
    (policies / "no_notes.py").write_text(
        "from hookgate import register_hook, block\n"
        "register_hook('no-notes', 'pre_tool_use', {'tool': 'Write', 'path_pattern': '*.txt'}, None,\n"
        "              lambda e: block('notes are kept elsewhere'))\n")
    assert decide(root, "notes.txt") == "notes are kept elsewhere"
    (policies / "no_notes.py").unlink()
    assert decide(root, "notes.txt") is None


def call(root: Path, session: str, event: str, **fields: object) -> None:
    raw = json.dumps({"session_id": session, "cwd": str(root), "hook_event_name": event, **fields}).encode()
    handle(dialect, raw, {**os.environ, "HOOKGATE_PROJECT_DIR": str(root)})


def test_a_role_claimed_by_another_session_between_two_calls_is_seen(root: Path) -> None:
    """The owner note is read once per file identity (pipeline/session.py): a note another
    session's claim replaced is read again, so a new session drops the role it does not own."""
    role = root / ".hookgate" / "current_role"
    call(root, "s1", "PreToolUse", tool_name="Write", tool_input={"file_path": "notes.md", "content": "x"})
    note_path = root / ".hookgate" / "role_owner.json"
    note = json.loads(note_path.read_text())
    assert note["session_id"] == "s1"
    settled()
    call(root, "s1", "SessionStart", source="resume")  # its own role: kept (and the note now cached)
    assert role.exists()
    replaced = note_path.with_name("role_owner.json.new")
    replaced.write_text(json.dumps({**note, "session_id": "s2"}))
    os.replace(replaced, note_path)  # as another session's claim writes it
    call(root, "s1", "SessionStart", source="resume")
    assert not role.exists()  # owned by s2 now: s1's new start drops it as stale


def test_the_effect_store_follows_the_environment_of_each_call(root: Path, tmp_path: Path) -> None:
    """store_for is worked out once per root and per environment it reads (effect/store.py)."""
    from hookgate.effect.store import store_for

    first = store_for(root, {"XDG_STATE_HOME": str(tmp_path / "a"), "HOME": str(tmp_path)})
    second = store_for(root, {"XDG_STATE_HOME": str(tmp_path / "b"), "HOME": str(tmp_path)})
    by_home = store_for(root, {"HOME": str(tmp_path / "h")})
    nowhere = store_for(root, {})
    assert first.dir.is_relative_to(tmp_path / "a") and second.dir.is_relative_to(tmp_path / "b")
    assert by_home.dir.is_relative_to(tmp_path / "h" / ".local" / "state")
    assert nowhere.dir == root.resolve() / ".hookgate" / "effect"
    assert store_for(root, {"XDG_STATE_HOME": str(tmp_path / "a"), "HOME": str(tmp_path)}).dir == first.dir


def test_the_effect_store_follows_os_environ_however_it_changes(root: Path, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """store_for() reads os.environ's own table (hookgate/environ.py): a change made through
    os.environ, through os.environb (as the warm core takes its caller's environment) or an
    os.environ replaced by a plain mapping moves the store at once."""
    from hookgate.effect.store import store_for

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "a"))
    assert store_for(root).dir.is_relative_to(tmp_path / "a")
    os.environb[b"XDG_STATE_HOME"] = os.fsencode(tmp_path / "b")
    assert store_for(root).dir.is_relative_to(tmp_path / "b")
    monkeypatch.delenv("XDG_STATE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "h"))
    assert store_for(root).dir.is_relative_to(tmp_path / "h" / ".local" / "state")
    monkeypatch.setattr(os, "environ", {"XDG_STATE_HOME": str(tmp_path / "c")})
    assert store_for(root).dir.is_relative_to(tmp_path / "c")
    monkeypatch.setattr(os, "environ", {})
    assert store_for(root).dir == root.resolve() / ".hookgate" / "effect"


def test_the_environment_read_names_each_variable_as_spelled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Variables reads its names through one generated expression (hookgate/environ.py): each
    value is its own name's, whatever characters the name holds, set, changed or removed."""
    from hookgate.environ import Variables

    names = ("HOOKGATE_T_Q'", 'HOOKGATE_T_D"', "HOOKGATE_T_B\\", "HOOKGATE_T_Ü", "HOOKGATE_T_P)", "HOOKGATE_T_N")
    variables = Variables(names)
    for name in names:
        monkeypatch.delenv(name, raising=False)
    assert variables.values() == (None,) * len(names)
    for number, name in enumerate(names):
        monkeypatch.setenv(name, f"value {number}")
    assert variables.values() == tuple(os.fsencode(f"value {number}") for number in range(len(names)))
    monkeypatch.delenv(names[0])
    os.environb[os.fsencode(names[-1])] = b"changed"
    assert variables.values() == (None, *(os.fsencode(f"value {n}") for n in range(1, len(names) - 1)), b"changed")
    assert Variables(()).values() == ()


def test_a_rule_whose_patterns_cannot_share_one_expression_is_matched_pattern_by_pattern() -> None:
    """fnmatch.translate named its groups before Python 3.11; two such expressions cannot be one
    alternation, and the rule is then matched by each in turn, with the same answers."""
    from hookgate.pipeline.rules import matcher, _translated

    match = _translated([r"(?P<g0>a.*)\Z", r"(?P<g0>b.*)\Z"])
    assert match("apple") and match("banana") and not match("cherry")
    assert matcher([]) is None


# -- one policy reused across decisions (the in-process engine, the OpenCode core): the Project
# -- object keeps the role it last read, by the identity of the role file

@pytest.mark.parametrize("keep_mtime", [False, True], ids=["rewritten", "rewritten, mtime put back"])
def test_a_role_rewritten_in_place_with_the_same_length_is_seen_by_a_reused_policy(root: Path,
                                                                                  keep_mtime: bool) -> None:
    """Same inode, same size: the file's times still move (and its ctime even when the mtime is
    put back), so the role read before is not the answer."""
    role = root / ".hookgate" / "current_role"
    decide_reused = reused(root)
    settled()
    assert "Build role" in (decide_reused("src/player.gd") or "")
    assert "Build role" in (decide_reused("src/player.gd") or "")  # the role read once, then known
    before = role.stat()
    with open(role, "r+") as f:
        f.write("asset\n")  # the same length as "build\n"
    if keep_mtime:
        os.utime(role, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert role.stat().st_ino == before.st_ino and role.stat().st_size == before.st_size
    assert "Asset role" in (decide_reused("src/player.gd") or "")
    role.unlink()
    assert decide_reused("src/player.gd") is None


def test_a_role_changed_twice_within_one_tick_is_seen_by_a_reused_policy(root: Path) -> None:
    """A role file younger than RACY_SECONDS is read on every call: two writes within one tick
    of the file times cannot leave a stale role behind."""
    role = root / ".hookgate" / "current_role"
    decide_reused = reused(root)
    for _ in range(20):
        role.write_text("build\n")
        assert "Build role" in (decide_reused("src/player.gd") or "")
        with open(role, "r+") as f:
            f.write("asset\n")
        assert "Asset role" in (decide_reused("src/player.gd") or "")


def test_a_folder_swapped_for_a_symlink_between_two_calls_is_seen_by_a_reused_policy(root: Path) -> None:
    """Paths are resolved on every call (hookgate.paths.resolved): a folder the build role may
    write, swapped for a link into the Evaluator's e2e/, is judged where the write lands."""
    decide_reused = reused(root)
    (root / "docs" / "notes").mkdir(parents=True)
    (root / "e2e").mkdir()
    target = str(root / "docs" / "notes" / "plan.md")
    settled()
    assert decide_reused(target) is None
    assert decide_reused(target) is None
    (root / "docs" / "notes").rmdir()
    (root / "docs" / "notes").symlink_to(root / "e2e")
    assert "cannot write to e2e/" in (decide_reused(target) or "")
    (root / "docs" / "notes").unlink()
    (root / "docs" / "notes").mkdir()
    assert decide_reused(target) is None


def test_a_project_reopened_unchanged_is_the_same_and_a_changed_layout_is_a_new_one(tmp_path: Path) -> None:
    """Project.open keeps what it opened (a core's sessions and role reading live on), decided
    afresh each time from the folders: GodotMaker's layout once only `.godotmaker/` is there,
    and a state folder whose symlink moved is the new place."""
    from hookgate.store.project import Project

    root = tmp_path / "game"
    (root / ".godotmaker").mkdir(parents=True)
    (root / ".hookgate").mkdir()
    first = Project.open(root)
    assert Project.open(root) is first and first.layout.dir == ".hookgate"
    (root / ".hookgate").rmdir()
    godotmaker = Project.open(root)
    assert godotmaker is not first and godotmaker.layout.dir == ".godotmaker"
    assert godotmaker.role_path == root / ".godotmaker" / godotmaker.layout.role
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (root / "state").symlink_to(tmp_path / "a")
    assert Project.open(root, state_dir="state").state_dir == tmp_path / "a"
    (root / "state").unlink()
    (root / "state").symlink_to(tmp_path / "b")
    assert Project.open(root, state_dir="state").state_dir == tmp_path / "b"


def test_an_engine_is_kept_for_the_same_config_and_gates_and_rebuilt_for_others(root: Path) -> None:
    """build_engine's quick look (the same config object and the same gate objects): an edited
    config is a new object with other gates, and its engine decides by it."""
    from hookgate.config.load import open_project
    from hookgate.engine_builder import build_engine

    project, config = open_project(root)
    engine = build_engine(config, project)
    assert build_engine(config, project) is engine
    (root / ".hookgate" / "config.toml").write_text(
        '[gates.check_file_permissions]\nenabled = false\n[effect]\ntools = "Bash"\n')
    project, edited = open_project(root)
    other = build_engine(edited, project)
    ids = {gate.id for gate in other.gates}
    assert other is not engine and "check_file_permissions" not in ids
    assert "check_file_permissions" in {gate.id for gate in engine.gates}
    snapshot = next(gate for gate in other.gates if gate.id == "effect_snapshot")
    assert snapshot.matcher.startswith("^(?:Bash|")
    assert decide(root, "src/player.gd") is None  # the edited config's engine judged it


def test_the_gates_an_engine_remembers_for_a_tool_are_the_ones_its_matchers_select() -> None:
    from hookgate.engine.gate import Gate
    from hookgate.engine.loop import Engine
    from hookgate.model.events import PostToolUse, PreToolUse

    def named(id: str, matcher: str | None, events: tuple[str, ...] = ("PreToolUse",)) -> Gate:
        return Gate(id=id, events=events, matcher=matcher, check=lambda e, c: None)

    gates = [named("all", None), named("writes", "Write|Edit"), named("mcp", "^mcp__.*"),
             named("after", "Write", ("PostToolUse",))]
    engine = Engine(gates)
    for tool, expected in [("Write", ["all", "writes"]), ("Bash", ["all"]), ("mcp__x__y", ["all", "mcp"]),
                           ("Write", ["all", "writes"]), ("Edit", ["all", "writes"])]:
        event = PreToolUse(session_id="s", tool_name=tool, tool_input={})
        assert [g.id for g in engine.gates_for(event)] == expected, tool
    after = PostToolUse(session_id="s", tool_name="Write", tool_input={}, tool_response={})
    assert [g.id for g in engine.gates_for(after)] == ["after"]


@pytest.mark.parametrize("keep_mtime", [False, True], ids=["mtime moved", "mtime put back"])
def test_the_stage_log_read_once_is_read_again_after_any_change(root: Path, keep_mtime: bool) -> None:
    """Every decision's record counts the completed stages: the log is kept by its identity, so
    an append, a rewrite in place with the same length (its mtime put back too) and a removal
    are each seen by the next look, and a log younger than the racy window is always read."""
    from hookgate.store.project import Project

    project = Project.open(root)
    log = project.stage_path
    assert project.stage_log() == []
    project.append_stage("gdd")
    assert [e["role"] for e in project.stage_log()] == ["gdd"]  # young: read again
    project.append_stage("asset")
    assert [e["role"] for e in project.stage_log()] == ["gdd", "asset"]
    settled()
    assert [e["role"] for e in project.stage_log()] == ["gdd", "asset"]
    assert [e["role"] for e in project.stage_log()] == ["gdd", "asset"]  # known now
    before = log.stat()
    text = log.read_bytes()
    with open(log, "r+b") as f:
        f.write(text.replace(b'"asset"', b'"build"'))  # the same length
    if keep_mtime:
        os.utime(log, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert log.stat().st_ino == before.st_ino and log.stat().st_size == before.st_size
    assert [e["role"] for e in project.stage_log()] == ["gdd", "build"]
    assert project.completed_roles() == {"gdd", "build"}
    log.unlink()
    assert project.stage_log() == [] and project.completed_roles() == set()


def test_one_decision_looks_at_the_role_once_and_sees_a_role_it_dropped_at_once(root: Path) -> None:
    """Context.role_state: the gates of one decision and its record judge one look at the role
    file (a role file replaced in the middle of a decision does not split it), and a gate that
    changes the role (SessionStart dropping a stale one) makes the rest of the decision see it."""
    from hookgate.engine.context import Context
    from hookgate.hookcall import load_policy

    policy = load_policy(str(root), {**os.environ, "HOOKGATE_PROJECT_DIR": str(root)})
    ctx = Context(project=policy.project, session=policy.project.session("s"), config=policy.config)
    assert ctx.current_role() == "build"
    (root / ".hookgate" / "current_role").write_text("gdd\n")
    assert ctx.current_role() == "build"  # the decision's own look
    fresh = Context(project=policy.project, session=policy.project.session("s"), config=policy.config)
    assert fresh.current_role() == "gdd"  # the next decision looks again
    policy.project.clear_role()
    fresh.role_changed()
    assert fresh.current_role() is None


def test_a_role_dropped_as_stale_is_gone_for_the_rest_of_the_session_start(root: Path) -> None:
    """A session that starts while another one owns the role drops it; its banner, read later in
    the same decision, no longer names it."""
    call(root, "s1", "PreToolUse", tool_name="Write", tool_input={"file_path": "notes.md", "content": "x"})
    raw = json.dumps({"session_id": "s2", "cwd": str(root), "hook_event_name": "SessionStart",
                      "source": "startup"}).encode()
    answer = handle(dialect, raw, {**os.environ, "HOOKGATE_PROJECT_DIR": str(root)})
    assert not (root / ".hookgate" / "current_role").exists()
    context = json.loads(answer.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "hookgate" in context and "pipeline role" not in context


def test_a_decision_resolves_a_path_once_and_the_ledger_notes_the_place_the_rules_judged(root: Path) -> None:
    """Context.resolved: the permission check and the effect ledger of one decision share one
    resolution of a Write's path; a folder swapped for a link afterwards changes what the next
    decision resolves, not what this one noted."""
    from hookgate.effect.ledger import relative_forms
    from hookgate.engine.context import Context
    from hookgate.hookcall import load_policy
    from hookgate.paths import resolved

    policy = load_policy(str(root), {**os.environ, "HOOKGATE_PROJECT_DIR": str(root)})

    def decision() -> Context:
        return Context(project=policy.project, session=policy.project.session("s"), config=policy.config)

    (root / "docs" / "notes").mkdir(parents=True)
    (root / "e2e").mkdir()
    target = str(root / "docs" / "notes" / "plan.md")
    ctx = decision()
    assert ctx.resolved(target) == resolved(target) == target
    assert decision().resolved(target) == target  # kept, where the process keeps answers
    (root / "docs" / "notes").rmdir()
    (root / "docs" / "notes").symlink_to(root / "e2e")
    assert ctx.resolved(target) == target  # this decision's own look
    assert decision().resolved(target) == str(root.resolve() / "e2e" / "plan.md")
    shared = relative_forms(target, str(root), str(root), ctx.resolved)
    assert shared == ("docs/notes/plan.md",)
    assert relative_forms(target, str(root), str(root)) == ("docs/notes/plan.md", "e2e/plan.md")
