"""The stdin hook path runs on every tool call of every agent: prove it imports nothing heavy, and
that the warm client (hookgate.warm.client) imports nothing but itself and `_socket`."""

import json
import subprocess
import sys

from warm_support import Warm, warm  # noqa: F401 (a fixture)

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


# all the warm client may add to a bare interpreter: the command's own modules (the runtime
# registry and the private-directory check among them, both import-free) and a socket
WARM_CLIENT = {"hookgate", "hookgate.cli", "hookgate.cli.hook", "hookgate.runtimes", "hookgate.warm",
               "hookgate.warm.client", "hookgate.store", "hookgate.store.private", "_socket"}


def probe(tmp_path, env):
    (tmp_path / ".hookgate").mkdir(exist_ok=True)
    (tmp_path / ".hookgate" / "current_role").write_text("build\n")
    payload = json.dumps({"hook_event_name": "PreToolUse", "session_id": "s", "cwd": str(tmp_path),
                          "tool_name": "Write", "tool_input": {"file_path": "src/a.gd", "content": ""}}).encode()
    done = subprocess.run([sys.executable, "-c", f"PAYLOAD={payload!r}\n" + PROBE], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 0, done.stderr
    assert "permissionDecision" in done.stdout  # the probe really ran a decision
    return set(json.loads(done.stderr.strip().splitlines()[-1]))


def test_hook_claude_imports_no_heavy_module(tmp_path, warm):
    imported = probe(tmp_path, warm.cold())  # in-process, the way the first call of a session runs
    heavy = {m for m in imported if m.split(".")[0] in HEAVY or m in HEAVY}
    assert heavy == set()


def test_the_warm_client_imports_only_itself_and_a_socket(tmp_path, warm):
    assert warm.warm("start", tmp_path).returncode == 0
    imported = probe(tmp_path, warm.env())
    assert warm.answered(tmp_path, 1) == 1  # the core answered it
    assert "hookgate.warm.client" in imported and imported <= WARM_CLIENT, imported - WARM_CLIENT
