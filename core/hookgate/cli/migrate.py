"""`hookgate migrate godotmaker [--project DIR] [--apply | --undo [--force]]`: replace
GodotMaker's hook registrations by hookgate's, keeping everything else.

GodotMaker publishes its hooks into the project: handlers running `.godotmaker/hooks/*.py` in
Claude Code's `.claude/settings.json` and Codex's `.codex/hooks.json`, and the OpenCode adapter
plugin `.opencode/plugins/godotmaker-hooks.js`. Migration takes those out, installs hookgate's
registrations for the same runtimes, and leaves the project's state (`.godotmaker/`) as it is:
hookgate then reads and writes it in place (GodotMaker mode, store/layout.py).

Without `--apply` nothing is written: the command says what it would change. `--apply` keeps the
bytes of every file it touched (or that it did not exist) in `.godotmaker/hookgate-migration.json`,
so `--undo` puts each back byte for byte; a file changed since the migration is left alone unless
`--force`, so an undo never silently throws away a later edit.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from hookgate.cli.install import hookgate_command
from hookgate.formats import hooksjson
from hookgate.runtimes import plug
from hookgate.store import locked

GODOTMAKER_SCRIPTS = ".godotmaker/hooks/"  # every GodotMaker handler runs one of its scripts from here
OPENCODE_ADAPTER = Path(".opencode") / "plugins" / "godotmaker-hooks.js"
RECORD = Path(".godotmaker") / "hookgate-migration.json"


def is_godotmaker(handler: Any) -> bool:
    return isinstance(handler, dict) and GODOTMAKER_SCRIPTS in str(handler.get("command", ""))


@dataclass
class Step:
    runtime: str
    found: str                 # what of GodotMaker's is there, in words
    apply: Callable[[], None]  # take it out and install hookgate's
    files: list[Path] = field(default_factory=list)  # every file the step may write


def plan(project: Path, env: dict[str, str]) -> list[Step]:
    """What migration does in this project: one step per runtime GodotMaker is registered for."""
    steps: list[Step] = []
    command = hookgate_command()
    for runtime in ("claude", "codex"):
        installer: Any = plug(runtime).module("install")
        path = installer.config_path(project)
        count = _count_handlers(path)
        if not count:
            continue

        def apply(installer: Any = installer, path: Path = path) -> None:
            installer.remove_handlers(path, is_godotmaker)
            installer.install(path, command)

        files = [path] + ([path.parent / "config.toml", _codex_user_config(env)] if runtime == "codex" else [])
        steps.append(Step(runtime, f"{count} GodotMaker handler{'s' if count != 1 else ''} in {path}", apply, files))
    adapter = project / OPENCODE_ADAPTER
    if adapter.is_file():
        installer = plug("opencode").module("install")
        target = installer.config_path(project)

        def apply_opencode(installer: Any = installer, target: Path = target) -> None:
            adapter.unlink()
            installer.install(target, command)

        steps.append(Step("opencode", f"GodotMaker's adapter plugin {adapter}", apply_opencode, [adapter, target]))
    return steps


def _count_handlers(path: Path) -> int:
    try:
        hooks = hooksjson.read(path).get("hooks", {})
    except (OSError, ValueError):
        return 0
    return sum(1 for *_, handler in hooksjson.entries(hooks) if is_godotmaker(handler))


def _codex_user_config(env: dict[str, str]) -> Path:
    """Codex records hook trust in the user's config.toml: migration changes it too."""
    return Path(getattr(plug("codex").module("trust"), "user_config")(env))


# -- what a file was, so an undo can put it back ---------------------------------------------------

def _snapshot(paths: list[Path]) -> dict[str, bytes | None]:
    return {str(path): (path.read_bytes() if path.is_file() else None) for path in paths}


