"""The stdin hook path runs on every tool call of every agent: prove it imports nothing heavy."""

import json
import subprocess
import sys

HEAVY = {"asyncio", "watchfiles", "concurrent", "multiprocessing", "argparse", "subprocess", "http", "email",
         "urllib", "xml", "sqlite3", "ssl", "hookgate.rpc", "hookgate.cli.install", "hookgate.cli.demo"}

PROBE = r"""
import io, json, sys
before = set(sys.modules)
sys.argv = ["hookgate", "hook", "claude"]
sys.stdin = io.TextIOWrapper(io.BytesIO(PAYLOAD))
from hookgate.cli import main
code = main()
sys.stdout.flush()
print("\n" + json.dumps(sorted(set(sys.modules) - before)), file=sys.stderr)
"""


def test_hook_claude_imports_no_heavy_module(tmp_path):
    (tmp_path / ".hookgate").mkdir()
    (tmp_path / ".hookgate" / "current_role").write_text("build\n")
    payload = json.dumps({"hook_event_name": "PreToolUse", "session_id": "s", "cwd": str(tmp_path),
                          "tool_name": "Write", "tool_input": {"file_path": "src/a.gd", "content": ""}}).encode()
    done = subprocess.run([sys.executable, "-c", f"PAYLOAD={payload!r}\n" + PROBE], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "permissionDecision" in done.stdout  # the probe really ran a decision
    imported = set(json.loads(done.stderr.strip().splitlines()[-1]))
    heavy = {m for m in imported if m.split(".")[0] in HEAVY or m in HEAVY}
    assert heavy == set()
