"""The hook registration API (seed 003): register_hook, matchers, options, results, fail modes."""

from __future__ import annotations

import time
from typing import Any

import msgspec
import pytest

import hookgate
from hookgate import python_hooks as registry
from hookgate.engine.loop import Engine
from hookgate.errors import GateError
from hookgate.model.events import (KNOWN_EVENTS, PermissionRequest, PostToolUse, PostToolUseFailure, PreToolUse,
                                   SessionStart, UserPromptSubmit)
from hookgate.model.verdicts import Block, Modify, Retry
from hookgate.python_hooks import EVENT_MAP, GATING, NEVER_FIRES, HookError, register_hook
from hookgate.python_hooks.hooks import PROCESS

SEED_003_NAMES = """pre_tool_use post_tool_use generate_start generate_end session_start session_end skill_load
skill_unload pre_prompt post_response on_error on_success pre_context_perception post_context_perception
pre_memory_recall post_memory_recall pre_planning post_planning pre_reasoning post_reasoning on_rate_limit
on_confirmation intent_detection pre_run_control post_run_control""".split()


@pytest.fixture(autouse=True)
def clean_process_registry():
    """Hooks a test registers outside a policy load go to the process's registry: take them away."""
    before = PROCESS.hooks()
    yield
    PROCESS.reset(before)


def engine(ctx) -> Engine:
    return Engine(registry.gates(ctx.config, ctx.project))


def bash(command: str = "ls", **kw: Any) -> PreToolUse:
    return PreToolUse(session_id="s1", tool_name="Bash", tool_input={"command": command}, **kw)


def write(path: str, content: str = "x") -> PreToolUse:
    return PreToolUse(session_id="s1", tool_name="Write", tool_input={"file_path": path, "content": content})


def hook(id: str, result: Any = None, event: str = "pre_tool_use", matcher: Any = None, seen: list | None = None,
         **options: Any) -> None:
    def handler(e):
        if seen is not None:
            seen.append((id, getattr(e, "tool_input", None)))
        return result(e) if callable(result) else result

    register_hook(id, event, matcher, options or None, handler)


# -- registration --------------------------------------------------------------------------------

def test_register_count_unregister():
    assert registry.hook_count() == 0
    hook("a")
    hook("b", event="post_tool_use")
    assert registry.hook_count() == 2
    assert registry.unregister_hook("a") is True
    assert registry.unregister_hook("a") is False
    assert registry.hook_count() == 1


