"""OpenCode 1.18.33: the scenario moves through the opencode-hookgate plugin, and as runs of the
pinned binary (OpenCode 2 is not supported yet: it does not load V1 plugins).

OpenCode has no command hooks: the plugin turns its hooks and bus events into canonical events and
carries the core's verdicts out the way OpenCode allows (see the plugin's index.js). So the payload
tier here is the real plugin, loaded in Node with a stand-in client (opencode_host.mjs) and talking
to the real core (`hookgate serve --stdio`); each move becomes the hook calls OpenCode makes for it
(shapes from the captured payloads), and the verdict is read back from what the plugin did: threw
(the tool or prompt is refused, the message is what the model sees), rewrote the call's args,
appended to a tool's output or to the prompt (context), queued a message that keeps a session
going (a held stop), answered a permission request `reject`.

Real runs: `opencode serve` with the plugin installed in the project, driven through its HTTP API
as its own TUI drives it: a session, the prompt, `summarize` (the TUI's /compact), `abort` (Esc), a
permission request the user approves when the plugin had no objection.

The runtime, offline: OpenCode installs `@opencode-ai/plugin` into every config dir it loads (the
user's and a project's `.opencode/`) at start-up; with the registry slow or away that costs a minute. `preinstall` gives
each such dir the pinned package from parity-tests/runtimes, in the shape OpenCode's own check
accepts (node_modules present, the dependency in package-lock.json), so runs never wait on it.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path
from typing import Any, Callable

from harness.fakemodel import Call, FakeModel, Step
from harness.runtimes import HOOKGATE, RUNTIMES_DIR, Run, base_env, binary, hookgate, new_project

from scenarios import Compact, Dispatch, End, Interrupt, Move, Prompt, Report, Session, Start, Stop, Tool

from .base import ALLOW, UNDECIDED, Agent, PayloadHost, Verdict, evidence, held, prepare
from .real import RealPlay, ScenarioModel, load, marker, running, scripts
from .templates import plugin_call

runtime = "opencode"
HOST = Path(__file__).with_name("opencode_host.mjs")
TOOLS = {"Write": "write", "Bash": "bash", "Read": "read", "Agent": "task"}
AGENT = "general"  # the task tool's subagent type the scenarios dispatch; the role is the description's prefix


def opencode_args(work: Path, given: Any) -> dict[str, Any]:
    """A canonical input as OpenCode's tools take it: camelCase, absolute paths."""
    args = {("filePath" if k == "file_path" else k): v for k, v in dict(given).items()}
    if "filePath" in args:
        args["filePath"] = str(work / args["filePath"])
    return args


# -- the runtime ---------------------------------------------------------------------------------------

PLUGIN_PACKAGE = "@opencode-ai/plugin"


def plugin_version() -> str:
    return json.loads((RUNTIMES_DIR / "package.json").read_text())["dependencies"][PLUGIN_PACKAGE]


def preinstall(config_dir: Path) -> None:
    """The pinned `@opencode-ai/plugin` in `config_dir`, linked from parity-tests/runtimes."""
    version = plugin_version()
    modules = config_dir / "node_modules"
    modules.mkdir(parents=True, exist_ok=True)
    for entry in (RUNTIMES_DIR / "node_modules").iterdir():
        link = modules / entry.name
        if entry.name.startswith(".") or link.exists():
            continue
        link.symlink_to(entry, target_is_directory=entry.is_dir())
    dependencies = {PLUGIN_PACKAGE: version}
    (config_dir / "package.json").write_text(json.dumps({"dependencies": dependencies}))
    (config_dir / "package-lock.json").write_text(json.dumps(
        {"lockfileVersion": 3, "requires": True, "packages": {"": {"dependencies": dependencies}}}))


def configure(work: Path, home: Path, fake: FakeModel) -> None:
    """opencode.json pointing at the fake model; the plugin package pre-installed where OpenCode
    wants it (the user's config dir, and the project's .opencode/ once it exists)."""
    config = {
        "$schema": "https://opencode.ai/config.json",
        "provider": {"fake": {
            "npm": "@ai-sdk/openai-compatible",
            "name": "Fake local model",
            "options": {"baseURL": f"{fake.url}/v1", "apiKey": "sk-fake"},
            "models": {"fake-model": {"name": "Fake Model", "tool_call": True,
                                      "limit": {"context": 128000, "output": 8192}}},
        }},
        "model": "fake/fake-model",
        "small_model": "fake/fake-model",
        "autoupdate": False,
        "share": "disabled",
        "permission": {"edit": "allow", "bash": "allow", "webfetch": "allow"},
    }
    (work / "opencode.json").write_text(json.dumps(config, indent=2))
    preinstall(home / ".config" / "opencode")
    if (work / ".opencode").is_dir():
        preinstall(work / ".opencode")