def _digest(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


def _encode(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode()


def _decode(text: str | None) -> bytes | None:
    return None if text is None else base64.b64decode(text)


def migrate(project: Path, env: dict[str, str]) -> int:
    record = project / RECORD
    if record.exists():
        print(f"hookgate migrate: {project} was migrated already ({record}); `--undo` first to migrate again",
              file=sys.stderr)
        return 1
    steps = plan(project, env)
    if not steps:
        print(f"hookgate migrate: no GodotMaker registration found in {project}")
        return 0
    files = list(dict.fromkeys(path for step in steps for path in step.files))
    before = _snapshot(files)
    dirs_before = {str(d) for path in files for d in _parents_within(path, project) if d.is_dir()}
    for step in steps:
        step.apply()
        print(f"{step.runtime}: replaced {step.found} by hookgate's registrations")
    after = _snapshot(files)
    changed = {name: data for name, data in before.items() if after[name] != data}
    made = sorted({str(d) for path in files for d in _parents_within(path, project) if d.is_dir()} - dirs_before)
    locked.replace(record, json.dumps({
        "files": {name: {"before": _encode(data), "after": _digest(after[name])} for name, data in changed.items()},
        "made_dirs": made,
    }, indent=1).encode())
    for name in changed:
        print(f"  changed {name}")
    print(f"kept every other entry and the project's state; `hookgate migrate godotmaker --undo` puts it all back")
    return 0


def undo(project: Path, force: bool) -> int:
    record_path = project / RECORD
    try:
        record = json.loads(record_path.read_text())
    except FileNotFoundError:
        print(f"hookgate migrate: nothing to undo in {project} (no {RECORD})", file=sys.stderr)
        return 1
    files: dict[str, dict[str, Any]] = record["files"]
    edited = [name for name, entry in files.items()
              if _digest(Path(name).read_bytes() if Path(name).is_file() else None) != entry["after"]]
    if edited and not force:
        print("hookgate migrate: changed since the migration, so an undo would lose those changes:\n"
              + "\n".join(f"  {name}" for name in edited) + "\nnothing was restored; `--force` restores them anyway",
              file=sys.stderr)
        return 1
    for name, entry in files.items():
        path, data = Path(name), _decode(entry["before"])
        if data is None:
            path.unlink(missing_ok=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            locked.replace(path, data)
            os.utime(path)  # a restored file is a change, for anything watching its time
        print(f"restored {name}")
    for directory in sorted(record.get("made_dirs", []), key=len, reverse=True):
        try:
            Path(directory).rmdir()
        except OSError:
            pass  # something else lives there now
    record_path.unlink()
    return 0


def _parents_within(path: Path, project: Path) -> list[Path]:
    parents = []
    for parent in path.parents:
        if parent == project or project not in parent.parents:
            break
        parents.append(parent)
    return parents


def main(args: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="hookgate migrate", description=(
            "Replace another guard's hook registrations by hookgate's. A dry run by default: it says "
            "what it would change and writes nothing; --apply changes the files, --undo puts them back."))
    parser.add_argument("source", choices=["godotmaker"], help="whose registrations to replace")
    parser.add_argument("--project", type=Path, default=None, help="the project (default: current directory)")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--dry-run", action="store_true", help="say what would change, write nothing (the default)")
    mode.add_argument("--apply", action="store_true", help="make the change, keeping what is needed to undo it")
    mode.add_argument("--undo", action="store_true", help="put every file the migration changed back, byte for byte")
    parser.add_argument("--force", action="store_true", help="with --undo: also restore files edited since")
    ns = parser.parse_args(args[1:])
    project = (ns.project or Path.cwd()).resolve()
    env = dict(os.environ)
    if ns.undo:
        return undo(project, ns.force)
    if ns.apply:
        return migrate(project, env)
    steps = plan(project, env)
    if not steps:
        print(f"no GodotMaker registration found in {project}")
        return 0
    for step in steps:
        print(f"{step.runtime}: would replace {step.found} by hookgate's registrations")
    print("dry run: nothing was written; run again with --apply to migrate")
    return 0
