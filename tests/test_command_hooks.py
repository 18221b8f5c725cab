"""Command hooks from hooks.json (seed 002): files, merge, matchers, and real handler processes."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from hookgate import commandhooks
from hookgate.commandhooks.spec import EVENTS, hook_files, load
from hookgate.engine.loop import Engine
from hookgate.model.events import (PostToolUse, PreCompact, PreToolUse, SessionStart, Stop, SubagentStart,
                                   UserPromptSubmit)
from hookgate.model.verdicts import Block


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A throwaway home, so the global ~/.hookgate/hooks.json is the test's own."""
    path = tmp_path / "home"
    (path / ".hookgate").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(path))
    return path


def hooks(*groups: tuple[str, str, list[Any]], wrap: bool = True) -> dict[str, Any]:
    events: dict[str, list[Any]] = {}
    for event, matcher, handlers in groups:
        entries = [h if isinstance(h, dict) else {"type": "command", "command": h} for h in handlers]
        events.setdefault(event, []).append({"matcher": matcher, "hooks": entries})
    return {"hooks": events} if wrap else events


def write(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))


def engine(ctx) -> Engine:
    return Engine(commandhooks.gates(ctx.config, ctx.project))


def pre(tool: str = "Bash", **tool_input: Any) -> PreToolUse:
    return PreToolUse(session_id="s1", tool_name=tool, tool_input=tool_input or {"command": "ls"})


# -- the files ---------------------------------------------------------------------------------

def test_the_outer_hooks_key_is_optional(project, home):
    spec = ("PreToolUse", "Bash", ["echo a"])
    write(project.hooks_path, hooks(spec))
    write(home / ".hookgate" / "hooks.json", hooks(("Stop", "", ["echo b"]), wrap=False))
    files = load(hook_files(project.hooks_path))
    assert files.problems == ()
    assert [(h.event, h.matcher, h.command) for h in files.handlers] == [("Stop", "", "echo b"), ("PreToolUse", "Bash", "echo a")]


def test_global_and_project_merge_and_identical_handlers_run_once(project, home):
    write(home / ".hookgate" / "hooks.json", hooks(
        ("PreToolUse", "Bash", ["echo same", {"type": "command", "command": "echo global", "timeout": 5}]),
    ))
    write(project.hooks_path, hooks(
        ("PreToolUse", "Bash", [{"type": "command", "command": "echo same", "timeout": 9}, "echo project"]),
        ("PreToolUse", "Bash|Write", ["echo same"]),  # another matcher: another handler
        ("Stop", "*", ["echo same"]), ("Stop", "", ["echo same"]),  # "*" and "" are the same matcher
    ))
    handlers = load(hook_files(project.hooks_path)).handlers
    assert [(h.event, h.matcher, h.command, h.timeout) for h in handlers] == [
        ("PreToolUse", "Bash", "echo same", 60.0),  # the first declaration holds
        ("PreToolUse", "Bash", "echo global", 5.0),
        ("PreToolUse", "Bash", "echo project", 60.0),
        ("PreToolUse", "Bash|Write", "echo same", 60.0),
        ("Stop", "*", "echo same", 60.0),
    ]
    assert handlers[0].file == str(home / ".hookgate" / "hooks.json") and handlers[2].file == str(project.hooks_path)


def test_a_broken_entry_is_skipped_and_named_while_the_rest_runs(project, home):
    write(project.hooks_path, {"hooks": {
        "PreToolUse": [
            {"matcher": "Bash(", "hooks": [{"type": "command", "command": "echo bad-regex"}]},
            {"matcher": "Bash", "hooks": [
                {"type": "command"},
                {"type": "command", "command": "echo bad-timeout", "timeout": -1},
                {"type": "prompt", "prompt": "judge it"},
                {"type": "command", "command": "echo good", "onFailure": "block"},
            ]},
        ],
        "pre_tool_use": [],
        "Stop": {"matcher": ""},
    }})
    files = load(hook_files(project.hooks_path))
    assert [h.command for h in files.handlers] == ["echo good"]
    problems = {(p.severity, p.where): p.detail for p in files.problems}
    assert problems == {
        ("error", "$.hooks.PreToolUse[0].matcher"): "bad matcher 'Bash(': not a valid regular expression "
                                                    "(missing ), unterminated subpattern at position 4)",
        ("error", "$.hooks.PreToolUse[1].hooks[0].command"): "missing command: a handler needs a non-empty `command` string",
        ("error", "$.hooks.PreToolUse[1].hooks[1].timeout"): "the timeout must be a positive number of seconds, got -1",
        ("error", "$.hooks.PreToolUse[1].hooks[2].type"): "handler type 'prompt' is not supported; only \"command\"",
        ("warning", "$.hooks.PreToolUse[1].hooks[3].onFailure"): "unknown key 'onFailure' is ignored; a handler has: type, command, timeout",
        ("error", "$.hooks.pre_tool_use"): "unknown event 'pre_tool_use' (did you mean 'PreToolUse'?); known: "
                                           + ", ".join(EVENTS),
        ("error", "$.hooks.Stop"): "expected a list of matcher groups, got an object",
    }


