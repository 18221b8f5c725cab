"""What a session log keeps of each decided event: the `decision` record, the canonical event as
the gates saw it (bounded, secrets taken out) and what every gate answered. `hookgate explain`
reads it back, and `hookgate replay` decides the events again.

This runs on every hook call: stdlib `re` and msgspec only.

What is never stored (each replaced by a marker that says what was there):
- any string longer than MAX_CHARS: kept as {"cut": length, "sha256": digest, "tail": the last
  TAIL_CHARS}; a PostToolUse's `tool_response` (the tool's output) only ever as its digest;
- env-like assignments whose name says secret (`API_KEY=...`, `export GITHUB_TOKEN=...`,
  `password: ...`): the value becomes `[redacted]`;
- tokens by their shape: private key blocks, `Bearer ...`, JWTs, AWS access key ids, GitHub,
  Slack, OpenAI/Anthropic-style `sk-` keys, npm tokens, and `user:password@` in URLs.
A record whose event lost anything names the fields in `redacted` and `cut`; replay reports such
calls as inexact instead of judging them by what is left.
"""

from __future__ import annotations

import re
from typing import Any, Sequence

import msgspec

from .digest import sha256_hex

MAX_CHARS = 8192  # a string longer than this is cut to a digest and a tail
TAIL_CHARS = 512
MAX_DEPTH = 12
REDACTED = "[redacted]"

# A name that says secret (tested on the whole name, after the match: a name pattern with the
# words inside it backtracks quadratically over long runs of letters, and this runs on every call)
_SECRET_WORD = (r"(?i)secret|token|passw(?:or)?d|passwd|api[_-]?key|access[_-]?key|private[_-]?key"
                r"|credentials?|authorization|auth[_-]?token")
