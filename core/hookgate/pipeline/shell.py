"""Which files a shell command writes, read with a shell lexer (no regex over the whole string).

The lexer follows POSIX token recognition: quotes and backslashes, operators and redirections
(with their fd numbers), comments, here-documents, and `$(...)`, backquotes and `<(...)`, whose
contents are commands of their own and are read the same way. A word is *literal* when nothing in
it is expanded by the shell at run time ($VAR, $(...), backquotes); only literal targets can be
judged, the others are reported as unknown.

Writes found:
  - redirections: >  >>  >|  &>  &>>  <>  N>  N>>  and >&FILE (not >&2: that duplicates a stream);
  - commands by what they write: touch mkdir rm rmdir unlink shred truncate tee (their operands),
    cp mv install ln (the destination, and mv its sources), sed -i / perl -i (the files),
    dd of=, sort -o, curl -o, wget -O, find -delete / -exec (the starting points);
  - python -c CODE and python reading a here-document: literal open(..., "w"/"a"/"x"/"+"),
    pathlib writes, os/shutil removals, renames and copies;
  - apply_patch (Codex's patch tool run from a shell): the files the patch names;
  - wrappers are looked through (sudo, env, nohup, time, nice, timeout, command, exec, stdbuf),
    and `sh -c STRING`, `bash -c`, `eval` are read as commands; `cd DIR` moves where relative
    targets land for the rest of its group.
"""

from __future__ import annotations

import os
import re
from typing import Iterator, NamedTuple

from ..formats.apply_patch import touched_files

DEVICES = ("/dev/", "/proc/self/fd/")
_REDIRECT_WRITES = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})
_OPERATORS = sorted(["&&", "||", ";;", ";&", "|&", ">>", "<<<", "<<-", "<<", ">&", "<&", "&>>", "&>", ">|", "<>",
                     "|", "&", ";", "(", ")", "<", ">"], key=len, reverse=True)
_SEPARATORS = frozenset({"&&", "||", ";;", ";&", "|&", "|", "&", ";", "\n"})
_RESERVED = frozenset({"if", "then", "else", "elif", "fi", "do", "done", "while", "until", "case", "esac", "{", "}",
                       "!", "function", "select", "in"})
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")


class ShellSyntaxError(ValueError):
    """The command is not valid shell (an unclosed quote or substitution): the shell would not run it."""


class Word(NamedTuple):
    text: str
    literal: bool


class Op(NamedTuple):
    text: str


class Write(NamedTuple):
    path: str      # absolute
    command: str   # the command (or redirection) that writes it
    tree: bool = False  # it may change everything under `path` (rm -r, mv, find -delete, rmtree)
    validated: bool = False  # `hookgate stage complete`: the append that validates before it writes


class Unknown(NamedTuple):
    target: str    # a target whose value is only known when the shell runs
    command: str


# -- the lexer ----------------------------------------------------------------------------------

