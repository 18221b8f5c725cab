"""The gate of one hooks.json event: run the handlers whose matcher fits the event, all at once,
and fold their outcomes into one verdict.

    exit 0    stdout may hold a JSON decision:
                {"decision": "block", "reason": ...}
                {"hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": ...}}
                {"additionalContext": ...}            (also inside hookSpecificOutput)
                {"systemMessage": ...}                shown to the user
              plain text is context on SessionStart and UserPromptSubmit (Claude's convention),
              ignored elsewhere
    exit 2    block, stderr is the reason
    other     a non-blocking failure, logged; so are a timeout and a command that cannot start

Any block wins and every block reason is kept. On an event seed 002 does not let a hook block,
a block is passed on as context (feedback to the model) instead.
"""

from __future__ import annotations

import os
from typing import Sequence

import msgspec

from ..digest import sha256_hex
from ..engine.context import Context
from ..model.events import Event
from ..model.verdicts import Allow, Block, Context as ContextVerdict, Verdict
from .run import Outcome, run_all
from .spec import EVENTS, Handler, Problem

PLAIN_STDOUT_IS_CONTEXT = frozenset({"SessionStart", "UserPromptSubmit"})
_encoder = msgspec.json.Encoder()


class _Specific(msgspec.Struct, frozen=True):
    permissionDecision: str | None = None
    permissionDecisionReason: str | None = None
    additionalContext: str | None = None


class _Decision(msgspec.Struct, frozen=True):
    decision: str | None = None
    reason: str | None = None
    additionalContext: str | None = None
    systemMessage: str | None = None
    hookSpecificOutput: _Specific | None = None


_decision = msgspec.json.Decoder(_Decision)


class CommandHooks:
    """The `check` of one event's gate."""

    def __init__(self, event: str, handlers: Sequence[Handler]) -> None:
        self.event = event
        self.can_block = EVENTS[event]
        self.handlers = [(handler, handler.compiled_matcher()) for handler in handlers]

    def __call__(self, event: Event, ctx: Context) -> Verdict | None:
        # an event without a match field ignores matchers, as Claude does
        value = event.match_value
        matched = [h for h, matches in self.handlers if event.match_field is None or matches(value)]
        if not matched:
            return None
        root = ctx.project.root_text
        env = {**os.environ, "HOOKGATE_PROJECT_DIR": root, "HOOKGATE_SESSION_ID": event.session_id,
               "HOOKGATE_HOOK_EVENT": event.name}
        return self.fold(run_all(matched, stdin_payload(event, root), root, env), ctx)

    def fold(self, outcomes: Sequence[Outcome], ctx: Context) -> Verdict | None:
        blocks: list[str] = []
        contexts: list[str] = []
        messages: list[str] = []
        for outcome in outcomes:
            handler = outcome.handler
            try:
                decision = self._decision(outcome)
            except ValueError as exc:
                ctx.record("command_hook_error", command=handler.command, file=handler.file, where=handler.where,
                           error=str(exc))
                ctx.warn(f"hookgate: command hook `{handler.command}` failed ({exc}); ignored")
                continue
            specific = decision.hookSpecificOutput or _Specific()
            default = f"blocked by command hook `{handler.command}`"
            if decision.decision == "block":
                blocks.append(decision.reason or default)
            elif specific.permissionDecision == "deny":
                blocks.append(specific.permissionDecisionReason or decision.reason or default)
            if decision.decision == "block" or specific.permissionDecision == "deny":
                # which handler refused, for `hookgate explain`
                ctx.record("command_hook_block", command=handler.command, file=handler.file, where=handler.where,
                           matcher=handler.matcher)
            contexts += filter(None, [decision.additionalContext, specific.additionalContext])
            messages += filter(None, [decision.systemMessage])
        if blocks and not self.can_block:
            ctx.warn(f"hookgate: a command hook cannot block {self.event}; its reason is passed on as context")
            contexts, blocks = blocks + contexts, []
        context = _join(contexts)
        message = _join(messages)
        if blocks:
            return Block(reason=_join(blocks) or "", context=context, message=message)
        if context:
            return ContextVerdict(context=context, message=message)
        return Allow(message=message) if message else None

    def _decision(self, outcome: Outcome) -> _Decision:
        """What a finished handler said; ValueError for a failure."""
        if outcome.error is not None:
            raise ValueError(outcome.error)
        stderr = outcome.stderr.decode(errors="replace").strip()
        if outcome.exit_code == 2:
            return _Decision(decision="block", reason=stderr or None)
        if outcome.exit_code != 0:
            first = stderr.splitlines()[0] if stderr else ""
            raise ValueError(f"exit code {outcome.exit_code}" + (f": {first}" if first else ""))
        stdout = outcome.stdout.strip()
        if not stdout.startswith(b"{"):
            text = stdout.decode(errors="replace")
            return _Decision(additionalContext=text or None) if self.event in PLAIN_STDOUT_IS_CONTEXT else _Decision()
        try:
            return _decision.decode(stdout)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise ValueError(f"stdout is not a valid JSON decision ({exc})") from None


def stdin_payload(event: Event, project_root: str) -> bytes:
    """Claude's payload shape (the canonical encoding), without the fields that are not set."""
    fields = {key: value for key, value in msgspec.to_builtins(event).items() if value is not None}
    fields["cwd"] = event.cwd or project_root
    return _encoder.encode(fields)


class ProblemNotice:
    """The `check` of the gate that says hooks.json entries are not running: on stderr every
    time, and once per session to the user and the metrics."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.text = "hookgate: these command hooks do not run (fix them, then `hookgate doctor`): " + "; ".join(
            map(str, problems)
        )
        self.key = "notices/command_hooks/" + sha256_hex(self.text.encode())[:16]

    def __call__(self, event: Event, ctx: Context) -> Verdict | None:
        ctx.warn(self.text)
        if ctx.session.count(self.key):
            return None
        ctx.session.bump(self.key)
        ctx.record("hook_error", gate="command_hooks.problems", error=self.text)
        return Allow(message=self.text)


def _join(texts: list[str]) -> str | None:
    return "\n".join(dict.fromkeys(texts)) or None
