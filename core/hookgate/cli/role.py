"""`hookgate role set ROLE [--force] | clear | show [--project DIR]`: the active pipeline role."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from hookgate.config.load import project_at
from hookgate.effect import note_allowed
from hookgate.store.project import ROLE_NAME, Project

# a role the config does not know falls under its '*' rules: a typo would silently change what is
# enforced, so it is refused unless asked for (the same status as a usage error)
UNKNOWN_ROLE = 2


def main(args: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="hookgate role", description="the active pipeline role")
    parser.add_argument("--project", type=Path, default=None, help="project directory (default: found from cwd)")
    sub = parser.add_subparsers(dest="action", required=True)
    set_ = sub.add_parser("set", help="make ROLE the active role")
    set_.add_argument("role")
    set_.add_argument("--force", action="store_true",
                      help="set it even when the config has no such role (its writes then fall under the '*' rules)")
    sub.add_parser("clear", help="no pipeline role active: writes are only recorded")
    sub.add_parser("show", help="print the active role, or nothing")
    ns = parser.parse_args(args[1:])
    project = project_at(ns.project)
    if ns.action == "set":
        return _set(parser, project, ns.role, ns.force)
    if ns.action == "clear":
        cleared = project.clear_role()
        if cleared:
            note_allowed([project.role_path], project.root)  # no effect check reverts it
        print("role cleared" if cleared else "no role was active")
    else:
        role = project.current_role()
        print(role or "(no active role)")
    return 0


def _set(parser: argparse.ArgumentParser, project: Project, role: str, force: bool) -> int:
    if not ROLE_NAME.fullmatch(role):
        parser.error(f"invalid role {role!r}: one lower-case word (letters, digits, '-', '_')")
    known, problem = _known_roles(project)
    if role not in known:
        why = problem or f"{role!r} is not a role of the config; known roles: {', '.join(sorted(known)) or '(none)'}"
        if not force:
            print(f"hookgate role: {why}. Nothing was changed; pass --force to set it anyway "
                  "(its writes then fall under the '*' rules)", file=sys.stderr)
            return UNKNOWN_ROLE
        print(f"warning: {why}; set anyway (--force): its writes fall under the '*' rules", file=sys.stderr)
    project.set_role(role)
    note_allowed([project.role_path], project.root)  # no effect check reverts it
    print(f"active role: {role}")
    return 0


def _known_roles(project: Project) -> tuple[set[str], str | None]:
    """The roles of the project's config (preset merged), and why they could not be read, if so."""
    from hookgate.config.load import load_config
    from hookgate.errors import ConfigError

    try:
        return set(load_config(project.config_path, project.layout.dir).pipeline.roles) - {"*"}, None
    except ConfigError as exc:
        return set(), f"the config could not be read, so the role cannot be checked against it ({exc})"
