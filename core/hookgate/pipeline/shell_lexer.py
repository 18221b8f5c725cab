"""A shell lexer that reads what bash reads (no regex over the whole string).

It follows bash's token recognition: quotes ('...', "...", $'...', $"..."), backslashes, operators
and redirections (with their fd numbers), comments, here-documents, and `$(...)`, backquotes and
`<(...)`, whose contents are commands of their own and are read the same way (a `$(...)` is read
by a nested lexer, so quotes, comments and here-documents inside it are read as bash reads them).

A word is kept as its parts: literal text (quoted or not), parameters ($NAME, ${NAME}) and
expansions whose value only the running shell knows ($(...), $((...)), ${x:-y}, backquotes), so
that what can be resolved before the call (variables set earlier, globs, braces) is resolved by
the reader and the rest stays unknown. What this lexer cannot read (an unclosed quote, nesting
past MAX_NESTING) raises ShellSyntaxError: the caller treats the whole command as unknown, never
as harmless (bash runs a command line by line, so a later syntax error does not stop earlier lines).
"""

import re
from typing import NamedTuple

MAX_NESTING = 24  # $(...) inside $(...) deeper than this is not followed: the command is unknown
_OPERATORS = sorted(["&&", "||", ";;", ";&", ";;&", "|&", ">>", "<<<", "<<-", "<<", ">&", "<&", "&>>", "&>", ">|",
                     "<>", "|", "&", ";", "(", ")", "<", ">"], key=len, reverse=True)
_SEPARATORS = frozenset({"&&", "||", ";;", ";&", ";;&", "|&", "|", "&", ";", "\n"})
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SIMPLE_BRACED = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-])\}")
_ANSI_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f",
                 "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}


class ShellSyntaxError(ValueError):
    """A command this lexer cannot read (unclosed quote or substitution, nesting too deep)."""


class Part(NamedTuple):
    kind: str    # "lit" (unquoted text), "quoted" (quoted text), "param" / "qparam" (a variable's name,
                 # unquoted / inside "..."), "expansion" (a value only the running shell knows)
    text: str    # the text, the parameter's name, or the expansion as written


class Token(NamedTuple):
    parts: tuple[Part, ...]

    @property
    def text(self) -> str:
        """The word as the reader shows it: literal text, expansions as written."""
        return "".join(p.text if p.kind in ("lit", "quoted") else ("$" + p.text if p.kind in ("param", "qparam") else p.text)
                       for p in self.parts)

    @property
    def literal(self) -> bool:
        return all(p.kind in ("lit", "quoted") for p in self.parts)


class Op(NamedTuple):
    text: str


class Word(NamedTuple):
    """A word after expansion (shell.py): `literal` when its value is known before the command runs."""
    text: str
    literal: bool


class Heredoc(NamedTuple):
    body: str
    expands: bool  # an unquoted delimiter: $(...) and backquotes in the body run


class Lexed(NamedTuple):
    tokens: list[Token | Op]
    substitutions: list[str]   # bodies of $(...), `...`, <(...), >(...), in order
    heredocs: list[Heredoc]    # in the order their << appear


def lex(text: str, depth: int = 0) -> Lexed:
    lexer = _Lexer(text, 0, depth, nested=False)
    lexer.run()
    return Lexed(lexer.tokens, lexer.substitutions, lexer.heredocs)


