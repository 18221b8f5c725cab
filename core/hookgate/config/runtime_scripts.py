"""The scripts the runtimes run by themselves: the code a command of their settings runs (a hook,
the status line, an MCP server), in the files of `[pipeline.protect].command_settings` (Claude
Code's and Gemini CLI's settings.json, `.mcp.json`, Codex's hooks.json and config.toml,
opencode.json and opencode.jsonc, hookgate's own hooks.json); and the hooks git runs from the
folder a git config's `core.hooksPath` names (`.githooks/`, husky's `.husky/`).

A runtime runs those commands on its events or at its start, outside any tool call a gate judges,
so an agent that rewrites a script one of them runs has its own code run past every rule. The
config's path class `runtime_scripts` is filled with them when the config is loaded
(config/load.py), so every way of writing a file (Write, Edit, a patch, the shell, the effect
check) meets them as it meets the rest of `[pipeline.protect].rules`.

A command is every object of a settings file with a `command`: a shell line, or Claude Code's
exec form (`command` and `args`), or an MCP server's program and `args`, or OpenCode's argv list.
Its code is what a shell would run: a program named by a path (`./tools/check.sh`,
`"$CLAUDE_PROJECT_DIR"/.claude/hooks/x.py`), the script an interpreter is given (`python3
scripts/lint.py`, `node check.js`, `source env.sh`, the module of `python3 -m tools.hook`), through
launchers (`env`, `timeout 5`, `uv run`, ...), `sh -c STRING`, `cd DIR &&`, with the runtimes'
project variables, HOME and `~` expanded. It is protected where it lands in the project or the
home, and where that resolves to through a symlink, whether it exists yet or not (a missing script
would run once an agent made it). An interpreter's other arguments (the files a script is given
to check) are not: they are data the agent's work may have to change. What a script imports or
reads, and what a program finds by itself (a Makefile, package.json's scripts), is not followed.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping

from ..paths import anchor_names, below

CLASS = "runtime_scripts"  # the path class of the config filled here
# the variables the runtimes set to the project's root for a command
PROJECT_VARIABLES = ("CLAUDE_PROJECT_DIR", "GEMINI_PROJECT_DIR")
# programs that run the script they are given: the first of their words after the options that
# is an existing file, or each of those words while none is
INTERPRETERS = frozenset({"node", "bun", "deno", "tsx", "ts-node", "ruby", "perl", "php", "lua", "Rscript", "pwsh",
                          "bash", "sh", "zsh", "dash", "ksh", "fish", "source", "."})
# programs that run the command in the words after them (their options, values and assignments skipped)
LAUNCHERS = frozenset({"env", "sudo", "doas", "nohup", "exec", "command", "builtin", "nice", "timeout", "time",
                       "stdbuf", "setsid", "chronic", "xargs", "uv", "uvx", "npx", "pipx", "run", "tool"})
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "fish"})
# the keys of a settings object whose value is a command the runtime runs (a shell line, or an
# argv): hooks', the status line's and MCP servers' `command` (with `args`), Codex's `notify`,
# Claude Code's credential and header helpers (in this order: the patterns found are part of the
# key the effect check stores its readings under, the same in every process)
COMMAND_KEYS = ("command", "notify", "apiKeyHelper", "awsAuthRefresh", "awsCredentialExport", "otelHeadersHelper")
# expressions, compiled on their first use (re's own cache): only a config cache miss reads commands
_VARIABLE = r"\$(?:\{(\w+)\}|(\w+))"
_WILDCARDS = r"([*?\[])"
_MAX_DEPTH = 3  # sh -c 'sh -c "..."'
# hookgate's own handlers, as its installs write them: `.../hookgate hook claude --event X`, and
# `sh -c '"$@" hook codex --event X; ...' hookgate .../hookgate` (installers/fail_closed.py);
# hookgate's install is protected as such ($HOOKGATE_INSTALL)
_OWN_HANDLER = r"(?:\bhookgate|launched\(\)|\"\$@\")['\"]?\s+hook\s+[a-z]+\s+--event\s"


def settings_files(patterns: Iterable[str], root: Path, env: Mapping[str, str] = os.environ) -> tuple[Path, ...]:
    """The settings files `patterns` name now: project-relative, or anchored at `~/` or `$NAME/` (a
    variable not set, or not an absolute path, names none). Asked on every load of the config, so
    worked out once per patterns, root and the variables they read."""
    patterns = tuple(patterns)
    return _files(patterns, str(root), tuple(env.get(name) for name in _variables(patterns)))


@lru_cache(maxsize=64)
def _variables(patterns: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(name for pattern in patterns for name in anchor_names(pattern)))


@lru_cache(maxsize=64)
def _files(patterns: tuple[str, ...], root: str, values: tuple[str | None, ...]) -> tuple[Path, ...]:
    places = dict(zip(_variables(patterns), values))
    files = []
    for pattern in patterns:
        head, _, rest = pattern.partition("/")
        if head[:1] not in ("~", "$"):
            files.append(Path(root, pattern))
            continue
        base = places.get(anchor_names(pattern)[0]) or ""
        if base.startswith("/"):
            files.append(Path(base, rest))
    return tuple(dict.fromkeys(files))


def script_patterns(files: Iterable[Path], root: Path, env: Mapping[str, str] = os.environ,
                    read: "Callable[[Path], bytes | None] | None" = None) -> list[str]:
    """The scripts the commands of `files` run, as patterns of the path rules: `/rel` for a file of
    the project, `~/rel` for one of the home; for a git config, the files of the hooks folder its
    `core.hooksPath` names. A file that cannot be read names none (the runtime cannot read it
    either). `read`: each file's bytes (None: not there), where not the file as it is now."""
    from ..formats import gitconfig  # here: only a config cache miss reads the settings

    read = read or _bytes

    project, home = str(root).rstrip("/") + "/", (env.get("HOME") or "").rstrip("/")
    home = home and home + "/"
    found: dict[str, None] = {}
    for file in files:
        data = read(file)
        if data is None:
            continue
        if gitconfig.is_config(str(file)):
            found.update(dict.fromkeys(_hooks_folders(data, project, home)))
            continue
        for command in _commands(_decoded(file, data)):
            simples = [command] if isinstance(command, list) else _simple_commands(command)
            if not re.search(_OWN_HANDLER, " ".join(word for simple in simples for word in simple)):
                found.update(dict.fromkeys(_scripts(simples, project, project, home)))
    return list(found)


