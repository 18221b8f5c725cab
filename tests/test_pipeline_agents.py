"""log_subagent (SubagentStart): role detection in seed 000's order, the session's agent registry,
and the lookup of an agent's type by agent_id for payloads that lack it."""

import time

import pytest

from hookgate.config.load import load_config
from hookgate.engine.context import Context
from hookgate.engine.loop import Decision
from hookgate.model.events import PreToolUse
from hookgate.model.verdicts import ALLOW, Block
from hookgate.pipeline.agents import MAX_PENDING_DISPATCHES, note_dispatch
from hookgate.store.project import Project
from pipeline_support import Pipeline


@pytest.fixture
def pipe(tmp_path):
    return Pipeline(tmp_path)


# dispatch subagent_type (= the runtime's agent_type at start), description, detected role
DETECTION = [
    ("worker", "build the player", "worker"),           # 1. runtime agent_type in the known roles
    ("verifier", "worker: pretend", "verifier"),        #    ... outranks the description
    ("reviewer", "", "reviewer"),
    ("analyst", "x", "analyst"),
    ("asset-producer", "x", "asset-producer"),
    ("general-purpose", "worker: build the player", "worker"),   # 2. description prefix
    ("general-purpose", "Worker: capitalised", "worker"),
    ("general-purpose", "verifier: run the tests", "verifier"),
    ("general-purpose", "verify: run the tests", "verifier"),
    ("general-purpose", "reviewer: look at M1", "reviewer"),
    ("general-purpose", "review: look at M1", "reviewer"),
    ("general-purpose", "analyst: read the art", "analyst"),
    ("general-purpose", "asset-producer: ui kit", "asset-producer"),
    ("Explore", "worker: explore first", "worker"),
    ("general-purpose", "fix the worker bug", "unknown"),      # a prefix, not a keyword anywhere
    ("general-purpose", "decomposer: split the plan", "unknown"),  # not a subagent role of seed 000
    ("general-purpose", "", "unknown"),
]


@pytest.mark.parametrize("subagent_type, description, role", DETECTION)
def test_role_detection_order(pipe, subagent_type, description, role):
    pipe.run_subagent("a1", description, subagent_type)
    [start] = pipe.metrics("subagent_start")
    assert (start["agent_id"], start["agent_type"], start["role"]) == ("a1", subagent_type, role)
    assert pipe.state()["pipeline"]["agents"]["a1"] == {"type": subagent_type, "role": role}


def test_each_start_takes_the_dispatch_of_its_own_type(pipe):
    pipe.dispatch("reviewer: second", "general-purpose")
    pipe.dispatch("worker: first", "Explore")
    pipe.start("a-explore", "Explore")
    pipe.start("a-general", "general-purpose")
    roles = {m["agent_id"]: (m["role"], m["description"]) for m in pipe.metrics("subagent_start")}
    assert roles == {"a-explore": ("worker", "worker: first"), "a-general": ("reviewer", "reviewer: second")}
    assert pipe.state()["pipeline"]["dispatches"] == []


def test_codex_style_dispatch_without_description_uses_the_prompt(pipe):
    pipe.tool("Agent", message="worker: implement M1")
    pipe.start("c1", "default")
    assert pipe.metrics("subagent_start")[0]["role"] == "worker"


def test_a_start_without_a_noted_dispatch_is_unknown_unless_its_type_says(pipe):
    pipe.start("a1", "general-purpose")
    pipe.start("a2", "verifier")
    assert [m["role"] for m in pipe.metrics("subagent_start")] == ["unknown", "verifier"]
    assert pipe.state()["pipeline"]["roles"] == {"verifier": 1}


def test_roles_are_counted_in_the_session_state(pipe):
    for i, (kind, text) in enumerate([("worker", ""), ("general-purpose", "worker: b"), ("verifier", ""),
                                      ("general-purpose", "chat")]):
        pipe.run_subagent(f"a{i}", text, kind)
    assert pipe.state()["pipeline"]["roles"] == {"worker": 2, "verifier": 1}


def _observe(ctx, verdict, **tool_input):
    event = PreToolUse(session_id="s", tool_name="Agent", tool_input=tool_input)
    note_dispatch(event, Decision(verdict=verdict), ctx)


def test_a_refused_dispatch_is_not_noted(tmp_path):
    from support import MemorySession

    project = Project(tmp_path)
    ctx = Context(project=project, session=MemorySession(), config=load_config(project.config_path))
    _observe(ctx, Block(reason="no"), description="worker: x")
    assert ctx.session.read().get("pipeline", {}).get("dispatches", []) == []
    _observe(ctx, ALLOW, description="worker: x")
    assert ctx.session.read()["pipeline"]["dispatches"] == [{"type": None, "text": "worker: x"}]


def test_dispatches_that_never_start_do_not_pile_up(pipe):
    for i in range(MAX_PENDING_DISPATCHES + 5):
        pipe.dispatch(f"worker: {i}")
    pending = pipe.state()["pipeline"]["dispatches"]
    assert len(pending) == MAX_PENDING_DISPATCHES
    assert pending[-1]["text"] == f"worker: {MAX_PENDING_DISPATCHES + 4}"


# -- the write rules look an agent's type up by agent_id when the payload lacks it -----------

@pytest.mark.parametrize("start_type, path, allowed", [
    ("decomposer", "PLAN.md", True),         # the decomposer may write planning docs ...
    ("general-purpose", "PLAN.md", False),   # ... no other subagent may
    ("asset-producer", "assets/hero.png", True),
    ("asset-producer", "src/player.gd", False),
    ("worker", "src/player.gd", True),
])
def test_write_rules_use_the_type_recorded_at_start(pipe, start_type, path, allowed):
    pipe.role("build")
    pipe.start("a1", start_type)
    answer = pipe.tool("Write", ("a1", None), file_path=path, content="x")
    assert answer.blocked != allowed, answer.reason


def test_an_unknown_agent_without_a_type_gets_the_strictest_subagent_rules(pipe):
    pipe.role("build")
    assert pipe.tool("Write", ("never-started", None), file_path="PLAN.md", content="x").blocked
    assert pipe.tool("Write", ("never-started", None), file_path="src/a.gd", content="x").kind == "allow"


def test_a_description_cannot_grant_write_rights(pipe):
    """The role from a description is for the logs and the report gate; write rights follow the
    runtime's agent type only, so a dispatch text cannot make a subagent a decomposer."""
    pipe.role("build").ready_to_dispatch()
    pipe.run_subagent("a1", "decomposer: rewrite the plan")
    assert pipe.tool("Write", ("a1", None), file_path="PLAN.md", content="x").blocked


def test_a_start_that_waits_for_the_sessions_state_is_still_counted_and_recorded(pipe):
    """Under contention (many hook processes on one session) the state's lock can be held past
    log_subagent's deadline: the wait is not the gate's time, so the start is not lost."""
    from support import hold_lock

    pipe.write(".hookgate/config.toml", "[gates.log_subagent]\ntimeout = 0.3\n")
    pipe.dispatch("worker: build the player")
    holder = hold_lock(pipe.session_dir / ".state.json.lock", 1.0)
    started = time.monotonic()
    pipe.start("a1")
    assert time.monotonic() - started >= 0.6  # it waited for the holder, past the gate's 0.3 s
    holder.wait()
    assert [(m["agent_id"], m["role"]) for m in pipe.metrics("subagent_start")] == [("a1", "worker")]
    assert pipe.metrics("gate_error") == []
    assert pipe.state()["pipeline"]["roles"] == {"worker": 1}