@pytest.mark.parametrize("text, message", [
    ("{not json", "not valid JSON"),
    ("[1, 2]", "expected an object of events, got a list"),
    ('{"hooks": []}', "expected an object of events, got a list"),
])
def test_an_unreadable_file_runs_none_of_its_hooks_and_says_so(project, home, text, message):
    write(project.hooks_path, text)
    write(home / ".hookgate" / "hooks.json", hooks(("Stop", "", ["echo global"])))
    files = load(hook_files(project.hooks_path))
    assert [h.command for h in files.handlers] == ["echo global"]
    assert len(files.errors) == 1 and message in files.errors[0].detail and files.errors[0].file == str(project.hooks_path)


def test_gates_one_per_event_blocking_only_where_seed_002_allows(project, home):
    write(project.hooks_path, hooks(*[(event, "", ["true"]) for event in EVENTS]))
    gates = {g.id: g for g in commandhooks.gates(project and _config(project), project)}
    assert "command_hooks.goal_update" not in gates  # no runtime emits GoalUpdate
    assert {g.id: (g.events, g.may_block, g.fail_mode) for g in gates.values()} == {
        f"command_hooks.{snake}": ((event,), EVENTS[event], "open")
        for event, snake in [("SessionStart", "session_start"), ("UserPromptSubmit", "user_prompt_submit"),
                             ("PreToolUse", "pre_tool_use"), ("PostToolUse", "post_tool_use"), ("Stop", "stop"),
                             ("SubagentStart", "subagent_start"), ("SubagentStop", "subagent_stop"),
                             ("PreCompact", "pre_compact"), ("PostCompact", "post_compact")]
    }
    assert [e for e, blocks in EVENTS.items() if blocks] == ["UserPromptSubmit", "PreToolUse"]


def _config(project):
    from hookgate.config.load import load_config

    return load_config(project.config_path)


# -- running handlers ---------------------------------------------------------------------------