class _Lexer:
    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0
        self.tokens: list[Word | Op] = []
        self.substitutions: list[str] = []  # bodies of $(...), `...`, <(...), >(...)
        self.heredocs: list[str] = []       # bodies, in the order their << appear
        self._pending: list[tuple[str, bool]] = []  # (delimiter, strip tabs) waiting for the next newline

    def run(self) -> "_Lexer":
        text = self.text
        word: list[str] = []
        literal, started = True, False

        def end_word() -> None:
            nonlocal word, literal, started
            if started:
                self.tokens.append(Word("".join(word), literal))
            word, literal, started = [], True, False

        while self.i < len(text):
            c = text[self.i]
            if c in " \t":
                end_word()
                self.i += 1
            elif c == "\n":
                end_word()
                self.tokens.append(Op("\n"))
                self.i += 1
                self._read_heredocs()
            elif c == "#" and not started:
                while self.i < len(text) and text[self.i] != "\n":
                    self.i += 1
            elif c == "\\":
                if text.startswith("\n", self.i + 1):
                    self.i += 2  # a line continuation
                    continue
                word.append(text[self.i + 1:self.i + 2])
                started = True
                self.i += 2
            elif c == "'":
                end = text.find("'", self.i + 1)
                if end < 0:
                    raise ShellSyntaxError("unclosed single quote")
                word.append(text[self.i + 1:end])
                started = True
                self.i = end + 1
            elif c == '"':
                part, expands = self._double_quoted()
                word.append(part)
                literal &= not expands
                started = True
            elif c == "$" or c == "`":
                word.append(self._expansion())
                literal, started = False, True
            elif c in "<>" and text.startswith("(", self.i + 1):
                end_word()
                self.i += 1
                self.substitutions.append(self._balanced("(", ")"))
                self.tokens.append(Word("<process substitution>", False))
            elif c in "|&;<>()":
                op = next(o for o in _OPERATORS if text.startswith(o, self.i))
                digits = "".join(word)
                if op[0] in "<>" and started and literal and digits.isdigit():
                    word, started = [], False  # an fd number: `2>` is one redirection
                    op = digits + op
                else:
                    end_word()
                self.tokens.append(Op(op))
                self.i += len(op) - (len(digits) if op[:1].isdigit() else 0)
                if op.lstrip("0123456789") in ("<<", "<<-"):
                    self._note_heredoc(op.endswith("-"))
            else:
                word.append(c)
                started = True
                self.i += 1
        end_word()
        if self._pending:
            self.heredocs.extend("" for _ in self._pending)  # an unterminated here-document is empty
        return self

    def _double_quoted(self) -> tuple[str, bool]:
        text, out, expands = self.text, [], False
        self.i += 1
        while self.i < len(text):
            c = text[self.i]
            if c == '"':
                self.i += 1
                return "".join(out), expands
            if c == "\\" and text[self.i + 1:self.i + 2] in ('"', "\\", "$", "`", "\n"):
                out.append(text[self.i + 1] if text[self.i + 1] != "\n" else "")
                self.i += 2
            elif c in "$`":
                out.append(self._expansion())
                expands = True
            else:
                out.append(c)
                self.i += 1
        raise ShellSyntaxError("unclosed double quote")

    def _expansion(self) -> str:
        """$name, ${...}, $(...), $((...)), `...`: returned as written; command bodies are kept."""
        text, start = self.text, self.i
        if text[self.i] == "`":
            end = self.i + 1
            while end < len(text) and text[end] != "`":
                end += 2 if text[end] == "\\" else 1
            if end >= len(text):
                raise ShellSyntaxError("unclosed backquote")
            self.substitutions.append(text[self.i + 1:end].replace("\\`", "`"))
            self.i = end + 1
        elif text.startswith("$((", self.i):
            self.i += 1
            self._balanced("(", ")")  # arithmetic: no command inside worth reading
        elif text.startswith("$(", self.i):
            self.i += 1
            self.substitutions.append(self._balanced("(", ")"))
        elif text.startswith("${", self.i):
            self.i += 1
            self._balanced("{", "}")
        else:
            self.i += 1
            name = _NAME.match(text, self.i)
            if name:
                self.i = name.end()
            elif self.i < len(text) and text[self.i] in "@*#?$!-0123456789":
                self.i += 1  # a special parameter: $@, $?, $1, ...
        return text[start:self.i]

    def _balanced(self, open_: str, close: str) -> str:
        """The text between the bracket at self.i and its match (quotes respected)."""
        text, depth, start = self.text, 0, self.i
        while self.i < len(text):
            c = text[self.i]
            if c in "'\"":
                end = text.find(c, self.i + 1)
                self.i = len(text) if end < 0 else end + 1
                continue
            if c == "\\":
                self.i += 2
                continue
            if c == open_:
                depth += 1
            elif c == close:
                depth -= 1
                if depth == 0:
                    self.i += 1
                    return text[start + 1:self.i - 1]
            self.i += 1
        raise ShellSyntaxError(f"unclosed {open_}")

    def _note_heredoc(self, strip_tabs: bool) -> None:
        rest = self.text[self.i:]
        match = re.match(r"[ \t]*((?:'[^']*'|\"[^\"]*\"|[^\s;&|<>()])+)", rest)
        if match:
            self._pending.append((re.sub(r"['\"\\]", "", match.group(1)), strip_tabs))

    def _read_heredocs(self) -> None:
        for delimiter, strip_tabs in self._pending:
            body: list[str] = []
            while self.i < len(self.text):
                end = self.text.find("\n", self.i)
                end = len(self.text) if end < 0 else end
                line = self.text[self.i:end]
                self.i = end + 1
                if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                    break
                body.append(line)
            self.heredocs.append("\n".join(body))
        self._pending = []


