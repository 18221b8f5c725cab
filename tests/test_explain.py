"""`hookgate explain`: for a decided call, the event as hookgate understood it, every gate that ran,
the rule that decided a refusal (by file and key: preset or config entry, hooks.json handler,
Python hook by id) and what would have been allowed instead; and the line in a refusal's message
that names the command."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from pipeline_support import Pipeline
from support import HOOKGATE


def explain(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([HOOKGATE, "explain", *args, "--project", str(root)], capture_output=True, text=True,
                          timeout=60)


def explained(root: Path, *args: str) -> dict[str, Any]:
    done = explain(root, *args, "--format", "json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture
def build(tmp_path: Path) -> Pipeline:
    pipeline = Pipeline(tmp_path).role("build")
    pipeline.session_start()
    return pipeline


def test_a_refused_write_names_the_preset_rule_and_what_is_allowed_instead(build: Pipeline) -> None:
    answer = build.call({"hook_event_name": "PreToolUse", "tool_name": "Write", "tool_use_id": "toolu_w1",
                         "tool_input": {"file_path": str(build.root / "src/player.gd"), "content": "extends Node\n"}})
    assert answer.blocked
    # the user is told how to see why
    assert answer.raw["systemMessage"] == "hookgate: run `hookgate explain s1 --tool-use-id toolu_w1` to see why"
    got = explained(build.root, "s1", "--tool-use-id", "toolu_w1")
    assert got["event"]["name"] == "PreToolUse" and got["event"]["runtime"] == "claude"
    assert got["event"]["agent"]["identity"] == "main" and got["event"]["role"] == "build"
    assert got["event"]["writes"] == [{"path": "src/player.gd", "how": "file_write"}]
    assert got["verdict"]["kind"] == "block"
    assert [g["id"] for g in got["gates"] if g["verdict"] == "block"] == ["check_file_permissions"]
    assert got["rule"]["key"] == "pipeline.roles.build.rules[1]"
    assert got["rule"]["file"].startswith("preset godot (") and got["rule"]["file"].endswith("godot.toml)")
    assert "@game_code" in got["rule"]["detail"]
    assert any("dispatch" in item for item in got["instead"])
    text = explain(build.root, "s1", "--tool-use-id", "toolu_w1").stdout
    assert "decided by: the write rule pipeline.roles.build.rules[1] (path src/player.gd)" in text
    assert "check_file_permissions" in text and "allowed instead:" in text


def test_a_rule_the_project_config_sets_is_named_in_config_toml(build: Pipeline) -> None:
    (build.root / ".hookgate" / "config.toml").write_text(
        '[pipeline.roles.build]\nrules = [{ deny = ["docs/*"], reason = "no docs in build ({file})" }]\n')
    assert build.tool("Write", file_path="docs/a.md", content="x").blocked
    got = explained(build.root, "--last-block")
    assert got["rule"] == {"what": "the write rule pipeline.roles.build.rules[0] (path docs/a.md)",
                           "file": ".hookgate/config.toml", "key": "pipeline.roles.build.rules[0]",
                           "detail": '{"deny": ["docs/*"], "reason": "no docs in build ({file})"}'}


def test_a_subagent_refusal_names_its_identity_and_the_subagent_rule(build: Pipeline) -> None:
    build.ready_to_dispatch()
    build.run_subagent("agent-7", "worker: M1", "worker")
    assert build.tool("Write", agent=("agent-7", "worker"), file_path="MEMORY.md", content="x").blocked
    got = explained(build.root)
    agent = got["event"]["agent"]
    assert agent["id"] == "agent-7" and agent["type"] == "worker" and agent["role"] == "worker"
    assert agent["identity"] == "given" and "given by the runtime" in agent["how"]
    assert got["rule"]["key"].startswith("pipeline.subagents.always[")


def test_a_shell_write_names_the_path_the_command_writes(build: Pipeline) -> None:
    assert build.bash("echo x > src/enemy.gd").blocked
    got = explained(build.root)
    assert got["event"]["writes"] == [{"path": "src/enemy.gd", "how": "Bash"}]
    assert got["rule"]["key"] == "pipeline.roles.build.rules[1]"
    assert [g["id"] for g in got["gates"] if g["verdict"] == "block"] == ["check_shell_writes"]


def test_a_dispatch_before_its_prerequisites_names_them(build: Pipeline) -> None:
    assert build.dispatch("worker: M1", "worker").blocked
    got = explained(build.root)
    assert got["rule"]["key"] == "pipeline.prerequisites.build"
    assert "hookgate stage complete gdd" in got["instead"][0]


def test_a_command_hook_refusal_names_the_handler(build: Pipeline) -> None:
    hooks = {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "echo 'no deploys' >&2; exit 2"}]}]}}
    (build.root / ".hookgate" / "hooks.json").write_text(json.dumps(hooks))
    assert build.bash("echo deploy").blocked  # a command the shell gate lets through
    got = explained(build.root)
    assert got["rule"]["what"] == "hooks.json handler `echo 'no deploys' >&2; exit 2`"
    assert got["rule"]["file"] == ".hookgate/hooks.json"
    assert got["rule"]["key"] == "$.hooks.PreToolUse[0].hooks[0]"


def test_a_python_hook_refusal_names_the_hook_by_id_and_where_it_is_registered(build: Pipeline) -> None:
    policies = build.root / ".hookgate" / "policies"
    policies.mkdir()
    (policies / "release.py").write_text(
        "from hookgate import block, register_hook\n\n"
        "register_hook('no-publish', 'pre_tool_use', {'tool': 'Bash', 'command_pattern': 'npm publish'},\n"
        "              None, lambda event: block('CI publishes releases'))\n")
    assert build.bash("npm publish").blocked
    got = explained(build.root)
    assert got["rule"]["key"] == "no-publish" and got["rule"]["file"] == ".hookgate/policies/release.py"
    assert got["rule"]["detail"] == "line 3"
    assert "Python hook `no-publish`" in got["rule"]["what"]


def test_explain_without_a_refusal(tmp_path: Path) -> None:
    pipeline = Pipeline(tmp_path)
    pipeline.session_start()
    pipeline.tool("Read", file_path="README.md")
    done = explain(tmp_path, "s1", "--last-block")
    assert done.returncode == 1 and "session 's1' has no refused call (2 decided calls recorded)" in done.stderr
    assert explained(tmp_path, "s1")["verdict"]["kind"] == "allow"  # no flag: the last call
    assert explain(tmp_path, "s1", "--tool-use-id", "nope").returncode == 1
    assert explain(tmp_path, "unknown-session").returncode == 1


def test_the_hint_is_off_by_config(build: Pipeline) -> None:
    (build.root / ".hookgate" / "config.toml").write_text("[explain]\nhint = false\n")
    answer = build.tool("Write", file_path="src/a.gd", content="x")
    assert answer.blocked and "systemMessage" not in answer.raw
    assert explained(build.root)["verdict"]["kind"] == "block"  # still recorded and explained
