"""Gemini CLI 0.61.0: the scenario moves as its hook payloads, and as runs of the pinned binary
against the fake model.

Payloads: its own event names (BeforeAgent, BeforeTool, AfterTool, AfterAgent, PreCompress) in
Claude's shape, its own tools (write_file, run_shell_command, read_file, invoke_agent), relative
paths as the model gives them, no call id and no subagent identity: a subagent's calls are the
session's, its report is an ordinary complete_task call, and no hook sees it start or end. A
failed command is an ordinary AfterTool; PreCompress cannot refuse and no hook follows a
compression; an AfterAgent refusal comes back as the next prompt (BeforeAgent). Headless, a tool
that needs approval is not offered at all, so no hook sees it. Answers: exit 2 with the reason on
stderr, or JSON (hookSpecificOutput.tool_input, additionalContext, systemMessage).

Real runs: `gemini -p` with hookgate installed in the project's .gemini/settings.json. Write is
`write_file`, Bash `run_shell_command`, Read `read_file` (paths relative to the project, as the
model may give them), a dispatch `invoke_agent {agent_name, prompt}`, and a subagent hands in its
report with `complete_task {result}`. A held stop is AfterAgent's retry: the reason comes back as
the next prompt and the model answers again. Compaction is a run that resumes the session
(`--resume latest`) with a compression threshold so low that Gemini CLI compresses before its
first request; an interrupt is a Ctrl-C of the run while its command runs.

The runtime: `gemini -p` in headless mode, its Gemini API pointed at the fake model
(GOOGLE_GEMINI_BASE_URL), an API-key login that never leaves 127.0.0.1, `--yolo` so every tool
runs without a prompt (`--approval-mode yolo`: hooks still run under it), and the project folder trusted in the user's
trustedFolders.json: Gemini CLI ignores an untrusted project's .gemini/settings.json, hooks and all.
Subagents are the user's agent files (~/.gemini/agents/<role>.md), dispatched by `invoke_agent`;
a project's own agents would first need the user's acknowledgement, which headless mode cannot give.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

from harness.channels import CHECKOUT
from harness.fakemodel import Call, FakeModel, Say, Step
from harness.runtimes import HOOKGATE, Run, base_env, binary, new_project

from scenarios import Compact, Dispatch, End, Interrupt, Move, Prompt, Report, Session, Start, Stop, Tool

from .base import ALLOW, Agent, StdinHost, Verdict, held, prepare
from .templates import template
from .real import RealPlay, ScenarioModel, interrupted, load, marker, scripts

runtime = "gemini"
MODEL = "gemini-2.5-flash"


# -- the runtime ---------------------------------------------------------------------------------------

def gemini_home(home: Path) -> Path:
    return home / ".gemini"


def configure(work: Path, home: Path, settings: dict[str, Any] | None = None) -> Path:
    """The user's settings.json (an API-key login, no telemetry or update checks, plus `settings`)
    and the project folder trusted. Returns the settings file (`hookgate install --user` merges
    into it)."""
    folder = gemini_home(home)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "trustedFolders.json").write_text(json.dumps({str(work): "TRUST_FOLDER"}))
    path = folder / "settings.json"
    path.write_text(json.dumps({
        "security": {"auth": {"selectedType": "gemini-api-key"}}, "general": {"enableAutoUpdate": False},
        "privacy": {"usageStatisticsEnabled": False}, "telemetry": {"enabled": False}, **(settings or {}),
    }, indent=2))
    return path


def env(home: Path, fake: FakeModel | None = None) -> dict[str, str]:
    found = {**base_env(home), "GEMINI_API_KEY": "fake-key", "GEMINI_CLI_HOME": str(home)}
    if fake is not None:
        found["GOOGLE_GEMINI_BASE_URL"] = fake.url
    return found


def install_extension(work: Path, home: Path) -> None:
    """hookgate from Gemini CLI's extension channel: `gemini extensions install` of this checkout's
    extension (its source folder trusted first, as Gemini CLI asks); the installed copy is what the
    checkout ships."""
    from hookgate_gemini import extension

    source = CHECKOUT / extension.EXTENSION_DIR
    trusted = gemini_home(home) / "trustedFolders.json"
    trusted.write_text(json.dumps({**json.loads(trusted.read_text()), str(source): "TRUST_FOLDER"}))
    done = subprocess.run([binary("gemini"), "extensions", "install", str(source), "--consent"], cwd=work,
                          env=env(home), stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and 'Extension "hookgate" installed successfully' in done.stdout + done.stderr, done
    copy = extension.installed_path(env(home))
    for relative, text in extension.files().items():
        assert (copy / Path(relative).relative_to(extension.EXTENSION_DIR)).read_text() == text


def hookgate(*args: str, cwd: Path, home: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    """`hookgate ...` seeing the same home as the Gemini runs."""
    return subprocess.run([str(HOOKGATE), *args], cwd=cwd, env=env(home), capture_output=True, text=True,
                          check=check)


def start(work: Path, home: Path, fake: FakeModel, prompt: str, *args: str,
          mode: str = "yolo") -> subprocess.Popen[str]:
    """One headless `gemini -p` run of the pinned binary, every tool approved (`mode` yolo)."""
    return subprocess.Popen([binary("gemini"), "-p", prompt, "-m", MODEL, "--approval-mode", mode, "-o", "json",
                             *args],
                            cwd=work, env=env(home, fake), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)


def collect(process: subprocess.Popen[str], timeout: float = 180) -> Run:
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise
    return Run(process.returncode, out, err)


def run_gemini(work: Path, home: Path, fake: FakeModel, prompt: str, *args: str, timeout: float = 180) -> Run:
    return collect(start(work, home, fake, prompt, *args), timeout)


def add_agents(home: Path, agents: dict[str, str]) -> None:
    """The user's own subagents (~/.gemini/agents/<name>.md)."""
    folder = gemini_home(home) / "agents"
    folder.mkdir(parents=True, exist_ok=True)
    for name, body in agents.items():
        (folder / f"{name}.md").write_text(body)