# -- from tokens to writes --------------------------------------------------------------------

def shell_writes(command: str, cwd: str) -> tuple[list[Write], list[Unknown]]:
    """The files `command`, run in `cwd`, would write (absolute paths), and the targets that
    cannot be known before it runs. Raises ShellSyntaxError for a command the shell would refuse."""
    writes: list[Write] = []
    unknown: list[Unknown] = []
    _read(command, cwd, writes, unknown, depth=0)
    return writes, unknown


def _read(command: str, cwd: str | None, writes: list[Write], unknown: list[Unknown], depth: int) -> None:
    if depth > 8:
        return  # a command nesting sh -c inside itself this deep is not worth following
    lexed = _Lexer(command).run()
    heredocs = iter(lexed.heredocs)
    stack: list[str | None] = []
    for simple in _simple_commands(lexed.tokens, heredocs):
        if simple.opens:
            stack.append(cwd)
        cwd = _command_writes(simple, cwd, writes, unknown, depth)
        for _ in range(simple.closes):
            cwd = stack.pop() if stack else cwd
    for body in lexed.substitutions:
        _read(body, cwd, writes, unknown, depth + 1)


class _Simple(NamedTuple):
    words: list[Word]
    redirects: list[tuple[str, Word | None, str | None]]  # operator, target, here-document body
    opens: bool
    closes: int


def _simple_commands(tokens: list[Word | Op], heredocs: Iterator[str]) -> Iterator[_Simple]:
    words: list[Word] = []
    redirects: list[tuple[str, Word | None, str | None]] = []
    opens = False
    items = iter(tokens)
    for token in items:
        if isinstance(token, Word):
            if not words and token.literal and token.text in _RESERVED:
                continue
            words.append(token)
            continue
        op = token.text
        if op in _SEPARATORS or op in ("(", ")"):
            if words or redirects or op == ")":
                yield _Simple(words, redirects, opens, 1 if op == ")" else 0)
                words, redirects, opens = [], [], False
            opens = opens or op == "("
            continue
        target = next(items, None)
        target_word = target if isinstance(target, Word) else None
        body = next(heredocs, "") if op.lstrip("0123456789") in ("<<", "<<-") else None
        if op.lstrip("0123456789") == "<<<" and target_word is not None:
            body = target_word.text
        redirects.append((op, target_word, body))
    if words or redirects:
        yield _Simple(words, redirects, opens, 0)


def _command_writes(simple: _Simple, cwd: str | None, writes: list[Write], unknown: list[Unknown],
                    depth: int) -> str | None:
    """Note this simple command's writes; return the cwd for the commands after it."""
    words = list(simple.words)
    while words and words[0].literal and _ASSIGNMENT.match(words[0].text):
        words.pop(0)
    shown = " ".join(w.text for w in simple.words)[:200]

    def target(word: Word | None, via: str, tree: bool = False, validated: bool = False) -> None:
        if word is None:
            return
        if not word.literal:
            unknown.append(Unknown(word.text, via))
            return
        path = os.path.expanduser(word.text)
        if os.path.isabs(path):
            writes.append(Write(os.path.normpath(path), via, tree, validated))
        elif cwd is None:
            unknown.append(Unknown(word.text, via))
        else:
            writes.append(Write(os.path.normpath(os.path.join(cwd, path)), via, tree, validated))

    stdin_bodies: list[str] = []
    for op, word, body in simple.redirects:
        bare = op.lstrip("0123456789")
        if bare in _REDIRECT_WRITES or (bare == ">&" and word is not None and not re.fullmatch(r"\d+-?|-", word.text)):
            target(word, f"{shown} {op} {word.text if word else ''}".strip())
        if body is not None:
            stdin_bodies.append(body)

    words = _unwrap(words)
    if not words:
        return cwd
    name = os.path.basename(words[0].text) if words[0].literal else ""
    args = words[1:]
    if name in ("cd", "pushd"):
        operands = [a for a in args if not (a.literal and a.text.startswith("-") and a.text != "-")]
        if not operands:
            return None  # $HOME or the previous directory: not the project's business to guess
        dest = operands[0]
        if not dest.literal or dest.text == "-":
            return None
        path = os.path.expanduser(dest.text)
        if not os.path.isabs(path):
            if cwd is None:
                return None
            path = os.path.join(cwd, path)
        return os.path.normpath(path)
    if name in _SHELLS:
        script = _shell_script(args)
        if script is not None:
            if script.literal:
                _read(script.text, cwd, writes, unknown, depth + 1)
            else:
                unknown.append(Unknown(script.text, shown))
        for body in stdin_bodies:
            _read(body, cwd, writes, unknown, depth + 1)  # `bash <<EOF` runs the document
        return cwd
    if name == "eval":
        if all(a.literal for a in args):
            _read(" ".join(a.text for a in args), cwd, writes, unknown, depth + 1)
        else:
            unknown.append(Unknown(shown, shown))
        return cwd
    if name == "hookgate":
        for word, validated in _hookgate_targets(args):
            target(word, shown, validated=validated)
        return cwd
    for word, tree in _command_targets(name, args, stdin_bodies):
        target(word, shown, tree)
    return cwd


