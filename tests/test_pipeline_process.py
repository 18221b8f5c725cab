"""The pipeline gates as the runtime runs them: `hookgate hook claude` processes, one payload on
stdin each, several at once where the runtime would run them at once."""

import json
from concurrent.futures import ThreadPoolExecutor

import pytest

from pipeline_support import Pipeline, read_answer
from support import run_hook
from test_pipeline_reports import VERIFIER, WORKER


def hook(pipe: Pipeline, payload: dict) -> tuple[int, str, str]:
    full = {"session_id": pipe.session_id, "cwd": str(pipe.root), **payload}
    done = run_hook("claude", full, pipe.root, "--event", payload["hook_event_name"])
    answer = read_answer(done.stdout)
    return done.returncode, answer.kind, answer.reason or answer.context


def pre(tool, agent=None, **tool_input):
    payload = {"hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": tool_input}
    if agent:
        payload.update(agent_id=agent[0], agent_type=agent[1])
    return payload


# one row per gate of seed 000: role, payload, expected answer kind, text in the reason/context
ROWS = [
    ("session_start", None, {"hook_event_name": "SessionStart", "source": "startup"}, "context", "[hookgate v"),
    ("check_file_permissions", "build", pre("Write", file_path="src/a.gd", content=""), "block",
     "Build role cannot write game code directly (a.gd)"),
    ("check_file_permissions/subagent", "build", pre("Write", ("a1", "worker"), file_path="MEMORY.md", content=""),
     "block", "Subagents cannot write project memory"),
    ("stage_reminder", "build", pre("Write", file_path=".hookgate/stage.jsonl",
                                    content='{"role": "scaffold", "ts": "t"}\n'), "block", "project.godot"),
    ("stage_reminder/next", "build", pre("Write", file_path=".hookgate/stage.jsonl",
                                         content='{"role": "asset", "ts": "t"}\n'), "context", "Next: /gm-build"),
    ("check_shell_writes", "build", pre("Bash", command="sed -i s/a/b/ e2e/t.gd"), "block", "via `sed -i s/a/b/ e2e/t.gd`"),
    ("check_shell_writes/stage", None, pre("Bash", command="echo x >> .hookgate/stage.jsonl"), "block",
     "hookgate stage complete"),
    ("check_stage_prerequisites", "fixgap", pre("Agent", description="worker: G1", prompt="x", subagent_type="worker"),
     "block", "Role 'evaluate' has not completed yet"),
    ("check_asset_access", "asset", pre("Read", file_path="assets/hero.png"), "block", "analyst"),
    ("check_worker_report", "build", {"hook_event_name": "SubagentStop", "agent_id": "w9", "agent_type": "worker",
                                      "last_assistant_message": "done!"}, "block", "You are a worker"),
    ("check_completion", "build", {"hook_event_name": "Stop"}, "allow", ""),  # no worker yet
]


@pytest.mark.parametrize("gate, role, payload, kind, text", ROWS, ids=[r[0] for r in ROWS])
def test_each_gate_in_a_real_hook_process(tmp_path, gate, role, payload, kind, text):
    pipe = Pipeline(tmp_path).role(role)
    code, got, said = hook(pipe, payload)
    assert (code, got) == (0, kind), said
    assert text in said


def test_concurrent_starts_and_stops_lose_no_count_and_no_line(tmp_path):
    """Claude Code runs hooks of parallel subagents at the same time; seed 000's unlocked
    read-modify-write lost counts there. Every count and every line must survive."""
    pipe = Pipeline(tmp_path).role("build").ready_to_dispatch()
    pipe.write("e2e/test_player.gd")
    workers = [f"w{i}" for i in range(12)]
    with ThreadPoolExecutor(max_workers=12) as pool:
        list(pool.map(lambda a: hook(pipe, {"hook_event_name": "SubagentStart", "agent_id": a, "agent_type": "worker"}),
                      workers))
        stops = list(pool.map(lambda a: hook(pipe, {"hook_event_name": "SubagentStop", "agent_id": a,
                                                    "agent_type": "worker", "last_assistant_message": WORKER}),
                              workers))
    assert all(kind == "allow" for _, kind, _ in stops)
    state = pipe.state()["pipeline"]
    assert state["roles"] == {"worker": 12}
    assert sorted(state["outcomes"]) == sorted(workers)
    lines = (pipe.session_dir / "metrics.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]  # every line whole
    assert sorted(r["agent_id"] for r in records if r["event"] == "worker_done") == sorted(workers)
    # the completion gate sees all twelve
    code, kind, reason = hook(pipe, {"hook_event_name": "Stop"})
    assert kind == "block" and "Dispatched 12 worker(s) but 0 verifiers" in reason
    hook(pipe, {"hook_event_name": "SubagentStart", "agent_id": "v1", "agent_type": "verifier"})
    hook(pipe, {"hook_event_name": "SubagentStop", "agent_id": "v1", "agent_type": "verifier",
                "last_assistant_message": VERIFIER})
    assert "0 verifiers" not in hook(pipe, {"hook_event_name": "Stop"})[2]