def agent_file(role: str) -> str:
    return f"---\nname: {role}\ndescription: the pipeline's {role}\nkind: local\n---\nYou are the {role}.\n"


def user_hooks(home: Path, hooks: dict[str, list[dict[str, Any]]]) -> None:
    """Hand-written hooks in the user's settings.json, beside what is there."""
    path = gemini_home(home) / "settings.json"
    settings = json.loads(path.read_text())
    settings["hooks"] = hooks
    path.write_text(json.dumps(settings, indent=2))


def one_hook(event: str, command: str, timeout_ms: int = 60_000) -> dict[str, list[dict[str, Any]]]:
    return {event: [{"matcher": "*", "hooks": [{"type": "command", "command": command, "name": f"probe-{event}",
                                                 "timeout": timeout_ms}]}]}


# -- payload tier -------------------------------------------------------------------------------------

# the headless answer to a call of a tool that needs approval: Gemini CLI does not offer it
NOT_OFFERED = 'Tool "run_shell_command" not found. Did you mean one of: "update_topic", "grep_search"?'


class Payloads(StdinHost):
    runtime = runtime

    def payload(self, event: str, agent: Agent | None = None, **fields: Any) -> dict[str, Any]:
        theirs = {"SessionStart": "SessionStart", "UserPromptSubmit": "BeforeAgent", "PreToolUse": "BeforeTool",
                  "PostToolUse": "AfterTool", "Stop": "AfterAgent", "PreCompact": "PreCompress",
                  "SessionEnd": "SessionEnd"}[event]
        payload = template(runtime, theirs)
        for key in ("tool_name", "tool_input", "tool_response", "prompt", "prompt_response", "source", "reason",
                    "trigger", "stop_hook_active"):
            payload.pop(key, None)
        payload.update(session_id=self.session_id, cwd=str(self.work),
                       transcript_path=str(self.home / ".gemini" / "tmp" / "work" / "chats" / f"{self.session_id}.jsonl"),
                       **fields)
        return payload

    def hook(self, payload: dict[str, Any]) -> Verdict:
        # StdinHost names the event for `--event` by the payload's: here the canonical one
        from hookgate_gemini.dialect import EVENTS

        event = EVENTS[payload["hook_event_name"]]
        answer = subprocess.run([str(HOOKGATE), "hook", runtime, "--event", event], input=json.dumps(payload).encode(),
                                cwd=self.work, env=self.hook_env(), capture_output=True, timeout=120)
        assert answer.returncode in (0, 2), (event, answer)
        return self.read(event, answer)

    def read(self, event: str, answer: subprocess.CompletedProcess[bytes]) -> Verdict:
        """Exit 2 refuses with stderr as the reason; else JSON: hookSpecificOutput.tool_input (a
        rewrite), additionalContext, or a systemMessage (a BeforeTool's context, shown to the user)."""
        if answer.returncode == 2:
            return Verdict("block", answer.stderr.decode())
        out = json.loads(answer.stdout) if answer.stdout.strip() else {}
        specific = out.get("hookSpecificOutput", {})
        if "tool_input" in specific:
            return Verdict("modify", updated_input=specific["tool_input"])
        if specific.get("additionalContext"):
            return Verdict("context", specific["additionalContext"])
        if out.get("systemMessage"):
            return Verdict("context" if event == "PreToolUse" else "allow", out["systemMessage"])
        return ALLOW

    def start(self, move: Start) -> Verdict:
        verdict = self.hook(self.payload("SessionStart", source="startup"))
        self.start_context = verdict.text if verdict.kind == "context" else ""
        return ALLOW if self.start_context else verdict  # the model has not seen it yet

    def prompt(self, move: Prompt) -> Verdict:
        # headless, the start's context rides on the first prompt (and a refused prompt takes it along)
        context, self.start_context = getattr(self, "start_context", ""), ""
        text = f"<hook_context>{context}</hook_context>\n\n{move.text}" if context else move.text
        verdict = self.hook(self.payload("UserPromptSubmit", prompt=text))
        if context and not verdict.refuses:
            return Verdict("context", context)
        return verdict

    def tool(self, move: Tool) -> Verdict:
        name, given = gemini_call(move.tool, move.input)
        if move.asks:  # not offered headless without auto-approval: no hook sees the call
            return Verdict("allow", NOT_OFFERED)
        return self.call(name, given)

    def call(self, name: str, given: dict[str, Any]) -> Verdict:
        verdict = self.hook(self.payload("PreToolUse", tool_name=name, tool_input=given))
        if verdict.refuses:
            return verdict
        used = {**given, **(verdict.updated_input or {})}  # Gemini merges the rewrite over the arguments
        self.hook(self.payload("PostToolUse", tool_name=name, tool_input=used, tool_response=self.run_tool(name, used)))
        return verdict

    def run_tool(self, name: str, used: dict[str, Any]) -> dict[str, Any]:
        if name == "write_file":
            self.write(used["file_path"], used["content"])
            return {"llmContent": f"Successfully created and wrote to new file: {self.work / used['file_path']}.",
                    "returnDisplay": {"fileName": used["file_path"]}}
        if name == "run_shell_command":
            done = self.bash(used["command"])
            code = f"\nExit Code: {done.returncode}" if done.returncode else ""
            return {"llmContent": f"<untrusted_context>\nOutput: {(done.stdout + done.stderr).strip() or '(empty)'}"
                                  f"{code}\n</untrusted_context>", "returnDisplay": done.stdout}
        return {"llmContent": "", "returnDisplay": ""}

    def dispatch(self, move: Dispatch) -> Verdict:
        given = {"agent_name": move.role, "prompt": f"{move.description}\n{move.prompt}"}
        verdict = self.hook(self.payload("PreToolUse", tool_name="invoke_agent", tool_input=given))
        if not verdict.refuses:
            self.agents[move.agent] = Agent(move.agent, move, use_id=json.dumps(given))
        return verdict

    def report(self, move: Report) -> Verdict:
        """complete_task, then invoke_agent returns: ordinary tool calls of the session."""
        agent = self.agents[move.by]
        if agent.stops:  # the subagent already handed in its one report
            return ALLOW
        agent.stops += 1
        verdict = self.call("complete_task", {"result": move.text})
        self.hook(self.payload("PostToolUse", tool_name="invoke_agent", tool_input=json.loads(agent.use_id),
                               tool_response={"llmContent": [{"text": f"Subagent '{agent.dispatch.role}' finished.\n"
                                                                      f"Termination Reason: GOAL\nResult:\n{move.text}"}]}))
        return verdict

    def stop(self, move: Stop) -> Verdict:
        verdict = self.hook(self.payload("Stop", prompt="go", prompt_response=move.message,
                                         stop_hook_active=self.stops > 0))
        self.stops = self.stops + 1 if verdict.refuses else 0
        if verdict.refuses:  # the reason is the next prompt
            self.hook(self.payload("UserPromptSubmit", prompt=verdict.text))
        return verdict

    def compact(self, move: Compact) -> Verdict:
        self.hook(self.payload("PreCompact", trigger="auto"))
        return ALLOW  # advisory: the compression goes on, and no hook follows it

    def interrupt(self, move: Interrupt) -> Verdict:
        # the command starts; Ctrl-C ends the run, and Gemini CLI has no hook for that
        return self.hook(self.payload("PreToolUse", tool_name="run_shell_command", tool_input={"command": move.command}))

    def end(self, move: End) -> Verdict:
        return self.hook(self.payload("SessionEnd", reason="exit"))


