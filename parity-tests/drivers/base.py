"""What every runtime driver shares: the project a session runs in, the evidence of the user's
hooks, the canonical verdict read back from a hook answer, and the payload tier's host."""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from harness.runtimes import HOOKGATE, metrics
from scenarios import (EVIDENCE, HOLD_COMPACTION, USER_FILES, Compact, Dispatch, End, Interrupt, Move, Prompt, Report,
                       Session, Start, Stop, Tool)

# -- the project -----------------------------------------------------------------------------------


def prepare(session: Session, work: Path) -> None:
    """The session's project: the user's own rules, its files, completed stages and active role."""
    for path, content in {**USER_FILES, **session.files}.items():
        target = work / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content)
    for stage in session.stages:
        hookgate_cli("stage", "complete", stage, cwd=work)
    if session.role:
        hookgate_cli("role", "set", session.role, cwd=work)


def hookgate_cli(*args: str, cwd: Path) -> None:
    subprocess.run([str(HOOKGATE), *args], cwd=cwd, capture_output=True, text=True, check=True)


def evidence(work: Path) -> list[dict[str, Any]]:
    """The user hooks that ran: hook, event, agent_id and subject (what the run was about)."""
    path = work / EVIDENCE
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []
    return [{"hook": line["hook"], "event": line["payload"].get("hook_event_name"),
             "agent_id": line["payload"].get("agent_id"), "subject": subject(line["payload"])} for line in lines]


def subject(payload: dict[str, Any]) -> str:
    """What a hook run was about: the tool call, the prompt, the report, the agent type..."""
    tool_input = payload.get("tool_input")
    if isinstance(tool_input, dict):
        return f"{payload.get('tool_name', '')} {json.dumps(tool_input, sort_keys=True)}"
    for key in ("prompt", "last_assistant_message", "agent_type", "trigger", "source", "reason"):
        if isinstance(payload.get(key), str) and payload[key]:
            return payload[key]
    return ""


def held(work: Path, move: Move) -> "HeldCompaction":
    return HeldCompaction(work / HOLD_COMPACTION, isinstance(move, Compact) and move.held)


class HeldCompaction:
    """The flag the scenarios' pre_compact policy reads, present around a held Compact move."""

    def __init__(self, flag: Path, on: bool) -> None:
        self.flag, self.on = flag, on

    def __enter__(self) -> None:
        if self.on:
            self.flag.touch()

    def __exit__(self, *exc: Any) -> None:
        self.flag.unlink(missing_ok=True)


# -- a hook answer, read back as a canonical verdict -------------------------------------------------

@dataclass(frozen=True)
class Verdict:
    kind: str  # allow | block | context | modify
    text: str = ""  # the reason or context, as the runtime passes it on
    updated_input: dict[str, Any] | None = None
    decided: bool = True  # False: a permission request left to the runtime's own approval

    @property
    def refuses(self) -> bool:
        return self.kind == "block"


ALLOW = Verdict("allow")
UNDECIDED = Verdict("allow", decided=False)


# -- payload tier -----------------------------------------------------------------------------------

@dataclass
class Agent:
    """A dispatched subagent as the host tracks it."""

    id: str
    dispatch: Dispatch
    stops: int = 0  # reports handed in so far
    use_id: str = ""  # the dispatching tool call


@dataclass
class Played:
    """One move played at the hook edge: the verdict read back, and what it left behind."""

    move: Move
    verdict: Verdict
    records: list[dict[str, Any]]
    evidence: list[dict[str, Any]]
    files: dict[str, str | None]


class PayloadHost:
    """A runtime simulated at its hook edge: each move becomes what that runtime hands its hooks
    for it (shapes from its captured payloads), answered by hookgate's adapter for the runtime,
    and each allowed tool call is carried out as the runtime would (the file written, the command
    run), so later moves meet the state earlier ones left."""

    runtime = ""

    def __init__(self, session: Session, work: Path, home: Path) -> None:
        self.session, self.work, self.home = session, work, home
        self.session_id = str(uuid.uuid4())
        self.agents: dict[str, Agent] = {}
        self.stops = 0  # consecutive held stops of the lead

    # the moves; each returns the decisive verdict
    def start(self, move: Start) -> Verdict: raise NotImplementedError
    def prompt(self, move: Prompt) -> Verdict: raise NotImplementedError
    def tool(self, move: Tool) -> Verdict: raise NotImplementedError
    def dispatch(self, move: Dispatch) -> Verdict: raise NotImplementedError
    def report(self, move: Report) -> Verdict: raise NotImplementedError
    def stop(self, move: Stop) -> Verdict: raise NotImplementedError
    def compact(self, move: Compact) -> Verdict: raise NotImplementedError
    def interrupt(self, move: Interrupt) -> Verdict: raise NotImplementedError
    def end(self, move: End) -> Verdict: raise NotImplementedError

    def play(self) -> list[Played]:
        played = []
        try:
            for move in self.session.moves:
                seen_records, seen_evidence = len(metrics(self.work)), len(evidence(self.work))
                with held(self.work, move):
                    verdict = getattr(self, type(move).__name__.lower())(move)
                files = {p: read_file(self.work / p) for p in move.expected(self.runtime).files}
                played.append(Played(move, verdict, metrics(self.work)[seen_records:],
                                     evidence(self.work)[seen_evidence:], files))
        finally:
            self.close()
        return played

    def close(self) -> None:
        """The session is over (what the runtime holds for it can go)."""

    # carrying out a tool call
    def bash(self, command: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["bash", "-c", command], cwd=self.work, capture_output=True, text=True, timeout=30)

    def write(self, path: str, content: str) -> None:
        target = self.work / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content)


