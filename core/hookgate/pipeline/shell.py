"""Which files a shell command writes, read the way bash would run it, before it runs.

The command is lexed (shell_lexer.py) and walked command by command with what the shell will
know by then: variables assigned earlier in the same command (`p=PLAN.md; echo x > $p`, `for f
in src/*.gd`), the current folder (`cd`, `cd -`, `pushd`/`popd`, `~+`, subshells), braces and
globs expanded against the real filesystem at the call's cwd (`{PLAN,STRUCTURE}.md`, `src/*`).
What each program writes is in shell_programs.py.

The answer is two lists: the files written (absolute paths) and the targets that cannot be
known before the command runs (a variable set outside the command, a program that writes on its
own such as `git checkout` or `make`, code an interpreter reads from a pipe, a command this
reader cannot read at all). An unknown target is never taken as harmless: shell_writes.py
decides what to do with it.
"""

import os
import re
from itertools import product
from typing import Iterator, NamedTuple

from . import shell_programs
from .shell_lexer import Heredoc, Op, Part, ShellSyntaxError, Token, Word, is_separator, lex

MAX_COMMAND_CHARS = 100 * 1024   # longer commands are not read: unknown
MAX_SCRIPT_DEPTH = 8             # sh -c inside sh -c inside ... deeper than this: unknown
MAX_FIELDS = 512                 # a word expanding to more words than this (a huge glob): unknown
# device files a write to is no write to any file (`/dev/fd/N` is an open stream of the command)
DEVICES = ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty", "/dev/zero", "/dev/fd/",
           "/proc/self/fd/")
_REDIRECT_WRITES = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})
_RESERVED = frozenset({"if", "then", "else", "elif", "fi", "do", "done", "while", "until", "case", "esac", "{", "}",
                       "!", "function", "in", "time"})
_ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(\[[^\]]*\])?\+?=")
_DECLARERS = frozenset({"export", "declare", "typeset", "local", "readonly"})


class Write(NamedTuple):
    path: str      # absolute
    command: str   # the command (or redirection) that writes it
    tree: bool = False  # it may change everything under `path` (rm -r, mv, find -delete, rmtree)
    validated: bool = False  # `hookgate stage complete`: the append that validates before it writes
    settings: tuple[str, ...] = ()  # a `git config` that sets or unsets these keys, and nothing else


class Unknown(NamedTuple):
    target: str    # what cannot be known before the shell runs (a target, a program, the command)
    command: str
    # what the command leaves running once it returned ("" for nothing): a check after the call
    # cannot see what that writes later, so the target is unknown for good
    outlives: str = ""


def shell_writes(command: str, cwd: str) -> tuple[list[Write], list[Unknown]]:
    """The files `command`, run in `cwd`, would write (absolute paths), and what cannot be known
    before it runs. Never raises: a command this reader cannot read is one unknown."""
    reader = Reader()
    if len(command) > MAX_COMMAND_CHARS:
        reader.unknown.append(Unknown("a command too long to read", command[:200]))
    else:
        reader.read(command, _State(cwd), 0)
    if reader.detached:  # which of the command's unknowns the detached part holds is not tracked: all of them
        left = ", ".join(dict.fromkeys(reader.detached))
        return reader.writes, [item._replace(outlives=left) for item in reader.unknown]
    return reader.writes, reader.unknown


# -- what the shell knows at a point of the command ----------------------------------------------

class _State:
    def __init__(self, cwd: str | None) -> None:
        self.cwd = cwd
        self.oldpwd: str | None = None
        self.dirstack: list[str | None] = []
        self.vars: dict[str, list[str] | None] = {}  # None: set, but to what only the shell knows
        self.made_dirs: set[str] = set()              # folders this command creates (mkdir)
        # command names the shell runs as something else: `hash -p PATH NAME` runs PATH; an alias
        # (None) runs text only the shell's own expansion gives
        self.renamed: dict[str, str | None] = {}

    def copy(self) -> "_State":
        other = _State(self.cwd)
        other.oldpwd, other.dirstack, other.vars = self.oldpwd, list(self.dirstack), dict(self.vars)
        other.renamed = dict(self.renamed)
        other.made_dirs = self.made_dirs  # shared: a folder made in a subshell exists afterwards
        return other

    def absolute(self, path: str) -> str | None:
        if os.path.isabs(path):
            return os.path.normpath(path)
        return None if self.cwd is None else os.path.normpath(os.path.join(self.cwd, path))

    def value(self, name: str) -> list[str] | None:
        if name in self.vars:
            return self.vars[name]
        if name == "HOME":
            return [os.path.expanduser("~")]
        if name == "PWD":
            return None if self.cwd is None else [self.cwd]
        if name == "OLDPWD":
            return None if self.oldpwd is None else [self.oldpwd]
        return None  # set outside this command: only the running shell knows it

    def is_dir(self, path: str) -> bool:
        return path in self.made_dirs or os.path.isdir(path)