# -- real tier ----------------------------------------------------------------------------------------

# what Gemini CLI's compression asks the model first (a request without tools; a second one
# checks the summary): one per compression
COMPRESSION = "Generate a new <state_snapshot>"


def gemini_call(tool: str, given: Any) -> tuple[str, dict[str, Any]]:
    """A canonical tool call as Gemini's model makes it (project-relative paths)."""
    names = {"Write": "write_file", "Bash": "run_shell_command", "Read": "read_file"}
    return names.get(tool, tool), dict(given)


def play(session: Session, root: Path, version: str | None = None) -> RealPlay:
    """The session on the pinned binary (0.61.0 is the only version)."""
    work, home = new_project(root)
    prepare(session, work)
    configure(work, home)
    hookgate("install", "gemini", "--project", str(work), cwd=work, home=home)
    add_agents(home, {d.role: agent_file(d.role) for d in session.agents.values()})
    model = ScenarioModel().start()
    played = RealPlay(session, f"{runtime}-{version}" if version else runtime, work, model)

    def call(move: Move) -> list[Step]:
        if isinstance(move, Dispatch):
            return [Call("invoke_agent", {"agent_name": move.role, "prompt": f"{move.description}\n"
                                          f"SCENARIO:{marker(session, move.agent)} {move.prompt}"})]
        if isinstance(move, Interrupt):
            return [Call("run_shell_command", {"command": move.command})]
        assert isinstance(move, Tool)
        return [Call(*gemini_call(move.tool, move.input))]

    prompt = next((m.text for m in session.moves if isinstance(m, Prompt)), "go")
    try:
        for n, turn in enumerate(turns(session)):
            moves = [session.moves[i] for i in turn]
            if isinstance(moves[0], Compact):  # a run of its own, resuming the session, that compresses
                _settings(home, {"model": {"compressionThreshold": 0.0001}})
                with held(work, moves[0]):
                    before = _compressions(model)
                    run = run_gemini(work, home, model, "continue", "--resume", "latest")
                played.ran(turn, run, compactions=_compressions(model) - before)
                _settings(home, {"model": {}})
                continue
            plan = scripts(session, played.runtime, moves, call)
            plan.revisions.clear()  # no hook refuses a Gemini subagent's report: it hands in its first
            for agent, steps in plan.children.items():  # a subagent hands in its report with complete_task
                if steps and isinstance(steps[-1], Say):
                    steps[-1:] = [Call("complete_task", {"result": steps[-1].text}), Say("reported")]
            lead = load(model, session, plan, lead=f"lead-{n}" if n else "lead")
            interrupt = next((m for m in moves if isinstance(m, Interrupt)), None)
            process = start(work, home, model, f"{lead} {prompt}", mode="default" if session.asks else "yolo")
            played.ran(turn, interrupted(process, work, interrupt.command) if interrupt else collect(process))
    finally:
        model.stop()
    return played


def turns(session: Session) -> list[list[int]]:
    """The session as `gemini -p` runs (move indices): every compaction is a run of its own."""
    found: list[list[int]] = [[]]
    for index, move in enumerate(session.moves):
        if isinstance(move, Compact):
            found += [[index], []]
        else:
            found[-1].append(index)
    return [t for t in found if t]


def _settings(home: Path, change: dict[str, Any]) -> None:
    path = gemini_home(home) / "settings.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), **change}, indent=2))


def _compressions(model: FakeModel) -> int:
    """The compressions Gemini CLI asked the model for (a side request: no tools)."""
    return sum(1 for r in model.seen() if not r.body.get("tools") and any(COMPRESSION in t for t in r.user_texts))
