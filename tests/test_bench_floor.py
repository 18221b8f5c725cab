"""`make bench` sets an allowed Write's decision beside its system calls alone (benchmarks/
inprocess.py, `syscall_floor`), the floor under any engine written in Python. That row is only a
floor while it makes the calls hookgate makes: both are traced here, call by call, and a refused
Write's decision, which has no such row, is traced making none."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

TRACED = r"""
import os, sys, tempfile
from pathlib import Path
sys.path.insert(0, BENCHMARKS)
import inprocess
root = Path(tempfile.mkdtemp(dir=TMP))
inprocess.project(root)
floor = inprocess.syscall_floor(root)
for written in ("docs/notes.md", "src/player.gd"):
    path = str(root / written)
    decide, _ = inprocess.decider(root, {"hook_event_name": "PreToolUse", "tool_name": "Write",
                                         "tool_input": {"file_path": path, "content": "x"}})
    decide()  # the session's first decision notes the role's owner, as the bench's does
    inprocess.settled()
    for name, fn in (("hookgate", decide), ("floor", floor if written == "docs/notes.md" else lambda: None)):
        fn()  # first-use work (the ledger's descriptor) is not what is compared
        os.write(2, f"BEGIN {written} {name}\n".encode())
        fn()
        os.write(2, b"END\n")
"""

# a traced line: the call's name and, when it names a file, that file's last component (fd
# numbers and process ids vary from run to run)
_CALL = re.compile(r'^(?:\d+ +)?(\w+)\((?:AT_FDCWD, )?(?:"([^"]*)")?')


# the gates' timer: its handler stays installed and the timer armed across decisions, so a decision
# arms it, or takes its signal, once per gate timeout (5 s), not once per decision (engine/deadline.py)
_TIMER = re.compile(r"^(?:\d+ +)?(?:setitimer\(|rt_sigreturn\(|--- SIGALRM )")


def calls(lines: list[str]) -> list[tuple[str, str]]:
    found = []
    for line in lines:
        if _TIMER.match(line):
            continue
        match = _CALL.match(line)
        assert match, line
        name, path = match.group(1), match.group(2) or ""
        found.append((name, re.sub(r"\d+$", "N", os.path.basename(path))))
    return found


@pytest.mark.slow
def test_the_floor_makes_the_calls_a_decision_makes(tmp_path):
    assert shutil.which("strace"), "strace is missing: `make strace` installs Debian's (`make test` does)"
    log = tmp_path / "trace"
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")}
    script = f"BENCHMARKS = {str(ROOT / 'benchmarks')!r}\nTMP = {str(tmp_path)!r}\n" + TRACED
    done = subprocess.run(["strace", "-o", str(log), sys.executable, "-c", script], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    sections: dict[str, list[str]] = {}
    current = None
    for line in log.read_text().splitlines():
        if "BEGIN " in line and line.split("(", 1)[0].endswith("write"):
            current = re.search(r"BEGIN ([^ ]+ \w+)", line).group(1)
            sections[current] = []
        elif current and "END\\n" in line and line.split("(", 1)[0].endswith("write"):
            current = None
        elif current:
            sections[current].append(line)
    assert len(sections) == 4, sorted(sections)
    for written in ("docs/notes.md", "src/player.gd"):
        made, floor = calls(sections[f"{written} hookgate"]), calls(sections[f"{written} floor"])
        assert made == floor, f"{written}: hookgate {made}\nfloor {floor}"
    # the ledger's note of an allowed write, under its lock; and no call at all for a refused one:
    # the kept answers are vouched for by the kernel's signal, not asked for (store/kept.py)
    assert calls(sections["docs/notes.md hookgate"]) == [("flock", ""), ("write", ""), ("flock", "")]
    assert calls(sections["src/player.gd hookgate"]) == []
