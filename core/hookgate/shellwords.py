"""A command line read into its simple commands, word by word, for the readers that only need to
know what program a command starts and with which words: the self-protection gate's search for
runs of hookgate (pipeline/self_protect.py) and the scripts the runtimes' own commands run
(config/runtime_scripts.py). Quotes are honoured, and `;`, `&`, `|`, parentheses and newlines end a
simple command. (What a command writes needs the whole shell grammar: pipeline/shell.py.)"""

from __future__ import annotations

import re
from typing import Iterator

# what starts a simple command without being its program, or runs a string as a command
ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")  # VAR=value
PYTHON = re.compile(r"python[0-9.]*")
SCRIPT_FLAG = re.compile(r"-[a-zA-Z]*c")  # sh -c, bash -lc, -ec, ...
_OPERATORS = ";&|()"

# a wrapper (a launcher) -> its options that take a value: the wrapped command follows them
WRAPPERS: dict[str, frozenset[str]] = {
    "sudo": frozenset({"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "--user", "--group", "--chdir"}),
    "doas": frozenset({"-u", "-C"}),
    "env": frozenset({"-u", "-C", "--unset", "--chdir", "-S", "--split-string"}),
    "nohup": frozenset(), "command": frozenset(), "builtin": frozenset(), "exec": frozenset({"-a"}), "coproc": frozenset(),
    "time": frozenset({"-f", "-o", "--format", "--output"}), "nice": frozenset({"-n", "--adjustment"}),
    "stdbuf": frozenset({"-i", "-o", "-e"}), "setsid": frozenset(), "ionice": frozenset({"-c", "-n", "-p"}),
    "timeout": frozenset({"-s", "-k", "--signal", "--kill-after"}), "chronic": frozenset(), "unbuffer": frozenset(),
    "xvfb-run": frozenset({"-a", "-s", "-n", "--server-args", "--server-num"}), "catchsegv": frozenset(),
    "flock": frozenset({"-w", "-E", "--timeout"}), "watch": frozenset({"-n", "-d", "--interval"}),
    "ltrace": frozenset({"-o", "-e"}), "strace": frozenset({"-o", "-e", "-p", "-s"}),
    # scheduling, limits, identity, namespaces: each runs the command that follows (a wrapper this
    # reader did not know hid it, `setsid -f` and all)
    "taskset": frozenset(), "chrt": frozenset({"-T", "-P", "-D", "--sched-runtime", "--sched-period", "--sched-deadline"}),
    "prlimit": frozenset({"-p", "--pid", "-o", "--output"}), "numactl": frozenset({"-C", "-N", "-m", "-p", "-i"}),
    "cpulimit": frozenset({"-l", "--limit", "-p", "--pid", "-e", "--exe", "-c", "--cpu"}),
    "unshare": frozenset({"-S", "--setuid", "-G", "--setgid", "-R", "--root", "-w", "--wd"}),
    "setpriv": frozenset({"--reuid", "--regid", "--ruid", "--euid", "--rgid", "--egid", "--groups", "--inh-caps",
                          "--ambient-caps", "--bounding-set", "--securebits", "--pdeathsig"}),
    "runuser": frozenset({"-u", "--user", "-g", "--group", "-G", "--supp-group", "-s", "--shell", "-w"}),
    "su": frozenset({"-g", "--group", "-G", "--supp-group", "-s", "--shell", "-w"}), "sg": frozenset(),
    "setarch": frozenset(), "linux32": frozenset(), "linux64": frozenset(), "busybox": frozenset(),
    "faketime": frozenset({"--date-prog"}), "fakeroot": frozenset({"-l", "-s", "-i"}), "pkexec": frozenset({"--user"}),
    "torsocks": frozenset(), "proxychains": frozenset({"-f"}), "proxychains4": frozenset({"-f"}),
    "trickle": frozenset({"-d", "-u", "-w", "-t", "-l", "-n"}), "valgrind": frozenset(), "firejail": frozenset(),
    "dbus-run-session": frozenset(), "systemd-inhibit": frozenset(),
}


def takes_value(launcher: str, option: str) -> bool:
    """Whether `option` of `launcher` (`sudo -u`, `env -u`, `timeout -s`) takes the next word as
    its value, which is then no command either."""
    return option in WRAPPERS.get(launcher.rpartition("/")[2], ())


def launcher_argument(word: str) -> bool:
    """Whether `word`, after a launcher (`env`, `sudo`, `timeout`, ...), is one of its own words
    rather than the command it starts: an option, an assignment, a duration (`timeout 5s`)."""
    return word.startswith("-") or bool(ASSIGNMENT.match(word)) or word.rstrip("smhd").isdigit()


def simple_commands(command: str) -> Iterator[list[str]]:
    """The words of each simple command of `command`, in order."""
    import shlex  # on use: a hook call reads a command only when one names what it looks for

    command = command.replace("\n", ";")
    lexer = shlex.shlex(command, posix=True, punctuation_chars=_OPERATORS)
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        tokens = list(lexer)
    except ValueError:  # an unclosed quote: the shell would refuse it; read it by whitespace alone
        tokens = command.split()
    words: list[str] = []
    for token in tokens:
        if set(token) <= set(_OPERATORS):  # an operator (or an empty word, which runs nothing)
            if words:
                yield words
            words = []
        else:
            words.append(token)
    if words:
        yield words
