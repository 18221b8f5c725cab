"""Driving the pipeline gates through the Claude Code stdin protocol, in process: each call is
`hookgate.hookcall.handle(hookgate_claude.dialect, payload_bytes, env)`, exactly what
`hookgate hook claude` does with its stdin, and the answer is read back as Claude would read it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hookgate.hookcall import handle
from hookgate_claude import dialect


@dataclass
class Answer:
    kind: str  # "allow" | "block" | "context"
    reason: str = ""
    context: str = ""
    raw: dict[str, Any] | None = None

    @property
    def blocked(self) -> bool:
        return self.kind == "block"


def read_answer(stdout: bytes) -> Answer:
    if not stdout:
        return Answer("allow")
    out = json.loads(stdout)
    specific = out.get("hookSpecificOutput", {})
    context = specific.get("additionalContext", "")
    if specific.get("permissionDecision") == "deny":
        return Answer("block", specific.get("permissionDecisionReason", ""), context, out)
    if out.get("decision") == "block":
        return Answer("block", out.get("reason", ""), context, out)
    return Answer("context" if context else "allow", "", context, out)


class Pipeline:
    """One project and one session of one runtime (Claude Code)."""

    def __init__(self, root: Path, session_id: str = "s1") -> None:
        self.root = root
        self.session_id = session_id
        (root / ".hookgate").mkdir(parents=True, exist_ok=True)

    # -- project files -----------------------------------------------------------------------
    def role(self, role: str | None) -> "Pipeline":
        path = self.root / ".hookgate" / "current_role"
        if role is None:
            path.unlink(missing_ok=True)
        else:
            path.write_text(role + "\n")
        return self

    def write(self, relative: str, text: str = "x\n") -> Path:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    def ready_to_dispatch(self) -> "Pipeline":
        """What build and fixgap need before dispatching: gdd and evaluate completed, their outputs."""
        for name in ("project.godot", "GDD.md", "PLAN.md", "STRUCTURE.md", ".hookgate/evaluation.json"):
            self.write(name)
        self.completed("gdd", "evaluate")
        return self

    def completed(self, *roles: str) -> None:
        with open(self.root / ".hookgate" / "stage.jsonl", "a") as f:
            for role in roles:
                f.write(json.dumps({"role": role, "ts": "2026-01-01T00:00:00Z"}) + "\n")

    # -- hook calls ----------------------------------------------------------------------------
    def call(self, payload: dict[str, Any], env: dict[str, str] | None = None) -> Answer:
        full = {"session_id": self.session_id, "cwd": str(self.root), **payload}
        answer = handle(dialect, json.dumps(full).encode(), {"HOOKGATE_PROJECT_DIR": str(self.root), **(env or {})})
        assert answer.exit_code == 0, answer.stderr
        self.last_stderr = answer.stderr
        return read_answer(answer.stdout)

    def tool(self, tool: str, agent: tuple[str, str | None] | None = None, **tool_input: Any) -> Answer:
        payload: dict[str, Any] = {"hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": tool_input}
        if agent:
            payload["agent_id"] = agent[0]
            if agent[1] is not None:
                payload["agent_type"] = agent[1]
        return self.call(payload)

    def bash(self, command: str, agent: tuple[str, str | None] | None = None) -> Answer:
        return self.tool("Bash", agent, command=command)

    def dispatch(self, description: str, subagent_type: str = "general-purpose", prompt: str = "do it") -> Answer:
        return self.tool("Agent", description=description, prompt=prompt, subagent_type=subagent_type)

    def start(self, agent_id: str, agent_type: str = "general-purpose") -> Answer:
        return self.call({"hook_event_name": "SubagentStart", "agent_id": agent_id, "agent_type": agent_type})

    def subagent_stop(self, agent_id: str, message: str, agent_type: str = "general-purpose") -> Answer:
        return self.call({"hook_event_name": "SubagentStop", "agent_id": agent_id, "agent_type": agent_type,
                          "stop_hook_active": False, "last_assistant_message": message})

    def run_subagent(self, agent_id: str, description: str, subagent_type: str = "general-purpose",
                     report: str | None = None) -> Answer:
        """Dispatch, start and (with a report) stop one subagent, as Claude Code orders the calls."""
        assert not self.dispatch(description, subagent_type).blocked
        self.start(agent_id, subagent_type)
        return self.subagent_stop(agent_id, report, subagent_type) if report is not None else Answer("allow")

    def stop(self) -> Answer:
        return self.call({"hook_event_name": "Stop", "stop_hook_active": False, "last_assistant_message": "done"})

    def session_start(self, source: str = "startup") -> Answer:
        return self.call({"hook_event_name": "SessionStart", "source": source})

    # -- what was recorded ----------------------------------------------------------------------
    @property
    def session_dir(self) -> Path:
        return self.root / ".hookgate" / "sessions" / self.session_id

    def metrics(self, event: str | None = None) -> list[dict[str, Any]]:
        path = self.session_dir / "metrics.jsonl"
        records = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
        return [r for r in records if event is None or r["event"] == event]

    def state(self) -> dict[str, Any]:
        path = self.session_dir / "state.json"
        return json.loads(path.read_text()) if path.exists() else {}
