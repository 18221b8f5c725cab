"""`hookgate role set ROLE | clear | show [--project DIR]`: the active pipeline role."""

from __future__ import annotations

import argparse
from pathlib import Path

from hookgate.config.load import project_at


def main(args: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="hookgate role", description="the active pipeline role")
    parser.add_argument("--project", type=Path, default=None, help="project directory (default: found from cwd)")
    sub = parser.add_subparsers(dest="action", required=True)
    set_ = sub.add_parser("set", help="make ROLE the active role")
    set_.add_argument("role")
    sub.add_parser("clear", help="no pipeline role active: writes are only recorded")
    sub.add_parser("show", help="print the active role, or nothing")
    ns = parser.parse_args(args[1:])
    project = project_at(ns.project)
    if ns.action == "set":
        try:
            project.set_role(ns.role)
        except ValueError as exc:
            parser.error(str(exc))
        known = _known_roles(project)
        if known and ns.role not in known:
            print(f"warning: {ns.role!r} is not a role of the config ({', '.join(sorted(known))}); "
                  "its writes fall under the '*' rules")
        print(f"active role: {ns.role}")
    elif ns.action == "clear":
        print("role cleared" if project.clear_role() else "no role was active")
    else:
        role = project.current_role()
        print(role or "(no active role)")
    return 0


def _known_roles(project: Project) -> set[str]:
    from hookgate.config.load import load_config
    from hookgate.errors import ConfigError

    try:
        return set(load_config(project.config_path, project.layout.dir).pipeline.roles) - {"*"}
    except ConfigError:
        return set()