def test_the_api_is_importable_from_hookgate_without_making_it_heavy():
    import subprocess
    import sys

    probe = ("import sys; before = set(sys.modules); import hookgate; "
             "print(sorted(m for m in set(sys.modules) - before if m.startswith('hookgate')))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "['hookgate']"
    assert hookgate.register_hook is register_hook and hookgate.hook_count is registry.hook_count
    assert hookgate.unregister_hook is registry.unregister_hook
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        hookgate.nope  # noqa: B018


def test_the_event_names_are_seed_003s_25_plus_three():
    assert list(EVENT_MAP) == SEED_003_NAMES + ["permission_request", "pre_compact", "post_compact"]
    for name in EVENT_MAP:
        hook(f"h-{name}", event=name)
    assert registry.hook_count() == 28
    assert all(event in KNOWN_EVENTS for events in EVENT_MAP.values() for event in events)
    assert GATING == {"pre_tool_use", "permission_request", "pre_compact", "pre_prompt", "pre_planning", "pre_run_control"}


def test_names_no_runtime_emits_are_accepted_but_make_no_gate(ctx):
    assert "pre_planning" in NEVER_FIRES and "pre_tool_use" not in NEVER_FIRES
    for name in NEVER_FIRES:
        hook(f"h-{name}", event=name)
    assert registry.hook_count() == len(NEVER_FIRES) and registry.gates(ctx.config, ctx.project) == ()


def test_any_other_event_name_is_rejected_with_the_list():
    with pytest.raises(HookError) as info:
        register_hook("x", "PreToolUse", None, None, lambda e: None)
    assert str(info.value) == f"hook 'x': unknown event 'PreToolUse'; known: {', '.join(EVENT_MAP)}"
    assert isinstance(info.value, GateError) and registry.hook_count() == 0


@pytest.mark.parametrize("args, message", [
    (("", "pre_tool_use", None, None, print), "the id must be a non-empty string"),
    (("x", "pre_tool_use", None, None, None), "the handler must be callable, got NoneType"),
    (("x", "pre_tool_use", {"commandPattern": "rm"}, None, print),
     "invalid matcher: Object contains unknown field `commandPattern` (known: tool, command_pattern, "
     "path_pattern, session_id, skill)"),
    (("x", "pre_tool_use", {"tool": 3}, None, print), "invalid matcher: Expected `str | null`, got `int` - at `matcher.tool`"),
    (("x", "pre_tool_use", {"command_pattern": "rm ("}, None, print),
     "matcher.command_pattern 'rm (' is not a valid regular expression (missing ), unterminated subpattern at position 3)"),
    (("x", "pre_tool_use", None, {"timeoutMs": 5}, print), "invalid options: Object contains unknown field `timeoutMs`"),
    (("x", "pre_tool_use", None, {"timeout_ms": 0}, print), "options.timeout_ms must be positive, got 0"),
])
def test_bad_registrations_name_what_is_wrong(args, message):
    with pytest.raises(HookError) as info:
        register_hook(*args)
    assert message in str(info.value) and registry.hook_count() == 0


def test_a_duplicate_id_is_refused():
    hook("same")
    with pytest.raises(HookError, match="'same': already registered; unregister_hook it first"):
        hook("same", event="post_tool_use")


def test_defaults():
    hooked = register_hook("d", "pre_tool_use", None, None, print)
    assert (hooked.options.priority, hooked.options.timeout_ms) == (100, 30_000)
    assert hooked.matcher == registry.HookMatcher()


# -- matchers ------------------------------------------------------------------------------------

@pytest.mark.parametrize("matcher, event, fires", [
    ({}, bash(), True),
    ({"tool": "Bash"}, bash(), True),
    ({"tool": "bash"}, bash(), True),  # A3S spells tools in lower case
    ({"tool": "Write"}, bash(), False),
    ({"tool": "Task"}, PreToolUse(session_id="s1", tool_name="Agent", tool_input={}), True),  # the old name
    ({"tool": "task"}, PreToolUse(session_id="s1", tool_name="Agent", tool_input={}), True),
    ({"command_pattern": "npm publish|twine upload"}, bash("cd pkg && npm publish --tag next"), True),
    ({"command_pattern": "^npm publish"}, bash("cd pkg && npm publish"), False),
    ({"command_pattern": "publish"}, write("publish.txt"), False),  # only shell commands
    ({"command_pattern": "npm publish"}, PreToolUse(session_id="s1", tool_name="Monitor", tool_input={
        "command": "npm publish 2>&1", "description": "d", "timeout_ms": 1000}), True),  # Claude's Monitor runs one
    ({"path_pattern": "*.env"}, write("/proj/config/prod.env"), True),
    ({"path_pattern": "config/*"}, write("config/deep/a.json"), True),
    ({"path_pattern": "config/*"}, write("other/config/a.json"), False),
    ({"path_pattern": "*.env"}, bash("cat .env"), False),  # a Bash command names no path
    ({"path_pattern": "*.md"}, PreToolUse(session_id="s1", tool_name="Read", tool_input={"file_path": "README.md"}), True),
    ({"session_id": "s1"}, bash(), True),
    ({"session_id": "s2"}, bash(), False),
    ({"skill": "pdf-*"}, PreToolUse(session_id="s1", tool_name="Skill", tool_input={"skill": "pdf-export"}), True),
    ({"skill": "pdf-*"}, PreToolUse(session_id="s1", tool_name="Skill", tool_input={"skill": "docx"}), False),
    ({"skill": "*"}, bash(), False),
    ({"tool": "Bash", "command_pattern": "rm", "session_id": "s1"}, bash("rm -rf build"), True),
    ({"tool": "Bash", "command_pattern": "rm", "session_id": "s2"}, bash("rm -rf build"), False),
])
def test_matcher_fields_all_have_to_fit(ctx, project, matcher, event, fires):
    if event.tool_name in ("Write", "Read"):
        path = event.tool_input["file_path"]
        event = msgspec.structs.replace(event, tool_input={**event.tool_input, "file_path": path.replace("/proj", str(project.root))})
    seen: list = []
    hook("m", matcher=matcher, seen=seen)
    engine(ctx).evaluate(event, ctx)
    assert bool(seen) is fires


def test_priority_then_id_decides_the_order(ctx):
    seen: list = []
    for id, priority in [("b", 50), ("a", 50), ("z", 10), ("c", None)]:
        hook(id, seen=seen, **({"priority": priority} if priority else {}))
    engine(ctx).evaluate(bash(), ctx)
    assert [id for id, _ in seen] == ["z", "a", "b", "c"]


# -- results -------------------------------------------------------------------------------------

def test_continue_and_none_go_on(ctx):
    seen: list = []
    hook("a", None, seen=seen)
    hook("b", {"action": "continue"}, seen=seen)
    hook("c", seen=seen)
    decision = engine(ctx).evaluate(bash(), ctx)
    assert decision.verdict.kind == "allow" and [id for id, _ in seen] == ["a", "b", "c"]


def test_skip_stops_later_hooks_but_not_the_call(ctx):
    seen: list = []
    hook("a", registry.skip(), seen=seen, priority=1)
    hook("b", registry.block("never reached"), seen=seen, priority=2)
    decision = engine(ctx).evaluate(bash(), ctx)
    assert decision.verdict.kind == "allow" and [id for id, _ in seen] == ["a"]


def test_block_refuses_at_once(ctx):
    seen: list = []
    hook("a", {"action": "block", "reason": "no publishing from laptops"}, seen=seen, priority=1)
    hook("b", seen=seen, priority=2)
    hook("c", {"action": "block"}, event="pre_compact")
    decision = engine(ctx).evaluate(bash(), ctx)
    assert decision.verdict == Block(reason="no publishing from laptops")
    assert decision.blocked_by == ("python_hooks.pre_tool_use",) and [id for id, _ in seen] == ["a"]
    from hookgate.model.events import PreCompact

    assert engine(ctx).evaluate(PreCompact(session_id="s1"), ctx).verdict == Block(reason="Blocked by hook")


@pytest.mark.parametrize("result, delay", [
    ({"action": "retry", "reason": "policy backend unavailable"}, 1000),
    ({"action": "retry", "reason": "policy backend unavailable", "delay_ms": 250}, 250),
    ({"action": "retry", "reason": "policy backend unavailable", "delayMs": 4000}, 4000),
])
def test_retry_refuses_the_call_with_a_delay(ctx, result, delay):
    hook("r", result)
    verdict = engine(ctx).evaluate(bash(), ctx).verdict
    assert verdict == Retry(reason="policy backend unavailable", delay_ms=delay)


@pytest.mark.parametrize("modified", [
    {"file_path": "approved/release.txt", "content": "ready\n"},
    {"updatedInput": {"file_path": "approved/release.txt", "content": "ready\n"}},
    {"updated_input": {"file_path": "approved/release.txt", "content": "ready\n"}},
    {"args": {"file_path": "approved/release.txt", "content": "ready\n"}},
    {"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": {"file_path": "approved/release.txt",
                                                                             "content": "ready\n"}}},
])
def test_continue_with_modified_rewrites_the_input_in_every_accepted_shape(ctx, modified):
    hook("w", {"action": "continue", "modified": modified})
    verdict = engine(ctx).evaluate(write("draft.txt", "wip"), ctx).verdict
    assert verdict == Modify(updated_input={"file_path": "approved/release.txt", "content": "ready\n"})