class _Lexer:
    def __init__(self, text: str, start: int, depth: int, nested: bool) -> None:
        if depth > MAX_NESTING:
            raise ShellSyntaxError("command substitutions nested too deep to follow")
        self.text = text
        self.i = start
        self.depth = depth
        self.nested = nested  # inside $(...): stop at the `)` that closes it
        self.tokens: list[Token | Op] = []
        self.substitutions: list[str] = []
        self.heredocs: list[Heredoc] = []
        self._pending: list[tuple[str, bool, bool]] = []  # (delimiter, strip tabs, expands)

    # -- words -------------------------------------------------------------------------------------
    def run(self) -> None:
        text = self.text
        parts: list[Part] = []
        started = False
        parens = 0   # ( ... ) opened inside a nested $(...)
        cases = 0    # `case ... esac` open: its `pat)` does not close a $(...)

        def end_word() -> None:
            nonlocal parts, started, cases
            if started:
                token = Token(tuple(_merge(parts)))
                if token.literal and token.text == "case":
                    cases += 1
                elif token.literal and token.text == "esac":
                    cases = max(0, cases - 1)
                self.tokens.append(token)
            parts, started = [], False

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
                parts.append(Part("quoted", text[self.i + 1:self.i + 2]))
                started = True
                self.i += 2
            elif c == "'":
                end = text.find("'", self.i + 1)
                if end < 0:
                    raise ShellSyntaxError("unclosed single quote")
                parts.append(Part("quoted", text[self.i + 1:end]))
                started = True
                self.i = end + 1
            elif c == '"':
                parts.extend(self._double_quoted())
                started = True
            elif c == "$" and text.startswith("'", self.i + 1):
                parts.append(Part("quoted", self._ansi_c()))
                started = True
            elif c == "$" and text.startswith('"', self.i + 1):
                self.i += 1
                parts.extend(self._double_quoted())
                started = True
            elif c == "$" or c == "`":
                parts.append(self._expansion())
                started = True
            elif c in "<>" and text.startswith("(", self.i + 1):
                end_word()
                self.i += 2
                self.substitutions.append(self._nested_body())
                self.tokens.append(Token((Part("lit", "/dev/fd/63"),)))  # what bash passes: a pipe
            elif c == "(" and not started and text.startswith("((", self.i) and self._at_command_start():
                self._arithmetic_command()
            elif c in "|&;<>()":
                if c == ")" and self.nested:
                    end_word()  # first: an `esac` just before closes its case
                    if parens == 0 and cases == 0:
                        self.i += 1
                        return
                op = next(o for o in _OPERATORS if text.startswith(o, self.i))
                digits = "".join(p.text for p in parts)
                if op[0] in "<>" and started and all(p.kind == "lit" for p in parts) and digits.isdigit():
                    parts, started = [], False  # an fd number: `2>` is one redirection
                    op = digits + op
                    self.i += len(op) - len(digits)
                else:
                    end_word()
                    self.i += len(op)
                if op == "(":
                    parens += 1
                elif op == ")" and (parens > 0 or not cases):
                    parens -= 1  # (in a case, a `)` at depth 0 ends a pattern)
                self.tokens.append(Op(op))
                if op.lstrip("0123456789") in ("<<", "<<-"):
                    self._note_heredoc(op.endswith("-"))
            else:
                parts.append(Part("lit", c))
                started = True
                self.i += 1
        if self.nested:
            raise ShellSyntaxError("unclosed $(")
        end_word()
        for _ in self._pending:
            self.heredocs.append(Heredoc("", False))  # a document never given is empty
        self._pending = []

    def _at_command_start(self) -> bool:
        last = self.tokens[-1] if self.tokens else None
        return last is None or (isinstance(last, Op) and (last.text in _SEPARATORS or last.text in ("(", ")"))) or (
            isinstance(last, Token) and last.literal and last.text in ("for", "do", "then", "else", "!", "{"))

    def _arithmetic_command(self) -> None:
        """`(( ... ))`: arithmetic, whose `<` and `>` compare; `$(...)` inside still runs."""
        self.i += 1
        body = self._balanced("(", ")")
        for match in re.finditer(r"\$\(", body):
            if not body.startswith("$((", match.start()):
                self.substitutions.append(body[match.end():])  # read approximately: it runs
        self.tokens.append(Token((Part("expansion", "((" + body[1:-1] + "))"),)))

    def _double_quoted(self) -> list[Part]:
        text = self.text
        parts: list[Part] = []
        chars: list[str] = []
        self.i += 1
        while self.i < len(text):
            c = text[self.i]
            if c == '"':
                self.i += 1
                return parts + ([Part("quoted", "".join(chars))] if chars or not parts else [])
            if c == "\\" and text[self.i + 1:self.i + 2] in ('"', "\\", "$", "`", "\n"):
                if text[self.i + 1] != "\n":
                    chars.append(text[self.i + 1])
                self.i += 2
            elif c == "$" and (self.i + 1 < len(text) and (text[self.i + 1] in "({`" or _NAME.match(text, self.i + 1)
                                                          or text[self.i + 1] in "@*#?$!-0123456789")) or c == "`":
                if chars:
                    parts.append(Part("quoted", "".join(chars)))
                    chars = []
                part = self._expansion()
                parts.append(Part("qparam", part.text) if part.kind == "param" else part)
            else:
                chars.append(c)
                self.i += 1
        raise ShellSyntaxError("unclosed double quote")

    def _ansi_c(self) -> str:
        """$'...': backslash escapes are decoded, \\' does not close it."""
        text = self.text
        out: list[str] = []
        self.i += 2
        while self.i < len(text):
            c = text[self.i]
            if c == "'":
                self.i += 1
                return "".join(out)
            if c == "\\" and self.i + 1 < len(text):
                nxt = text[self.i + 1]
                if nxt in _ANSI_ESCAPES:
                    out.append(_ANSI_ESCAPES[nxt])
                    self.i += 2
                    continue
                match = re.match(r"x([0-9a-fA-F]{1,2})|u([0-9a-fA-F]{1,4})|U([0-9a-fA-F]{1,8})|([0-7]{1,3})",
                                 text[self.i + 1:])
                if match:
                    value = int(next(g for g in match.groups() if g), 8 if match.group(4) else 16)
                    out.append(chr(value) if value < 0x110000 else "")
                    self.i += 1 + match.end()
                    continue
                out.append(c + nxt)
                self.i += 2
                continue
            out.append(c)
            self.i += 1
        raise ShellSyntaxError("unclosed $' quote")

    def _expansion(self) -> Part:
        """$name, ${...}, $(...), $((...)), `...`."""
        text, start = self.text, self.i
        if text[self.i] == "`":
            end = self.i + 1
            while end < len(text) and text[end] != "`":
                end += 2 if text[end] == "\\" else 1
            if end >= len(text):
                raise ShellSyntaxError("unclosed backquote")
            body = re.sub(r"\\([`$\\])", r"\1", text[self.i + 1:end])
            self.substitutions.append(body)
            self.i = end + 1
            return Part("expansion", text[start:self.i])
        if text.startswith("$((", self.i):
            self.i += 1
            body = self._balanced("(", ")")
            for match in re.finditer(r"\$\(", body):
                if not body.startswith("$((", match.start()):
                    self.substitutions.append(body[match.end():])
            return Part("expansion", text[start:self.i])
        if text.startswith("$(", self.i):
            self.i += 2
            self.substitutions.append(self._nested_body())
            return Part("expansion", text[start:self.i])
        if text.startswith("${", self.i):
            self.i += 1
            self._balanced("{", "}")
            simple = _SIMPLE_BRACED.fullmatch(text, start, self.i)
            if simple:
                return Part("param", simple.group(1))
            return Part("expansion", text[start:self.i])
        self.i += 1
        name = _NAME.match(text, self.i)
        if name:
            self.i = name.end()
            return Part("param", name.group(0))
        if self.i < len(text) and text[self.i] in "@*#?$!-0123456789":
            self.i += 1
            return Part("param", text[self.i - 1])
        return Part("lit", "$")

    def _nested_body(self) -> str:
        """The text of a $(...) (self.i just after its `(`), read by a nested lexer."""
        start = self.i
        inner = _Lexer(self.text, start, self.depth + 1, nested=True)
        inner.run()
        self.i = inner.i
        self.substitutions.extend(inner.substitutions)  # read again by the reader, with the body
        return self.text[start:self.i - 1]

    def _balanced(self, open_: str, close: str) -> str:
        """The text from the bracket at self.i to its match (quotes respected)."""
        text, depth, start = self.text, 0, self.i
        while self.i < len(text):
            c = text[self.i]
            if c == "'" and open_ == "{":
                end = text.find("'", self.i + 1)
                self.i = len(text) if end < 0 else end + 1
                continue
            if c == '"':
                self._double_quoted()
                continue
            if c == "\\":
                self.i += 2
                continue
            if c == "$" and text.startswith("(", self.i + 1) and not text.startswith("((", self.i + 1):
                self.i += 2
                self.substitutions.append(self._nested_body())  # ${x:-$(cmd)} runs cmd
                continue
            if c == "`":
                self._expansion()
                continue
            if c == open_:
                depth += 1
            elif c == close:
                depth -= 1
                if depth == 0:
                    self.i += 1
                    return text[start:self.i]
            self.i += 1
        raise ShellSyntaxError(f"unclosed {open_}")

    # -- here-documents ----------------------------------------------------------------------------
    def _note_heredoc(self, strip_tabs: bool) -> None:
        """The delimiter after << is a word with its quotes removed; quoting any of it means the
        body is not expanded."""
        text = self.text
        while self.i < len(text) and text[self.i] in " \t":
            self.i += 1
        chars: list[str] = []
        quoted = False
        while self.i < len(text) and text[self.i] not in " \t\n;&|<>()":
            c = text[self.i]
            if c in "'\"":
                end = text.find(c, self.i + 1)
                if end < 0:
                    raise ShellSyntaxError("unclosed quote in a here-document delimiter")
                chars.append(text[self.i + 1:end])
                quoted = True
                self.i = end + 1
            elif c == "\\":
                chars.append(text[self.i + 1:self.i + 2])
                quoted = True
                self.i += 2
            elif c == "$" and text.startswith("(", self.i + 1):
                begin = self.i
                self.i += 1
                self._balanced("(", ")")
                chars.append(text[begin:self.i])  # bash takes it as written, not run
            else:
                chars.append(c)
                self.i += 1
        if chars:
            self._pending.append(("".join(chars), strip_tabs, not quoted))

    def _read_heredocs(self) -> None:
        for delimiter, strip_tabs, expands in self._pending:
            body: list[str] = []
            while self.i < len(self.text):
                end = self.text.find("\n", self.i)
                end = len(self.text) if end < 0 else end
                line = self.text[self.i:end]
                self.i = end + 1
                if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                    break
                body.append(line)
            self.i = min(self.i, len(self.text))
            document = "\n".join(body)
            self.heredocs.append(Heredoc(document, expands))
            if expands:
                self.substitutions.extend(substitutions_in(document, self.depth))
        self._pending = []


def substitutions_in(document: str, depth: int = 0) -> list[str]:
    """The $(...) and backquote bodies an expanded here-document (or other double-quoted text) runs."""
    escaped = document.replace("\\", "\\\\").replace('"', '\\"')
    lexer = _Lexer('"' + escaped + '"', 0, depth, nested=False)
    try:
        lexer._double_quoted()
    except ShellSyntaxError:
        return [document]  # unreadable: let the reader see the whole text as commands
    return lexer.substitutions


def _merge(parts: list[Part]) -> list[Part]:
    merged: list[Part] = []
    for part in parts:
        if merged and part.kind == merged[-1].kind and part.kind in ("lit", "quoted"):
            merged[-1] = Part(part.kind, merged[-1].text + part.text)
        else:
            merged.append(part)
    return merged


def is_separator(op: str) -> bool:
    return op in _SEPARATORS