# hookgate's own commands that change the pipeline state: (command, action) -> the file
_HOOKGATE_WRITES = {("role", "set"): "current_role", ("role", "clear"): "current_role",
                    ("stage", "complete"): "stage.jsonl"}


def _hookgate_targets(args: list[Word]) -> list[tuple[Word, bool]]:
    """`hookgate role set|clear` writes the active role and `hookgate stage complete` the stage log
    (after validating it): subagents may do neither, as they may not write those files."""
    project = _option_values(args, frozenset({"--project"}))
    words = [a.text for a in args if a.literal and not a.text.startswith("-") and a not in project]
    name = _HOOKGATE_WRITES.get(tuple(words[:2]))  # type: ignore[arg-type]
    if name is None:
        return []
    folder = project[0] if project else Word(".", True)
    return [(Word(os.path.join(folder.text, ".hookgate", name), folder.literal), name == "stage.jsonl")]


_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh"})
# wrapper -> its options that take a value (the wrapped command follows)
_WRAPPERS: dict[str, frozenset[str]] = {
    "sudo": frozenset({"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U"}),
    "env": frozenset({"-u", "-C", "--unset", "--chdir", "-S"}),
    "nohup": frozenset(), "command": frozenset(), "builtin": frozenset(), "exec": frozenset({"-a"}),
    "time": frozenset({"-f", "-o"}), "nice": frozenset({"-n"}), "stdbuf": frozenset({"-i", "-o", "-e"}),
    "timeout": frozenset({"-s", "-k", "--signal", "--kill-after"}),
}


def _unwrap(words: list[Word]) -> list[Word]:
    while words and words[0].literal and os.path.basename(words[0].text) in _WRAPPERS:
        name = os.path.basename(words[0].text)
        takes_value = _WRAPPERS[name]
        rest = words[1:]
        while rest and rest[0].literal and (rest[0].text.startswith("-") or (name == "env" and "=" in rest[0].text)):
            option = rest.pop(0).text
            if option == "--":
                break
            if option in takes_value and rest:
                rest.pop(0)
        if name == "timeout" and rest:
            rest.pop(0)  # the duration
        words = rest
    return words


def _shell_script(args: list[Word]) -> Word | None:
    """The STRING of `sh -c STRING` (also `-lc`, `-ec`, ...)."""
    for i, arg in enumerate(args):
        if not (arg.literal and arg.text.startswith("-")):
            return None
        if "c" in arg.text[1:] and not arg.text.startswith("--"):
            return args[i + 1] if i + 1 < len(args) else None
    return None


# command -> options that take a value (so that their value is not an operand)
_OPERAND_WRITERS: dict[str, frozenset[str]] = {
    "touch": frozenset({"-d", "-r", "-t", "--date", "--reference"}),
    "mkdir": frozenset({"-m", "--mode"}),
    "rm": frozenset(), "rmdir": frozenset(), "unlink": frozenset(),
    "shred": frozenset({"-n", "-s", "--iterations", "--size"}),
    "truncate": frozenset({"-s", "-r", "--size", "--reference"}),
    "tee": frozenset(),
}
_COPIERS: dict[str, frozenset[str]] = {
    "cp": frozenset({"-S", "--suffix"}), "mv": frozenset({"-S", "--suffix"}), "ln": frozenset({"-S", "--suffix"}),
    "install": frozenset({"-m", "-o", "-g", "-S", "--mode", "--owner", "--group", "--suffix"}),
}
_OPTION_OUTPUTS: dict[str, frozenset[str]] = {
    "sort": frozenset({"-o", "--output"}), "curl": frozenset({"-o", "--output"}),
    "wget": frozenset({"-O", "--output-document"}),
}
_PYTHON = re.compile(r"python(\d+(\.\d+)?)?|py")