class StdinHost(PayloadHost):
    """A runtime whose hooks are commands: each hook call is `hookgate hook <runtime>` in a real
    process, the payload on its stdin."""

    def payload(self, event: str, agent: Agent | None = None, **fields: Any) -> dict[str, Any]:
        """The runtime's payload of one `event` hook, in its captured shape, with these fields."""
        raise NotImplementedError

    def start(self, move: Start) -> Verdict:
        return self.hook(self.payload("SessionStart", source="startup"))

    def prompt(self, move: Prompt) -> Verdict:
        return self.hook(self.payload("UserPromptSubmit", prompt=move.text))

    def hook_env(self) -> dict[str, str]:
        """The environment of a hook call: the test's, with the user's global hooks.json the (empty)
        one of this home, and the project's warm core leaving once the session is played (not
        lingering its default ten minutes while the rest of the suite runs)."""
        env = {k: v for k, v in os.environ.items() if k not in ("HOOKGATE_PROJECT_DIR", "CLAUDE_PROJECT_DIR")}
        return {"HOOKGATE_WARM_IDLE": "10", **env, "HOME": str(self.home)}

    def hook(self, payload: dict[str, Any]) -> Verdict:
        """One hook call, as the runtime makes it: a process in the project, the payload on stdin."""
        answer = subprocess.run([str(HOOKGATE), "hook", self.runtime, "--event", payload["hook_event_name"]],
                                input=json.dumps(payload).encode(), cwd=self.work, env=self.hook_env(),
                                capture_output=True, timeout=120)
        assert answer.returncode in (0, 2), (payload["hook_event_name"], answer)
        return self.read(payload["hook_event_name"], answer)

    def read(self, event: str, answer: subprocess.CompletedProcess[bytes]) -> Verdict:
        """The canonical verdict of the answer to one `event` hook. Claude Code's and Codex's
        protocols share this reading: exit 2 refuses with stderr as the reason; else the JSON on
        stdout: `continue: false` halts (Codex's refusal of a compaction), hookSpecificOutput's
        permissionDecision deny / allow + updatedInput (a tool call), decision.behavior (a
        permission request, which without one is left to the runtime), top-level decision: block,
        additionalContext."""
        if answer.returncode == 2:
            return Verdict("block", answer.stderr.decode())
        out = json.loads(answer.stdout) if answer.stdout.strip() else {}
        specific = out.get("hookSpecificOutput", {})
        asked = specific.get("decision")
        if out.get("continue") is False:
            return Verdict("block", out.get("stopReason", ""))
        if specific.get("permissionDecision") == "deny":
            return Verdict("block", specific.get("permissionDecisionReason", ""))
        if specific.get("permissionDecision") == "allow" and "updatedInput" in specific:
            return Verdict("modify", updated_input=specific["updatedInput"])
        if isinstance(asked, dict):
            if asked.get("behavior") == "deny":
                return Verdict("block", asked.get("message", ""))
            return Verdict("modify", updated_input=asked["updatedInput"]) if "updatedInput" in asked else ALLOW
        if event == "PermissionRequest":
            return UNDECIDED
        if out.get("decision") == "block":
            return Verdict("block", out.get("reason", ""))
        if specific.get("additionalContext"):
            return Verdict("context", specific["additionalContext"])
        return Verdict("allow", out.get("systemMessage", ""))


def read_file(path: Path) -> str | None:
    return path.read_text() if path.is_file() else None


def check_never_run(lines: Iterable[dict[str, Any]], hooks: list[str]) -> None:
    """Hooks on events no runtime emits, over the evidence of every session played: accepted (the
    policy that registers them loaded, for its other hooks ran) and never run."""
    lines = list(lines)
    assert any(e["hook"].startswith("python:") for e in lines), "the policy never ran at all"
    assert any(e["hook"].startswith("command:") for e in lines), "the command hooks never ran at all"
    ran = sorted({e["hook"] for e in lines} & set(hooks))
    assert not ran, f"hooks on events no runtime emits ran: {ran}"
