"""Running `hookgate hook` as the runtimes do (a process, the payload on stdin), with or without the
project's warm core, in a runtime directory of the test's own (so its cores are its own)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import pytest

from hookgate import client
from support import HOOKGATE

Reply = tuple[bytes, bytes, int]  # stdout, stderr, exit code


@dataclass
class Warm:
    """A throwaway HOME and runtime directory, and the environment a hook call gets."""

    home: Path
    runtime_dir: Path

    def env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("HOOKGATE_", "CLAUDE_", "XDG_"))}
        return {**env, "HOME": str(self.home), "XDG_RUNTIME_DIR": str(self.runtime_dir), **extra}

    def cold(self, **extra: str) -> dict[str, str]:
        return self.env(HOOKGATE_WARM="off", **extra)

    def hook(self, runtime: str, payload: dict[str, Any] | bytes, cwd: Path, env: dict[str, str],
             hint: str | None = None) -> Reply:
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        args = [HOOKGATE, "hook", runtime] + (["--event", hint] if hint else [])
        done = subprocess.run(args, input=data, cwd=cwd, env=env, capture_output=True, timeout=120)
        return done.stdout, done.stderr, done.returncode

    def warm(self, action: str, project: Path, **extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([HOOKGATE, "warm", "--project", str(project), action], env=self.env(**extra),
                              capture_output=True, text=True, timeout=60)

    def answered(self, project: Path, expected: int | None = None) -> int:
        """How many hook calls the project's core has answered. A fork tells the core after its
        caller has the answer, so the count can lag a moment: with `expected`, wait for it."""
        deadline = time.monotonic() + 10
        while True:
            status = self.warm("status", project).stdout
            found = re.search(r"(\d+) calls answered", status)
            assert found, status
            if expected is None or int(found.group(1)) >= expected or time.monotonic() > deadline:
                return int(found.group(1))
            time.sleep(0.05)

    def sockets(self) -> list[Path]:
        return sorted((self.runtime_dir / "hookgate").glob("*.sock"))

    def stop_all(self) -> None:
        """SIGTERM every core still holding its lock (a lock nobody holds names no live core)."""
        for lock in (self.runtime_dir / "hookgate").glob("*.lock"):
            if client.lock_held(str(lock)):
                os.kill(int(lock.read_text().split()[0]), signal.SIGTERM)


@pytest.fixture
def warm() -> Iterator[Warm]:
    """Runtime directories are short on purpose (AF_UNIX paths hold 107 bytes)."""
    with tempfile.TemporaryDirectory(prefix="hg-") as runtime_dir, tempfile.TemporaryDirectory(prefix="hg-home-") as home:
        setup = Warm(Path(home), Path(runtime_dir))
        try:
            yield setup
        finally:
            setup.stop_all()


def normalised_files(root: Path) -> dict[str, Any]:
    """Every file hookgate keeps in the project, each JSON line's `ts` blanked (the only field that
    differs between two runs of the same calls). The effect check's readings hold the times they
    were taken: of its store, the copies (named by their bytes) and the ledger without times."""
    files: dict[str, Any] = {}
    for path in sorted((root / ".hookgate").rglob("*")):
        if not path.is_file():
            continue
        rel = path.relative_to(root).as_posix()
        if rel.startswith(".hookgate/effect/") and not rel.startswith((".hookgate/effect/blobs/",
                                                                      ".hookgate/effect/ledger.jsonl")):
            continue
        text = path.read_text(errors="replace")
        if path.suffix == ".jsonl":
            files[str(path.relative_to(root))] = [
                {**record, "ts": "-", "t": "-"} if rel.endswith("ledger.jsonl") else
                {**record, "ts": "-"} if isinstance(record, dict) and "ts" in record else record
                for record in map(json.loads, filter(None, text.splitlines()))]
        else:
            files[str(path.relative_to(root))] = text
    return files
