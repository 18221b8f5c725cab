"""Starting the real, pinned Codex CLI against the fake model, in a throwaway CODEX_HOME.

Codex speaks only the Responses API to a custom provider (`wire_api = "responses"`), reads its
user config and user hooks from `$CODEX_HOME`, and skips every hook that has no persisted trust
unless `--dangerously-bypass-hook-trust` is given (`bypass_hook_trust=False` runs without it, to
prove the trust hookgate writes is the trust Codex accepts).
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import msgspec
import pytest

from .fakemodel import FakeModel
from .runtimes import HOOKGATE, Run, base_env, binary

# A model Codex has no metadata for: a plain function-tool set with the multi_agent_v1 namespace.
FAKE_MODEL = "fake-model"
# A model Codex knows: it also offers the freeform `apply_patch` tool.
PATCH_MODEL = "gpt-5.5"


def codex_home(home: Path) -> Path:
    return home / ".codex"


def write_config(home: Path, fake: FakeModel, model: str = FAKE_MODEL) -> Path:
    """The user config.toml: the fake provider, no approvals or sandbox, no network but 127.0.0.1.
    `hookgate install` merges its own keys into this file afterwards."""
    config = codex_home(home) / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f"""\
model = "{model}"
model_provider = "fake"
approval_policy = "never"
sandbox_mode = "danger-full-access"

[model_providers.fake]
name = "Fake local model"
base_url = "{fake.url}/v1"
env_key = "FAKE_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[features]
plugins = false
remote_plugin = false

[analytics]
enabled = false
""")
    return config


def env(home: Path) -> dict[str, str]:
    return {**base_env(home), "CODEX_HOME": str(codex_home(home)), "FAKE_API_KEY": "sk-fake"}


def run_codex(work: Path, home: Path, prompt: str, *, model: str | None = None,
              bypass_hook_trust: bool = True, timeout: float = 150) -> Run:
    """One `codex exec` turn (stdin closed, or exec would wait to append it to the prompt)."""
    args = ["exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox"]
    if bypass_hook_trust:
        args.append("--dangerously-bypass-hook-trust")
    if model:
        args += ["-m", model]
    return codex(*args, prompt, cwd=work, home=home, timeout=timeout)


def hookgate(*args: str, cwd: Path, home: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    """`hookgate ...` seeing the same CODEX_HOME as the Codex runs (install writes trust there)."""
    return subprocess.run([str(HOOKGATE), *args], cwd=cwd, env=env(home), capture_output=True, text=True,
                          check=check)


def codex(*args: str, cwd: Path, home: Path, timeout: float = 150) -> Run:
    """Any `codex ...` command line in the test's CODEX_HOME."""
    done = subprocess.run([binary("codex"), *args], cwd=cwd, env=env(home), stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=timeout)
    return Run(done.returncode, done.stdout, done.stderr)


def hooks_list(home: Path, cwd: Path, timeout: float = 60) -> list[dict[str, Any]]:
    """Codex's own view of the hooks it would run in `cwd`: `hooks/list` of `codex app-server`
    (key, eventName, command, currentHash, trustStatus, enabled, ... per handler)."""
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"clientInfo": {"name": "hookgate-tests", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "hooks/list", "params": {"cwds": [str(cwd)]}},
    ]
    server = subprocess.Popen([binary("codex"), "app-server"], cwd=cwd, env=env(home), stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert server.stdin and server.stdout
        server.stdin.write("".join(json.dumps(r) + "\n" for r in requests))
        server.stdin.flush()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            line = server.stdout.readline()
            if not line:
                break
            reply = json.loads(line) if line.startswith("{") else {}
            if reply.get("id") == 2:
                if "error" in reply:
                    raise AssertionError(f"hooks/list failed: {reply['error']}")
                return [hook for entry in reply["result"]["data"] for hook in entry["hooks"]]
        raise AssertionError("codex app-server gave no hooks/list answer")
    finally:
        server.kill()
        server.wait()


def render_probe(verdict: Any) -> str:
    """A hook command that answers every call with `verdict` as hookgate's Codex dialect renders it,
    so a test can watch what real Codex does with each kind of answer. A stop that Codex already
    continued once (`stop_hook_active`) is let go, or a refused stop would never end."""
    script = ("import json, sys; from hookgate_codex.dialect import render; "
              "from hookgate.model.verdicts import ALLOW, verdict_decoder; "
              "payload = json.loads(sys.stdin.read()); "
              "verdict = ALLOW if payload.get('stop_hook_active') else verdict_decoder.decode(sys.argv[1]); "
              "answer = render(payload['hook_event_name'], verdict); "
              "sys.stdout.buffer.write(answer.stdout); sys.stderr.write(answer.stderr); sys.exit(answer.exit_code)")
    return shlex.join([sys.executable, "-c", script, msgspec.json.encode(verdict).decode()])


def install_hooks(home: Path, hooks: dict[str, list[dict[str, Any]]]) -> None:
    """Hand-written user hooks (run with the trust bypass)."""
    (codex_home(home) / "hooks.json").write_text(json.dumps({"hooks": hooks}))


def one_hook(event: str, command: str, matcher: str | None = "*") -> dict[str, list[dict[str, Any]]]:
    group: dict[str, Any] = {"hooks": [{"type": "command", "command": command, "timeout": 60}]}
    if matcher is not None:
        group["matcher"] = matcher
    return {event: [group]}


def output_schemas() -> dict[str, dict[str, Any]]:
    """The hook output JSON Schemas embedded in the pinned binary (`pre-tool-use.command.output`, ...)."""
    data = Path(native_binary()).read_bytes()
    schemas: dict[str, dict[str, Any]] = {}
    at = data.find(b'"$schema"')
    while at >= 0:
        start = data.rfind(b"{", 0, at)
        depth, end = 0, start
        for end in range(start, min(len(data), start + 200_000)):
            depth += {ord("{"): 1, ord("}"): -1}.get(data[end], 0)
            if depth == 0:
                break
        try:
            schema = json.loads(data[start:end + 1])
            schemas[schema["title"]] = schema
        except (ValueError, KeyError):
            pass
        at = data.find(b'"$schema"', at + 1)
    return {title: s for title, s in schemas.items() if title.endswith(".command.output")}


def native_binary() -> Path:
    """The platform binary behind the npm launcher (its strings and schemas are the ground truth)."""
    launcher = Path(binary("codex")).resolve()
    found = sorted(launcher.parents[1].parent.glob("codex-linux-*/vendor/*/bin/codex"))
    if not found:
        pytest.fail(f"no native codex binary next to {launcher}")
    return found[0]
