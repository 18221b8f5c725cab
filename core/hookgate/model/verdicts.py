"""Verdicts, and the one pure function that folds several gates' verdicts into one.

A verdict is what a gate thinks of one event. Every kind may also carry `message` (shown to the
user, Claude's `systemMessage`) and `context` (shown to the model, `additionalContext`).

Precedence of `combine()`, strongest first:

    kind      wins over          merged from all verdicts of that kind
    block     everything         reasons, in gate order, de-duplicated
    retry     ask, modify, ...   reasons; delay_ms = the longest asked for
    ask       modify, context    reasons
    modify    context, allow     updated_input of the last modify (later gates see earlier rewrites)
    context   allow              -
    allow     -                  -

Context and messages are merged from every verdict, whatever wins: a deny still tells the model
what the other gates wanted it to know.
"""

from typing import Any, ClassVar, Iterable

import msgspec


class Verdict(msgspec.Struct, frozen=True, kw_only=True, tag_field="kind"):
    # True when the action must not go ahead as asked (block, retry); a class attribute, as the
    # kind is (below): every decision asks a few times
    refuses: ClassVar[bool] = False

    message: str | None = None
    context: str | None = None

    @property
    def kind(self) -> str:
        return str(type(self).__struct_config__.tag)


class Allow(Verdict, frozen=True, kw_only=True, tag="allow"):
    """No opinion."""


class Context(Verdict, frozen=True, kw_only=True, tag="context"):
    """Allow, and tell the model something."""

    context: str


class Modify(Verdict, frozen=True, kw_only=True, tag="modify"):
    """Allow with a rewritten tool input (the whole input, unchanged fields included)."""

    updated_input: dict[str, Any]


class Refusal(Verdict, frozen=True, kw_only=True):
    """A verdict that does not let the action go ahead as asked, and says why: ask, retry, block.
    `isinstance(verdict, Refusal)` narrows to one with a `reason`."""

    reason: str


class Ask(Refusal, frozen=True, kw_only=True, tag="ask"):
    """Let the user decide (degrades per runtime; see the parity report)."""


class Retry(Refusal, frozen=True, kw_only=True, tag="retry"):
    """Refuse this call; it may succeed later. The call is not rescheduled."""

    refuses: ClassVar[bool] = True

    delay_ms: int = 1000


class Block(Refusal, frozen=True, kw_only=True, tag="block"):
    refuses: ClassVar[bool] = True


AnyVerdict = Allow | Context | Modify | Ask | Retry | Block
for _kind in (Allow, Context, Modify, Ask, Retry, Block):
    _kind.kind = str(_kind.__struct_config__.tag)  # type: ignore[assignment]
del _kind
PRECEDENCE: tuple[type[Verdict], ...] = (Block, Retry, Ask, Modify, Context, Allow)
_rank = {cls: rank for rank, cls in enumerate(PRECEDENCE)}

ALLOW = Allow()


def combine(verdicts: Iterable[Verdict]) -> Verdict:
    """Fold verdicts (in gate order) into one, by the precedence table above. Pure."""
    verdicts = list(verdicts)
    if not verdicts:
        return ALLOW
    if len(verdicts) == 1 and _folded(verdicts[0]):  # most events: one gate had something to say
        return verdicts[0]
    winner_cls = min((type(v) for v in verdicts), key=_rank.__getitem__)
    message = _merge(v.message for v in verdicts)
    context = _merge(v.context for v in verdicts)
    if winner_cls is Block:
        return Block(reason=_reasons(verdicts, Block), message=message, context=context)
    if winner_cls is Retry:
        delay = max(v.delay_ms for v in verdicts if isinstance(v, Retry))
        return Retry(reason=_reasons(verdicts, Retry), delay_ms=delay, message=message, context=context)
    if winner_cls is Ask:
        return Ask(reason=_reasons(verdicts, Ask), message=message, context=context)
    if winner_cls is Modify:
        last = [v for v in verdicts if isinstance(v, Modify)][-1]
        return Modify(updated_input=last.updated_input, message=message, context=context)
    if context:
        return Context(context=context, message=message)
    return Allow(message=message)


def _folded(verdict: Verdict) -> bool:
    """Whether one verdict alone is already what combine() folds it into: no empty text (folded to
    None), and no context on an allow (folded into a Context)."""
    return verdict.message != "" and (verdict.context is None if type(verdict) is Allow else verdict.context != "")


def _reasons(verdicts: list[Verdict], kind: type[Refusal]) -> str:
    """The reasons of the verdicts of exactly that kind (not its subclasses' or bases')."""
    return _merge(v.reason for v in verdicts if type(v) is kind and isinstance(v, Refusal)) or ""


def _merge(texts: Iterable[str | None]) -> str | None:
    seen: list[str] = []
    for text in texts:
        if text and text not in seen:
            seen.append(text)
    return "\n".join(seen) or None
