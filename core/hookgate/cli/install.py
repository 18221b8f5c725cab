"""`hookgate install|uninstall claude|codex|opencode [--project DIR | --user]`.

Each runtime's installer merges hookgate's registrations into that runtime's own config, keeping
every key and hook the user has, and uninstall removes exactly what install added."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any

from ..runtimes import NAMES, plug


def hookgate_command() -> str:
    """How a runtime should start hookgate: by absolute path, so it works outside the venv."""
    script = Path(sys.executable).with_name("hookgate")
    if script.is_file():
        return shlex.quote(str(script))
    return f"{shlex.quote(sys.executable)} -m hookgate"


def hook_command() -> str:
    """How a stdin runtime (Claude Code, Codex, Gemini CLI) should start `hookgate hook`: without
    `site` (`python -S`), which makes a call the warm core answers cost less than a plain
    interpreter start, with a few statements on the command line that put the folder this hookgate
    is imported from on sys.path and call the hook command (hookgate.client.launched): a script
    (core/bin/hookgate) is compiled again on every start, about 0.4 ms of a warm call. `-P`: the
    working directory (the agent's project) is not put on sys.path. Only where msgspec is beside
    hookgate (a regular install), which a cold call imports; any other layout (an editable
    install) gets the plain command."""
    import hookgate

    folder = Path(hookgate.__file__).resolve().parent.parent
    if not (folder / "msgspec").is_dir():
        return hookgate_command()
    code = f"import sys; sys.path.append({json.dumps(str(folder))}); from hookgate.client import launched; launched()"
    return f"{shlex.quote(sys.executable)} -S -P -c {shlex.quote(code)}"


def main(args: list[str]) -> int:
    action = args[0]
    parser = argparse.ArgumentParser(prog=f"hookgate {action}", description=f"{action} hookgate's hook registrations")
    parser.add_argument("runtime", choices=sorted(NAMES))
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--project", type=Path, metavar="DIR", help="the project's config (default: current directory)")
    where.add_argument("--user", action="store_true", help="the user-wide config")
    parser.add_argument("--plugin", action="store_true",
                        help="codex: record the review of the hookgate plugin's hooks (installed with "
                             "`codex plugin add hookgate@hookgate`) instead of registering hooks")
    ns = parser.parse_args(args[1:])
    runtime = plug(ns.runtime)
    if ns.plugin and runtime.plugin_install is None:
        parser.error(f"--plugin: the {ns.runtime} plugin needs nothing from hookgate install")
    # each plug's install face, or what its plugin channel still needs (hookgate.runtimes)
    installer: Any = runtime.module(runtime.plugin_install if ns.plugin and runtime.plugin_install else "install")
    target = installer.config_path(None if ns.user else (ns.project or Path.cwd()).resolve())
    if action == "install":  # a runtime version that would not load what install writes
        from hookgate.parity.installed import refusal

        refused = refusal(ns.runtime, os.environ)
        if refused:
            print(f"hookgate install: {refused}", file=sys.stderr)
            return 1
    try:
        if action == "install":
            changed = installer.install(target, hook_command() if runtime.stdin and not ns.plugin else hookgate_command())
        else:
            changed = installer.uninstall(target)
    except ValueError as exc:
        print(f"hookgate {action}: {exc}", file=sys.stderr)
        return 1
    if changed:
        state = "updated"
    elif action == "install":
        state = "already up to date"
    else:
        state = "holds nothing of hookgate's (nothing removed)" if target.exists() else "does not exist (nothing removed)"
    print(f"{ns.runtime}: {target} {state}")
    if action == "install" and hasattr(installer, "notes"):  # what the runtime still needs
        print("\n".join(installer.notes(target)))
    return 0
