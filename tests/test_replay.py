"""`hookgate replay`: a session's recorded events decided again, in order, with the session's state
rebuilt as it went, under the same policy (nothing changes), another config or another project's
policy (exactly the calls that policy judges otherwise change), and never a byte of the project
written, though the project's command hooks and policies run during the replay."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from pipeline_support import Pipeline
from support import HOOKGATE

# a command hook that writes into the project every time it runs, and a policy that does too
NOTING_HOOK = 'echo ran >> "$HOOKGATE_PROJECT_DIR/hook-ran.txt"'
NOTING_POLICY = """\
from pathlib import Path
from hookgate import block, register_hook

ROOT = Path(__file__).resolve().parents[2]

def keep(event):
    (ROOT / "policy-ran.txt").open("a").write("ran\\n")
    return block("the policy keeps important/")

register_hook("keep-important", "pre_tool_use", {"tool": "Bash", "command_pattern": "rm -rf important"}, None, keep)
"""


def replay(root: Path, *args: str) -> dict[str, Any]:
    done = subprocess.run([HOOKGATE, "replay", *args, "--format", "json"], cwd=root, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def fingerprint(root: Path) -> dict[str, str]:
    """Every file of the project, by content (the session logs included)."""
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def use(pipeline: Pipeline, tool: str, use_id: str, **tool_input: Any):
    return pipeline.call({"hook_event_name": "PreToolUse", "tool_name": tool, "tool_use_id": use_id,
                          "tool_input": tool_input})


@pytest.fixture
def recorded(tmp_path: Path) -> Pipeline:
    """A build session: refused and allowed writes, a refused shell write, an asset read, the user's
    own hooks (which write into the project as they run), a held stop."""
    p = Pipeline(tmp_path).role("build")
    p.write("assets/hero.png", "png")
    p.write("important/keep.txt")
    hooks = {"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": NOTING_HOOK}]}]}}
    (tmp_path / ".hookgate" / "hooks.json").write_text(json.dumps(hooks))
    (tmp_path / ".hookgate" / "policies").mkdir()
    (tmp_path / ".hookgate" / "policies" / "keep.py").write_text(NOTING_POLICY)
    p.session_start()
    assert use(p, "Write", "w-code", file_path=str(tmp_path / "src/player.gd"), content="x").blocked
    assert not use(p, "Write", "w-doc", file_path=str(tmp_path / "docs/notes.md"), content="x").blocked
    assert use(p, "Bash", "b-shell", command="echo x > src/enemy.gd").blocked
    assert use(p, "Read", "r-asset", file_path="assets/hero.png").blocked
    assert use(p, "Bash", "b-rm", command="rm -rf important").blocked
    assert not use(p, "Bash", "b-ls", command="ls").blocked
    return p


def test_the_same_policy_changes_nothing_and_writes_nothing(recorded: Pipeline) -> None:
    before = fingerprint(recorded.root)
    result = replay(recorded.root, "s1")
    assert result["decided"] == 7 and result["changed"] == [] and result["unchanged"] == 7
    assert fingerprint(recorded.root) == before  # the hooks ran in a scratch copy, not here


def test_another_config_changes_exactly_the_calls_it_judges_otherwise(recorded: Pipeline, tmp_path_factory) -> None:
    other = tmp_path_factory.mktemp("policy") / "config.toml"
    other.write_text("[gates.check_asset_access]\nenabled = false\n"
                     '[pipeline.roles.build]\nrules = [{ deny = ["docs/*"], reason = "no docs now ({file})" }]\n')
    before = fingerprint(recorded.root)
    result = replay(recorded.root, "s1", "--config", str(other))
    changed = {c["tool_use_id"]: (c["old"]["verdict"], c["new"]["verdict"]) for c in result["changed"]}
    # the new build rules no longer deny game code, deny docs; the asset gate is off
    assert changed == {"w-code": ("block", "allow"), "w-doc": ("allow", "block"), "b-shell": ("block", "allow"),
                       "r-asset": ("block", "allow")}
    doc = next(c for c in result["changed"] if c["tool_use_id"] == "w-doc")
    assert doc["new"]["gates"] == ["check_file_permissions"] and doc["new"]["reason"] == "no docs now (notes.md)"
    assert fingerprint(recorded.root) == before
    text = subprocess.run([HOOKGATE, "replay", "s1", "--config", str(other)], cwd=recorded.root, capture_output=True,
                          text=True, timeout=120).stdout
    assert "4 changed, 3 unchanged" in text and "allow -> block  gate: check_file_permissions  reason: no docs now" in text


def test_another_projects_policy_files(recorded: Pipeline, tmp_path_factory) -> None:
    other = tmp_path_factory.mktemp("other-project")
    (other / ".hookgate").mkdir()  # no policies, no hooks: the Python hook's refusal goes
    result = replay(recorded.root, "s1", "--project", str(other))
    assert [(c["tool_use_id"], c["old"]["verdict"], c["new"]["verdict"]) for c in result["changed"]] == \
        [("b-rm", "block", "allow")]


def test_state_is_rebuilt_as_the_session_went(tmp_path: Path) -> None:
    """check_completion holds a stop 5 times a session, then releases it: the replay counts too."""
    p = Pipeline(tmp_path).role("build").ready_to_dispatch()
    p.session_start()
    p.run_subagent("w1", "worker: M1", "worker")
    stops = [p.stop() for _ in range(7)]
    assert [s.blocked for s in stops] == [True] * 5 + [False, False]
    assert replay(tmp_path, "s1")["changed"] == []
    (tmp_path / "limit.toml").write_text("[gates.check_completion]\nblock_limit = 2\n")
    result = replay(tmp_path, "s1", "--config", str(tmp_path / "limit.toml"))
    assert [(c["event"], c["old"]["verdict"], c["new"]["verdict"]) for c in result["changed"]] == \
        [("Stop", "block", "context")] * 3


def test_monitor_first_then_replay_under_enforcement(tmp_path: Path) -> None:
    """The rollout: run a rule in monitor mode, then see what enforcing it would have done."""
    p = Pipeline(tmp_path).role("build")
    (tmp_path / ".hookgate" / "config.toml").write_text('[gates.check_file_permissions]\nmode = "monitor"\n')
    p.session_start()
    assert not use(p, "Write", "w1", file_path="src/a.gd", content="x").blocked
    assert not use(p, "Write", "w2", file_path="docs/a.md", content="x").blocked
    (tmp_path / "enforce.toml").write_text("")
    result = replay(tmp_path, "s1", "--config", str(tmp_path / "enforce.toml"))
    [change] = result["changed"]
    assert change["tool_use_id"] == "w1"
    assert change["old"] == {"verdict": "allow", "gates": [], "would_block": ["check_file_permissions"],
                             "reason": None}
    assert change["new"]["verdict"] == "block" and change["new"]["gates"] == ["check_file_permissions"]


def test_the_role_and_the_stages_of_the_time_are_restored(tmp_path: Path) -> None:
    p = Pipeline(tmp_path).role("build")
    p.session_start()
    assert p.dispatch("worker: M1", "worker").blocked  # gdd not completed yet
    p.ready_to_dispatch()  # now it is
    assert not p.dispatch("worker: M2", "worker").blocked
    p.role(None)
    assert not p.tool("Write", file_path="src/a.gd", content="x").blocked  # no role: writes only recorded
    p.role("build")  # the project as it is now differs from each moment of the session
    assert replay(tmp_path, "s1")["changed"] == []


def test_a_call_stored_without_a_secret_is_marked_inexact(tmp_path: Path) -> None:
    p = Pipeline(tmp_path).role("build")
    p.session_start()
    p.bash("API_TOKEN=abc123def456 ./deploy.sh")
    result = replay(tmp_path, "s1")
    assert result["inexact"] == 1 and result["changed"] == []


def test_a_session_by_path_and_an_unknown_one(recorded: Pipeline) -> None:
    result = replay(recorded.root, str(recorded.session_dir))
    assert result["decided"] == 7 and result["changed"] == []
    done = subprocess.run([HOOKGATE, "replay", "nope"], cwd=recorded.root, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "no session 'nope'" in done.stderr
