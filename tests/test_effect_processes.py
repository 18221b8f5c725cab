"""The effect check across real processes: every hook is a `hookgate hook claude` process, the
commands run in real bash, and calls overlap the way Claude Code runs tool calls in parallel.
Also: the warm core and the cold path give the same result."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from pathlib import Path

import pytest

from effect_support import state
from support import HOOKGATE
from test_effect import GD, NO_SYNTAX_GATE
from warm_support import Warm, warm  # noqa: F401 (a fixture)

WORKER = {"agent_id": "agent-w1", "agent_type": "worker"}


def setup(root: Path) -> Path:
    (root / ".hookgate").mkdir(parents=True)
    (root / ".hookgate" / "current_role").write_text("build\n")
    (root / ".hookgate" / "config.toml").write_text(NO_SYNTAX_GATE)
    (root / "src").mkdir()
    (root / "src/player.gd").write_text(GD)
    (root / "src/enemy.gd").write_text(GD)
    (root / "PLAN.md").write_text("- [ ] pending\n")
    (root / "project.godot").write_text("[app]\n")
    return root


class Runner:
    def __init__(self, warm: Warm, root: Path, env: dict[str, str]) -> None:
        self.warm, self.root, self.env = warm, root, {**env, "HOOKGATE_PROJECT_DIR": str(root)}

    def hook(self, event: str, tool: str, tool_input: dict, call: str, agent: dict | None = None, **extra):
        payload = {"hook_event_name": event, "session_id": "s1", "cwd": str(self.root), "tool_name": tool,
                   "tool_input": tool_input, "tool_use_id": call, **(agent or {}), **extra}
        out, err, code = self.warm.hook("claude", payload, self.root, self.env)
        assert code == 0, err
        answer = json.loads(out) if out else {}
        return answer.get("decision") == "block" or \
            answer.get("hookSpecificOutput", {}).get("permissionDecision") == "deny", answer

    def bash(self, command: str, call: str, agent: dict | None = None, between=None):
        blocked, answer = self.hook("PreToolUse", "Bash", {"command": command}, call, agent)
        assert not blocked, answer
        done = subprocess.run(["bash", "-c", command], cwd=self.root, capture_output=True, text=True, timeout=60)
        event = "PostToolUse" if done.returncode == 0 else "PostToolUseFailure"
        return self.hook(event, "Bash", {"command": command}, call, agent, tool_response=done.stdout)

    def write(self, rel: str, text: str, call: str, agent: dict | None = None):
        tool_input = {"file_path": str(self.root / rel), "content": text}
        blocked, answer = self.hook("PreToolUse", "Write", tool_input, call, agent)
        if not blocked:
            (self.root / rel).write_text(text)
            self.hook("PostToolUse", "Write", tool_input, call, agent, tool_response={"type": "update"})
        return blocked


def in_background(fn, *args):
    result: dict = {}
    thread = threading.Thread(target=lambda: result.setdefault("value", fn(*args)))
    thread.start()
    return thread, result


def test_a_workers_write_during_the_leads_bash_is_not_reverted(tmp_path, warm):
    root = setup(tmp_path / "game")
    run = Runner(warm, root, warm.cold())
    # the lead's call runs for 3 s; the worker's Write (its own hook processes) lands meanwhile
    thread, result = in_background(run.bash, "sleep 3; p=src/enemy.gd; echo lead >> $p", "toolu_lead")
    time.sleep(1.0)
    assert run.write("src/player.gd", "extends Node # the worker's\n", "toolu_w", WORKER) is False
    thread.join()
    blocked, answer = result["value"]
    assert blocked and "src/enemy.gd" in answer["reason"] and "player.gd" not in answer["reason"]
    assert (root / "src/player.gd").read_text() == "extends Node # the worker's\n"
    assert (root / "src/enemy.gd").read_text() == GD


def test_a_workers_bash_during_the_leads_bash_is_not_reverted(tmp_path, warm):
    root = setup(tmp_path / "game")
    run = Runner(warm, root, warm.cold())
    thread, result = in_background(run.bash, "sleep 3", "toolu_lead")
    time.sleep(1.0)
    blocked, _ = run.bash("sed -i 's/speed/SPEED/' src/*.gd", "toolu_w", WORKER)
    assert not blocked
    thread.join()
    assert result["value"][0] is False, result["value"]
    assert "SPEED" in (root / "src/player.gd").read_text()


def test_two_lead_calls_in_parallel_are_both_checked(tmp_path, warm):
    root = setup(tmp_path / "game")
    run = Runner(warm, root, warm.cold())
    before = state(root)
    thread, result = in_background(run.bash, "sleep 2", "toolu_a")
    time.sleep(0.7)
    blocked, answer = run.bash("p=src/player.gd; echo x >> $p", "toolu_b")
    thread.join()
    assert blocked or result["value"][0]
    assert state(root) == before


def test_stage_complete_during_a_workers_bash_is_not_reverted(tmp_path, warm):
    root = setup(tmp_path / "game")
    run = Runner(warm, root, warm.cold())
    thread, result = in_background(run.bash, "sleep 3", "toolu_w", WORKER)
    time.sleep(1.0)
    blocked, answer = run.bash(f"{HOOKGATE} stage --project {root} complete scaffold", "toolu_lead")
    assert not blocked, answer
    thread.join()
    assert result["value"][0] is False, result["value"]
    assert '"role":"scaffold"' in (root / ".hookgate/stage.jsonl").read_text()


def test_a_worker_running_role_set_past_the_syntax_gate_is_put_back(tmp_path, warm):
    root = setup(tmp_path / "game")
    run = Runner(warm, root, warm.cold())
    blocked, answer = run.bash(f"h={HOOKGATE}; $h role --project {root} set verify", "toolu_w", WORKER)
    assert blocked and "current_role" in answer["reason"]
    assert (root / ".hookgate/current_role").read_text() == "build\n"


@pytest.mark.parametrize("mode", ["cold", "warm"])
def test_warm_core_and_cold_path_give_the_same_result(tmp_path, warm, mode):
    root = setup(tmp_path / "game")
    env = warm.cold() if mode == "cold" else warm.env()
    if mode == "warm":
        assert warm.warm("start", root).returncode == 0
    run = Runner(warm, root, env)
    before = state(root)
    blocked, answer = run.bash("for f in src/*.gd; do echo x >> $f; done; n=src/new; touch $n.gd", "toolu_1")
    assert blocked
    assert "src/player.gd was changed" in answer["reason"] and "src/new.gd was created" in answer["reason"]
    assert state(root) == before
    if mode == "warm":
        assert warm.answered(root, 2) >= 2  # the core answered both hooks


def test_a_call_that_reads_the_tree_during_anothers_forbidden_write_does_not_put_it_back(tmp_path, warm):
    """Interleaved as two parallel tool calls of one agent can be: call b's PreToolUse reads the
    tree while call a's forbidden write is in place, and b's PostToolUse comes after a's has put
    it back. b must not take a's write as its starting state (it put the write back again)."""
    root = setup(tmp_path / "game")
    run = Runner(warm, root, warm.cold())
    before = state(root)
    write, wait = "echo evil >> src/player.gd", "true"
    assert run.hook("PreToolUse", "Bash", {"command": write}, "toolu_a")[0] is False
    subprocess.run(["bash", "-c", write], cwd=root, check=True)
    assert run.hook("PreToolUse", "Bash", {"command": wait}, "toolu_b")[0] is False
    blocked_a, answer_a = run.hook("PostToolUse", "Bash", {"command": write}, "toolu_a", tool_response="")
    assert blocked_a and "src/player.gd" in answer_a["reason"]
    subprocess.run(["bash", "-c", wait], cwd=root, check=True)
    run.hook("PostToolUse", "Bash", {"command": wait}, "toolu_b", tool_response="")
    assert state(root) == before