# -- expansion: braces, tilde, parameters, word splitting, globs -----------------------------------

def expand(token: Token, state: _State, split: bool = True) -> list[Word]:
    """The words `token` becomes, as far as they are known before the command runs."""
    alternatives = [_braces(p.text) if p.kind == "lit" else [p.text] for p in token.parts]
    combos = list(product(*alternatives)) if len(alternatives) < 20 else [tuple(p.text for p in token.parts)]
    if len(combos) > MAX_FIELDS:
        return [Word(token.text, False)]
    words: list[Word] = []
    for combo in combos:
        parts = [Part(p.kind, text) for p, text in zip(token.parts, combo)]
        fields = _parameters(parts, state, split)
        if fields is None:
            words.append(Word(token.text, False))
            continue
        for chunks in fields:
            words.extend(_glob(chunks, state))
    if len(words) > MAX_FIELDS:
        return [Word(token.text, False)]
    return words


def _parameters(parts: list[Part], state: _State, split: bool) -> list[list[tuple[str, bool]]] | None:
    """Fields of (text, globbable) chunks, or None when a value is unknown."""
    fields: list[list[tuple[str, bool]]] = [[]]
    for index, part in enumerate(parts):
        if part.kind == "lit":
            text = _tilde(part.text, state) if index == 0 else part.text
            if text is None:
                return None
            fields = [f + [(text, True)] for f in fields]
        elif part.kind == "quoted":
            fields = [f + [(part.text, False)] for f in fields]
        elif part.kind in ("param", "qparam"):
            values = state.value(part.text)
            if values is None:
                return None
            unquoted = part.kind == "param"  # "$f" is neither split nor globbed
            new_fields: list[list[tuple[str, bool]]] = []
            for field in fields:
                for value in values:
                    pieces = value.split() if split and unquoted and part.text != "@" else [value]
                    if not pieces:
                        new_fields.append(field)
                        continue
                    new_fields.append(field + [(pieces[0], unquoted)])
                    new_fields.extend([[(piece, unquoted)] for piece in pieces[1:]])
            fields = new_fields
        else:
            return None
        if len(fields) > MAX_FIELDS:
            return None
    return fields


def _tilde(text: str, state: _State) -> str | None:
    if not text.startswith("~"):
        return text
    head, sep, rest = text.partition("/")
    if head == "~+":
        base = state.cwd
    elif head == "~-":
        base = state.oldpwd
    else:
        base = os.path.expanduser(head)
        if base == head:
            return text
    return None if base is None else base + sep + rest


def _glob(chunks: list[tuple[str, bool]], state: _State) -> list[Word]:
    text = "".join(t for t, _ in chunks)
    if not any(g and re.search(r"[*?\[]", t) for t, g in chunks):
        return [Word(text, True)]
    import glob as globbing  # on use: most commands name no glob

    pattern = "".join(t if g else globbing.escape(t) for t, g in chunks)
    if not os.path.isabs(pattern):
        if state.cwd is None:
            return [Word(text, False)]
        matches = sorted(globbing.glob(pattern, root_dir=state.cwd))
    else:
        matches = sorted(globbing.glob(pattern))
    if len(matches) > MAX_FIELDS:
        return [Word(text, False)]
    return [Word(m, True) for m in matches] or [Word(text, True)]  # no match: bash keeps the word


_BRACE = re.compile(r"(?<!\$)\{([^{}]*)\}")


def _braces(text: str) -> list[str]:
    """Brace expansion of unquoted text: {a,b} and {1..3}, innermost first."""
    for match in _BRACE.finditer(text):
        inner = match.group(1)
        if "," in inner:
            options = _split_commas(inner)
        else:
            seq = re.fullmatch(r"(-?\d+)\.\.(-?\d+)(?:\.\.(-?\d+))?|([a-zA-Z])\.\.([a-zA-Z])", inner)
            if not seq:
                continue
            if seq.group(4):
                a, b = ord(seq.group(4)), ord(seq.group(5))
                options = [chr(c) for c in (range(a, b + 1) if a <= b else range(a, b - 1, -1))]
            else:
                a, b, step = int(seq.group(1)), int(seq.group(2)), abs(int(seq.group(3) or 1)) or 1
                options = [str(n) for n in (range(a, b + 1, step) if a <= b else range(a, b - 1, -step))]
            if len(options) > MAX_FIELDS:
                return [text]
        head, tail = text[:match.start()], text[match.end():]
        out: list[str] = []
        for option in options:
            out.extend(_braces(head + option + tail))
            if len(out) > MAX_FIELDS:
                return [text]
        return out
    return [text]


