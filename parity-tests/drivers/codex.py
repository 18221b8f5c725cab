"""Codex CLI: the scenario moves as its hook payloads, and as runs of the pinned binaries (0.171.0,
the newest, and 0.160.0); the runtime itself, started against the fake model.

Payloads: Claude's shape with Codex's tools. Write is `apply_patch` with an "*** Add File:" patch
(relative path), Bash is `{command}`, Read is `view_image {path}`, a dispatch is `spawn_agent
{message}` (the description is its first line) followed by `multi_agent_v1wait_agent`; a child
runs SubagentStart, then its prompt (UserPromptSubmit), its tools and SubagentStop, every event
with agent_id and agent_type "default". A failed command is an ordinary PostToolUse. Compaction
is automatic (PreCompact/PostCompact `auto`, then SessionStart `compact`); a compaction a hook
holds, and a Ctrl-C, abort the turn (Interrupt). Answers: exit 2 with the reason on stderr, or
JSON (permissionDecision, decision.behavior, continue: false, additionalContext).

Real runs: `codex exec` against the fake model with the patch-capable model, hookgate installed in
the user config with the trust it records. Permission requests come from escalated commands under
`--approve-for-me`; compaction from `model_auto_compact_token_limit = 1` after a tool call.

The runtime: Codex speaks only the Responses API to a custom provider (`wire_api = "responses"`), reads its
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
import uuid
from pathlib import Path
from typing import Any

import msgspec
import pytest

from harness.channels import CHECKOUT
from harness.fakemodel import Call, FakeModel, Step
from harness.runtimes import HOOKGATE, Run, base_env, binary, new_project
from hookgate.formats.apply_patch import file_operations

from scenarios import Compact, Dispatch, End, Interrupt, Move, Prompt, Report, Session, Stop, Tool

from .base import Agent, StdinHost, Verdict, held, prepare
from .real import RealPlay, ScenarioModel, interrupted, load, marker, scripts
from .templates import template

runtime = "codex"
WAIT = "multi_agent_v1wait_agent"  # how hooks name wait_agent: the namespace glued on
# the start of the history Codex resumes a compacted conversation from
COMPACTED = "Another language model started to solve this problem and produced a summary"
ESCALATE = {"sandbox_permissions": "require_escalated", "justification": "the scenario asks for it"}


def codex_call(tool: str, given: Any) -> tuple[str, dict[str, Any]]:
    """A canonical tool call as Codex reports it to hooks (project-relative paths)."""
    if tool == "Write":
        lines = "".join(f"+{line}\n" for line in given["content"].splitlines())
        patch = f"*** Begin Patch\n*** Add File: {given['file_path']}\n{lines}*** End Patch\n"
        return "apply_patch", {"command": patch}
    if tool == "Read":
        return "view_image", {"path": given["file_path"]}
    return tool, dict(given)


# -- the runtime ---------------------------------------------------------------------------------------

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
              bypass_hook_trust: bool = True, timeout: float = 150, version: str | None = None) -> Run:
    """One `codex exec` turn (stdin closed, or exec would wait to append it to the prompt) of the
    newest pinned binary, or of `version`."""
    args = ["exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox"]
    if bypass_hook_trust:
        args.append("--dangerously-bypass-hook-trust")
    if model:
        args += ["-m", model]
    return codex(*args, prompt, cwd=work, home=home, timeout=timeout, version=version)


def hookgate(*args: str, cwd: Path, home: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    """`hookgate ...` seeing the same CODEX_HOME as the Codex runs (install writes trust there)."""
    return subprocess.run([str(HOOKGATE), *args], cwd=cwd, env=env(home), capture_output=True, text=True,
                          check=check)


def codex(*args: str, cwd: Path, home: Path, timeout: float = 150, version: str | None = None) -> Run:
    """Any `codex ...` command line in the test's CODEX_HOME."""
    done = subprocess.run([binary("codex", version), *args], cwd=cwd, env=env(home), stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=timeout)
    return Run(done.returncode, done.stdout, done.stderr)


PLUGIN_ID = "hookgate@hookgate"


def add_plugin(work: Path, home: Path, fake: FakeModel) -> None:
    """A CODEX_HOME with the hookgate plugin added from the checkout's marketplace (plugins on; the
    remote catalog off, so nothing leaves 127.0.0.1); Codex's copy of it is what the checkout ships."""
    from hookgate_codex import plugin

    config = write_config(home, fake)
    config.write_text(config.read_text().replace("plugins = false", "plugins = true"))
    market = codex("plugin", "marketplace", "add", str(CHECKOUT), cwd=work, home=home)
    assert market.returncode == 0, market.stderr
    add = codex("plugin", "add", PLUGIN_ID, "--json", cwd=work, home=home)
    assert add.returncode == 0, add.stderr
    installed = Path(json.loads(add.stdout)["installedPath"])
    assert json.loads((installed / "hooks" / "hooks.json").read_text()) == plugin.hooks()


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
              "import msgspec; from hookgate.model.verdicts import ALLOW, AnyVerdict; "
              "payload = json.loads(sys.stdin.read()); "
              "verdict = ALLOW if payload.get('stop_hook_active') else msgspec.json.decode(sys.argv[1], type=AnyVerdict); "
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


