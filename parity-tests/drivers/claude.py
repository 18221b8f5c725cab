"""Claude Code: the scenario moves as its hook payloads, and as runs of the pinned binaries (2.1.332,
the newest, and 2.1.290); the runtime itself, started against the fake model.

Payloads: the canonical form itself (tool names and inputs are Claude's), absolute paths; a
subagent's events carry agent_id and agent_type; a tool that fails fires PostToolUseFailure; a
permission dialog would show where the scenario's project asks (PermissionRequest), and in `-p`
an undecided request is declined. Answers: exit 0 with JSON (hookSpecificOutput.permissionDecision,
decision.behavior, top-level decision: block, additionalContext).

Real runs: `claude -p` against the fake model, hookgate installed in the project settings, the
dispatched roles as custom agents (.claude/agents/<role>.md). Compaction is `/compact` in a run
that continues the session; an interrupt is a Ctrl-C of the run while its command runs.

The runtime: `claude -p` with the fake model as ANTHROPIC_BASE_URL and nothing sent elsewhere;
IS_SANDBOX=1 lets the bypass permission mode run as root.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from harness.channels import CHECKOUT
from harness.fakemodel import Call, FakeModel, Step
from harness.runtimes import Run, base_env, binary, hookgate, new_project

from scenarios import Compact, Dispatch, End, Interrupt, Move, Prompt, Report, Session, Stop, Tool

from .base import Agent, StdinHost, Verdict, held, prepare
from .real import RealPlay, ScenarioModel, interrupted, load, marker, scripts
from .templates import template

runtime = "claude"
COMPACT_INSTRUCTIONS = "keep it short"


# -- the runtime --------------------------------------------------------------------------------------

API_KEY = "sk-ant-fake-key"


def claude_env(home: Path, model: FakeModel) -> dict[str, str]:
    return {**base_env(home), "CLAUDE_CONFIG_DIR": str(home / ".claude"), "ANTHROPIC_BASE_URL": model.url,
            "ANTHROPIC_API_KEY": API_KEY, "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_ERROR_REPORTING": "1",
            "DISABLE_BUG_COMMAND": "1", "IS_SANDBOX": "1"}


def claude(work: Path, home: Path, model: FakeModel, prompt: str, *args: str,
           version: str | None = None) -> subprocess.Popen[str]:
    """A pinned binary (the newest, or `version`) in `-p` mode against the fake model."""
    return subprocess.Popen([binary("claude", version), "-p", prompt, "--output-format", "json",
                             "--model", "claude-sonnet-4-5", *args], cwd=work, env=claude_env(home, model), stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)


def collect(process: subprocess.Popen[str], timeout: float = 180) -> Run:
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise
    return Run(process.returncode, out, err)


def run_claude(work: Path, home: Path, fake: FakeModel, prompt: str, timeout: float = 150,
               version: str | None = None) -> Run:
    """One `claude -p` turn of a pinned binary (the newest, or `version`), every permission bypassed."""
    return collect(claude(work, home, fake, prompt, "--permission-mode", "bypassPermissions", version=version),
                   timeout)


def claude_command(*args: str, home: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Any other `claude ...` command line (plugins, marketplaces) in the test's home, offline."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / ".claude"),
           "DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1"}
    return subprocess.run([binary("claude"), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60)


def install_plugin(work: Path, home: Path) -> None:
    """hookgate from Claude Code's plugin channel: this checkout added as a marketplace, and
    `claude plugin install hookgate@hookgate`."""
    for args in (("plugin", "marketplace", "add", str(CHECKOUT)), ("plugin", "install", "hookgate@hookgate")):
        done = claude_command(*args, home=home, cwd=work)
        assert done.returncode == 0, done.stderr + done.stdout


@contextmanager
def background_session(work: Path, home: Path, model: FakeModel, prompt: str,
                       version: str | None = None) -> Iterator[str]:
    """`claude --bg`: a session the runtime's own daemon runs in a terminal it owns, the command
    returning at once with the session's id. The interactive session it starts asks what `-p` does
    not (trust the folder, use the key), answered in the config as a user's first run would; the
    daemon and its sessions are stopped on the way out."""
    config = home / ".claude"
    config.mkdir(parents=True, exist_ok=True)
    (config / ".claude.json").write_text(json.dumps({
        "hasCompletedOnboarding": True, "bypassPermissionsModeAccepted": True,
        "customApiKeyResponses": {"approved": [API_KEY[-20:]], "rejected": []},
        "projects": {str(work): {"hasTrustDialogAccepted": True, "hasCompletedProjectOnboarding": True}}}))
    env, claude_bin = claude_env(home, model), binary("claude", version)
    started = subprocess.run([claude_bin, "--bg", prompt, "--model", "claude-sonnet-4-5", "--permission-mode",
                              "bypassPermissions"], cwd=work, env=env, stdin=subprocess.DEVNULL,
                             capture_output=True, text=True, timeout=60)
    try:
        assert started.returncode == 0, started.stderr
        yield started.stdout.split("backgrounded · ", 1)[1].split()[0]
    finally:
        subprocess.run([claude_bin, "daemon", "stop", "--any"], cwd=work, env=env, stdin=subprocess.DEVNULL,
                       capture_output=True, timeout=60)
        end_processes_of(config)


def end_processes_of(config: Path, grace: float = 10) -> None:
    """The daemon's spare terminals leave a few seconds after it: what is left after `grace` is
    killed, found by the config dir in its environment (they are in no process group of ours)."""
    mark = f"CLAUDE_CONFIG_DIR={config}".encode()
    deadline = time.monotonic() + grace
    while True:
        left = []
        for environ in Path("/proc").glob("[0-9]*/environ"):
            try:
                if mark in environ.read_bytes().split(b"\0"):
                    left.append(int(environ.parent.name))
            except OSError:
                continue  # gone, or not ours to read
        if not left:
            return
        if time.monotonic() > deadline:
            for pid in left:
                with suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            return
        time.sleep(0.2)


def copy_agents(work: Path, agents: dict[str, str]) -> None:
    """Custom Claude subagents (`.claude/agents/<name>.md`)."""
    folder = work / ".claude" / "agents"
    folder.mkdir(parents=True, exist_ok=True)
    for name, body in agents.items():
        (folder / f"{name}.md").write_text(body)


# -- payload tier -------------------------------------------------------------------------------------

class Payloads(StdinHost):
    runtime = runtime

    def payload(self, event: str, agent: Agent | None = None, **fields: Any) -> dict[str, Any]:
        payload = {k: v for k, v in template(runtime, event).items() if k not in ("agent_id", "agent_type")}
        payload.update(session_id=self.session_id, cwd=str(self.work),
                       transcript_path=str(self.home / ".claude" / "projects" / f"{self.session_id}.jsonl"), **fields)
        if agent is not None:
            payload.update(agent_id=agent.id, agent_type=agent.dispatch.role)
        return payload

    def tool(self, move: Tool) -> Verdict:
        return self.call(move.tool, tool_input(self.work, move.tool, move.input), self.agents.get(move.by), move.asks)

    def call(self, tool: str, given: dict[str, Any], agent: Agent | None, asks: bool = False) -> Verdict:
        use_id = f"toolu_{uuid.uuid4().hex[:20]}"
        verdict = self.hook(self.payload("PreToolUse", agent, tool_name=tool, tool_input=given, tool_use_id=use_id))
        if verdict.refuses:
            return verdict
        used = verdict.updated_input or given
        if asks and verdict.kind != "modify":  # a rewrite is answered `allow`, which skips the dialog
            verdict = self.hook(self.payload("PermissionRequest", agent, tool_name=tool, tool_input=used,
                                             permission_suggestions=template(runtime, "PermissionRequest")
                                             ["permission_suggestions"]))
            if verdict.refuses or not verdict.decided:
                return verdict  # refused, or undecided: nobody answers the dialog in `-p`, so it is declined
            used = verdict.updated_input or used
        self.run_tool(tool, used, agent, use_id)
        return verdict

    def run_tool(self, tool: str, used: dict[str, Any], agent: Agent | None, use_id: str) -> None:
        post = dict(tool_name=tool, tool_input=used, tool_use_id=use_id, duration_ms=5)
        if tool == "Write":
            self.write(used["file_path"], used["content"])
            response: Any = {"type": "create", "filePath": used["file_path"], "content": used["content"],
                             "structuredPatch": [], "originalFile": None, "userModified": False}
        elif tool == "Bash":
            done = self.bash(used["command"])
            if done.returncode:
                self.hook(self.payload("PostToolUseFailure", agent, **post, is_interrupt=False,
                                       error=f"Exit code {done.returncode}\n{done.stderr.strip()}"))
                return
            response = {"stdout": done.stdout.strip(), "stderr": done.stderr.strip(), "interrupted": False,
                        "isImage": False, "noOutputExpected": False}
        else:
            response = template(runtime, "PostToolUse", tool)["tool_response"]
        self.hook(self.payload("PostToolUse", agent, **post, tool_response=response))

    def dispatch(self, move: Dispatch) -> Verdict:
        given = {"description": move.description, "prompt": move.prompt, "subagent_type": move.role}
        use_id = f"toolu_{uuid.uuid4().hex[:20]}"
        verdict = self.hook(self.payload("PreToolUse", tool_name="Agent", tool_input=given, tool_use_id=use_id))
        if not verdict.refuses:
            agent = self.agents[move.agent] = Agent(uuid.uuid4().hex[:17], move, use_id=use_id)
            self.hook(self.payload("SubagentStart", agent))
        return verdict

    def report(self, move: Report) -> Verdict:
        agent = self.agents[move.by]
        verdict = self.hook(self.payload(
            "SubagentStop", agent, stop_hook_active=agent.stops > 0, last_assistant_message=move.text,
            agent_transcript_path=str(self.home / "subagents" / f"agent-{agent.id}.jsonl"), background_tasks=[],
            session_crons=[]))
        agent.stops += 1
        if not verdict.refuses:  # the subagent is done: the lead gets its result
            dispatch = agent.dispatch
            self.hook(self.payload(
                "PostToolUse", tool_name="Agent", tool_use_id=agent.use_id,
                tool_input={"description": dispatch.description, "prompt": dispatch.prompt,
                            "subagent_type": dispatch.role},
                tool_response={"status": "completed", "agentId": agent.id, "agentType": dispatch.role,
                               "content": [{"type": "text", "text": move.text}]}))
        return verdict

    def stop(self, move: Stop) -> Verdict:
        verdict = self.hook(self.payload("Stop", stop_hook_active=self.stops > 0, last_assistant_message=move.message,
                                         background_tasks=[], session_crons=[]))
        self.stops = self.stops + 1 if verdict.refuses else 0
        return verdict

    def compact(self, move: Compact) -> Verdict:
        verdict = self.hook(self.payload("PreCompact", trigger="manual", custom_instructions=COMPACT_INSTRUCTIONS))
        if not verdict.refuses:
            self.hook(self.payload("SessionStart", source="compact", model="claude-sonnet-4-5"))
            self.hook(self.payload("PostCompact", trigger="manual", compact_summary="Compacted."))
        return verdict

    def interrupt(self, move: Interrupt) -> Verdict:
        # the command starts; Ctrl-C ends the run, and Claude Code has no hook for that
        return self.hook(self.payload("PreToolUse", tool_name="Bash", tool_input=tool_input(self.work, "Bash", {
            "command": move.command}), tool_use_id=f"toolu_{uuid.uuid4().hex[:20]}"))

    def end(self, move: End) -> Verdict:
        return self.hook(self.payload("SessionEnd", reason="other"))


def tool_input(work: Path, tool: str, given: Any) -> dict[str, Any]:
    """A canonical move's input as Claude's model sends it: absolute paths; Bash with a description."""
    data = dict(given)
    if "file_path" in data:
        data["file_path"] = str(work / data["file_path"])
    if tool == "Bash":
        data.setdefault("description", "run it")
    return data


# -- real tier ----------------------------------------------------------------------------------------

def agent_file(role: str) -> str:
    return f"---\nname: {role}\ndescription: the pipeline's {role}\n---\nYou are the {role}. Do what you are asked.\n"


def play(session: Session, root: Path, version: str | None = None) -> RealPlay:
    """The session on the newest pinned binary, or on `version`."""
    work, home = new_project(root)
    prepare(session, work)
    hookgate("install", "claude", "--project", str(work), cwd=work)
    copy_agents(work, {d.role: agent_file(d.role) for d in session.agents.values()})

    def call(move: Move) -> list[Step]:
        if isinstance(move, Dispatch):
            return [Call("Agent", {"description": move.description, "subagent_type": move.role,
                                   "prompt": f"SCENARIO:{marker(session, move.agent)} {move.prompt}"})]
        if isinstance(move, Interrupt):
            return [Call("Bash", {"command": move.command, "description": "wait"})]
        assert isinstance(move, Tool)
        return [Call(move.tool, tool_input(work, move.tool, move.input))]

    model = ScenarioModel().start()
    played = RealPlay(session, f"{runtime}-{version}" if version else runtime, work, model)
    try:
        turn = [i for i, m in enumerate(session.moves) if not isinstance(m, Compact)]
        lead = load(model, session, scripts(session, played.runtime, [session.moves[i] for i in turn], call))
        prompt = next((m.text for m in session.moves if isinstance(m, Prompt)), "go")
        mode = "default" if session.asks else "bypassPermissions"
        interrupt = next((m for m in session.moves if isinstance(m, Interrupt)), None)
        process = claude(work, home, model, f"{lead} {prompt}", "--permission-mode", mode, version=version)
        played.ran(turn, interrupted(process, work, interrupt.command) if interrupt else collect(process))
        for index, move in enumerate(session.moves):
            if isinstance(move, Compact):  # `/compact` continuing the session
                with held(work, move):
                    played.ran([index], collect(claude(work, home, model, f"/compact {COMPACT_INSTRUCTIONS}",
                                                       "--continue", "--permission-mode", mode, version=version)))
    finally:
        model.stop()
    return played
