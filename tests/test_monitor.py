"""Monitor mode: a gate decides and records `would_block`, and the agent is not stopped; `hookgate
metrics report` shows what would have been blocked (and each refusal explained), checked in
headless Chromium; doctor says which fail-closed gates monitor mode opens."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

from pipeline_support import Pipeline
from support import HOOKGATE, run_hook


def config(root: Path, text: str) -> None:
    (root / ".hookgate").mkdir(exist_ok=True)
    (root / ".hookgate" / "config.toml").write_text(text)


def test_monitor_everywhere_records_and_never_stops(tmp_path: Path) -> None:
    config(tmp_path, 'mode = "monitor"\n')
    p = Pipeline(tmp_path).role("build")
    start = p.session_start()
    assert "[hookgate v" in start.context  # what a gate tells the model still reaches it
    assert not p.tool("Write", file_path="src/a.gd", content="x").blocked
    assert not p.bash("echo x > src/b.gd").blocked
    assert not p.tool("Read", file_path="assets/a.png").blocked
    would = p.metrics("would_block")
    assert [(r["gate"], r["kind"]) for r in would] == [("check_file_permissions", "block"),
                                                         ("check_shell_writes", "block"), ("check_asset_access", "block")]
    assert "Build role cannot write game code directly (a.gd)" in would[0]["reason"]
    assert p.metrics("hook_block") == []  # nothing was blocked
    assert p.state().get("counters", {}) == {}  # nor counted against a block limit


def test_one_gate_in_monitor_mode_the_others_enforce(tmp_path: Path) -> None:
    config(tmp_path, '[gates.check_asset_access]\nmode = "monitor"\n')
    p = Pipeline(tmp_path).role("build")
    p.session_start()
    assert not p.tool("Read", file_path="assets/a.png").blocked
    assert p.tool("Write", file_path="src/a.gd", content="x").blocked
    assert [r["gate"] for r in p.metrics("would_block")] == ["check_asset_access"]
    assert [r["gate"] for r in p.metrics("hook_block")] == ["check_file_permissions"]


def test_enforce_on_one_gate_under_a_monitoring_config(tmp_path: Path) -> None:
    config(tmp_path, 'mode = "monitor"\n[gates.check_file_permissions]\nmode = "enforce"\n')
    p = Pipeline(tmp_path).role("build")
    assert p.tool("Write", file_path="src/a.gd", content="x").blocked
    assert not p.tool("Read", file_path="assets/a.png").blocked


def test_a_fail_closed_gate_in_monitor_mode_is_open(tmp_path: Path) -> None:
    (tmp_path / ".hookgate").mkdir()
    enforced = run_hook("claude", b"{not json", tmp_path, "--event", "PreToolUse", env={"HOOKGATE_WARM": "off"})
    assert enforced.returncode == 2  # an unreadable payload: the fail-closed gates block
    config(tmp_path, 'mode = "monitor"\n')
    monitored = run_hook("claude", b"{not json", tmp_path, "--event", "PreToolUse", env={"HOOKGATE_WARM": "off"})
    assert monitored.returncode == 0
    records = [json.loads(line) for line in (tmp_path / ".hookgate" / "metrics.jsonl").read_text().splitlines()]
    assert {r["gate"] for r in records if r["event"] == "would_block"} >= {"check_file_permissions", "check_shell_writes"}


def test_doctor_says_monitor_mode_opens_fail_closed_gates(tmp_path: Path) -> None:
    config(tmp_path, '[gates.check_file_permissions]\nmode = "monitor"\n[gates.log_subagent]\nmode = "monitor"\n')
    done = subprocess.run([HOOKGATE, "doctor", "--project", str(tmp_path)], capture_output=True, text=True, timeout=60)
    lines = [line for line in done.stdout.splitlines() if "monitor mode" in line]
    assert any("check_file_permissions fail closed, and monitor mode makes them open" in line for line in lines)
    assert not any("log_subagent fail closed" in line for line in lines)  # it fails open anyway


def test_a_bad_mode_is_a_config_error(tmp_path: Path) -> None:
    config(tmp_path, 'mode = "watch"\n')
    p = Pipeline(tmp_path).role("build")
    answer = p.tool("Write", file_path="src/a.gd", content="x")
    assert answer.blocked  # the preset's fail modes stand in: never a silent allow


def test_the_report_shows_monitor_counts_and_each_refusal_explained_in_chromium(tmp_path: Path) -> None:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    assert browser, "Chromium is needed for this check: `make chromium` installs Debian's package"
    config(tmp_path, '[gates.check_asset_access]\nmode = "monitor"\n')
    p = Pipeline(tmp_path).role("build")
    p.session_start()
    for use_id, path in (("w1", "src/a.gd"), ("w2", "src/b.gd")):
        p.call({"hook_event_name": "PreToolUse", "tool_name": "Write", "tool_use_id": use_id,
                "tool_input": {"file_path": path, "content": "x"}})
    p.call({"hook_event_name": "PreToolUse", "tool_name": "Read", "tool_use_id": "r1",
            "tool_input": {"file_path": "assets/a.png"}})
    page = tmp_path / "report.html"
    done = subprocess.run([HOOKGATE, "metrics", "--project", str(tmp_path), "report", "s1", "-o", str(page)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync"]
    dom = subprocess.run([browser, *flags, f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", page.as_uri()],
                         capture_output=True, text=True, timeout=120).stdout
    sections = re.findall(r'<section class="explain" data-tool-use-id="([^"]*)" data-verdict="(\w+)" '
                          r'data-gate="([^"]*)" data-rule="([^"]*)">', dom)
    assert sections == [("w1", "block", "check_file_permissions", "pipeline.roles.build.rules[1]"),
                        ("w2", "block", "check_file_permissions", "pipeline.roles.build.rules[1]"),
                        ("r1", "allow", "check_asset_access", "pipeline.asset_read")]
    assert re.search(r'<div class="card monitor" data-gate="check_asset_access"><b>1</b>', dom)
    assert re.search(r"<b>1</b>would have blocked \(monitor\)", dom) and re.search(r"<b>2</b>blocks", dom)
    assert "decided by: the write rule pipeline.roles.build.rules[1] (path src/a.gd)" in dom