def output_schemas(version: str | None = None) -> dict[str, dict[str, Any]]:
    """The hook output JSON Schemas embedded in a pinned binary (`pre-tool-use.command.output`, ...)."""
    data = Path(native_binary(version)).read_bytes()
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


def native_binary(version: str | None = None) -> Path:
    """The platform binary behind the npm launcher (its strings and schemas are the ground truth):
    beside the package (`@openai/codex-linux-x64`), or inside an aliased older one."""
    package = Path(binary("codex", version)).resolve().parents[1]
    found = sorted(package.glob("node_modules/@openai/codex-linux-*/vendor/*/bin/codex")) or sorted(
        package.parent.glob("codex-linux-*/vendor/*/bin/codex"))
    if not found:
        pytest.fail(f"no native codex binary for {package}")
    return found[0]


# -- payload tier -------------------------------------------------------------------------------------

class Payloads(StdinHost):
    runtime = runtime

    def __init__(self, session: Session, work: Path, home: Path) -> None:
        super().__init__(session, work, home)
        self.turn_id = str(uuid.uuid4())
        self.child_turns: dict[str, str] = {}  # agent id -> the child's turn

    def payload(self, event: str, agent: Agent | None = None, **fields: Any) -> dict[str, Any]:
        payload = {k: v for k, v in template(runtime, event).items() if k not in ("agent_id", "agent_type")}
        payload.update(session_id=self.session_id, cwd=str(self.work),
                       transcript_path=str(self.home / ".codex" / "sessions" / f"rollout-{self.session_id}.jsonl"))
        if "turn_id" in payload:
            payload["turn_id"] = self.child_turns[agent.id] if agent else self.turn_id
        if agent is not None:
            payload.update(agent_id=agent.id, agent_type="default")
        payload.update(fields)
        return payload

    def tool(self, move: Tool) -> Verdict:
        name, given = codex_call(move.tool, move.input)
        return self.call(name, given, self.agents.get(move.by), move.asks)

    def call(self, name: str, given: dict[str, Any], agent: Agent | None, asks: bool = False) -> Verdict:
        use_id = f"call_{uuid.uuid4().hex[:16]}"
        verdict = self.hook(self.payload("PreToolUse", agent, tool_name=name, tool_input=given, tool_use_id=use_id))
        if verdict.refuses:
            return verdict
        used = verdict.updated_input or given
        if asks:
            asked = self.hook(self.payload("PermissionRequest", agent, tool_name=name,
                                           tool_input={**used, "description": ESCALATE["justification"]}))
            if asked.refuses or not asked.decided:
                return asked  # refused, or left to Codex's own review, which declines here
        response = self.run_tool(name, used)
        if response is not None:
            self.hook(self.payload("PostToolUse", agent, tool_name=name, tool_input=used, tool_use_id=use_id,
                                   tool_response=response))
        return verdict

    def run_tool(self, name: str, used: dict[str, Any]) -> str | None:
        """Carry the call out; its output as Codex reports it (None: no PostToolUse)."""
        if name == "apply_patch":
            operations = file_operations(used["command"])
            for _, fields in operations:
                self.write(fields["file_path"], fields["content"])
            added = "".join(f"A {fields['file_path']}\n" for _, fields in operations)
            return f"Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess. Updated the following files:\n{added}"
        if name == "Bash":
            done = self.bash(used["command"])
            return done.stdout + done.stderr  # a failed command too: Codex has no failure event
        return None  # view_image of a scenario file is no image: Codex reports the error without a hook

    def dispatch(self, move: Dispatch) -> Verdict:
        message = f"{move.description}\n{move.prompt}"
        spawn_id = f"call_{uuid.uuid4().hex[:16]}"
        verdict = self.hook(self.payload("PreToolUse", tool_name="spawn_agent", tool_input={"message": message},
                                         tool_use_id=spawn_id))
        if verdict.refuses:
            return verdict
        agent = self.agents[move.agent] = Agent(str(uuid.uuid4()), move, use_id=f"call_{uuid.uuid4().hex[:16]}")
        self.child_turns[agent.id] = str(uuid.uuid4())
        self.hook(self.payload("SubagentStart", agent))
        self.hook(self.payload("PostToolUse", tool_name="spawn_agent", tool_input={"message": message},
                               tool_use_id=spawn_id,
                               tool_response=json.dumps({"agent_id": agent.id, "nickname": "Ada"})))
        waiting = self.hook(self.payload("PreToolUse", tool_name=WAIT, tool_input={"targets": [agent.id]},
                                         tool_use_id=agent.use_id))
        assert not waiting.refuses, waiting
        self.hook(self.payload("UserPromptSubmit", agent, prompt=message))
        return verdict

    def report(self, move: Report) -> Verdict:
        agent = self.agents[move.by]
        verdict = self.hook(self.payload(
            "SubagentStop", agent, stop_hook_active=agent.stops > 0, last_assistant_message=move.text,
            agent_transcript_path=str(self.home / ".codex" / "sessions" / f"rollout-{agent.id}.jsonl")))
        agent.stops += 1
        if not verdict.refuses:  # the child is done: wait_agent returns its result
            self.hook(self.payload("PostToolUse", tool_name=WAIT, tool_input={"targets": [agent.id]},
                                   tool_use_id=agent.use_id, tool_response=json.dumps(
                                       {"status": {agent.id: {"completed": move.text}}, "timed_out": False})))
        return verdict

    def stop(self, move: Stop) -> Verdict:
        verdict = self.hook(self.payload("Stop", stop_hook_active=self.stops > 0, last_assistant_message=move.message))
        self.stops = self.stops + 1 if verdict.refuses else 0
        return verdict

    def compact(self, move: Compact) -> Verdict:
        verdict = self.hook(self.payload("PreCompact", trigger="auto"))
        if verdict.refuses:  # `continue: false` ends the turn, which Codex reports as interrupted
            self.hook(self.payload("Interrupt"))
        else:
            self.hook(self.payload("PostCompact", trigger="auto"))
            self.hook(self.payload("SessionStart", source="compact"))
        return verdict

    def interrupt(self, move: Interrupt) -> Verdict:
        verdict = self.hook(self.payload("PreToolUse", tool_name="Bash", tool_input={"command": move.command},
                                         tool_use_id=f"call_{uuid.uuid4().hex[:16]}"))
        self.hook(self.payload("Interrupt"))
        return verdict

    def end(self, move: End) -> Verdict:
        return self.hook(self.payload("SessionEnd", reason="other"))


