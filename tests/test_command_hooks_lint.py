"""`hookgate doctor`'s hooks.json checks (commandhooks.lint)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hookgate.commandhooks.lint import hook_budgets, lint


@pytest.fixture
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    return home / ".hookgate" / "hooks.json", tmp_path / "work" / ".hookgate" / "hooks.json"


def put(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def handler(command: str = "true", **extra: object) -> dict[str, object]:
    return {"type": "command", "command": command, **extra}


def by_where(problems) -> dict[str, tuple[str, str]]:
    return {p.where: (p.severity, p.detail) for p in problems}


def test_a_clean_file_has_no_problems(files):
    put(files[1], {"hooks": {"PreToolUse": [{"matcher": "Bash|Write|mcp__db__.*", "hooks": [handler(timeout=30)]}],
                             "SessionStart": [{"matcher": "startup|resume", "hooks": [handler(timeout=20)]}]}})
    assert lint(files[1]) == []


def test_unknown_events_bad_matchers_and_missing_commands_are_errors(files):
    put(files[1], {"PreToolUSe": [{"hooks": [handler()]}],
                   "PreToolUse": [{"matcher": "[Bash", "hooks": [handler()]}, {"matcher": "Bash", "hooks": [{"type": "command"}]}]})
    problems = by_where(lint(files[1]))
    assert problems["$.PreToolUSe"][0] == "error" and "did you mean 'PreToolUse'" in problems["$.PreToolUSe"][1]
    assert problems["$.PreToolUse[0].matcher"][0] == "error" and "bad matcher '[Bash'" in problems["$.PreToolUse[0].matcher"][1]
    assert problems["$.PreToolUse[1].hooks[0].command"] == (
        "error", "missing command: a handler needs a non-empty `command` string")


def test_suspicious_timeouts(files):
    put(files[1], {"PreToolUse": [{"matcher": "Bash", "hooks": [
        handler("a", timeout=30000), handler("b", timeout=0.2), handler("c", timeout=100)]}],
        "SessionEnd": []})
    problems = by_where(lint(files[1], budgets={"PreToolUse": 120}))
    assert problems["$.PreToolUse[0].hooks[0]"] == (
        "warning", "suspicious timeout 30000s: the runtime gives hookgate's whole PreToolUse call 120s, so it would be "
                   "killed first (keep hook timeouts under 115s; the timeout is in seconds)")
    assert problems["$.PreToolUse[0].hooks[1]"][1].startswith("suspicious timeout 0.2s: shorter than starting a shell")
    assert "$.PreToolUse[0].hooks[2]" not in problems


def test_the_default_budgets_are_the_shortest_any_runtime_registers(files):
    from hookgate_claude.install import REGISTRATIONS

    budgets = hook_budgets()
    claude = {event: float(timeout) for event, _, timeout, _ in REGISTRATIONS}
    assert set(claude) <= set(budgets) and all(budgets[event] <= claude[event] for event in claude)
    put(files[1], {"SessionStart": [{"hooks": [handler(timeout=118)]}, {"hooks": [handler("b")]}],  # registered: 120 s
                   "PreToolUse": [{"hooks": [handler()]}]})  # registered: 120 s
    assert [p.detail.split(":")[0] for p in lint(files[1])] == ["suspicious timeout 118s"]


def test_matchers_that_cannot_mean_what_they_say(files):
    put(files[1], {
        "PreToolUse": [{"matcher": "bash|write_file", "hooks": [handler()]},
                       {"matcher": "^shell_.*", "hooks": [handler()]}],
        "Stop": [{"matcher": "Bash", "hooks": [handler()]}],
        "PreCompact": [{"matcher": "manual|automatic", "hooks": [handler(timeout=10)]}],
        "GoalUpdate": [{"matcher": "set", "hooks": [handler()]}],
    })
    messages = [(p.where, p.detail) for p in lint(files[1])]
    assert messages == [
        ("$.PreToolUse[0].hooks[0]", "the matcher names 'bash', which is not a canonical tool name (did you mean 'Bash'?); "
                                     "matchers see Claude Code's tool names on every runtime (Bash, Write, Edit, Read, ...)"),
        ("$.PreToolUse[0].hooks[0]", "the matcher names 'write_file', which is not a canonical tool name (did you mean "
                                     "'Write'?); matchers see Claude Code's tool names on every runtime (Bash, Write, Edit, Read, ...)"),
        ("$.PreToolUse[1].hooks[0]", messages[2][1]),
        ("$.Stop[0].hooks[0]", "the matcher 'Bash' is ignored: Stop has no value to match, every Stop runs it"),
        ("$.PreCompact[0].hooks[0]", "PreCompact is never 'automatic' (its values: manual, auto), so that part of the "
                                     "matcher never matches"),
        ("$.GoalUpdate[0].hooks[0]", "no supported runtime emits GoalUpdate, so this hook never fires"),
    ]
    assert messages[2][1].startswith("the matcher '^shell_.*' matches none of the canonical tool names")


def test_both_files_are_checked_and_ignored_keys_are_warnings(files):
    put(files[0], {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [handler(async_=True)], "once": True}]}})
    put(files[1], "not an object")
    problems = lint(files[1])
    assert [(p.file, p.severity, p.where) for p in problems] == [
        (str(files[0]), "warning", "$.hooks.PreToolUse[0].once"),
        (str(files[0]), "warning", "$.hooks.PreToolUse[0].hooks[0].async_"),
        (str(files[1]), "error", "$"),
    ]
    assert str(problems[2]) == f"{files[1]}: expected an object of events, got a string; none of its hooks run - at `$`"


def test_doctor_reads_each_problem_as_a_finding(files):
    from types import SimpleNamespace

    from hookgate.commandhooks.lint import doctor_check

    put(files[1], {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command"}]}]})
    [finding] = doctor_check(SimpleNamespace(project=files[1].parent.parent, env={}))
    assert (finding.status, finding.message, finding.fix) == (
        "fail",
        f"{files[1]}: missing command: a handler needs a non-empty `command` string - at `$.PreToolUse[0].hooks[0].command`",
        f"edit {files[1]} at `$.PreToolUse[0].hooks[0].command`",
    )