def test_a_handler_gets_the_event_on_stdin_the_env_and_the_project_as_cwd(project, ctx, home, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    write(project.hooks_path, hooks(("PreToolUse", "Bash", [
        'cat > seen.json; env | grep ^HOOKGATE_ | sort > seen.env; pwd > seen.cwd'
    ])))
    event = PreToolUse(session_id="s1", cwd=str(elsewhere), tool_name="Bash", tool_input={"command": "ls -la"},
                       agent_id="a7", agent_type="worker", tool_use_id="toolu_1")
    assert engine(ctx).evaluate(event, ctx).verdict.kind == "allow"
    root = project.root
    assert json.loads((root / "seen.json").read_text()) == {
        "hook_event_name": "PreToolUse", "session_id": "s1", "cwd": str(elsewhere), "runtime": "claude",
        "identity": "given", "agent_id": "a7", "agent_type": "worker", "tool_name": "Bash",
        "tool_input": {"command": "ls -la"}, "tool_use_id": "toolu_1",
    }
    assert (root / "seen.env").read_text().splitlines() == [
        "HOOKGATE_HOOK_EVENT=PreToolUse", f"HOOKGATE_PROJECT_DIR={root}", "HOOKGATE_SESSION_ID=s1",
    ]
    assert (root / "seen.cwd").read_text().strip() == str(root)


@pytest.mark.parametrize("event, field, value", [
    (UserPromptSubmit(session_id="s1", prompt="ship it"), "prompt", "ship it"),
    (PostToolUse(session_id="s1", tool_name="Bash", tool_input={"command": "ls"}, tool_response={"stdout": "a"}),
     "tool_response", {"stdout": "a"}),
    (PreCompact(session_id="s1", trigger="manual"), "trigger", "manual"),
    (SubagentStart(session_id="s1", agent_id="a1", agent_type="Explore"), "agent_type", "Explore"),
])
def test_each_event_hands_its_own_fields_with_cwd_defaulting_to_the_project(project, ctx, home, event, field, value):
    write(project.hooks_path, hooks((event.name, "", ["cat > seen.json"])))
    engine(ctx).evaluate(event, ctx)
    seen = json.loads((project.root / "seen.json").read_text())
    assert seen[field] == value and seen["hook_event_name"] == event.name and seen["cwd"] == str(project.root)


@pytest.mark.parametrize("matcher, runs_for", [
    ("", {"Bash", "Write", "BashOutput", "mcp__db__query"}),
    ("*", {"Bash", "Write", "BashOutput", "mcp__db__query"}),
    ("Bash", {"Bash"}),
    ("Bash|Write", {"Bash", "Write"}),
    ("^Bash", {"Bash", "BashOutput"}),
    ("mcp__.*", {"mcp__db__query"}),
])
def test_matchers_follow_claude_semantics(project, ctx, home, matcher, runs_for):
    write(project.hooks_path, hooks(("PreToolUse", matcher, ['echo "$(cat)" >> seen.jsonl'])))
    gates = engine(ctx)
    for tool in ("Bash", "Write", "BashOutput", "mcp__db__query"):
        gates.evaluate(pre(tool), ctx)
    seen = (project.root / "seen.jsonl").read_text().splitlines() if runs_for else []
    assert {json.loads(line)["tool_name"] for line in seen} == runs_for


def test_a_matcher_on_an_event_without_a_match_value_is_ignored(project, ctx, home):
    write(project.hooks_path, hooks(("Stop", "Bash", ["touch stop-ran"]), ("SessionStart", "resume", ["touch resumed"])))
    gates = engine(ctx)
    gates.evaluate(Stop(session_id="s1"), ctx)
    gates.evaluate(SessionStart(session_id="s1", source="startup"), ctx)
    assert (project.root / "stop-ran").exists() and not (project.root / "resumed").exists()
    gates.evaluate(SessionStart(session_id="s1", source="resume"), ctx)
    assert (project.root / "resumed").exists()


@pytest.mark.parametrize("command, reason", [
    ("echo 'no shell today' >&2; exit 2", "no shell today"),
    ("exit 2", "blocked by command hook `exit 2`"),
    ("""echo '{"decision": "block", "reason": "by decision"}'""", "by decision"),
    ("""echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
       "permissionDecisionReason": "by permission"}}'""", "by permission"),
    ("""echo '{"hookSpecificOutput": {"permissionDecision": "deny"}}'""", "blocked by command hook `"),
])
def test_exit_2_and_json_decisions_block(project, ctx, home, command, reason):
    write(project.hooks_path, hooks(("PreToolUse", "Bash", [command])))
    decision = engine(ctx).evaluate(pre(), ctx)
    assert isinstance(decision.verdict, Block) and decision.verdict.reason.startswith(reason)
    assert decision.blocked_by == ("command_hooks.pre_tool_use",)


def test_exit_0_answers_that_do_not_block(project, ctx, home):
    write(project.hooks_path, hooks(("PreToolUse", "Bash", [
        """echo '{"additionalContext": "top-level context"}'""",
        """echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": "specific context"}}'""",
        """echo '{"systemMessage": "for the user", "decision": "approve"}'""",
        "echo plain text is not context on PreToolUse",
        "true",
    ])))
    verdict = engine(ctx).evaluate(pre(), ctx).verdict
    assert verdict.kind == "context" and verdict.context == "top-level context\nspecific context"
    assert verdict.message == "for the user"


def test_plain_stdout_is_context_where_claude_makes_it_context(project, ctx, home):
    write(project.hooks_path, hooks(("UserPromptSubmit", "", ["echo remember the style guide"])))
    verdict = engine(ctx).evaluate(UserPromptSubmit(session_id="s1", prompt="go"), ctx).verdict
    assert verdict.kind == "context" and verdict.context == "remember the style guide"


@pytest.mark.parametrize("command, error", [
    ("echo oops >&2; exit 1", "exit code 1: oops"),
    ("exit 3", "exit code 3"),
    ("no-such-command-anywhere", "exit code 127"),
    ("echo '{not json'", "stdout is not a valid JSON decision"),
    ("""echo '{"additionalContext": 42}'""", "stdout is not a valid JSON decision (Expected `str | null`, got `int`"),
])
def test_other_exit_codes_and_bad_output_are_logged_non_blocking_failures(project, ctx, home, command, error):
    write(project.hooks_path, hooks(("PreToolUse", "Bash", [command, "echo fine >&2"])))
    decision = engine(ctx).evaluate(pre(), ctx)
    assert decision.verdict.kind == "allow" and decision.failed == ()
    [record] = [r for r in ctx.records if r["event"] == "command_hook_error"]
    assert record["command"] == command and record["error"].startswith(error)
    assert record["file"] == str(project.hooks_path) and record["where"] == "$.hooks.PreToolUse[0].hooks[0]"
    assert ctx.warnings[0].startswith(f"hookgate: command hook `{command}` failed ({error}")


def test_a_timeout_is_a_non_blocking_failure_and_kills_what_the_handler_started(project, ctx, home):
    write(project.hooks_path, hooks(("PreToolUse", "Bash", [
        {"type": "command", "command": "sleep 60 & echo $! > child.pid; wait", "timeout": 0.5},
        "echo 'still counted' >&2; exit 2",
    ])))
    decision = engine(ctx).evaluate(pre(), ctx)
    assert isinstance(decision.verdict, Block) and decision.verdict.reason == "still counted"
    assert [r["error"] for r in ctx.records if r["event"] == "command_hook_error"] == ["timed out after 0.5s"]
    child = int((project.root / "child.pid").read_text())
    assert not _alive(child)


def _alive(pid: int) -> bool:
    for _ in range(50):  # the kill is sent; give the kernel a moment to reap the orphan
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        if Path(f"/proc/{pid}/stat").exists() and Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z":
            return False
        time.sleep(0.05)
    return True


def test_matched_handlers_run_in_parallel(project, ctx, home):
    # each handler waits until all three have started: run one after another, the first would
    # wait alone until its timeout and nothing would block
    barrier = 'touch "started.$N"; while [ "$(ls started.* | wc -l)" -lt 3 ]; do sleep 0.02; done; echo "reason $N" >&2; exit 2'
    write(project.hooks_path, hooks(("PreToolUse", "Bash", [
        {"type": "command", "command": f"N={n}; {barrier}", "timeout": 20} for n in (1, 2, 3)
    ])))
    decision = engine(ctx).evaluate(pre(), ctx)
    assert [r for r in ctx.records if r["event"] == "command_hook_error"] == []
    assert isinstance(decision.verdict, Block) and decision.verdict.reason == "reason 1\nreason 2\nreason 3"


def test_any_block_wins_and_every_reason_is_kept(project, ctx, home):
    write(project.hooks_path, hooks(
        ("PreToolUse", "Bash", ["echo first >&2; exit 2", """echo '{"additionalContext": "note"}'"""]),
        ("PreToolUse", "*", ["""echo '{"decision": "block", "reason": "second"}'""", "exit 1"]),
    ))
    verdict = engine(ctx).evaluate(pre(), ctx).verdict
    assert isinstance(verdict, Block) and verdict.reason == "first\nsecond" and verdict.context == "note"


@pytest.mark.parametrize("event", [
    Stop(session_id="s1"),
    PostToolUse(session_id="s1", tool_name="Bash", tool_input={"command": "ls"}),
    PreCompact(session_id="s1"),
])
def test_a_block_on_an_event_seed_002_does_not_let_block_becomes_feedback(project, ctx, home, event):
    write(project.hooks_path, hooks((event.name, "", ["echo 'tests are red' >&2; exit 2"])))
    decision = engine(ctx).evaluate(event, ctx)
    assert not decision.verdict.refuses
    assert decision.verdict.context == "tests are red"
    assert f"hookgate: a command hook cannot block {event.name}; its reason is passed on as context" in ctx.warnings


def test_a_failure_of_the_machinery_never_reaches_the_agent_loop(project, ctx, home, monkeypatch):
    write(project.hooks_path, hooks(("PreToolUse", "Bash", ["exit 2"])))

    def broken(*args):
        raise OSError("out of file descriptors")

    monkeypatch.setattr("hookgate.commandhooks.gate.run_all", broken)
    decision = engine(ctx).evaluate(pre(), ctx)
    assert decision.verdict.kind == "allow" and decision.failed == ("command_hooks.pre_tool_use",)


def test_entries_that_cannot_run_are_told_once_per_session_and_on_stderr_each_time(project, ctx, home):
    write(project.hooks_path, hooks(("PreToolUse", "Bash", [{"type": "command"}])))
    gates = engine(ctx)
    first = gates.evaluate(pre(), ctx).verdict
    second = gates.evaluate(pre(), ctx).verdict
    assert first.message and "missing command" in first.message and str(project.hooks_path) in first.message
    assert second.message is None
    assert sum("missing command" in w for w in ctx.warnings) == 2
    assert [r["gate"] for r in ctx.records if r["event"] == "hook_error"] == ["command_hooks.problems"]


def test_no_hooks_no_gates(project, ctx, home):
    assert commandhooks.gates(ctx.config, project) == ()
    assert commandhooks.gates(ctx.config, None) == ()
