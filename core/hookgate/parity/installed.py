"""The runtimes a user has, against the versions the parity report proves.

Each runtime's command (its capability tables name it: `claude`, `codex`, `opencode`) is looked
up on PATH and asked `--version`; the version is compared with the tables: proven (a table for
exactly that version, shown by runs of that binary), newer or older than the versions proven (the
report's cells are then unverified for that user), or a version line hookgate does not support
yet (the table says why; `hookgate install` refuses it instead of reporting success).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from typing import Literal, Mapping

from .capabilities import Runtime, proven, tables, unsupported, version_key

Standing = Literal["proven", "newer", "older", "unsupported", "unknown", "absent"]
VERSION = re.compile(r"\d+(?:\.\d+)+")


@dataclass(frozen=True)
class Installed:
    runtime: str
    path: str | None  # None: not on PATH
    version: str | None  # None: not on PATH, or no version in what `--version` printed
    standing: Standing
    table: Runtime | None  # the table that describes it (proven, unsupported), else the newest one
    message: str


def runtime_names() -> tuple[str, ...]:
    return tuple(dict.fromkeys(t.runtime for t in tables()))


def find(runtime: str, env: Mapping[str, str], timeout: float = 15) -> Installed:
    """What `<command> --version` of the runtime on `env`'s PATH says, judged."""
    command = next(t.command for t in tables() if t.runtime == runtime)
    path = shutil.which(command, path=env.get("PATH"))
    if path is None:
        return Installed(runtime, None, None, "absent", None, f"{command} is not on PATH")
    try:
        done = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=timeout,
                              env=dict(env), stdin=subprocess.DEVNULL)
        found = VERSION.search(done.stdout) or VERSION.search(done.stderr)
    except (OSError, subprocess.SubprocessError) as exc:
        return Installed(runtime, path, None, "unknown", None, f"{path} --version failed: {exc}")
    if found is None:
        return Installed(runtime, path, None, "unknown", None,
                         f"{path} --version printed no version ({(done.stdout or done.stderr).strip()[:80]!r})")
    return judge(runtime, found.group(0), path)


def judge(runtime: str, version: str, path: str | None = None) -> Installed:
    where = f" ({path})" if path else ""
    for table in unsupported():
        if table.runtime == runtime and table.covers(version):
            return Installed(runtime, path, version, "unsupported", table,
                             f"{runtime} {version}{where}: not supported yet: {table.unsupported}")
    known = proven(runtime)
    for table in known:
        if table.covers(version):
            return Installed(runtime, path, version, "proven", table,
                             f"{runtime} {version}{where}: proven (the parity report's {table.label} column "
                             "is shown by runs of this version)")
    newest = known[0]
    versions = ", ".join(t.version for t in reversed(known))
    if version_key(version) > version_key(newest.version):
        standing: Standing = "newer"
        than = f"newer than the version proven ({newest.version})"
    else:
        standing = "older"
        than = f"older than the version proven ({newest.version})" + (
            f"; the versions proven are {versions}" if len(known) > 1 else "")
    return Installed(runtime, path, version, standing, newest,
                     f"{runtime} {version}{where}: {than}: these cells are unverified for you: "
                     f"{_unverified(newest)} (the {newest.label} column of `hookgate parity`)")


def _unverified(table: Runtime) -> str:
    from .matrix import compute

    matrix = compute()
    statuses = [matrix.cells[row.id][table.key].status for row in matrix.rows]
    return f"{statuses.count('enforced')} enforced and {statuses.count('degraded')} degraded"


def all_installed(env: Mapping[str, str]) -> list[Installed]:
    return [find(runtime, env) for runtime in runtime_names()]


def refusal(runtime: str, env: Mapping[str, str]) -> str | None:
    """Why `hookgate install <runtime>` must not report success: the runtime on PATH is a
    version line hookgate does not support, so what install writes would never be loaded."""
    found = find(runtime, env)
    if found.standing != "unsupported":
        return None
    return f"{found.message}. Nothing was installed."