# -- real tier ----------------------------------------------------------------------------------------

def play(session: Session, root: Path, version: str | None = None) -> RealPlay:
    """The session on the newest pinned binary, or on `version`."""
    work, home = new_project(root)
    prepare(session, work)
    model = ScenarioModel().start()
    model.after_compaction = COMPACTED
    config = write_config(home, model, model=PATCH_MODEL)
    if session.asks:  # commands run sandboxed; an escalated one asks, and the automatic review answers
        config.write_text(config.read_text().replace('"never"', '"on-request"')
                          .replace('"danger-full-access"', '"workspace-write"'))
    if any(isinstance(m, Compact) for m in session.moves):  # compact after every tool call
        config.write_text("model_auto_compact_token_limit = 1\n" + config.read_text())
    hookgate("install", "codex", "--user", cwd=work, home=home)
    args = ["exec", "--skip-git-repo-check", "--dangerously-bypass-hook-trust",
            *(["--approve-for-me"] if session.asks else ["--dangerously-bypass-approvals-and-sandbox"])]
    prompt = next((m.text for m in session.moves if isinstance(m, Prompt)), "go")
    played = RealPlay(session, f"{runtime}-{version}" if version else runtime, work, model)

    def call(move: Move) -> list[Step]:
        if isinstance(move, Dispatch):
            spawn = Call("spawn_agent", {"message": f"{move.description}\nSCENARIO:{marker(session, move.agent)} "
                                                    f"{move.prompt}"}, namespace="multi_agent_v1")
            if move.expected(played.runtime).verdict == "block":
                return [spawn]
            return [spawn, Call("wait_agent", {"targets": ["{{last_json.agent_id}}"]}, namespace="multi_agent_v1")]
        if isinstance(move, Interrupt):
            return [Call("exec_command", {"cmd": move.command})]
        assert isinstance(move, Tool)
        name, given = codex_call(move.tool, move.input)
        if name == "apply_patch":
            return [Call(name, given["command"])]
        if name == "Bash":
            return [Call("exec_command", {"cmd": given["command"], **(ESCALATE if move.asks else {})})]
        return [Call(name, given)]

    try:
        for n, turn in enumerate(turns(session)):
            moves = [session.moves[i] for i in turn]
            plan = scripts(session, played.runtime, moves, call)
            if isinstance(moves[-1], Compact) and len(plan.lead) == 1:
                plan.lead.insert(0, Call("exec_command", {"cmd": "echo compacting"}))  # what makes Codex compact
            lead = load(model, session, plan, lead=f"lead-{n}" if n else "lead")
            interrupt = next((m for m in moves if isinstance(m, Interrupt)), None)
            with held(work, moves[-1]):
                process = subprocess.Popen([binary("codex", version), *args, f"{lead} {prompt}"], cwd=work, env=env(home),
                                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                           text=True, start_new_session=True)
                if interrupt:
                    played.ran(turn, interrupted(process, work, interrupt.command))
                else:
                    out, err = process.communicate(timeout=180)
                    played.ran(turn, Run(process.returncode, out, err))
    finally:
        model.stop()
    return played


def turns(session: Session) -> list[list[int]]:
    """The session as `codex exec` runs (move indices): each compaction ends one (a held one
    aborts the turn)."""
    found: list[list[int]] = [[]]
    for index, move in enumerate(session.moves):
        found[-1].append(index)
        if isinstance(move, Compact):
            found.append([])
    return [t for t in found if t]
