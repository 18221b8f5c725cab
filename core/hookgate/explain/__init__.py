"""Why one decided call went as it did, from the session log: the event as hookgate understood
it, every gate that ran and its verdict, for a refusal the rule that decided it (a config or preset
entry by file and key, a hooks.json handler, a Python hook by id), and what would have been
allowed instead.

A call is its `decision` record in the session's decisions.jsonl (hookgate.recording), which
holds the metrics records its decision noted. The rule is found against the
policy files as they are now; `policy_changed` says when they are newer than the decision.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from .rules import Rule, find_rule

REFUSALS = ("block", "retry", "ask")


@dataclass
class Call:
    decision: dict[str, Any]
    records: list[dict[str, Any]]  # the metrics records its decision noted, in order
    index: int  # the decision record's position among the session's decision records

    @property
    def refused(self) -> bool:
        return self.decision.get("decision") in REFUSALS

    @property
    def would_block(self) -> bool:
        return bool(self.decision.get("would_block"))


def calls(decisions: Iterable[dict[str, Any]]) -> list[Call]:
    """Every decided call of a session's decisions.jsonl, in order."""
    found: list[Call] = []
    for record in decisions:
        if record.get("event") == "decision":
            found.append(Call(decision=record, records=list(record.get("records") or []), index=len(found)))
    return found


def select(found: list[Call], *, tool_use_id: str | None = None, last_block: bool = False) -> Call | None:
    """The call to explain: the one with this tool_use_id (its last decision), else the last
    refusal (or would-be refusal in monitor mode), else, with neither asked for, the last call."""
    if tool_use_id is not None:
        return next((c for c in reversed(found) if c.decision.get("tool_use_id") == tool_use_id), None)
    refusals = [c for c in found if c.refused or c.would_block]
    if refusals:
        return refusals[-1]
    return None if last_block else (found[-1] if found else None)


