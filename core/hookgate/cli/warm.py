"""`hookgate warm start|stop|status [--project DIR]`: the project's warm core.

A hook call starts the core by itself when none runs (HOOKGATE_WARM=off: never), and the core
leaves after HOOKGATE_WARM_IDLE seconds without a call (600 by default); these commands are for
starting it ahead of a session, stopping it, and seeing whether it runs. `serve` is what a start
runs in the background.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from hookgate import client

START_WAIT = 30.0  # the core imports and primes hookgate before it listens


def main(args: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="hookgate warm", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--project", type=Path, default=None, help="project directory (default: found from cwd)")
    sub = parser.add_subparsers(dest="action", required=True)
    sub.add_parser("start", help="start the project's core if none runs, and wait until it answers")
    sub.add_parser("stop", help="stop the project's core")
    sub.add_parser("status", help="say whether a core runs, since when, and how many calls it served")
    serve = sub.add_parser("serve", help="run a core in the foreground (what start runs)")
    serve.add_argument("--socket", required=True)
    serve.add_argument("--idle", type=float, default=None, help="seconds without a call before it leaves")
    ns = parser.parse_args(args[1:])
    root = str(ns.project.resolve()) if ns.project else client.project_root()
    if ns.action == "serve":
        from hookgate.warm.server import serve as run

        return run(ns.socket, root, ns.idle)
    if not client.ensure_runtime_dir():
        print(f"hookgate: {client.runtime_dir()} is not a private directory of this user; no warm core")
        return 1
    path = client.locate(root)
    if path is None:
        print(f"hookgate: no room for a socket under {client.runtime_dir()} (AF_UNIX paths hold 107 bytes)")
        return 1
    if ns.action == "status":
        return _status(root, path)
    if ns.action == "stop":
        return _stop(root, path)
    return _start(root, path)


def _ask(path: str, command: str) -> str | None:
    answer = client.exchange(path, command, "", b"")
    return answer[0].decode() if isinstance(answer, tuple) else None


def _status(root: str, path: str) -> int:
    status = _ask(path, "!status")
    print(f"warm core for {root}: " + (f"running ({status})" if status else "not running") + f"\nsocket: {path}")
    return 0 if status else 3


def _start(root: str, path: str) -> int:
    status = _ask(path, "!status")
    if status is None:
        client.start(root, force=True)
        deadline = time.monotonic() + START_WAIT
        while status is None and time.monotonic() < deadline:
            time.sleep(0.05)
            status = _ask(path, "!status")
    if status is None:
        print(f"hookgate: the warm core for {root} did not come up within {START_WAIT:g}s; hook calls stay in-process")
        return 1
    print(f"warm core for {root}: running ({status})\nsocket: {path}")
    return 0


def _stop(root: str, path: str) -> int:
    print(f"warm core for {root}: " + ("stopped" if client.stop(path) else "not running"))
    return 0