def _split_commas(text: str) -> list[str]:
    return text.split(",")


# -- from tokens to simple commands ------------------------------------------------------------------

class _Simple(NamedTuple):
    tokens: list[Token]
    redirects: list[tuple[str, Token | None, Heredoc | None]]  # operator, target, here-document
    opens: bool      # a subshell `(` starts before it
    closes: int      # subshells that end after it
    piped: bool      # its stdin is the previous command's output


def _simple_commands(tokens: list[Token | Op], heredocs: Iterator[Heredoc]) -> Iterator[_Simple]:
    words: list[Token] = []
    redirects: list[tuple[str, Token | None, Heredoc | None]] = []
    opens, piped = False, False
    case = ""  # inside `case WORD in`: "header" until `in`, "pattern" until `)`, "" in a branch
    items = iter(tokens)
    for token in items:
        if case and not (isinstance(token, Token) and token.literal and token.text == "esac"):
            if case == "header" and isinstance(token, Token) and token.literal and token.text == "in":
                case = "pattern"
            elif case == "pattern" and isinstance(token, Op) and token.text == ")":
                case = ""
            continue  # the case word and its patterns are matched, not run
        if isinstance(token, Token):
            if not words and token.literal and token.text == "case":
                case = "header"
                continue
            if not words and token.literal and token.text == "function":
                next(items, None)  # `function NAME { ...; }`: the name is defined, not run; the body is read
                continue
            if token.literal and token.text == "esac":
                case = ""
            if not words and token.literal and token.text in _RESERVED:
                continue
            words.append(token)
            continue
        op = token.text
        if op in (";;", ";&", ";;&"):
            case = "pattern"
        in_test = bool(words) and words[0].literal and words[0].text == "[["
        if in_test and op in ("<", ">"):
            words.append(Token((Part("lit", op),)))  # [[ a > b ]] compares strings
            continue
        if is_separator(op) or op in ("(", ")"):
            if words or redirects or op == ")":
                yield _Simple(words, redirects, opens, 1 if op == ")" else 0, piped)
                words, redirects, opens = [], [], False
                piped = op in ("|", "|&")
            elif op in ("|", "|&"):
                piped = True
            else:
                piped = False
            opens = opens or op == "("
            continue
        bare = op.lstrip("0123456789")
        target = None if bare in ("<<", "<<-") else next(items, None)  # a delimiter was read by the lexer
        target_token = target if isinstance(target, Token) else None
        document = next(heredocs, Heredoc("", False)) if bare in ("<<", "<<-") else None
        if bare == "<<<" and target_token is not None:
            document = Heredoc(target_token.text, False)
        redirects.append((op, target_token, document))
    if words or redirects:
        yield _Simple(words, redirects, opens, 0, piped)


# -- the reader ------------------------------------------------------------------------------------