# possessive: a name is taken whole, never re-tried shorter
_ASSIGNMENT = (
    r"""(?P<name>\b[A-Za-z_][A-Za-z0-9_.-]{0,63}+["']?)(?P<sep>\s*[=:]\s*)(?P<value>"[^"\n]*"|'[^'\n]*'|[^\s'";&|,}]+)"""
)
# (a literal every match contains, looked for first: most strings have none, and `in` is cheap
# where a regular expression tried at every position is not; the hint is tested lower-cased)
_TOKEN_SHAPES = (
    ("private key", r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)"),
    ("bearer", r"\b(?i:bearer)\s+[A-Za-z0-9._~+/=-]{12,}"),
    ("eyj", r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    ("akia", r"\bAKIA[0-9A-Z]{16}\b"),
    ("asia", r"\bASIA[0-9A-Z]{16}\b"),
    ("gh", r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}\b|\bgithub_pat_[A-Za-z0-9_]{20,}"),
    ("xox", r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
    ("sk-", r"\bsk-[A-Za-z0-9_-]{20,}"),
    ("npm_", r"\bnpm_[A-Za-z0-9]{30,}\b"),
    ("://", r"(?<=://)[^/\s:@]+:[^/\s@]+(?=@)"),
)
# each expression compiled the first time a text holds its hint: a cold hook process whose texts
# hold none (most) compiles none of them
_compiled: dict[str, re.Pattern[str]] = {}


def _pattern(source: str) -> re.Pattern[str]:
    pattern = _compiled.get(source)
    if pattern is None:
        pattern = _compiled[source] = re.compile(source)
    return pattern


_SECRET_HINTS = ("secret", "token", "passw", "api_key", "apikey", "api-key", "access_key", "access-key",
                 "private_key", "private-key", "credential", "authorization", "auth_token", "auth-token")
# the name side of an assignment that only looks like one: keep `--auth-type=none`-style flags readable
_HARMLESS_VALUES = frozenset({"", "true", "false", "none", "null", "0", "1"})
# fields whose value is the tool's output, never the agent's input: only their digest is kept
DIGEST_ONLY = frozenset({"tool_response"})


# scrub is a pure function of its text, and a session's calls repeat most of theirs (the working
# directory, the session id, the paths, the reasons): short texts are scrubbed once per process
_SCRUBBED: dict[str, tuple[str, bool]] = {}
_MEMO_CHARS = 1024
_MEMO_ENTRIES = 2048


def scrub(text: str) -> tuple[str, bool]:
    """The text with secrets replaced; whether anything was."""
    if len(text) < 8:
        return text, False
    known = _SCRUBBED.get(text)
    if known is not None:
        return known
    scrubbed = _scrub(text)
    if len(text) <= _MEMO_CHARS:
        if len(_SCRUBBED) >= _MEMO_ENTRIES:
            _SCRUBBED.clear()
        _SCRUBBED[text] = scrubbed
    return scrubbed


def _scrub(text: str) -> tuple[str, bool]:
    found = False

    def assignment(match: re.Match[str]) -> str:
        nonlocal found
        value = match.group("value").strip("'\"")
        if not _pattern(_SECRET_WORD).search(match.group("name")) or value.lower() in _HARMLESS_VALUES or value == REDACTED:
            return match.group(0)
        found = True
        return f"{match.group('name')}{match.group('sep')}{REDACTED}"

    def token(match: re.Match[str]) -> str:
        nonlocal found
        found = True
        return REDACTED

    lower = text.lower()
    out = text
    for hint, shape in _TOKEN_SHAPES:  # first: `Authorization: Bearer <token>` is a token, not a value `Bearer`
        if hint in lower:
            out = _pattern(shape).sub(token, out)
    if ("=" in out or ":" in out) and any(hint in lower for hint in _SECRET_HINTS):
        out = _pattern(_ASSIGNMENT).sub(assignment, out)
    return out, found


def _digest(text: str) -> str:
    return sha256_hex(text.encode("utf-8", "surrogatepass"))


def _value_digest(value: Any) -> str | None:
    """The digest of a value's JSON; None for one nested too deep to encode from here (the
    decoder read it higher up the stack: a payload a few hundred levels deep fits one and not the
    other, and its record must not turn the decision into hookgate's internal error)."""
    try:
        return _digest(msgspec.json.encode(value).decode())
    except RecursionError:
        return None


_SCALARS = frozenset({int, float, bool, type(None)})


def _kept(item: Any) -> bool:
    """Stored as it is (what _Bounds.value would return unchanged, found the short way): a
    number, a bool, None, or a string short enough to keep with nothing in it to scrub."""
    kind = type(item)
    if kind is str:
        return len(item) <= MAX_CHARS and not scrub(item)[1]
    return kind in _SCALARS


class _Bounds:
    def __init__(self) -> None:
        self.redacted: list[str] = []
        self.cut: list[str] = []

    def value(self, value: Any, where: str, depth: int = 0) -> Any:
        if isinstance(value, str):
            return self.text(value, where)
        if depth >= MAX_DEPTH and isinstance(value, (dict, list)):
            self.cut.append(where)
            return {"cut": "depth", "sha256": _value_digest(value)}
        if isinstance(value, dict):
            return {key: item if _kept(item) else self.value(item, f"{where}.{key}", depth + 1)
                    for key, item in value.items()}
        if isinstance(value, list):
            return [item if _kept(item) else self.value(item, f"{where}[{i}]", depth + 1)
                    for i, item in enumerate(value)]
        return value

    def text(self, text: str, where: str) -> Any:
        clean, found = scrub(text) if len(text) <= 4 * MAX_CHARS else (text, False)
        if found:
            self.redacted.append(where)
        if len(clean) <= MAX_CHARS:
            return clean
        self.cut.append(where)
        tail, found = scrub(text[-TAIL_CHARS:])
        return {"cut": len(text), "sha256": _digest(text), "tail": tail}


def canonical(event: Any) -> dict[str, Any]:
    """The event as stored: every set field of the canonical event, bounded and scrubbed, with
    `redacted` and `cut` naming what was taken out."""
    try:
        built = msgspec.to_builtins(event)
    except RecursionError:  # too deep to walk from here (see _value_digest): the fields as they are, bounded below
        built = msgspec.structs.asdict(event)
    fields = {k: v for k, v in built.items() if v is not None and v != [] and v != {}}
    bounds = _Bounds()
    stored: dict[str, Any] = {}
    for key, value in fields.items():
        if key in DIGEST_ONLY:
            bounds.cut.append(key)
            stored[key] = {"cut": "output", "sha256": _value_digest(value)}
        else:
            stored[key] = value if _kept(value) else bounds.value(value, key)
    if bounds.redacted:
        stored["redacted"] = bounds.redacted
    if bounds.cut:
        stored["cut"] = bounds.cut
    return stored


def decision_record(event: Any, decision: Any, *, role: str | None, stages: int, root: str, part: int,
                    parts: int) -> dict[str, Any]:
    """The `decision` metrics record of one evaluated event (the last record of its call)."""
    verdict = decision.verdict
    record: dict[str, Any] = {
        "decision": verdict.kind,
        "reason": getattr(verdict, "reason", None),
        "tool_use_id": getattr(event, "tool_use_id", None),
        "tool": getattr(event, "tool_name", None),
        "gates": [{"id": gid, "verdict": kind, **({"reason": reason} if reason else {})}
                  for gid, kind, reason in decision.ran],
        "blocked_by": list(decision.blocked_by),
        "role": role,
        "stages": stages,
        "root": root,
        "call": canonical(event),
    }
    if decision.forced:
        record["forced"] = list(decision.forced)
    if decision.failed:
        record["failed"] = list(decision.failed)
    if decision.monitored:
        record["would_block"] = list(decision.monitored)
    if parts > 1:
        record.update(part=part, parts=parts)
    if record["reason"] is not None:
        record["reason"], _ = scrub(record["reason"])
    return record


def what_it_saw(ctx: Any) -> tuple[str | None, int]:
    """What a call's records say its decision saw: the active role and the stages completed,
    read when it was made (its records may be made later: hookcall.judge)."""
    return ctx.current_role(), len(ctx.project.stage_log())


def decision_records(ctx: Any, events: Sequence[Any], decisions: Sequence[Any],
                     saw: tuple[str | None, int]) -> list[dict[str, Any]]:
    """One `decision` record per evaluated event of a call, each with the metrics records the call
    noted (what explain needs: which hook denied, which handler, which paths). No timing here:
    the same calls leave the same files, warm or in-process; the OpenTelemetry span has it."""
    role, stages = saw
    root = ctx.project.root_text
    noted = _Bounds().value([dict(r) for r in ctx.records], "records")
    out = []
    for part, (event, decision) in enumerate(zip(events, decisions)):
        record = decision_record(event, decision, role=role, stages=stages, root=root, part=part,
                                 parts=len(events))
        record["records"] = noted
        out.append({"event": "decision", **record})
    return out
