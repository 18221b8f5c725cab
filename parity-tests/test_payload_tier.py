"""The payload tier: every scenario session, move by move, through each runtime's stdin adapter
(`hookgate hook claude|codex|gemini`; OpenCode's plugin, under Node, talking to the core) with what that
runtime hands its hooks (shapes captured from it), each answer read back as a canonical verdict by
that runtime's protocol.

Every runtime must come to the same verdict and the same metrics records for every move, except
where a move says a runtime does otherwise, and the parity matrix must say that runtime degrades
or cannot enforce one of that move's rows. The limitations the matrix calls not enforceable are
shown here too (a hook that never runs, a rewrite that is not carried)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from pytest import mark

from drivers import claude, codex, gemini, opencode
from drivers.base import Played, check_never_run, prepare
from hookgate.parity.matrix import compute
from scenarios import NEVER_RUN, SESSIONS, Interrupt, Tool, proved_rows

DRIVERS = {"claude": claude, "codex": codex, "gemini": gemini, "opencode": opencode}
# what every record carries about where it came from, which differs between runtimes by nature
PROVENANCE = ("ts", "session_id", "runtime", "agent_id", "agent_type", "path", "run_id", "trace_id")
ERRORS = ("gate_error", "hook_error", "registered_hook_error", "command_hook_error", "gate_violation")


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], list[Played]]:
    """Every session on every runtime, each in its own project (they run side by side)."""
    def play(runtime: str, name: str, root: Path) -> list[Played]:
        work, home = root / "work", root / "home"
        work.mkdir()
        home.mkdir()
        prepare(SESSIONS[name], work)
        return DRIVERS[runtime].Payloads(SESSIONS[name], work, home).play()

    roots = {(rt, name): tmp_path_factory.mktemp(f"{rt}-{name}") for rt in DRIVERS for name in SESSIONS}
    with ThreadPoolExecutor(max_workers=4) as pool:
        futures = {key: pool.submit(play, *key, root) for key, root in roots.items()}
    return {key: future.result() for key, future in futures.items()}


@pytest.mark.parametrize("name", SESSIONS)
@pytest.mark.parametrize("runtime", DRIVERS)
def test_every_move_comes_to_what_the_table_says(played, runtime: str, name: str) -> None:
    for index, step in enumerate(played[runtime, name]):
        move, expect = step.move, step.move.expected(runtime)
        where = f"{runtime} {name} move {index} ({type(move).__name__} {move.key})"
        assert step.verdict.kind == expect.verdict, (where, step.verdict)
        assert expect.sees in step.verdict.text, (where, step.verdict.text)
        at = 0
        for record in expect.records:
            found = next((i for i in range(at, len(step.records)) if record.matches(step.records[i])), None)
            assert found is not None, (where, f"no record {record} after the earlier ones", _brief(step.records))
            at = found + 1
        assert step.files == dict(expect.files), where
        about = expect.about or move.key
        for hook in expect.ran:
            assert any(e["hook"] == hook and about in e["subject"] for e in step.evidence), (where, hook, step.evidence)
        for hook in expect.not_ran:
            assert not any(e["hook"] == hook for e in step.evidence), (where, hook)
        assert not [r for r in step.records if r["event"] in ERRORS], where


def _brief(records: list[dict]) -> list[dict]:
    # which hooks.json file a refusing handler is in is the project's own absolute path
    return [{k: v for k, v in r.items() if k not in PROVENANCE and not (k == "file" and r["event"] == "command_hook_block")}
            for r in records]


@pytest.mark.parametrize("name", SESSIONS)
def test_every_runtime_records_the_same(played, name: str) -> None:
    reference, *others = DRIVERS
    for index, step in enumerate(played[reference, name]):
        for runtime in others:
            if step.move.on:
                continue  # a runtime that does otherwise: checked against the table above
            assert _brief(played[runtime, name][index].records) == _brief(step.records), (name, index, runtime)


def test_runtimes_differ_only_where_the_matrix_says_so() -> None:
    matrix = compute()
    for session in SESSIONS.values():
        for move in session.moves:
            for runtime, expect in move.on.items():
                statuses = {row: matrix.at(row, runtime).status for row in expect.proves}
                assert any(s != "enforced" for s in statuses.values()), (session.name, move.key, runtime, statuses)


@pytest.mark.parametrize("runtime", DRIVERS)
def test_the_table_shows_every_cell_of_the_matrix(runtime: str) -> None:
    rows = {row.id for row in compute().rows}
    assert rows - proved_rows(runtime) == set()
    assert proved_rows(runtime) - rows == set()  # no move claims a row that does not exist


# -- the limitations the matrix calls not enforceable, shown ---------------------------------------

def _move(played, runtime: str, name: str, kind: type, key: str = "") -> Played:
    return next(p for p in played[runtime, name] if isinstance(p.move, kind) and p.move.key == key)


@mark.proves("python_hooks.on_error@codex", "python_hooks.on_error@opencode", "python_hooks.on_error@gemini")
@pytest.mark.parametrize("runtime", ["codex", "opencode", "gemini"])
def test_a_failed_command_is_a_post_tool_use_so_on_error_never_runs(played, runtime: str) -> None:
    failed = _move(played, runtime, "lead", Tool, "ls missing-dir")
    assert [e["hook"] for e in failed.evidence if e["hook"].startswith("python:") and e["event"] == "PostToolUse"] \
        == ["python:post_tool_use"]
    assert not any(e["hook"] == "python:on_error" for p in played[runtime, "lead"] for e in p.evidence)
    # the same failure on Claude Code runs it
    assert any(e["hook"] == "python:on_error" for e in _move(played, "claude", "lead", Tool, "ls missing-dir").evidence)


@mark.proves("python_hooks.permission_request.modified@codex", "python_hooks.permission_request.modified@opencode")
@pytest.mark.parametrize("runtime", ["codex", "opencode"])
def test_a_rewrite_from_a_permission_request_is_not_carried(played, runtime: str) -> None:
    rewrite = _move(played, runtime, "permission", Tool, "echo x > perm-draft.txt")
    assert any(e["hook"] == "python:permission_request" for e in rewrite.evidence)  # the rewriting hook ran
    assert not rewrite.verdict.decided and rewrite.verdict.updated_input is None  # no rewrite handed over
    assert rewrite.files["perm-approved.txt"] is None
    claude_rewrite = _move(played, "claude", "permission", Tool, "echo x > perm-draft.txt")
    assert claude_rewrite.verdict.updated_input and claude_rewrite.files["perm-approved.txt"] == "x\n"


@mark.proves("python_hooks.post_run_control@claude", "python_hooks.post_run_control@opencode",
             "python_hooks.post_run_control@gemini")
@pytest.mark.parametrize("runtime", ["claude", "opencode", "gemini"])
def test_no_interrupt_hook_so_post_run_control_never_runs(played, runtime: str) -> None:
    assert not any(e["hook"] == "python:post_run_control" for key, moves in played.items() if key[0] == runtime
                   for p in moves for e in p.evidence)
    codex_interrupt = _move(played, "codex", "interrupt", Interrupt)
    assert any(e["hook"] == "python:post_run_control" for e in codex_interrupt.evidence)


@mark.proves(
    "command_hooks.goal_update@claude", "command_hooks.goal_update@codex", "command_hooks.goal_update@opencode",
    "python_hooks.generate_start@claude", "python_hooks.generate_start@codex", "python_hooks.generate_start@opencode",
    "python_hooks.generate_end@claude", "python_hooks.generate_end@codex", "python_hooks.generate_end@opencode",
    "python_hooks.skill_load@claude", "python_hooks.skill_load@codex", "python_hooks.skill_load@opencode",
    "python_hooks.skill_unload@claude", "python_hooks.skill_unload@codex", "python_hooks.skill_unload@opencode",
    "python_hooks.on_success@claude", "python_hooks.on_success@codex", "python_hooks.on_success@opencode",
    "python_hooks.pre_context_perception@claude", "python_hooks.pre_context_perception@codex",
    "python_hooks.pre_context_perception@opencode", "python_hooks.post_context_perception@claude",
    "python_hooks.post_context_perception@codex", "python_hooks.post_context_perception@opencode",
    "python_hooks.pre_memory_recall@claude", "python_hooks.pre_memory_recall@codex",
    "python_hooks.pre_memory_recall@opencode", "python_hooks.post_memory_recall@claude",
    "python_hooks.post_memory_recall@codex", "python_hooks.post_memory_recall@opencode",
    "python_hooks.pre_planning@claude", "python_hooks.pre_planning@codex", "python_hooks.pre_planning@opencode",
    "python_hooks.post_planning@claude", "python_hooks.post_planning@codex", "python_hooks.post_planning@opencode",
    "python_hooks.pre_reasoning@claude", "python_hooks.pre_reasoning@codex", "python_hooks.pre_reasoning@opencode",
    "python_hooks.post_reasoning@claude", "python_hooks.post_reasoning@codex", "python_hooks.post_reasoning@opencode",
    "python_hooks.on_rate_limit@claude", "python_hooks.on_rate_limit@codex", "python_hooks.on_rate_limit@opencode",
    "python_hooks.on_confirmation@claude", "python_hooks.on_confirmation@codex",
    "python_hooks.on_confirmation@opencode", "python_hooks.intent_detection@claude",
    "python_hooks.intent_detection@codex", "python_hooks.intent_detection@opencode",
    "python_hooks.pre_run_control@claude", "python_hooks.pre_run_control@codex",
    "python_hooks.pre_run_control@opencode",
)
@pytest.mark.parametrize("runtime", DRIVERS)
def test_hooks_on_events_no_runtime_emits_are_accepted_and_never_run(played, runtime: str) -> None:
    check_never_run((e for key, moves in played.items() if key[0] == runtime for p in moves for e in p.evidence),
                    list(NEVER_RUN))
