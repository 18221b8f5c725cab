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
