"""`hookgate demo`: a scripted pipeline session on an embedded default project.

Every step is a real hook call: the payload a runtime would send is piped into `hookgate hook
<runtime>` as a separate process, exactly as the runtime runs it, and the answer is shown."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SESSION = "demo-session"


@dataclass(frozen=True)
class Step:
    title: str
    payload: dict[str, Any]
    runtime: str = "claude"
    role: str | None = "keep"  # set before the step; "keep" leaves it, None clears it
    files: dict[str, str] = field(default_factory=dict)  # created before the step


def claude_steps(root: Path) -> list[Step]:
    def pre(tool: str, agent: tuple[str, str] | None = None, **tool_input: Any) -> dict[str, Any]:
        payload = {"hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": tool_input}
        if agent:
            payload.update(agent_id=agent[0], agent_type=agent[1])
        return payload

    worker = ("a7f3c2", "worker")
    return [
        Step("no pipeline role: an ordinary conversation writes freely", pre("Write", file_path=str(root / "src/player.gd"), content=""), role=None),
        Step("role build: the lead writes a note", pre("Write", file_path=str(root / "notes.txt"), content=""), role="build"),
        Step("role build: the lead writes game code itself", pre("Write", file_path=str(root / "src/player.gd"), content="")),
        Step("role build: the lead edits an E2E test", pre("Edit", file_path="e2e/test_play.gd", old_string="a", new_string="b")),
        Step("a worker subagent writes game code", pre("Write", worker, file_path=str(root / "src/player.gd"), content="")),
        Step("a worker subagent writes project memory", pre("Write", worker, file_path=str(root / "MEMORY.md"), content="")),
        Step("... by a path that names another place", pre("Write", worker, file_path="src/../memory/notes.md", content="")),
        Step("a worker subagent edits the plan", pre("Edit", worker, file_path="PLAN.md", old_string="a", new_string="b")),
        Step("role verify: only the verify report may be written", pre("Write", file_path=".hookgate/verify_report.json", content="{}"), role="verify"),
        Step("role verify: anything else is read-only", pre("Write", file_path="README.md", content=""), role="verify"),
        Step("a payload the runtime truncated", {"_raw": '{"hook_event_name": "PreToolUse", "tool_na'}),
    ]


def run(root: Path, steps: list[Step], out: Any) -> list[dict[str, Any]]:
    hookgate = Path(sys.executable).with_name("hookgate")
    command = [str(hookgate)] if hookgate.is_file() else [sys.executable, "-m", "hookgate"]
    results = []
    for number, step in enumerate(steps, 1):
        _prepare(root, step)
        raw = step.payload.get("_raw")
        payload = raw.encode() if raw else json.dumps({"session_id": SESSION, "cwd": str(root), **step.payload}).encode()
        hint = ["--event", step.payload.get("hook_event_name", "PreToolUse")]
        done = subprocess.run([*command, "hook", step.runtime, *hint], input=payload, cwd=root,
                              capture_output=True, timeout=60)
        verdict, reason = _read_answer(step.runtime, done)
        results.append({"step": step.title, "verdict": verdict, "reason": reason, "exit_code": done.returncode})
        who = f"{step.payload.get('agent_type')} subagent" if step.payload.get("agent_id") else "main agent"
        role = _role(root) or "-"
        out.write(f"{number:>2}. {step.title}\n")
        target = step.payload.get("tool_input", {}).get("file_path", "")
        target = str(Path(target).relative_to(root)) if target.startswith(str(root)) else target
        call = " ".join(filter(None, [step.payload.get("hook_event_name", "(unreadable payload)"),
                                      step.payload.get("tool_name"), target]))
        out.write(f"    {step.runtime}: {call}  [{who}, role {role}]  ->  {verdict.upper()}\n")
        if reason:
            out.write(f"    reason: {reason}\n")
    return results


def _prepare(root: Path, step: Step) -> None:
    role_file = root / ".hookgate" / "current_role"
    if step.role is None:
        role_file.unlink(missing_ok=True)
    elif step.role != "keep":
        role_file.write_text(step.role + "\n")
    for name, text in step.files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def _role(root: Path) -> str | None:
    path = root / ".hookgate" / "current_role"
    return path.read_text().strip() if path.exists() else None


def _read_answer(runtime: str, done: subprocess.CompletedProcess[bytes]) -> tuple[str, str]:
    if done.returncode == 2:
        return "block", done.stderr.decode().strip()
    if not done.stdout.strip():
        return "allow", ""
    answer = json.loads(done.stdout)
    specific = answer.get("hookSpecificOutput", {})
    if specific.get("permissionDecision") == "deny" or answer.get("decision") == "block":
        return "block", specific.get("permissionDecisionReason") or answer.get("reason", "")
    if specific.get("additionalContext"):
        return "context", specific["additionalContext"]
    return "allow", ""


def main(args: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="hookgate demo", description=__doc__)
    parser.add_argument("--keep", type=Path, metavar="DIR", help="run in DIR and keep it (default: a temporary dir)")
    ns = parser.parse_args(args[1:])
    with tempfile.TemporaryDirectory(prefix="hookgate-demo-") as tmp:
        root = (ns.keep or Path(tmp)).resolve()
        (root / ".hookgate").mkdir(parents=True, exist_ok=True)
        out = sys.stdout
        out.write(f"hookgate demo: a scripted GodotMaker-style session in {root}\n\n")
        results = run(root, claude_steps(root), out)
        metrics = root / ".hookgate" / "sessions" / SESSION / "metrics.jsonl"
        records = metrics.read_text().splitlines() if metrics.exists() else []
        blocks = sum(r["verdict"] == "block" for r in results)
        out.write(f"\n{len(results)} hook calls, {blocks} blocked; {len(records)} metrics records in "
                  f".hookgate/sessions/{SESSION}/metrics.jsonl\n")
    return 0