def env(home: Path) -> dict[str, str]:
    return {
        **base_env(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "OPENCODE_DISABLE_AUTOUPDATE": "1",
        "OPENCODE_DISABLE_MODELS_FETCH": "1",
        "OPENCODE_DISABLE_SHARE": "1",
        "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
    }


def run_opencode(work: Path, home: Path, prompt: str, timeout: float = 240,
                 during: Callable[[subprocess.Popen[str]], Any] | None = None) -> Run:
    """`opencode run PROMPT` in `work`; `during(process)` runs on a thread meanwhile."""
    cmd = [binary("opencode"), "run", "--print-logs", "--log-level", "INFO", prompt]
    process = subprocess.Popen(cmd, cwd=work, env=env(home), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    helper = threading.Thread(target=during, args=(process,), daemon=True) if during else None
    if helper:
        helper.start()
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        stdout, stderr = process.communicate()
        raise AssertionError(f"opencode did not finish in {timeout}s; stderr tail:\n{stderr[-4000:]}") from None
    if helper:
        helper.join(timeout=30)
    return Run(process.returncode, stdout, stderr)


def descendants(pid: int) -> list[int]:
    """Every process below `pid` (from /proc, children of every thread)."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            children = (task / "children").read_text().split()
        except OSError:
            continue
        for child in map(int, children):
            found += [child, *descendants(child)]
    return found


def core_pids(opencode_pid: int) -> list[int]:
    """The hookgate cores this OpenCode process runs."""
    pids = []
    for pid in descendants(opencode_pid):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"serve" in argv and b"--stdio" in argv:
            pids.append(pid)
    return pids


def hookgate_log(stderr: str) -> list[str]:
    """The plugin's and the core's lines in OpenCode's log (`--print-logs`)."""
    return [line for line in stderr.splitlines() if 'message="hookgate' in line]


# -- payload tier -------------------------------------------------------------------------------------

class Payloads(PayloadHost):
    runtime = runtime

    def __init__(self, session: Session, work: Path, home: Path) -> None:
        super().__init__(session, work, home)
        self.root = new_id("ses")
        self.held: dict[str, list[dict[str, Any]]] = {}  # session -> the parts of the message holding it
        inherited = {k: v for k, v in os.environ.items() if k not in ("HOOKGATE_PROJECT_DIR", "CLAUDE_PROJECT_DIR")}
        self.node = subprocess.Popen(["node", str(HOST), str(work), str(HOOKGATE), "serve", "--stdio"], cwd=work,
                                     env={**inherited, "HOME": str(home)}, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True)

    def plugin(self, hook: str, input: Any, output: Any = None, message: Any = None) -> dict[str, Any]:
        """One hook call of OpenCode's into the plugin, and what the plugin did."""
        assert self.node.stdin and self.node.stdout
        self.node.stdin.write(json.dumps({"hook": hook, "input": input, "output": output, "message": message}) + "\n")
        self.node.stdin.flush()
        line = self.node.stdout.readline()
        assert line, f"the plugin host ended during {hook}"
        return json.loads(line)

    def call_hook(self, hook: str, tool: str | None = None, input: Any = None, output: Any = None,
                  message: Any = None) -> dict[str, Any]:
        """A plugin hook call in the captured shape, with these fields."""
        shape = plugin_call(runtime, hook, tool)
        return self.plugin(hook, {**shape["input"], **(input or {})}, {**(shape["output"] or {}), **(output or {})},
                           message)

    def event(self, kind: str, child: bool | None = None, **properties: Any) -> dict[str, Any]:
        """A bus event in the captured shape; `info` is merged into the captured session info."""
        shape = plugin_call(runtime, kind, child=child)
        if "info" in properties:
            properties["info"] = {**shape["properties"]["info"], **properties["info"]}
        return self.plugin("event", {"event": {**shape, "id": new_id("evt"),
                                               "properties": {**shape["properties"], **properties}}})

    def created(self, session: str, **info: Any) -> None:
        self.event("session.created", child="parentID" in info, sessionID=session,
                   info={"id": session, "directory": str(self.work), **info})

    def session_of(self, agent: str) -> str:
        return self.agents[agent].id if agent in self.agents else self.root

    def start(self, move: Start) -> Verdict:
        self.created(self.root, title="New session")
        return ALLOW  # a start's context goes to the model with the first prompt

    def prompt(self, move: Prompt) -> Verdict:
        return self.chat(self.root, move.text)

    def chat(self, session: str, text: str, agent: str | None = None) -> Verdict:
        message = {**plugin_call(runtime, "chat.message")["output"]["message"], "id": new_id("msg"),
                   "sessionID": session, **({"agent": agent} if agent else {})}
        part = {"type": "text", "text": text, "messageID": message["id"], "sessionID": session, "id": new_id("prt")}
        done = self.call_hook("chat.message", input={"sessionID": session, **({"agent": agent} if agent else {})},
                              output={"message": message, "parts": [part]})
        if done["threw"]:
            return Verdict("block", done["threw"])
        added = done["output"]["parts"][0]["text"][len(text):].strip()
        return Verdict("context", added) if added else ALLOW

    def tool(self, move: Tool) -> Verdict:
        return self.call(TOOLS[move.tool], opencode_args(self.work, move.input), self.session_of(move.by), move.asks)

    def call(self, tool: str, args: dict[str, Any], session: str, asks: bool = False) -> Verdict:
        call_id = new_id("call")
        before = self.call_hook("tool.execute.before", tool, {"sessionID": session, "callID": call_id},
                                {"args": args})
        if before["threw"]:
            return Verdict("block", before["threw"])
        used = before["output"]["args"]
        verdict = Verdict("modify", updated_input=used) if used != args else ALLOW
        if asks:
            asked = plugin_call(runtime, "permission.asked")["properties"]
            answered = self.event("permission.asked", id=new_id("per"), sessionID=session, permission=tool,
                                  patterns=[used.get("command", "")], metadata={"command": used.get("command", "")},
                                  tool={**asked["tool"], "callID": call_id})
            if any(c["name"] == "permission.reply" for c in answered["calls"]):
                return Verdict("block")  # rejected; OpenCode ends the turn there, telling the model nothing
            verdict = UNDECIDED  # no objection: the user answers the dialog, and approves
        output = self.run_tool(tool, used)
        after = self.call_hook("tool.execute.after", tool, {"sessionID": session, "callID": call_id, "args": used},
                               output)
        added = after["output"]["output"][len(output["output"]):].strip()
        return Verdict("context", added) if added and verdict.kind == "allow" and verdict.decided else verdict

    def run_tool(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        """Carry the call out; what OpenCode hands tool.execute.after as its output."""
        shape = plugin_call(runtime, "tool.execute.after", tool)["output"]
        if tool == "write":
            self.write(args["filePath"], args["content"])
            return {**shape, "title": Path(args["filePath"]).name,
                    "metadata": {**shape["metadata"], "filepath": args["filePath"], "exists": False}}
        if tool == "bash":  # a failed command too: OpenCode's bash tool reports its exit code
            done = self.bash(args["command"])
            text = done.stdout + done.stderr
            return {**shape, "title": args["command"], "output": text,
                    "metadata": {**shape["metadata"], "output": text, "exit": done.returncode}}
        return shape

    def dispatch(self, move: Dispatch) -> Verdict:
        args = {"description": move.description, "prompt": move.prompt, "subagent_type": AGENT}
        call_id = new_id("call")
        before = self.call_hook("tool.execute.before", "task", {"sessionID": self.root, "callID": call_id},
                                {"args": args})
        if before["threw"]:
            return Verdict("block", before["threw"])
        child = self.agents[move.agent] = Agent(new_id("ses"), move, use_id=call_id)
        self.created(child.id, parentID=self.root, title=f"{move.description} (@{AGENT} subagent)", agent=AGENT)
        self.chat(child.id, move.prompt, agent=AGENT)
        return ALLOW

    def final_text(self, session: str, text: str) -> Verdict:
        """The last text of a turn (experimental.text.complete); a held session first gets the
        message that held it, as OpenCode passes it through chat.message."""
        if session in self.held:
            message = {**plugin_call(runtime, "chat.message")["output"]["message"], "id": new_id("msg"),
                       "sessionID": session}
            self.call_hook("chat.message", input={"sessionID": session},
                           output={"message": message, "parts": self.held.pop(session)})
        message_id = new_id("msg")
        message = {"info": {"id": message_id, "sessionID": session, "role": "assistant"},
                   "parts": [{"type": "text", "text": text}]}
        done = self.call_hook("experimental.text.complete", input={"sessionID": session, "messageID": message_id,
                                                                   "partID": new_id("prt")},
                              output={"text": text}, message=message)
        holds = [c["args"] for c in done["calls"]
                 if c["name"] == "session.prompt" and c["args"]["path"]["id"] == session]
        if not holds:
            return ALLOW
        self.held[session] = holds[-1]["body"]["parts"]
        return Verdict("block", "\n".join(p["text"] for p in self.held[session]))

    def report(self, move: Report) -> Verdict:
        agent = self.agents[move.by]
        verdict = self.final_text(agent.id, move.text)
        if not verdict.refuses:  # the child is done: the parent's task call returns its result
            dispatch = agent.dispatch
            shape = plugin_call(runtime, "tool.execute.after", "task")["output"]
            self.call_hook("tool.execute.after", "task", {
                "sessionID": self.root, "callID": agent.use_id,
                "args": {"description": dispatch.description, "prompt": dispatch.prompt, "subagent_type": AGENT}}, {
                "title": dispatch.description,
                "output": f'<task id="{agent.id}" state="completed">\n'
                          f"<task_result>\n{move.text}\n</task_result>\n</task>",
                "metadata": {**shape["metadata"], "parentSessionId": self.root, "sessionId": agent.id}})
        return verdict

    def stop(self, move: Stop) -> Verdict:
        return self.final_text(self.root, move.message)

    def compact(self, move: Compact) -> Verdict:
        done = self.call_hook("experimental.session.compacting", input={"sessionID": self.root},
                              output={"context": []})
        if done["threw"]:
            return Verdict("block", done["threw"])
        self.event("session.compacted", sessionID=self.root)  # OpenCode announces the summary it made
        return Verdict("context", "\n".join(done["output"]["context"])) if done["output"]["context"] else ALLOW

    def interrupt(self, move: Interrupt) -> Verdict:
        # the command starts; the user's abort has no hook
        before = self.call_hook("tool.execute.before", "bash", {"sessionID": self.root, "callID": new_id("call")},
                                {"args": {"command": move.command, "description": "wait"}})
        return Verdict("block", before["threw"]) if before["threw"] else ALLOW

    def end(self, move: End) -> Verdict:
        self.plugin("dispose", None)  # OpenCode disposes its plugins when the instance goes away
        return ALLOW

    def close(self) -> None:
        if self.node.poll() is None and self.node.stdin:
            self.node.stdin.close()  # the host disposes the plugin at the end of its input
        self.node.wait(timeout=30)


def new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:24]}"


# -- real tier ----------------------------------------------------------------------------------------

class Server:
    """`opencode serve` in the project, and its HTTP API."""

    def __init__(self, work: Path, home: Path) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.process = subprocess.Popen(
            [binary("opencode"), "serve", "--port", str(self.port), "--print-logs", "--log-level", "INFO"], cwd=work,
            env=env(home), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while True:
            try:
                self.api("GET", "/session", timeout=5)
                return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(f"opencode serve did not come up: {self.stop().stderr[-3000:]}") from None
                time.sleep(0.3)

    def api(self, method: str, path: str, body: Any = None, timeout: float = 180) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", data=data, method=method,
                                         headers={"content-type": "application/json"})
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            raw = answer.read()
        return json.loads(raw) if raw.strip() else None

    def stop(self) -> Run:
        if self.process.poll() is None:
            self.process.terminate()
        try:
            out, err = self.process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            out, err = self.process.communicate()
        return Run(self.process.returncode, out, err)


def approve_what_the_plugin_lets_through(server: Server, stop: threading.Event, grace: float = 2.0) -> None:
    """The user at the permission dialog: a request still open `grace` seconds after it was asked
    (the plugin answers its refusals at once) is approved once."""
    seen: dict[str, float] = {}
    while not stop.wait(0.2):
        try:
            pending = server.api("GET", "/permission", timeout=5) or []
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            continue
        for request in pending:
            first = seen.setdefault(request["id"], time.monotonic())
            if time.monotonic() - first > grace:
                server.api("POST", f"/permission/{request['id']}/reply", {"reply": "once"}, timeout=10)


def play(session: Session, root: Path, version: str | None = None) -> RealPlay:
    """The session on the pinned binary (one version of OpenCode 1 is pinned)."""
    work, home = new_project(root)
    prepare(session, work)
    hookgate("install", "opencode", "--project", str(work), cwd=work)
    model = ScenarioModel().start()
    configure(work, home, model)
    if session.asks:  # OpenCode asks before every command
        config = json.loads((work / "opencode.json").read_text())
        config["permission"]["bash"] = "ask"
        (work / "opencode.json").write_text(json.dumps(config, indent=2))

    def call(move: Move) -> list[Step]:
        if isinstance(move, Dispatch):
            return [Call("task", {"description": move.description, "subagent_type": AGENT,
                                  "prompt": f"SCENARIO:{marker(session, move.agent)} {move.prompt}"})]
        if isinstance(move, Interrupt):
            return [Call("bash", {"command": move.command, "description": "wait"})]
        assert isinstance(move, Tool)
        args = opencode_args(work, move.input)
        if move.tool == "Bash":
            args.setdefault("description", "run it")
        return [Call(TOOLS[move.tool], args)]

    played = RealPlay(session, f"{runtime}-{version}" if version else runtime, work, model)
    server = Server(work, home)
    stop_approving = threading.Event()
    try:
        if session.asks:
            threading.Thread(target=approve_what_the_plugin_lets_through, args=(server, stop_approving),
                             daemon=True).start()
        turn = [i for i, m in enumerate(session.moves) if not isinstance(m, (Compact, End))]
        lead = load(model, session, scripts(session, played.runtime, [session.moves[i] for i in turn], call))
        prompt = next((m.text for m in session.moves if isinstance(m, Prompt)), "go")
        ses = server.api("POST", "/session", {})["id"]
        played.ran(turn, ask(server, ses, f"{lead} {prompt}", work,
                             next((m for m in session.moves if isinstance(m, Interrupt)), None)))
        for index, move in enumerate(session.moves):
            if isinstance(move, Compact):  # the TUI's /compact
                before = summaries(model)
                with held(work, move):
                    done = post(server, f"/session/{ses}/summarize", {"providerID": "fake", "modelID": "fake-model"})
                    quiet(work)  # session.compacted is an event: OpenCode answers before the plugin is done
                played.ran([index], done, compactions=summaries(model) - before)
        for index, move in enumerate(session.moves):
            if isinstance(move, End):  # as `opencode run` ends: the instance goes, its plugins are disposed
                done = post(server, "/instance/dispose", {})
                quiet(work)
                played.ran([index], done)
    finally:
        stop_approving.set()
        model.stop()
        server.stop()
    return played


def ask(server: Server, ses: str, text: str, work: Path, interrupt: Interrupt | None) -> Run:
    """The user's prompt; with an interrupt, the user aborts once the command is running."""
    body = {"parts": [{"type": "text", "text": text}]}
    if interrupt is None:
        return post(server, f"/session/{ses}/message", body)
    server.api("POST", f"/session/{ses}/prompt_async", body)
    running(work, interrupt.command, lambda: server.process.poll() is None)
    aborted = post(server, f"/session/{ses}/abort", {})
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and busy(server, ses):
        time.sleep(0.2)
    return aborted


def busy(server: Server, ses: str) -> bool:
    return (server.api("GET", "/session/status") or {}).get(ses, {}).get("type") == "busy"


def quiet(work: Path, still: float = 1.5, bound: float = 30.0) -> None:
    """Wait until the user hooks have run nothing new for `still` seconds (at most `bound`)."""
    deadline, seen, since = time.monotonic() + bound, -1, time.monotonic()
    while time.monotonic() < deadline:
        count = len(evidence(work))
        if count != seen:
            seen, since = count, time.monotonic()
        elif time.monotonic() - since >= still:
            return
        time.sleep(0.1)


def summaries(model: ScenarioModel) -> int:
    """The summaries OpenCode asked the model for: one per compaction it carried out."""
    return sum(any(m.get("role") == "system" and "summarization" in str(m.get("content"))
                   for m in r.body.get("messages", [])) for r in model.seen())


def post(server: Server, path: str, body: Any) -> Run:
    try:
        return Run(0, json.dumps(server.api("POST", path, body)), "")
    except urllib.error.HTTPError as error:  # a refusal the plugin threw comes back as an error answer
        return Run(error.code, "", error.read().decode(errors="replace"))