def _command_targets(name: str, args: list[Word], stdin_bodies: list[str]) -> list[tuple[Word, bool]]:
    """(target, whether everything under it may change) for each file this command writes."""
    if name in _OPERAND_WRITERS:
        recursive = name == "rmdir" or (name == "rm" and any(_is_recursive_flag(a) for a in args))
        return [(w, recursive) for w in _operands(args, _OPERAND_WRITERS[name])]
    if name in _COPIERS:
        return _copy_targets(name, args)
    if name in _OPTION_OUTPUTS:
        return [(w, False) for w in _option_values(args, _OPTION_OUTPUTS[name]) if w.text != "-"]  # "-": stdout
    if name == "sed":
        return [(w, False) for w in _in_place_files(args, script_options="efl", value_options="l")]
    if name == "perl":
        return [(w, False) for w in _in_place_files(args, script_options="eE", value_options="IMmx")]
    if name == "dd":
        return [(Word(a.text[3:], a.literal), False) for a in args if a.text.startswith("of=")]
    if name == "find":
        return _find_targets(args)
    if name == "apply_patch":
        texts = [a.text for a in args if a.literal] + stdin_bodies
        return [(Word(path, True), False) for text in texts for path in patch_files(text)]
    if _PYTHON.fullmatch(name):
        code = _option_values(args, frozenset({"-c"}))
        texts = [w.text for w in code if w.literal]
        if not code and (not args or args[0].text == "-"):
            texts += stdin_bodies  # python reading its program from a here-document
        return [(Word(path, True), tree) for text in texts for path, tree in python_writes(text)]
    return []


def _is_recursive_flag(arg: Word) -> bool:
    text = arg.text
    return arg.literal and (text == "--recursive" or (text[:2] != "--" and text[:1] == "-" and bool(set(text) & {"r", "R"})))


def _operands(args: list[Word], takes_value: frozenset[str]) -> list[Word]:
    operands: list[Word] = []
    items = iter(args)
    options_done = False
    for arg in items:
        if not options_done and arg.literal and arg.text.startswith("-") and arg.text != "-":
            if arg.text == "--":
                options_done = True
            elif arg.text in takes_value or (arg.text.split("=")[0] in takes_value and "=" not in arg.text):
                next(items, None)
            continue
        operands.append(arg)
    return operands


def _copy_targets(name: str, args: list[Word]) -> list[tuple[Word, bool]]:
    target_dir: Word | None = None
    cleaned: list[Word] = []
    items = iter(args)
    for arg in items:
        if arg.literal and arg.text in ("-t", "--target-directory"):
            target_dir = next(items, None)
        elif arg.literal and arg.text.startswith("--target-directory="):
            target_dir = Word(arg.text.split("=", 1)[1], True)
        else:
            cleaned.append(arg)
    operands = _operands(cleaned, _COPIERS[name])
    if target_dir is not None:
        sources, dest = operands, target_dir
    elif len(operands) >= 2:
        sources, dest = operands[:-1], operands[-1]
    elif operands and name == "ln":
        sources, dest = operands, Word(".", True)  # `ln -s TARGET` links into the current directory
    else:
        return []
    targets = [(dest, False)] if dest.text != "." else []
    # DEST may be a directory: each source then lands inside it under its own name
    targets += [(Word(os.path.join(dest.text, os.path.basename(s.text.rstrip("/"))), dest.literal and s.literal), False)
                for s in sources]
    if name == "mv":
        targets += [(s, True) for s in sources]  # a move also removes the source, with all it holds
    return targets


