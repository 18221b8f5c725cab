"""The gate of one registered-hook event: its hooks run one after another, A3S's chain.

- in order of priority, then id; only hooks whose matcher fits the event;
- each handler under its own timeout (`timeout_ms`), on a helper thread, so its deadline never
  disturbs the engine's own deadline around the whole gate;
- `continue` goes on; with `modified`, later hooks and every later gate see the rewritten input,
  which must first pass the tool's input schema (model/tool_inputs.py) or the call is refused;
- `skip` runs no later hook, `block` and `retry` refuse at once;
- a handler that raises, times out or returns nonsense blocks a gating event ("Required hook ...
  failed") and is skipped, with a warning, on any other.
"""

from __future__ import annotations

from typing import Any, Sequence

import msgspec

from ..engine.context import Context
from ..engine.deadline import _with_thread as call_on_thread
from ..model.events import Event, ToolEvent
from ..model.tool_inputs import input_error
from ..model.verdicts import Block, Context as ContextVerdict, Modify, Retry, Verdict
from .events import GATING, MODIFIES_TOOL_INPUT
from .hooks import Hook
from .results import Result, hook_denied, parse, updated_input


class HookFailed(Exception):
    pass


class RegisteredHooks:
    """The `check` of the gate for one event name of seed 003."""

    def __init__(self, name: str, hooks: Sequence[Hook]) -> None:
        self.name = name
        self.hooks = tuple(sorted(hooks, key=lambda h: h.order))
        self.gating = name in GATING

    def __call__(self, event: Event, ctx: Context) -> Verdict | None:
        root = ctx.project.root_text
        rewritten: dict[str, Any] | None = None
        contexts: list[str] = []
        for hook in self.hooks:
            if not hook.matcher.matches(event, root):
                continue
            try:
                result = self._run(hook, event)
            except HookFailed as exc:
                ctx.record("registered_hook_error", hook=hook.id, hook_event=self.name, error=str(exc),
                           fail_mode="closed" if self.gating else "open")
                if self.gating:
                    return self._refuse(Block(reason=f"Required hook '{hook.id}' failed: {exc}"), hook, ctx)
                ctx.warn(f"hookgate: hook '{hook.id}' failed ({exc}); skipped")
                continue
            if result.action == "block" or result.decision == "deny":
                return self._refuse(Block(reason=result.reason or "Blocked by hook", context=_join(contexts)), hook, ctx)
            if result.action == "retry":
                retry = Retry(reason=result.reason or "Retry later", delay_ms=result.delay_ms, context=_join(contexts))
                return self._refuse(retry, hook, ctx)
            if result.modified is not None:
                if self.name in MODIFIES_TOOL_INPUT and isinstance(event, ToolEvent):
                    new_input = updated_input(result.modified)
                    error = input_error(event.tool_name, new_input, event.tool_input)
                    if error is not None:
                        reason = (f"hook '{hook.id}' rewrote the {event.tool_name} input into an invalid one "
                                  f"({error}); the call is refused")
                        return self._refuse(Block(reason=reason), hook, ctx)
                    event = msgspec.structs.replace(event, tool_input=new_input)
                    rewritten = new_input
                else:
                    contexts += self._other_modification(hook, result.modified, ctx)
            if result.decision == "allow" and isinstance(event, ToolEvent):  # (permission_request only)
                # Claude's approval carries the input to run with; the unchanged one when not rewritten
                rewritten = event.tool_input
                break
            if result.action == "skip":
                break
        context = _join(contexts)
        if rewritten is not None:
            return Modify(updated_input=rewritten, context=context)
        return ContextVerdict(context=context) if context else None

    def _run(self, hook: Hook, event: Event) -> Result:
        try:
            value = call_on_thread(hook.handler, hook.options.timeout_ms / 1000, (event,))
        except Exception as exc:
            raise HookFailed(f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__) from None
        try:
            result = parse(value)
        except ValueError as exc:
            raise HookFailed(str(exc)) from None
        if result.decision is not None and self.name != "permission_request":
            raise HookFailed(f"returned a decision, which only permission_request hooks can give (this is {self.name})")
        return result

    def _refuse(self, verdict: Block | Retry, hook: Hook, ctx: Context) -> Verdict:
        denied = hook_denied(verdict)
        assert denied is not None  # a block or a retry always is a denial
        ctx.record("hook_denied", hook=hook.id, hook_event=self.name, **msgspec.structs.asdict(denied))
        return verdict

    def _other_modification(self, hook: Hook, modified: dict[str, Any], ctx: Context) -> list[str]:
        """A pre_prompt hook may add context for the model; nothing else modified outside a tool
        input can be carried out, so it is recorded and said, not silently dropped."""
        context_keys = {"additionalContext", "additional_context"} if self.name == "pre_prompt" else set()
        contexts = [v for k, v in modified.items() if k in context_keys and isinstance(v, str) and v]
        unused = sorted(set(modified) - context_keys)
        if unused:
            ctx.record("hook_unenforceable", hook=hook.id, hook_event=self.name, fields=unused)
            ctx.warn(f"hookgate: hook '{hook.id}' modified {unused} on {self.name}; no supported runtime lets a "
                     "hook change that, so it goes through unchanged")
        return contexts


def _join(texts: list[str]) -> str | None:
    return "\n".join(texts) or None