def _hooks_folders(data: bytes, project: str, home: str) -> Iterator[str]:
    """The hooks folder a git config (its bytes) names in `core.hooksPath` (a relative one is the
    worktree's: the project's), as a pattern of its files: git runs them by itself (`pre-commit` on
    the user's next commit). Husky's layout (`.husky/_`, whose scripts run the hooks the folder
    above holds) names the folder above."""
    from ..formats import gitconfig

    for name, value in gitconfig.entries(data.decode(errors="replace")) or ():
        if name == "core.hookspath" and value:
            folder = _landing(value, project, project, home)
            if folder is not None and folder.rstrip("/") + "/" not in (project, home):
                folder = os.path.dirname(folder) if os.path.basename(folder) == "_" else folder
                for pattern in _patterns(folder, project, home):
                    yield pattern + "/*"


def _bytes(file: Path) -> bytes | None:
    from ..store import locked

    try:
        return locked.read(file)  # without blocking: the agent could put a FIFO in its place
    except (OSError, locked.NotAFile):
        return None


def _decoded(file: Path, data: bytes) -> object:
    import msgspec

    try:
        if file.suffix == ".toml":
            return msgspec.toml.decode(data)
        if file.suffix == ".jsonc":
            from ..formats.jsonc import plain

            data = plain(data)
        return msgspec.json.decode(data or b"{}")
    except (msgspec.DecodeError, UnicodeDecodeError):
        return None


def _simple_commands(command: str) -> list[list[str]]:
    from ..shellwords import simple_commands  # where there is a command to read (a cache miss)

    return list(simple_commands(command))


def _commands(node: object) -> Iterator[str | list[str]]:
    """The commands of a settings document: a command line, or the words of an argv."""
    if isinstance(node, dict):
        for key in filter(node.__contains__, COMMAND_KEYS):
            command, args = node[key], node.get("args") if key == "command" else None
            if isinstance(command, str):
                yield [command, *map(str, args)] if isinstance(args, list) else command
            elif isinstance(command, list) and command and all(isinstance(word, str) for word in command):
                yield list(command)
        children: Iterable[Any] = node.values()
    elif isinstance(node, list):
        children = node
    else:
        return
    for child in children:
        yield from _commands(child)