def _option_values(args: list[Word], options: frozenset[str]) -> list[Word]:
    values: list[Word] = []
    items = iter(args)
    for arg in items:
        if not arg.literal:
            continue
        if arg.text in options:
            value = next(items, None)
            if value is not None:
                values.append(value)
        elif "=" in arg.text and arg.text.split("=", 1)[0] in options:
            values.append(Word(arg.text.split("=", 1)[1], True))
        elif any(arg.text.startswith(o) and len(arg.text) > len(o) and not o.startswith("--") for o in options):
            values.append(Word(arg.text[2:], True))  # -oFILE
    return values


def _in_place_files(args: list[Word], script_options: str, value_options: str) -> list[Word]:
    """The files `sed -i` / `perl -i` edit in place ([] when not in place)."""
    in_place, script_given = False, False
    operands: list[Word] = []
    items = iter(args)
    for arg in items:
        text = arg.text
        if arg.literal and text.startswith("--"):
            in_place |= text.startswith("--in-place")
            if text in ("--expression", "--file"):
                script_given = True
                next(items, None)
            elif text.startswith(("--expression=", "--file=")):
                script_given = True
            continue
        if arg.literal and text.startswith("-") and len(text) > 1:
            for j, flag in enumerate(text[1:]):
                if flag == "i":
                    in_place = True
                    break  # the rest of the cluster is the backup suffix
                if flag in script_options or flag in value_options:
                    script_given |= flag in script_options
                    if j == len(text) - 2:
                        next(items, None)
                    break
            continue
        operands.append(arg)
    if not in_place:
        return []
    return operands if script_given else operands[1:]


def _find_targets(args: list[Word]) -> list[tuple[Word, bool]]:
    """`find START... -delete` (or -exec/-execdir/-ok) may change anything under its starting points."""
    starts = []
    for arg in args:
        if arg.text.startswith(("-", "(", "!")):
            break
        starts.append(arg)
    actions = {a.text for a in args if a.literal}
    if not actions & {"-delete", "-exec", "-execdir", "-ok", "-okdir"}:
        return []
    return [(s, True) for s in starts or [Word(".", True)]]


# -- writes inside other languages ---------------------------------------------------------------

_PY_STR = r"""[rRbBuU]?(['"])([^'"]+)\{n}"""  # a literal string; {n} is its quote's group number
_PY_OPEN = re.compile(r"\bopen\(\s*" + _PY_STR.format(n=1) + r"""\s*,\s*(?:mode\s*=\s*)?[rRbB]?(['"])([^'"]*)\3""")
_PY_PATH_WRITE = re.compile(
    r"\bPath\(\s*" + _PY_STR.format(n=1) + r"\s*\)\s*\.\s*(write_text|write_bytes|touch|mkdir|unlink|rmdir|rename|"
    r"""replace|symlink_to|hardlink_to|open\(\s*['"][^'"]*[wax+])""")
_PY_ONE_PATH = re.compile(r"\b(?:os\.(?:remove|unlink|rmdir|removedirs|mkdir|makedirs|truncate)|shutil\.rmtree)\(\s*"
                          + _PY_STR.format(n=1))
_PY_TWO_PATHS = re.compile(r"\b(os\.rename|os\.replace|shutil\.(?:copy|copy2|copyfile|copytree|move))\(\s*"
                           + _PY_STR.format(n=2) + r"\s*,\s*" + _PY_STR.format(n=4))


def python_writes(code: str) -> list[tuple[str, bool]]:
    """(path, whether everything under it may change) for each literal path a Python program writes
    (open for writing, pathlib, os, shutil)."""
    paths = [(m.group(2), False) for m in _PY_OPEN.finditer(code) if set(m.group(4)) & set("wax+")]
    paths += [(m.group(2), m.group(3) in ("rmdir", "rename", "replace")) for m in _PY_PATH_WRITE.finditer(code)]
    paths += [(m.group(2), "rmtree" in m.group(0) or "rmdir" in m.group(0)) for m in _PY_ONE_PATH.finditer(code)]
    for m in _PY_TWO_PATHS.finditer(code):
        if m.group(1) in ("os.rename", "os.replace", "shutil.move"):
            paths.append((m.group(3), True))  # the source goes away, with all it holds
        paths.append((m.group(5), False))
    return paths


def patch_files(text: str) -> list[str]:
    """The files an apply_patch patch adds, updates, deletes or moves to (the one patch reader)."""
    return touched_files(text)
