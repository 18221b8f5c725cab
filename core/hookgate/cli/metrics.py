"""`hookgate metrics list | report [SESSION] [-o FILE] [--project DIR]`: a session's metrics.

`report` writes one self-contained HTML page (no scripts, no external files) of a session: its
subagents and their outcomes, what was blocked and why (each refusal as `hookgate explain` shows
it), what monitor mode would have blocked, what was released unverified, the
worker diagnostics, stage completions, file writes, and the whole timeline. The default session
is the most recently active one."""

from __future__ import annotations

import argparse
import html
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any, Iterable

from hookgate.config.load import project_at
from hookgate.store.project import Project
from hookgate.store.session import SessionStore, safe_session_dir_name


def main(args: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="hookgate metrics", description="a session's metrics")
    parser.add_argument("--project", type=Path, default=None, help="project directory (default: found from cwd)")
    sub = parser.add_subparsers(dest="action", required=True)
    sub.add_parser("list", help="the sessions with metrics, most recent first")
    report = sub.add_parser("report", help="write a readable HTML page of one session")
    report.add_argument("session", nargs="?", help="session id (default: the most recently active)")
    report.add_argument("-o", "--output", type=Path, help="where to write the page (default: .hookgate/reports/<session>.html)")
    ns = parser.parse_args(args[1:])
    project = _project(ns.project)
    sessions = _sessions(project)
    if ns.action == "list":
        for store in sessions:
            records = store.metrics()
            last = records[-1]["ts"] if records else "-"
            print(f"{store.session_id}\t{len(records)} records\tlast {last}")
        return 0
    if not sessions:
        print(f"hookgate metrics: no session has metrics under {project.state_dir}", file=sys.stderr)
        return 1
    wanted = None if ns.session is None else project.session(ns.session).metrics_path
    chosen = sessions[0] if wanted is None else next(
        (s for s in sessions if s.metrics_path == wanted and s.session_id in {ns.session, safe_session_dir_name(ns.session)}),
        None)
    if chosen is None:
        print(f"hookgate metrics: no session {ns.session!r}; known: {', '.join(s.session_id for s in sessions)}",
              file=sys.stderr)
        return 1
    records = chosen.metrics()
    session_id = next((r["session_id"] for r in records if r.get("session_id")), chosen.session_id)
    output = ns.output or project.dir / project.layout.reports / f"{safe_session_dir_name(session_id)}.html"
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(render(session_id, records, project.root, chosen.decisions()), encoding="utf-8")
    print(output)
    return 0


def _project(where: Path | None) -> Project:
    return project_at(where)


def _sessions(project: Project) -> list[SessionStore]:
    """Every session with metrics, most recently active first."""
    return project.sessions()


# -- the page -----------------------------------------------------------------------------------

_STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:72rem;padding:0 1rem;color:#1d1d1f}
h1{font-size:1.4rem}h2{font-size:1.1rem;margin-top:2rem;border-bottom:1px solid #ddd;padding-bottom:.2rem}
table{border-collapse:collapse;width:100%;margin:.5rem 0}th,td{text-align:left;padding:.3rem .5rem;
border-bottom:1px solid #eee;vertical-align:top}th{background:#f6f6f6}
td pre{margin:0;white-space:pre-wrap;font:12px/1.35 ui-monospace,monospace}
.cards{display:flex;flex-wrap:wrap;gap:.6rem}.card{border:1px solid #ddd;border-radius:6px;padding:.5rem .8rem}
.card b{display:block;font-size:1.3rem}.terminal{color:#17692d}.rejected_attempt{color:#b3261e}
.unverified{color:#9a5b00;font-weight:600}.muted{color:#777}
"""


def render(session_id: str, records: list[dict[str, Any]], root: Path, decisions: list[dict[str, Any]] = ()) -> str:  # type: ignore[assignment]
    events = Counter(r.get("event") for r in records)
    def by(name: str) -> list[dict[str, Any]]:
        return [r for r in records if r.get("event") == name]

    span = f"{records[0]['ts']} - {records[-1]['ts']}" if records else "no records"
    runtimes = sorted({str(r.get("runtime")) for r in records if r.get("runtime")})
    cards = [
        ("subagents", events["subagent_start"]), ("blocks", events["hook_block"]),
        ("released unverified", events["hook_force_allow"]), ("gate errors", events["gate_error"]),
        ("worker errors", events["worker_error"]), ("stage completions", events["stage_complete"]),
        ("file writes", events["file_write"] + events["file_edit"]),
        ("would have blocked (monitor)", events["would_block"]), ("records", len(records)),
    ]
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        f"<title>hookgate session {_e(session_id)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>hookgate session <code>{_e(session_id)}</code></h1>",
        f"<p class='muted'>{_e(str(root))} &middot; {_e(span)} &middot; runtime: {_e(', '.join(runtimes) or '-')}</p>",
        "<div class='cards'>" + "".join(f"<div class='card'><b>{n}</b>{_e(label)}</div>" for label, n in cards) + "</div>",
        "<h2>Subagents</h2>", _subagents(records),
        "<h2>Blocks</h2>", _table(by("hook_block"), ["ts", "gate", "hook_event", "agent_id", "reason"]),
        "<h2>Why each refusal</h2>", _explained(decisions, records, root),
        "<h2>Monitor mode: what would have been blocked</h2>", _monitor(by("would_block")),
        "<h2>Released unverified</h2>",
        _table(by("hook_force_allow"), ["ts", "gate", "hook_event", "agent_id", "count", "reason"]),
        "<h2>Worker diagnostics</h2>",
        _table(by("worker_error"), ["ts", "task_id", "attempt", "agent_id", "error_type", "summary", "exit_code",
                                    "retryable", "repeat_count", "error_fingerprint", "evidence_paths"]),
        "<h2>Stages</h2>", _table(by("stage_complete") + by("gate_check"), ["ts", "event", "role", "gate", "result", "issues"]),
        "<h2>Gate errors</h2>", _table(by("gate_error") + by("hook_error"), ["ts", "gate", "hook_event", "error", "fail_mode"]),
        "<h2>File writes</h2>",
        _table(by("file_write") + by("file_edit") + by("file_delete"), ["ts", "event", "path", "via", "agent_id"]),
        "<h2>Timeline</h2><details><summary>all records</summary>",
        _table(records, ["ts", "event", "hook_event", "agent_id", "detail"], detail=True), "</details>",
        "</body></html>",
    ]
    return "\n".join(parts)


def _explained(decisions: list[dict[str, Any]], records: list[dict[str, Any]], root: Path) -> str:
    """`hookgate explain` of every refused (or, in monitor mode, would-be refused) call."""
    from hookgate.explain import calls, explain, text

    shown = [call for call in calls(decisions) if call.refused or call.would_block]
    if not shown:
        return "<p class='muted'>none</p>"
    parts = []
    for call in shown:
        explained = explain(call, root, records)
        rule = explained["rule"] or {}
        parts.append(
            f"<section class='explain' data-tool-use-id='{_e(call.decision.get('tool_use_id') or '')}' "
            f"data-verdict='{_e(call.decision.get('decision'))}' data-gate='{_e(explained['gates'] and _gate(explained))}' "
            f"data-rule='{_e(rule.get('key', ''))}'><pre>{_e(text(explained))}</pre></section>")
    return "".join(parts)


def _gate(explained: dict[str, Any]) -> str:
    decision = [g["id"] for g in explained["gates"] if g["verdict"] in ("block", "retry", "ask")]
    first: str = (explained["monitor"]["would_block"] or decision or [""])[0]
    return first


def _monitor(would: list[dict[str, Any]]) -> str:
    if not would:
        return "<p class='muted'>none (no gate runs in monitor mode, or none would have refused)</p>"
    counts = Counter(str(r.get("gate")) for r in would)
    head = "".join(f"<div class='card monitor' data-gate='{_e(g)}'><b>{n}</b>{_e(g)}</div>" for g, n in counts.most_common())
    return f"<div class='cards'>{head}</div>" + _table(would, ["ts", "gate", "hook_event", "agent_id", "kind", "reason"])


def _subagents(records: list[dict[str, Any]]) -> str:
    agents: dict[str, dict[str, Any]] = {}
    for r in records:
        if r.get("event") == "subagent_start":
            agents.setdefault(r["agent_id"], {}).update(start=r["ts"], type=r.get("agent_type"), role=r.get("role"),
                                                        description=r.get("description"))
        elif r.get("event") == "subagent_stop":
            agent = agents.setdefault(r["agent_id"], {"type": r.get("agent_type"), "role": r.get("role")})
            agent.setdefault("stops", []).append(r.get("outcome_kind"))
            agent.update(status=r.get("status"), report_type=r.get("report_type"))
    if not agents:
        return "<p class='muted'>none</p>"
    rows = []
    for agent_id, a in agents.items():
        stops = " &rarr; ".join(f"<span class='{_e(k)}'>{_e(k)}</span>" for k in a.get("stops", [])) or "running"
        rows.append([_e(agent_id), _e(a.get("type")), _e(a.get("role")), _e(a.get("description")),
                     _e(a.get("report_type")), _e(a.get("status")), stops])
    head = ["agent", "type", "role", "dispatched as", "report", "status", "stops (outcome_kind)"]
    return _html_table(head, rows)


def _table(records: Iterable[dict[str, Any]], columns: list[str], detail: bool = False) -> str:
    records = sorted(records, key=lambda r: r.get("ts", ""))
    if not records:
        return "<p class='muted'>none</p>"
    rows = []
    for r in records:
        cells = []
        for column in columns:
            if column == "detail":
                rest = {k: v for k, v in r.items() if k not in ("ts", "event", "hook_event", "agent_id", "session_id",
                                                                "runtime", "agent_type")}
                cells.append(f"<pre>{_e(json.dumps(rest, ensure_ascii=False))}</pre>")
            else:
                value = r.get(column)
                text = value if isinstance(value, str) else ("" if value is None else json.dumps(value, ensure_ascii=False))
                cells.append(f"<pre>{_e(text)}</pre>" if column in ("reason", "summary", "issues", "error") else _e(text))
        rows.append(cells)
    return _html_table(columns, rows)


def _html_table(head: list[str], rows: list[list[str]]) -> str:
    header = "".join(f"<th>{_e(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{header}</tr></thead><tbody>{body}</tbody></table>"


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value))