def test_later_hooks_see_the_rewrite_and_the_last_rewrite_wins(ctx):
    seen: list = []
    hook("a", lambda e: registry.modify({**e.tool_input, "command": e.tool_input["command"] + " --dry-run"}), seen=seen, priority=1)
    hook("b", lambda e: registry.modify({**e.tool_input, "command": e.tool_input["command"] + " -v"}), seen=seen, priority=2)
    hook("c", seen=seen, priority=3)
    verdict = engine(ctx).evaluate(bash("make deploy", tool_use_id="t1"), ctx).verdict
    assert verdict == Modify(updated_input={"command": "make deploy --dry-run -v"})
    assert [i["command"] for _, i in seen] == ["make deploy", "make deploy --dry-run", "make deploy --dry-run -v"]


@pytest.mark.parametrize("modified, error", [
    ({"file_path": "a.txt"}, "Object missing required field `content`"),
    ({"file_path": 7, "content": ""}, "Expected `str`, got `int` - at `$.file_path`"),
    ({"file_path": "a.txt", "contents": "typo"}, "unknown field(s) ['contents'] for Write; known: file_path, content"),
    ({"updatedInput": ["not", "an", "object"]}, "a Write input must be an object, not list"),
])
def test_an_invalid_rewrite_is_refused_before_any_side_effect(ctx, modified, error):
    seen: list = []
    hook("w", {"action": "continue", "modified": modified}, priority=1)
    hook("after", seen=seen, priority=2)
    decision = engine(ctx).evaluate(write("a.txt"), ctx)
    assert isinstance(decision.verdict, Block) and seen == []
    assert decision.verdict.reason.startswith("hook 'w' rewrote the Write input into an invalid one (")
    assert error in decision.verdict.reason and decision.verdict.reason.endswith("; the call is refused")


