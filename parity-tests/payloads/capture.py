"""Capture the hook payloads of the pinned runtimes, for the payload tier and the dialects' tests.

    .venv/bin/python parity-tests/payloads/capture.py [claude] [codex] [opencode] [gemini]   (default: all)

Each runtime runs a few scripted turns against the fake model (tool calls, a failing command, a
subagent, a permission request, compaction, an interrupt) with a logging hook on every event; one
payload per event and tool is kept, machine paths replaced by /srv/capture/..., and written to
<runtime>_<version>.hooks.jsonl beside this file (the format of the reference captures here)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from drivers import codex as cx  # noqa: E402
from drivers import gemini as gm  # noqa: E402
from drivers.opencode import configure  # noqa: E402
from drivers.real import ScenarioModel  # noqa: E402
from harness.fakemodel import Call, Say  # noqa: E402
from harness.runtimes import base_env, binary, new_project  # noqa: E402

LOGGER = "import json, sys; open(sys.argv[1], 'a').write(json.dumps(json.load(sys.stdin)) + '\\n')"
CLAUDE_EVENTS = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PermissionRequest", "PostToolUse",
                 "PostToolUseFailure", "SubagentStart", "SubagentStop", "Stop", "PreCompact", "PostCompact",
                 "Notification", "SessionEnd")
CODEX_EVENTS = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PermissionRequest", "PostToolUse", "SubagentStart",
                "SubagentStop", "Stop", "PreCompact", "PostCompact", "SessionEnd", "Interrupt")
GEMINI_EVENTS = ("SessionStart", "BeforeAgent", "BeforeTool", "AfterTool", "AfterAgent", "PreCompress",
                 "Notification", "SessionEnd")
SLEEP = "python3 -c 'import time; time.sleep(60)'"


def logger(log: Path) -> str:
    return f"{sys.executable} -c {json.dumps(LOGGER)} {log}"


def claude(root: Path, fake: ScenarioModel) -> tuple[Path, str]:
    work, home = new_project(root)
    log = root / "hooks.jsonl"
    hooks = {e: [{"matcher": "*", "hooks": [{"type": "command", "command": logger(log)}]}] for e in CLAUDE_EVENTS}
    (work / ".claude").mkdir()
    (work / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))
    env = {**base_env(home), "CLAUDE_CONFIG_DIR": str(home / ".claude"), "ANTHROPIC_BASE_URL": fake.url,
           "ANTHROPIC_API_KEY": "sk-ant-fake-key", "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1",
           "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_ERROR_REPORTING": "1", "IS_SANDBOX": "1"}

    def run(prompt: str, *args: str, mode: str = "bypassPermissions") -> subprocess.Popen[str]:
        return subprocess.Popen([binary("claude"), "-p", prompt, "--output-format", "json", "--model",
                                 "claude-sonnet-4-5", "--permission-mode", mode, *args], cwd=work, env=env,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)

    sub = fake.script("cap_sub", Call("Bash", {"command": "echo sub", "description": "sub"}), Say("sub done"))
    main = fake.script(
        "cap_main",
        Call("Write", {"file_path": str(work / "hello.txt"), "content": "hello\n"}),
        Call("Bash", {"command": "echo hi", "description": "hi"}),
        Call("Bash", {"command": "ls missing-dir", "description": "fails"}),
        Call("Read", {"file_path": str(work / "hello.txt")}),
        Call("Agent", {"description": "sub", "prompt": f"{sub} go", "subagent_type": "general-purpose"}),
        Say("done"))
    run(f"{main} go").communicate(timeout=120)
    run("/compact keep it short", "--continue").communicate(timeout=120)
    perm = fake.script("cap_perm", Call("Bash", {"command": "echo x > perm.txt", "description": "p"}), Say("ok"))
    run(f"{perm} go", mode="default").communicate(timeout=120)
    interrupt(run(f"{fake.script('cap_int', Call('Bash', {'command': SLEEP, 'description': 's'}), Say('ok'))} go"),
              log)
    return root, "claude_2.1.332"


def codex(root: Path, fake: ScenarioModel) -> tuple[Path, str]:
    work, home = new_project(root)
    log = root / "hooks.jsonl"
    config = cx.write_config(home, fake, model=cx.PATCH_MODEL)
    hooks: dict = {}
    for event in CODEX_EVENTS:
        hooks.update(cx.one_hook(event, logger(log), matcher=None if event in ("Stop", "UserPromptSubmit") else "*"))
    cx.install_hooks(home, hooks)
    sub = fake.script("cap_sub", Call("exec_command", {"cmd": "echo sub"}), Say("sub done"))
    main = fake.script(
        "cap_main",
        Call("apply_patch", "*** Begin Patch\n*** Add File: hello.txt\n+hello\n*** End Patch\n"),
        Call("exec_command", {"cmd": "echo hi"}),
        Call("exec_command", {"cmd": "ls missing-dir"}),
        Call("view_image", {"path": "hello.txt"}),
        Call("spawn_agent", {"message": f"sub\n{sub} go"}, namespace="multi_agent_v1"),
        Call("wait_agent", {"targets": ["{{last_json.agent_id}}"]}, namespace="multi_agent_v1"),
        Say("done"))
    cx.run_codex(work, home, f"{main} go")
    # a permission request: an escalated command, routed to the automatic review
    config.write_text(config.read_text().replace('"never"', '"on-request"').replace('"danger-full-access"',
                                                                                   '"workspace-write"'))
    perm = fake.script("cap_perm", Call("exec_command", {"cmd": "echo x > perm.txt", "sandbox_permissions":
                                                         "require_escalated", "justification": "needs it"}), Say("ok"))
    cx.codex("exec", "--skip-git-repo-check", "--dangerously-bypass-hook-trust", "--approve-for-me", f"{perm} go",
             cwd=work, home=home)
    config.write_text("model_auto_compact_token_limit = 1\n" + config.read_text().replace(
        '"on-request"', '"never"').replace('"workspace-write"', '"danger-full-access"'))
    fake.after_compaction = "produced a summary"  # Codex starts the compacted conversation over
    compact = fake.script("cap_compact", Call("exec_command", {"cmd": "echo tidy"}), Say("ok"))
    cx.run_codex(work, home, f"{compact} go")
    config.write_text(config.read_text().replace("model_auto_compact_token_limit = 1\n", ""))
    sleep = fake.script("cap_int", Call("exec_command", {"cmd": SLEEP}), Say("ok"))
    interrupt(subprocess.Popen([binary("codex"), "exec", "--skip-git-repo-check",
                                "--dangerously-bypass-approvals-and-sandbox", "--dangerously-bypass-hook-trust",
                                f"{sleep} go"], cwd=work, env=cx.env(home), stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True), log)
    return root, "codex_0.171.0"


def gemini(root: Path, fake: ScenarioModel) -> tuple[Path, str]:
    work, home = new_project(root)
    log = root / "hooks.jsonl"
    gm.configure(work, home)
    hooks: dict = {}
    for event in GEMINI_EVENTS:
        hooks.update(gm.one_hook(event, logger(log)))
    gm.user_hooks(home, hooks)
    gm.add_agents(home, {"worker": gm.agent_file("worker")})
    sub = fake.script("cap_sub", Call("run_shell_command", {"command": "echo sub"}),
                      Call("complete_task", {"result": "sub report"}), Say("sub done"))
    main = fake.script(
        "cap_main",
        Call("write_file", {"file_path": "hello.txt", "content": "hello\n"}),
        Call("run_shell_command", {"command": "echo hi"}),
        Call("run_shell_command", {"command": "ls missing-dir"}),
        Call("read_file", {"file_path": "hello.txt"}),
        Call("replace", {"file_path": "hello.txt", "instruction": "say bye", "old_string": "hello",
                         "new_string": "bye"}),
        Call("invoke_agent", {"agent_name": "worker", "prompt": f"{sub} go"}),
        Say("done"))
    gm.run_gemini(work, home, fake, f"{main} go")
    return root, "gemini_0.61.0"


OPENCODE_LOGGER = """\
import { appendFileSync } from "node:fs"
const log = (line) => appendFileSync(LOG, JSON.stringify(line) + "\\n")
const hook = (kind) => async (input, output) => log({ kind, input, output })
const EVENTS = new Set(["session.created", "session.idle", "session.compacted", "permission.asked"])
export const Capture = async () => ({
  event: async ({ event }) => { if (EVENTS.has(event?.type)) log({ kind: "event", event }) },
  "tool.execute.before": hook("tool.execute.before"),
  "tool.execute.after": hook("tool.execute.after"),
  "chat.message": hook("chat.message"),
  "experimental.text.complete": hook("experimental.text.complete"),
  "experimental.session.compacting": hook("experimental.session.compacting"),
})
"""


def opencode(root: Path, fake: ScenarioModel) -> tuple[Path, str]:
    from drivers.opencode import Server

    work, home = new_project(root)
    log = root / "hooks.jsonl"
    plugins = work / ".opencode" / "plugin"
    plugins.mkdir(parents=True)
    (plugins / "capture.js").write_text(f"const LOG = {json.dumps(str(log))}\n" + OPENCODE_LOGGER)
    configure(work, home, fake)
    sub = fake.script("cap_sub", Call("bash", {"command": "echo sub", "description": "sub"}), Say("sub done"))
    main = fake.script(
        "cap_main",
        Call("write", {"filePath": str(work / "hello.txt"), "content": "hello\n"}),
        Call("bash", {"command": "echo hi", "description": "hi"}),
        Call("bash", {"command": "ls missing-dir", "description": "fails"}),
        Call("read", {"filePath": str(work / "hello.txt")}),
        Call("task", {"description": "sub", "prompt": f"{sub} go", "subagent_type": "general"}),
        Say("done"))
    server = Server(work, home)
    try:
        session = server.api("POST", "/session", {})["id"]
        server.api("POST", f"/session/{session}/message", {"parts": [{"type": "text", "text": f"{main} go"}]})
        server.api("POST", f"/session/{session}/summarize", {"providerID": "fake", "modelID": "fake-model"})
    finally:
        server.stop()
    config = json.loads((work / "opencode.json").read_text())
    config["permission"]["bash"] = "ask"  # read at start: a server of its own
    (work / "opencode.json").write_text(json.dumps(config))
    perm = fake.script("cap_perm", Call("bash", {"command": "echo x > perm.txt", "description": "p"}), Say("ok"))
    server = Server(work, home)
    try:
        session = server.api("POST", "/session", {})["id"]
        server.api("POST", f"/session/{session}/prompt_async", {"parts": [{"type": "text", "text": f"{perm} go"}]})
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not server.api("GET", "/permission"):
            time.sleep(0.2)
        for request in server.api("GET", "/permission"):
            server.api("POST", f"/permission/{request['id']}/reply", {"reply": "reject"})
    finally:
        server.stop()
    return root, "opencode_1.18.33"


def interrupt(process: subprocess.Popen[str], log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and "time.sleep" not in (log.read_text() if log.exists() else ""):
        time.sleep(0.2)
    time.sleep(2)
    os.killpg(process.pid, signal.SIGINT)
    process.communicate(timeout=60)


def keep(root: Path, name: str) -> None:
    seen, lines = set(), []
    for line in (root / "hooks.jsonl").read_text().splitlines():
        for real, placeholder in ((root / "work", "/srv/capture/project"), (root, "/srv/capture")):
            line = line.replace(str(real), placeholder)
            line = line.replace(str(real).replace("/", "-"), placeholder.replace("/", "-"))
        # the temp dir only where a path starts with it (Gemini CLI keeps a `.gemini/tmp/` of its own)
        line = line.replace(f'"{tempfile.gettempdir()}/', '"/srv/capture/tmp/')
        captured = json.loads(line)
        if "kind" in captured:  # OpenCode: a plugin hook's (input, output), or a bus event
            event = captured.get("event", {})
            props = event.get("properties", {})
            key = (captured["kind"], event.get("type"), (captured.get("input") or {}).get("tool"),
                   bool(props.get("info", {}).get("parentID")))
        else:
            key = (captured["hook_event_name"], captured.get("tool_name"), captured.get("source"),
                   "agent_id" in captured, captured.get("stop_hook_active"))
            captured = {"label": captured["hook_event_name"], "payload": captured}
        if key not in seen:
            seen.add(key)
            lines.append(json.dumps(captured))
    (HERE / f"{name}.hooks.jsonl").write_text("\n".join(lines) + "\n")
    print(f"{name}: {len(lines)} payloads")


if __name__ == "__main__":
    runtimes = {capture.__name__: capture for capture in (claude, codex, opencode, gemini)}
    for capture in (runtimes[name] for name in sys.argv[1:] or runtimes):
        with tempfile.TemporaryDirectory() as tmp, ScenarioModel() as fake:
            root, name = capture(Path(tmp) / capture.__name__, fake)
            keep(root, name)
            shutil.rmtree(root, ignore_errors=True)
