"""`hookgate explain [SESSION] [--last-block | --tool-use-id ID] [--format text|json] [--project DIR]`:
why one decided call of a session went as it did (hookgate.explain). SESSION defaults to the most
recently active session; the call to the last refusal (or, with neither flag, the last call)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from hookgate.cli.metrics import _project, _sessions
from hookgate.explain import calls, explain, select, text
from hookgate.store.project import Project
from hookgate.store.session import SessionStore


def main(args: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="hookgate explain", description="why one decided call went as it did")
    parser.add_argument("session", nargs="?", help="session id (default: the most recently active)")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--last-block", action="store_true", help="the session's last refusal (the default)")
    which.add_argument("--tool-use-id", help="the call with this tool_use_id")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument("--project", type=Path, default=None, help="project directory (default: found from cwd)")
    ns = parser.parse_args(args[1:])
    project = _project(ns.project)
    store = _store(project, ns.session)
    if store is None:
        return 1
    records = store.metrics()
    found = calls(store.decisions())
    call = select(found, tool_use_id=ns.tool_use_id, last_block=ns.last_block)
    if call is None:
        wanted = f"call with tool_use_id {ns.tool_use_id!r}" if ns.tool_use_id else "refused call"
        print(f"hookgate explain: session {store.session_id!r} has no {wanted} "
              f"({len(found)} decided call{'' if len(found) == 1 else 's'} recorded)", file=sys.stderr)
        return 1
    explained = explain(call, project.root, records)
    if ns.format == "json":
        print(json.dumps(explained, indent=2, ensure_ascii=False))
    else:
        sys.stdout.write(text(explained))
    return 0


def _store(project: Project, session: str | None) -> SessionStore | None:
    sessions = _sessions(project)
    if session is None:
        if not sessions:
            print(f"hookgate explain: no session has metrics under {project.state_dir / 'sessions'}", file=sys.stderr)
            return None
        first: SessionStore = sessions[0]
        return first
    store = project.session(session)
    if not store.decisions_path.is_file():
        print(f"hookgate explain: no session {session!r}; known: {', '.join(s.session_id for s in sessions) or '-'}",
              file=sys.stderr)
        return None
    return store
