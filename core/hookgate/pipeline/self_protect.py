"""check_hookgate_commands: while a pipeline role is active, no agent runs `hookgate install` or
`hookgate uninstall` (the subcommands of `[pipeline.protect].commands`) from a shell.

The files those commands change are protected by the write rules too (`[pipeline.protect].rules`,
judged for every tool by permissions.write_denial, and so also by the after-call effect check);
this gate refuses the command itself, before it runs, with a reason that says whose decision it is.

A command is read into simple commands (split at `;`, `&`, `|`, `(`, `)` and newlines, quotes
honoured); hookgate is recognised as the program after any launchers (`sudo`, `env X=1`,
`timeout 5`, `xargs`, `uvx`, `python3 -m`, a path to the executable, `$(command -v hookgate)`),
and the STRING of `sh -c STRING` / `eval STRING` is read the same way. `echo hookgate uninstall`
and `grep 'hookgate uninstall' README.md` are not runs of hookgate and pass.
"""

from __future__ import annotations

import os
import re
from typing import Iterator

from ..engine.context import Context
from ..model.events import Event
from ..model.verdicts import Block, Verdict
from ..shellwords import PYTHON, SCRIPT_FLAG, launcher_argument, simple_commands, takes_value

_LAUNCHERS = frozenset({"sudo", "env", "nohup", "command", "exec", "builtin", "time", "nice", "timeout", "stdbuf",
                        "xargs", "uvx", "pipx", "run", "uv", "tool", "npx", "doas", "setsid", "chronic",
                        "sh", "bash", "zsh", "dash", "ksh", "eval"})
_MODULES = frozenset({"hookgate", "hookgate.__main__", "hookgate.cli"})
_MAX_DEPTH = 4
# the executable looked up where it runs: "$(command -v hookgate)", `which hookgate`
_LOOKUP = re.compile(r"\$\(\s*(?:command\s+-v|which|type\s+-p)\s+hookgate\s*\)|`\s*(?:command\s+-v|which)\s+hookgate\s*`")


def check_hookgate_commands(event: Event, ctx: Context) -> Verdict | None:
    protect = ctx.config.pipeline.protect
    command = getattr(event, "tool_input", {}).get("command")
    if not protect.enabled or not protect.commands or not isinstance(command, str) or "hookgate" not in command:
        return None
    if ctx.current_role() is None:
        return None
    for run in hookgate_runs(command):
        subcommand = next((word for word in run if not word.startswith("-")), None)
        if subcommand in protect.commands:
            shown = "hookgate " + " ".join(run)
            return Block(reason=protect.command_reason.format(command=shown[:200]))
    return None


def hookgate_runs(command: str, depth: int = 0) -> Iterator[list[str]]:
    """The arguments of every run of hookgate in `command`."""
    for words in _simple_commands(command):
        yield from _runs_in(words, depth)


def _runs_in(words: list[str], depth: int) -> Iterator[list[str]]:
    for i, word in enumerate(words):
        if depth < _MAX_DEPTH and i > 0 and (SCRIPT_FLAG.fullmatch(words[i - 1]) or _name(words[0]) == "eval"):
            yield from hookgate_runs(word, depth + 1)  # a shell's -c STRING, eval's words
        if _is_hookgate(words, i):
            yield words[i + 1:]
            return
        if not _launcher(words, i):
            return


def _is_hookgate(words: list[str], i: int) -> bool:
    word = words[i]
    if i > 0 and words[i - 1] == "-m":
        return word in _MODULES
    return _name(word) in ("hookgate", "hookgate.exe")


def _launcher(words: list[str], i: int) -> bool:
    """Whether words[i] only starts what follows it (a wrapper, its option or value, a variable)."""
    word = words[i]
    name = _name(word)
    return name in _LAUNCHERS or bool(PYTHON.fullmatch(name)) or launcher_argument(word) or (
        i > 1 and takes_value(next((_name(w) for w in reversed(words[:i - 1]) if _name(w) in _LAUNCHERS), ""),
                              words[i - 1]))  # `sudo -u root`: the option's value


def _name(word: str) -> str:
    return os.path.basename(word.strip("\"'"))


def _simple_commands(command: str) -> Iterator[list[str]]:
    return simple_commands(_LOOKUP.sub("hookgate", command))