def explain(call: Call, root: Path, session_records: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The explanation of one call, as data (text() renders it)."""
    decision = call.decision
    event = decision.get("call", {})
    agent_id = event.get("agent_id")
    role_of_agent = _subagent_role(session_records or [], agent_id)
    gates = decision.get("gates", [])
    deciding = _deciding_gate(decision)
    rule: Rule | None = None
    if deciding:
        rule = find_rule(deciding, call, root, role_of_agent)
    return {
        "session_id": decision.get("session_id"),
        "ts": decision.get("ts"),
        "event": {
            "name": decision.get("hook_event") or event.get("hook_event_name"),
            "runtime": decision.get("runtime") or event.get("runtime"),
            "agent": _agent(event, role_of_agent),
            "tool": decision.get("tool"),
            "tool_use_id": decision.get("tool_use_id"),
            "input": event.get("tool_input"),
            "writes": _writes(call, event, root),
            "put_back": [{"path": r["path"], "change": r.get("change"), "displaced": r.get("displaced")}
                         for r in call.records if r.get("event") == "write_reverted"],
            "role": decision.get("role"),
            "redacted": event.get("redacted", []),
            "cut": event.get("cut", []),
        },
        "verdict": {"kind": decision.get("decision"), "reason": decision.get("reason")},
        "gates": gates,
        "monitor": {"would_block": decision.get("would_block", []),
                    "records": [r for r in call.records if r.get("event") in ("would_block", "would_modify")]},
        "forced": decision.get("forced", []),
        "failed": decision.get("failed", []),
        "rule": None if rule is None else rule.as_dict(),
        "instead": [] if rule is None else rule.instead,
        "policy_changed": _policy_changed(root, decision.get("ts")),
    }


def _deciding_gate(decision: dict[str, Any]) -> str | None:
    for gid in [*decision.get("blocked_by", []), *decision.get("would_block", []), *decision.get("forced", [])]:
        return str(gid)
    return next((str(g["id"]) for g in decision.get("gates", []) if g.get("verdict") in REFUSALS), None)


def _agent(event: dict[str, Any], role: str | None) -> dict[str, Any]:
    agent_id = event.get("agent_id")
    if not agent_id:
        return {"id": None, "type": None, "identity": "main", "how": "the main agent (the event names no subagent)"}
    identity = event.get("identity", "given")
    how = ("given by the runtime in the hook payload" if identity == "given"
           else "inferred by hookgate (OpenCode: the child session's parent, from the plugin's session map)")
    return {"id": agent_id, "type": event.get("agent_type"), "role": role, "identity": identity, "how": how}


def _subagent_role(records: list[dict[str, Any]], agent_id: str | None) -> str | None:
    if not agent_id:
        return None
    starts = [r for r in records if r.get("event") == "subagent_start" and r.get("agent_id") == agent_id]
    return starts[-1].get("role") if starts else None


def _writes(call: Call, event: dict[str, Any], root: Path) -> list[dict[str, Any]]:
    writes: list[dict[str, Any]] = []
    for record in call.records:
        if record.get("event") in ("file_write", "file_edit", "file_delete") and record.get("path"):
            writes.append({"path": _relative(record["path"], event.get("cwd"), root),
                           "how": record.get("via") or record.get("event")})
    return list({w["path"]: w for w in writes}.values())


def _relative(path: str, cwd: str | None, root: Path) -> str:
    absolute = os.path.normpath(os.path.join(cwd or str(root), path))
    try:
        return os.path.relpath(absolute, root) if absolute.startswith(str(root) + os.sep) else absolute
    except ValueError:
        return absolute


def _policy_changed(root: Path, ts: str | None) -> list[str]:
    """The policy files edited after the decision (the rule shown is today's reading of them)."""
    if not ts:
        return []
    import calendar
    import time

    try:
        when = calendar.timegm(time.strptime(ts[:19], "%Y-%m-%dT%H:%M:%S"))
    except ValueError:
        return []
    hookgate = root / ".hookgate"
    files = [hookgate / "config.toml", hookgate / "hooks.json", hookgate / "stage_schemas.json",
             *sorted((hookgate / "policies").glob("*.py"))]
    return [str(f.relative_to(root)) for f in files if f.is_file() and f.stat().st_mtime > when + 1]


def text(explained: dict[str, Any]) -> str:
    """The explanation for a person."""
    event, verdict = explained["event"], explained["verdict"]
    agent = event["agent"]
    lines = [f"{event['name']} on {event['runtime']}, session {explained['session_id']}, {explained['ts']}"]
    who = "main agent" if agent["id"] is None else f"subagent {agent['id']} (type {agent['type']}, role {agent.get('role')})"
    lines.append(f"  agent:   {who}: {agent['how']}")
    if event["tool"]:
        lines.append(f"  tool:    {event['tool']}" + (f" ({event['tool_use_id']})" if event["tool_use_id"] else ""))
    if event["input"]:
        for key, value in event["input"].items():
            shown = value if isinstance(value, str) else repr(value)
            lines.append(f"           {key}: {_short(shown)}")
    if event["writes"]:
        lines.append("  writes:  " + ", ".join(f"{w['path']} ({w['how']})" for w in event["writes"]))
    for back in event["put_back"]:  # a person's edit made while the call ran is put back too: where it went
        kept = f"; what the call left there is kept at {back['displaced']}" if back["displaced"] else ""
        lines.append(f"  put back: {back['path']} ({back['change']}){kept}")
    lines.append(f"  role:    {event['role'] or 'none active'}")
    if event["redacted"] or event["cut"]:
        lines.append(f"  stored without: secrets in {event['redacted'] or '-'}; cut to digest+tail: {event['cut'] or '-'}")
    lines.append(f"verdict: {verdict['kind']}" + (f": {verdict['reason']}" if verdict["reason"] else ""))
    lines.append("gates that ran:")
    for gate in explained["gates"] or [{"id": "(none)", "verdict": "-"}]:
        reason = f": {_short(gate['reason'])}" if gate.get("reason") else ""
        lines.append(f"  {gate['id']:<32} {gate['verdict']}{reason}")
    monitor = explained["monitor"]
    if monitor["would_block"]:
        lines.append(f"monitor mode: {', '.join(monitor['would_block'])} would have blocked; the call went ahead")
    if explained["forced"]:
        lines.append(f"released unverified (block limit spent): {', '.join(explained['forced'])}")
    rule = explained["rule"]
    if rule:
        lines.append(f"decided by: {rule['what']}")
        lines.append(f"  at:      {rule['file']}" + (f"  `{rule['key']}`" if rule.get("key") else ""))
        if rule.get("detail"):
            lines.append(f"  rule:    {rule['detail']}")
    if explained["instead"]:
        lines.append("allowed instead:")
        lines += [f"  - {item}" for item in explained["instead"]]
    if explained["policy_changed"]:
        lines.append(f"note: {', '.join(explained['policy_changed'])} changed after this decision; "
                     "the rule above is read from the files as they are now")
    return "\n".join(lines) + "\n"


def _short(text: str, limit: int = 160) -> str:
    text = text.replace("\n", "\\n")
    return text if len(text) <= limit else text[: limit - 3] + "..."