class Reader:
    def __init__(self) -> None:
        self.writes: list[Write] = []
        self.unknown: list[Unknown] = []
        self.detached: list[str] = []  # what the command leaves running after it returned

    def read(self, command: str, state: _State, depth: int) -> None:
        """Read `command` (a whole command line, or the script of `sh -c`) run from `state`."""
        if depth > MAX_SCRIPT_DEPTH:
            self.unknown.append(Unknown("shell scripts nested too deep to follow", command[:200]))
            return
        try:
            lexed = lex(command, depth)
        except (ShellSyntaxError, RecursionError) as exc:
            self.unknown.append(Unknown(f"a command hookgate cannot read ({exc})", command[:200]))
            return
        if _leaves_jobs(lexed.tokens):
            self.detached.append("a job started with `&` or `coproc` and not waited for")
        start = state.copy()
        stack: list[_State] = []
        for simple in _simple_commands(lexed.tokens, iter(lexed.heredocs)):
            if simple.opens:
                stack.append(state)
                state = state.copy()
            self._simple(simple, state, depth)
            for _ in range(simple.closes):
                state = stack.pop() if stack else state
        for body in lexed.substitutions:
            self.read(body, start.copy(), depth + 1)
            if state.cwd != start.cwd:
                self.read(body, state.copy(), depth + 1)

    def _simple(self, simple: _Simple, state: _State, depth: int) -> None:
        tokens = list(simple.tokens)
        assignments: list[tuple[str, Token]] = []
        while tokens and _assignment(tokens[0]):
            assignments.append(_assignment(tokens[0]))  # type: ignore[arg-type]
            tokens.pop(0)
        shown = " ".join(t.text for t in simple.tokens)[:200]
        words = [w for t in tokens for w in expand(t, state)]
        call = Call(self, state, shown, depth)

        stdin: list[Heredoc] = []
        for op, target, document in simple.redirects:
            bare = op.lstrip("0123456789")
            if target is not None and (bare in _REDIRECT_WRITES or (bare == ">&" and not re.fullmatch(
                    r"\d+-?|-", target.text))):
                for word in expand(target, state, split=False):
                    call.target(word, via=f"{shown} {op} {target.text}".strip())
            if document is not None:
                stdin.append(document)
            elif bare in ("<", "<&") and target is not None:
                call.stdin_file = True
        call.stdin = stdin
        call.piped = simple.piped

        if not words:
            for name, value in assignments:  # `p=PLAN.md`: known to the commands after it
                state.vars[name] = _value(value, state)
            return
        child = state.copy()
        for name, value in assignments:      # `VAR=x cmd`: only cmd (and shells it runs) see it
            child.vars[name] = _value(value, state)
        call.child = child
        first = words[0].text if words[0].literal else None
        if first in state.renamed:
            runs = state.renamed[first]
            if runs is None:
                call.unknown(f"what the name {first} stands for (an alias, or a program `hash -p` names)")
                return
            words = [Word(runs, True), *words[1:]]
        if not self._builtin(words, tokens, state, call):
            shell_programs.program_writes(words, call)

    def _builtin(self, words: list[Word], tokens: list[Token], state: _State, call: "Call") -> bool:
        """Builtins that change what the shell knows (folder, variables); True when handled."""
        name = words[0].text if words[0].literal else ""
        args = words[1:]
        if name in ("cd", "pushd", "popd"):
            _change_dir(name, args, state)
            return True
        if name in _DECLARERS:
            for token in tokens[1:]:
                found = _assignment(token)
                if found:
                    state.vars[found[0]] = _value(found[1], state)
                    continue
                named = re.match(r"[A-Za-z_]\w*(?==|$)", token.text)
                if named and "=" in token.text:  # `export "NAME=..."`: set, to what only the shell knows
                    state.vars[named.group(0)] = None
                elif re.fullmatch(r"-\w*n\w*", token.text) or not (named or token.text.startswith(("-", "+"))):
                    # a nameref (`declare -n ref=NAME`), `export $name=...`: which variable they set
                    # only the shell knows
                    state.vars[shell_programs.UNNAMED] = None
            return True
        if name in ("read", "mapfile", "readarray", "unset", "getopts"):
            for arg in args:
                if arg.literal and re.fullmatch(r"[A-Za-z_]\w*", arg.text):
                    state.vars[arg.text] = None
            return True
        if name == "hash":  # `hash -p PATH NAME...`: NAME runs PATH from now on
            if len(args) >= 3 and args[0].literal and args[0].text == "-p":
                for renamed in args[2:]:
                    if renamed.literal:
                        state.renamed[renamed.text] = args[1].text if args[1].literal else None
            return True
        if name == "alias":  # what an alias runs is the shell's own expansion: only it knows
            for arg in args:
                if arg.literal and "=" in arg.text:
                    state.renamed[arg.text.split("=", 1)[0]] = None
            return True
        if name in ("for", "select") and len(args) >= 1 and args[0].literal:
            var = args[0].text
            if len(args) >= 2 and args[1].literal and args[1].text == "in":
                values = args[2:]
                state.vars[var] = [v.text for v in values] if all(v.literal for v in values) else None
            else:
                state.vars[var] = None  # `for f; do`: the positional parameters
            return True
        return False