# `root` and `home` below end in "/" (`home` is "" when HOME is not set): a script is protected
# where it lands in either, as `/rel` or `~/rel`


def _scripts(simples: Iterable[list[str]], cwd: str, root: str, home: str, depth: int = 0) -> Iterator[str]:
    """The patterns of what the simple commands `simples` run, `cwd` following their `cd`s."""
    for words in simples:
        if words[:1] == ["cd"] and len(words) > 1:
            cwd = _landing(words[1], cwd, root, home) or cwd
        else:
            yield from _runs(words, cwd, root, home, depth)


def _runs(words: list[str], cwd: str, root: str, home: str, depth: int) -> Iterator[str]:
    """What one simple command runs: its program when a path names it, the script its interpreter
    is given, the command a launcher or `sh -c` runs."""
    from ..shellwords import ASSIGNMENT, PYTHON, SCRIPT_FLAG, launcher_argument, takes_value

    i = 0
    while i < len(words) and ASSIGNMENT.match(words[i]):
        i += 1
    if i == len(words):
        return
    if "/" in words[i]:
        yield from _patterns(_landing(words[i], cwd, root, home), root, home)
    name = os.path.basename(words[i])
    rest = words[i + 1:]
    if depth < _MAX_DEPTH and name == "eval":
        yield from _scripts(_simple_commands(" ".join(rest)), cwd, root, home, depth + 1)
        return
    if depth < _MAX_DEPTH and name in SHELLS:
        for before, word in zip(["", *rest], rest):
            if SCRIPT_FLAG.fullmatch(before):
                yield from _scripts(_simple_commands(word), cwd, root, home, depth + 1)  # sh -c STRING
                return
    if name in LAUNCHERS:
        while rest and (launcher_argument(rest[0]) or rest[0] in LAUNCHERS):
            rest = rest[2:] if takes_value(name, rest[0]) else rest[1:]  # `sudo -u bob`: its value too
        yield from _runs(rest, cwd, root, home, depth)
    elif name in INTERPRETERS or PYTHON.fullmatch(name):
        yield from _script_given(rest, cwd, root, home)


def _script_given(words: list[str], cwd: str, root: str, home: str) -> Iterator[str]:
    """The script an interpreter is given: after its options, the first word that is an existing
    file, or each word while none is (python's `-m MODULE` names its module's file; `-c CODE` and a
    script read from the input name none)."""
    for before, word in zip(["", *words], words):
        if before == "-m":
            module = word.replace(".", "/")
            for name in (module + ".py", module + "/__main__.py"):
                yield from _patterns(_landing(name, cwd, root, home), root, home)
            return
        if before == "-c" or word == "-":
            return
        if word.startswith("-"):
            continue
        path = _landing(word, cwd, root, home)
        yield from _patterns(path, root, home)
        if path and os.path.isfile(path):
            return


def _landing(word: str, cwd: str, root: str, home: str) -> str | None:
    """Where `word` names, with the project's variables, HOME and `~` as a command's shell expands
    them; None for a word another variable makes unknown here."""
    def value(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        return root[:-1] if name in PROJECT_VARIABLES else home[:-1] if name == "HOME" and home else "\0"

    word = re.sub(_VARIABLE, value, word)
    if word == "~" or word.startswith("~/"):
        word = home[:-1] + word[1:] if home else "\0"
    return None if "\0" in word or not word else os.path.normpath(os.path.join(cwd, word))


def _patterns(path: str | None, root: str, home: str) -> Iterator[str]:
    """The patterns that name `path` alone, and where it resolves to, in the project or the home
    (the first of them that holds it; wildcard characters taken literally)."""
    if path is None:
        return
    for place in dict.fromkeys((path, os.path.realpath(path))):
        for folder, anchor in ((root, "/"), (home, "~/")):
            rel = below(place, folder) if folder else None
            if rel is not None and rel != ".":
                yield anchor + re.sub(_WILDCARDS, r"[\1]", rel)
                break
