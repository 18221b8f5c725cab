"""`hookgate replay SESSION... [--config FILE | --project DIR] [--format text|json]`: decide the
recorded events of sessions again under the current policy, a config file, or another project's
policy files, and print the calls whose verdict changed (hookgate.replay.run). SESSION is a
session id of this project, or the path of a session's folder or its decisions.jsonl."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import msgspec

from hookgate.cli.metrics import _project
from hookgate.replay.run import replay, text


def main(args: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="hookgate replay", description="re-decide recorded sessions under a policy")
    parser.add_argument("sessions", nargs="+", metavar="SESSION", help="session id, or a session folder / decisions.jsonl")
    policy = parser.add_mutually_exclusive_group()
    policy.add_argument("--config", type=Path, help="decide under this config.toml instead of the project's")
    policy.add_argument("--project", type=Path, help="decide under this project's policy files (.hookgate/)")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    ns = parser.parse_args(args[1:])
    project = _project(None)
    root = project.root
    loaded = []
    for name in ns.sessions:
        path = Path(name)
        if path.exists():  # a session log by path: its project is where its decisions were made
            log = path / "decisions.jsonl" if path.is_dir() else path
            records = [msgspec.json.decode(line) for line in log.read_bytes().splitlines() if line.strip()]
            recorded = next((r.get("root") for r in records if r.get("event") == "decision" and r.get("root")), None)
            if recorded and Path(recorded).is_dir():
                root = Path(recorded)
            loaded.append((log.parent.name, records))
            continue
        store = project.session(name)
        if not store.decisions_path.is_file():
            print(f"hookgate replay: no session {name!r} under {project.state_dir / 'sessions'}", file=sys.stderr)
            return 1
        loaded.append((name, store.decisions()))
    for path in (ns.config, ns.project):
        if path is not None and not path.exists():
            print(f"hookgate replay: {path} does not exist", file=sys.stderr)
            return 1
    result = replay(loaded, root, config=ns.config, policy_project=ns.project.resolve() if ns.project else None)
    if ns.format == "json":
        print(json.dumps(result.as_dict(), indent=2, ensure_ascii=False))
    else:
        sys.stdout.write(text(result))
    return 0