def test_a_change_made_while_no_call_runs_is_still_the_state_kept(tmp_path, warm):
    """The other side of the test above: a person's edit between calls (no checked call running)
    is the starting state of the next call, not put back by it."""
    root = setup(tmp_path / "game")
    run = Runner(warm, root, warm.cold())
    run.bash("true", "toolu_settle")
    (root / "src/player.gd").write_text(GD + "# the person's edit\n")
    blocked, answer = run.bash("true", "toolu_next")
    assert not blocked, answer
    assert (root / "src/player.gd").read_text() == GD + "# the person's edit\n"


def test_many_sessions_writing_at_once_leave_every_protected_file_as_it_was(tmp_path, warm):
    """Eight sessions, each a lead making forbidden writes and allowed ones in parallel, through
    the warm core: every forbidden line is gone at the end (whichever call put it back), every
    allowed one is there."""
    root = setup(tmp_path / "game")
    for n in range(8):
        (root / f"src/p{n}.gd").write_text(f"# {n}\n")
    env = {**warm.env(), "HOOKGATE_PROJECT_DIR": str(root)}
    assert warm.warm("start", root).returncode == 0
    before = state(root)
    answers: list[bytes] = []

    def session(n: int) -> None:
        for k in range(5):
            command = f"echo evil{k} >> src/p{n}.gd; echo ok{k} >> notes{n}.txt"
            base = {"session_id": f"s{n}", "cwd": str(root), "tool_name": "Bash", "tool_input": {"command": command},
                    "tool_use_id": f"toolu_{n}_{k}"}
            out, err, code = warm.hook("claude", {**base, "hook_event_name": "PreToolUse"}, root, env)
            assert code == 0 and b"deny" not in out, (out, err)  # the syntax gate is off: the effect decides
            subprocess.run(["bash", "-c", command], cwd=root, check=True)
            out, err, code = warm.hook("claude", {**base, "hook_event_name": "PostToolUse", "tool_response": ""}, root, env)
            assert code == 0, err
            answers.append(out)

    threads = [threading.Thread(target=session, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(answers) == 40  # every session made all its calls (a failed assertion ends a thread)
    after = {rel: value for rel, value in state(root).items() if not rel.startswith("notes")}
    assert after == before
    assert all((root / f"notes{n}.txt").read_text().count("ok") == 5 for n in range(8))