def _leaves_jobs(tokens: list[Token | Op]) -> bool:
    """Whether a script's jobs (`&`, `coproc`) may still run when it ends: a job is waited for
    only by a bare `wait` after it in the same shell (`wait $!`, `wait -n` wait for one; a
    subshell's jobs are not the outer shell's to wait for; a job `disown` let go, no one's)."""
    pending, depth, command_start = False, 0, True
    for index, token in enumerate(tokens):
        if isinstance(token, Op):
            if token.text == "(":
                depth += 1
            elif token.text == ")":
                depth -= 1
            elif token.text == "&":
                if depth > 0:
                    return True
                pending = True
            command_start = is_separator(token.text) or token.text in ("(", ")")
            continue
        word = token.text if command_start and token.literal else None
        if word == "disown":
            return True
        if word == "coproc":
            if depth > 0:
                return True
            pending = True
        following = tokens[index + 1] if index + 1 < len(tokens) else None
        if word == "wait" and depth == 0 and (following is None or (isinstance(following, Op)
                                                                    and is_separator(following.text))):
            pending = False
        command_start = word in _RESERVED
    return pending


def _assignment(token: Token) -> tuple[str, Token] | None:
    first = token.parts[0] if token.parts else None
    if first is None or first.kind != "lit":
        return None
    match = _ASSIGNMENT.match(first.text)
    if not match:
        return None
    rest = first.text[match.end():]
    parts = ((Part("lit", rest),) if rest else ()) + token.parts[1:]
    return match.group(1), Token(parts)


def _value(token: Token, state: _State) -> list[str] | None:
    if not token.parts:
        return [""]
    words = expand(token, state, split=False)
    if not all(w.literal for w in words):
        return None
    return [" ".join(w.text for w in words)]


def _change_dir(name: str, args: list[Word], state: _State) -> None:
    operands = [a for a in args if not (a.literal and a.text.startswith(("-", "+")) and a.text != "-")]
    if name == "popd":
        new = state.dirstack.pop() if state.dirstack else None
        state.oldpwd, state.cwd = state.cwd, new
        return
    if not operands:
        if name == "pushd":
            state.cwd = None  # swaps the top two folders of a stack this reader did not see
            return
        dest: str | None = os.path.expanduser("~")
    elif not operands[0].literal:
        dest = None
    elif operands[0].text == "-" and name == "cd":
        dest = state.oldpwd
    else:
        dest = state.absolute(operands[0].text)
    if name == "pushd":
        state.dirstack.append(state.cwd)
    state.oldpwd, state.cwd = state.cwd, dest


class Call:
    """One simple command as shell_programs.py sees it: where it runs, its stdin, and where its
    findings go."""

    def __init__(self, reader: Reader, state: _State, shown: str, depth: int) -> None:
        self.reader = reader
        self.state = state
        self.child = state
        self.shown = shown
        self.depth = depth
        self.stdin: list[Heredoc] = []
        self.piped = False
        self.stdin_file = False

    @property
    def cwd(self) -> str | None:
        return self.state.cwd

    def probe(self) -> "Call":
        """The same command's surroundings with findings of their own: what would a command
        run here write, without counting it as written."""
        return Call(Reader(), self.state.copy(), self.shown, self.depth)

    def absolute(self, path: str) -> str | None:
        return self.state.absolute(path)

    def is_dir(self, path: str) -> bool:
        return self.state.is_dir(path)

    def made_dir(self, path: str) -> None:
        self.state.made_dirs.add(path)

    def target(self, word: Word, via: str | None = None, tree: bool = False, validated: bool = False,
               settings: tuple[str, ...] = ()) -> None:
        via = via or self.shown
        if not word.literal:
            self.reader.unknown.append(Unknown(word.text, via))
            return
        path = self.absolute(word.text)
        if path is None:
            self.reader.unknown.append(Unknown(word.text, via))
        else:
            self.reader.writes.append(Write(path, via, tree, validated, settings))

    def unknown(self, what: str) -> None:
        self.reader.unknown.append(Unknown(what, self.shown))

    def detaches(self, what: str) -> None:
        """This command leaves `what` running after it returned."""
        self.reader.detached.append(what)

    def script(self, text: str, positional: list[Word] | None = None) -> None:
        """A script this command runs as shell code (sh -c, eval, trap, a here-document)."""
        state = self.child.copy()
        for index, word in enumerate(positional or []):
            state.vars[str(index)] = [word.text] if word.literal else None
        if positional is not None:
            rest = positional[1:]
            state.vars["@"] = [w.text for w in rest] if all(w.literal for w in rest) else None
            state.vars["*"] = state.vars["@"]
        self.reader.read(text, state, self.depth + 1)

    def command(self, words: list[Word]) -> None:
        """A command this one runs (find -exec, xargs, a wrapper): judged as if written here."""
        if words:
            shell_programs.program_writes(words, self)