def test_a_rewrite_may_keep_fields_the_runtime_itself_sent(ctx):
    original = PreToolUse(session_id="s1", tool_name="Bash",
                          tool_input={"command": "ls", "dangerouslyDisableSandbox": False})
    hook("w", lambda e: registry.modify({**e.tool_input, "command": "ls -la"}))
    assert engine(ctx).evaluate(original, ctx).verdict == Modify(
        updated_input={"command": "ls -la", "dangerouslyDisableSandbox": False})


def test_an_unknown_tool_only_needs_an_object(ctx):
    hook("w", registry.modify({"query": "select 1"}))
    event = PreToolUse(session_id="s1", tool_name="mcp__db__query", tool_input={"query": "drop table x"})
    assert engine(ctx).evaluate(event, ctx).verdict == Modify(updated_input={"query": "select 1"})


def test_the_other_gates_judge_the_rewritten_input(ctx, project):
    """A rewrite cannot carry a write past the pipeline's role rules: those run after it."""
    from hookgate.config.load import load_config
    from hookgate.engine_builder import build_engine

    project.set_role("build")
    hook("w", lambda e: registry.modify({**e.tool_input, "file_path": str(project.root / "src" / "player.gd")}))
    decision = build_engine(load_config(project.config_path), project).evaluate(write(str(project.root / "notes.txt")), ctx)
    assert decision.blocked_by == ("check_file_permissions",)
    assert "Build role cannot write game code directly (player.gd)" in decision.verdict.reason


def test_pre_prompt_may_add_context_but_not_replace_the_prompt(ctx):
    hook("p", {"action": "continue", "modified": {"prompt": "rewritten", "additionalContext": "house rules"}},
         event="pre_prompt")
    verdict = engine(ctx).evaluate(UserPromptSubmit(session_id="s1", prompt="hi"), ctx).verdict
    assert verdict.kind == "context" and verdict.context == "house rules"
    assert ctx.records == [{"event": "hook_unenforceable", "hook": "p", "hook_event": "pre_prompt", "fields": ["prompt"]}]
    assert "no supported runtime lets a hook change that" in ctx.warnings[0]


def test_permission_request_decisions(ctx):
    event = PermissionRequest(session_id="s1", tool_name="Bash", tool_input={"command": "git push"})
    hook("deny", lambda e: {"decision": "deny", "reason": "pushes need review"} if "push" in e.tool_input["command"] else None,
         event="permission_request", priority=1)
    hook("allow", {"decision": "allow"}, event="permission_request", priority=2)
    assert engine(ctx).evaluate(event, ctx).verdict == Block(reason="pushes need review")
    approved = msgspec.structs.replace(event, tool_input={"command": "git status"})
    assert engine(ctx).evaluate(approved, ctx).verdict == Modify(updated_input={"command": "git status"})


# -- failures ------------------------------------------------------------------------------------

def _raise(e):
    raise RuntimeError("policy bug")


@pytest.mark.parametrize("handler, error", [
    (_raise, "RuntimeError: policy bug"),
    (lambda e: time.sleep(3), "GateTimeout: timed out after 0.1s"),
    (lambda e: {"action": "escalate"}, "returned an invalid result: Invalid enum value 'escalate' - at `$.action`"),
    (lambda e: "block", "returned str; expected None or a dict with an `action`"),
    (lambda e: {"decision": "deny"}, "returned a decision, which only permission_request hooks can give"),
])
def test_a_failing_handler_fails_closed_on_a_gating_event(ctx, handler, error):
    register_hook("strict", "pre_tool_use", None, {"timeout_ms": 100}, handler)
    verdict = engine(ctx).evaluate(bash(), ctx).verdict
    assert isinstance(verdict, Block) and verdict.reason.startswith(f"Required hook 'strict' failed: {error}")
    [record] = [r for r in ctx.records if r["event"] == "registered_hook_error"]
    assert record["hook"] == "strict" and record["fail_mode"] == "closed"


@pytest.mark.parametrize("handler", [_raise, lambda e: time.sleep(3)])
def test_a_failing_handler_fails_open_elsewhere_and_the_chain_goes_on(ctx, handler):
    seen: list = []
    register_hook("flaky", "post_tool_use", None, {"timeout_ms": 100, "priority": 1}, handler)
    hook("next", {"action": "continue"}, event="post_tool_use", seen=seen, priority=2)
    decision = engine(ctx).evaluate(PostToolUse(session_id="s1", tool_name="Bash", tool_input={"command": "ls"}), ctx)
    assert decision.verdict.kind == "allow" and [id for id, _ in seen] == ["next"]
    assert ctx.warnings and ctx.warnings[0].startswith("hookgate: hook 'flaky' failed (")


def test_post_tool_use_fires_after_success_and_failure_and_cannot_block(ctx):
    seen: list = []
    hook("obs", registry.block("too late"), event="post_tool_use", seen=seen)
    gates = engine(ctx)
    for event in (PostToolUse(session_id="s1", tool_name="Bash", tool_input={"command": "a"}),
                  PostToolUseFailure(session_id="s1", tool_name="Bash", tool_input={"command": "b"}, error="exit 1")):
        assert not gates.evaluate(event, ctx).verdict.refuses
    assert [i["command"] for _, i in seen] == ["a", "b"]
    assert [r["event"] for r in ctx.records].count("gate_violation") == 2


def test_gates_per_event_name(ctx):
    hook("a", event="pre_tool_use", timeout_ms=2000)
    hook("b", event="pre_tool_use")
    hook("c", event="session_start")
    hook("d", event="post_tool_use")
    gates = {g.id: g for g in registry.gates(ctx.config, ctx.project)}
    assert {i: (g.events, g.may_block, g.fail_mode, g.priority) for i, g in gates.items()} == {
        "python_hooks.pre_tool_use": (("PreToolUse",), True, "closed", 0),
        "python_hooks.session_start": (("SessionStart",), False, "open", 0),
        "python_hooks.post_tool_use": (("PostToolUse", "PostToolUseFailure"), False, "open", 0),
    }
    assert gates["python_hooks.pre_tool_use"].timeout == 33.0
    assert gates["python_hooks.pre_tool_use"].needs == ("block:PreToolUse", "modify:PreToolUse")
    assert gates["python_hooks.session_start"].needs == ("fires:SessionStart",)
    assert engine(ctx).evaluate(SessionStart(session_id="s1"), ctx).verdict.kind == "allow"


# -- the denial a caller receives ----------------------------------------------------------------

def test_denials_reach_callers_as_hook_denied(ctx):
    hook("r", registry.retry("policy backend unavailable", 1500), matcher={"command_pattern": "deploy"})
    hook("b", registry.block("never on Fridays"), matcher={"command_pattern": "release"})
    gates = engine(ctx)
    retried = gates.evaluate(bash("make deploy"), ctx).verdict
    blocked = gates.evaluate(bash("make release"), ctx).verdict
    assert msgspec.json.decode(registry.verdict_json(retried)) == {
        "kind": "retry", "reason": "policy backend unavailable", "delay_ms": 1500, "message": None, "context": None,
        "denied": {"type": "hook_denied", "reason": "policy backend unavailable", "retryable": True, "retry_after_ms": 1500},
    }
    assert msgspec.json.decode(registry.verdict_json(blocked))["denied"] == {
        "type": "hook_denied", "reason": "never on Fridays", "retryable": False, "retry_after_ms": None}
    assert "denied" not in msgspec.json.decode(registry.verdict_json(gates.evaluate(bash("ls"), ctx).verdict))
    assert [{k: r[k] for k in ("hook", "reason", "retryable", "retry_after_ms")} for r in ctx.records
            if r["event"] == "hook_denied"] == [
        {"hook": "r", "reason": "policy backend unavailable", "retryable": True, "retry_after_ms": 1500},
        {"hook": "b", "reason": "never on Fridays", "retryable": False, "retry_after_ms": None},
    ]


def test_the_model_reads_the_reason_and_the_retry_guidance():
    from hookgate_claude.dialect import render

    answer = msgspec.json.decode(render("PreToolUse", Retry(reason="policy backend unavailable", delay_ms=1500)).stdout)
    assert answer["hookSpecificOutput"]["permissionDecisionReason"] == "policy backend unavailable (temporary: retry in 1.5s)"


def test_a_process_that_loaded_the_registry_and_registered_nothing_loads_no_policies(ctx, monkeypatch):
    """A warm core imports the registry while it primes and registers nothing: its forks skip
    the loader for a project without policies, and a hook the process does register counts."""
    import hookgate.python_hooks as source

    with monkeypatch.context() as patched:
        patched.setattr(source, "loaded", lambda *a: pytest.fail("the loader ran with nothing to load"))
        assert registry.hook_count() == 0 and source.gates(ctx.config, ctx.project) == ()
    hook("mine", result=lambda e: block("mine says no"))
    assert [gate.id for gate in source.gates(ctx.config, ctx.project)] == ["python_hooks.pre_tool_use"]
