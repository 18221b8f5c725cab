"""The JSON-RPC 2.0 core the OpenCode plugin keeps running (`hookgate serve --stdio`).

Methods
    initialize  {runtime?, versions?, protocol?} -> {protocol, server, project, capabilities, error}
    evaluate    {event: <canonical event>}        -> the verdict, tagged by "kind" (model/verdicts.py);
                                                     an apply_patch event carries the raw text
                                                     (tool_input {"patch"}) and is judged as one
                                                     event per file, as on Codex
    ping        -                                 -> null; as every answer, sent once the records of
                                                     all earlier requests are written (a reader of
                                                     the logs waits on it)
    shutdown    -                                 -> null; every earlier request was answered first
                                                     (and its records written), and the server exits
Notification sent
    policy/reloaded  {ok, error, generation, capabilities}   after each reload attempt

Every decision goes through `hookcall.judge`, the path the stdin hooks take, so a policy decides
alike on every runtime. Requests are pipelined: a client sends as many as it likes without waiting
and each is answered in turn. The server reads, decides and answers one frame at a time on its main
thread, in arrival order: a SessionStart has reset its session before anything else in it is
judged, and a gate's deadline is a timer signal, not a thread per gate (a thread pool doubled the
time per decision and quadrupled its tail, and bought nothing: all of one OpenCode run is one
session). The price: a slow gate delays the events queued behind it, never past its own timeout.
A line that is not a valid request gets its error response and the loop goes on.

A decision's records (its session's metrics and decisions.jsonl, the lifetime log) are made and
written after its answer is sent and before the next frame is read: the client waits for its
verdict, not for the logs (0.93-0.96x the round trip through the plugin), and every decision finds
the records of all those before it. So any later answer (a ping's, a shutdown's) comes after the
records of the calls before it. A core killed in between loses those records, not the verdict.
Between the answer and the records the core yields its CPU (`sched_yield`): where the scheduler
keeps the plugin on the core's CPU, the plugin woken by the answer runs first instead of waiting
for the records (0.87-0.94x the time of a call after a process spawn through the plugin).
"""

from __future__ import annotations

import os
import threading
from typing import Any, Callable, ClassVar, Literal, Sequence, Union

import msgspec

from .. import __version__
from ..engine.deadline import keep_timer
from ..errors import PayloadError
from ..formats.apply_patch import PatchError, tool_calls
from ..hookcall import Policy, judge
from ..model.codec import event_from_builtins, unknown_event
from ..model.events import KNOWN_EVENTS, Event, KnownEvent, ToolEvent
from ..model.verdicts import Block, Modify, Verdict
from ..store.kept import keep_answers
from . import protocol
from .protocol import RpcError
from .reload import PolicyHolder, WatchSet, watch
from .transport import FrameTooLarge, StdioTransport

PROTOCOL_VERSION = 1
_offer_cpu: Callable[[], None] = getattr(os, "sched_yield", lambda: None)
# what a decision may take beyond its gates' own timeouts (files, locks, the pipe)
DECISION_SLACK_S = 1.0
WATCH_START_TIMEOUT_S = 5.0


class EvaluateParams(msgspec.Struct, frozen=True):
    event: KnownEvent


class EvaluateRequest(msgspec.Struct, frozen=True):
    """What nearly every frame is: an evaluate request of a known event. It is read in one pass,
    straight into the event (0.35x the time of a general read into dicts and their conversion);
    any other frame, valid or not, is read by protocol.parse."""

    jsonrpc: Literal["2.0"]
    id: Union[int, str]
    method: Literal["evaluate"]
    params: EvaluateParams
    is_notification: ClassVar[bool] = False


_evaluate_request = msgspec.json.Decoder(EvaluateRequest)


def parse(frame: bytes) -> tuple[Sequence[protocol.Message | EvaluateRequest], bool]:
    """The messages of one frame (protocol.parse), an evaluate request of a known event read at once."""
    try:
        return [_evaluate_request.decode(frame)], False
    except (msgspec.DecodeError, RecursionError):
        return protocol.parse(frame)


def capabilities(policy: Policy) -> dict[str, Any]:
    """Per event: the gates that run on it and what the client must do when the core cannot
    answer (fail_mode "closed" if any of them fails closed), and how long a decision may take."""
    events: dict[str, Any] = {}
    for name in KNOWN_EVENTS:
        gates = [gate for gate in policy.engine.gates if name in gate.events]
        events[name] = {
            "fail_mode": "closed" if any(gate.fail_mode == "closed" for gate in gates) else "open",
            "timeout_ms": round((sum(gate.timeout for gate in gates) + DECISION_SLACK_S) * 1000),
            "gates": [{"id": gate.id, "matcher": gate.matcher, "fail_mode": gate.fail_mode} for gate in gates],
        }
    return {"events": events, "reload": True}


class Server:
    def __init__(self, transport: StdioTransport, holder: PolicyHolder, *, watch_set: WatchSet | None = None,
                 log: Callable[[str], None]) -> None:
        self._transport = transport
        self._holder = holder
        self._watch_set = watch_set
        self._log = log
        self._initialized = False
        self._done = False  # shut down, or the client went away
        self._unwritten: list[Callable[[], None]] = []  # the records of the calls just answered

    def serve(self) -> int:
        keep_timer()  # every decision is made on this thread: the gates' timer handler stays installed
        keep_answers()  # and the filesystem's answers are kept across decisions while nothing changed
        stop_watching, watching = threading.Event(), threading.Event()
        if self._watch_set:
            threading.Thread(target=self._watch, args=(stop_watching, watching), name="hookgate-reload", daemon=True).start()
            # a file saved right after initialize must be seen: read nothing before the watches are live
            watching.wait(WATCH_START_TIMEOUT_S)
        try:
            while not self._done:
                try:
                    frame = self._transport.read_frame()
                except FrameTooLarge as exc:
                    self._send(protocol.error(None, RpcError(protocol.INVALID_REQUEST, f"invalid request: {exc}")))
                    continue
                if frame is None:
                    break
                self._answer(frame)
        finally:
            stop_watching.set()
            self._transport.close()
        return 0

    def _send(self, message: Any) -> None:
        try:
            self._transport.write_frame(protocol.encode(message))
        except (OSError, ValueError) as exc:  # the client went away: nobody is left to answer
            if not self._done:
                self._log(f"stdout failed ({exc}); stopping")
            self._done = True

    def _answer(self, frame: bytes) -> None:
        try:
            messages, batch = parse(frame)
            answers = [answer for answer in map(self._serve, messages) if answer is not None]
        except Exception as exc:  # a frame that trips a bug must not end the loop for the frames after it
            self._log(f"internal error on a frame: {type(exc).__name__}: {exc}")
            self._send(protocol.error(None, RpcError(protocol.INTERNAL_ERROR, f"internal error: {type(exc).__name__}")))
            answers = []
        if answers:
            self._send(answers if batch else answers[0])
        if self._unwritten:
            _offer_cpu()  # the client, woken by the answer, goes first (see the docstring)
        self._write_records()

    def _write_records(self) -> None:
        for write in self._unwritten:
            try:
                write()
            except Exception as exc:  # the verdict stands; only its record is lost, and said so
                self._log(f"could not write a decision's records: {type(exc).__name__}: {exc}")
        self._unwritten.clear()

    def _serve(self, message: protocol.Message | EvaluateRequest) -> dict[str, Any] | None:
        if isinstance(message, protocol.Invalid):
            return protocol.error(message.id, message.error)
        try:
            value = self._call(message.method, message.params)
        except RpcError as exc:
            answer = protocol.error(message.id, exc)
        except Exception as exc:  # a bug in hookgate: answer it, keep serving
            self._log(f"internal error in {message.method}: {type(exc).__name__}: {exc}")
            answer = protocol.error(message.id, RpcError(protocol.INTERNAL_ERROR, f"internal error: {type(exc).__name__}: {exc}"))
        else:
            answer = protocol.result(message.id, value)
        return None if message.is_notification else answer

    # -- methods -----------------------------------------------------------------------------
    def _call(self, method: str, params: Any) -> Any:
        if self._done:
            raise RpcError(protocol.SHUTTING_DOWN, "the server is shutting down")
        if method == "initialize":
            return self._initialize(_object(params))
        if method == "shutdown":
            self._done = True  # the frame's answers are sent, then the loop ends
            return None
        if method == "ping":
            return None
        if method == "evaluate":
            if not self._initialized:
                raise RpcError(protocol.SERVER_NOT_INITIALIZED, "call initialize first")
            return self._evaluate(params)
        raise RpcError(protocol.METHOD_NOT_FOUND, f"method not found: {method!r}; known: initialize, evaluate, ping, shutdown")

    def _initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        wanted = params.get("protocol", PROTOCOL_VERSION)
        if wanted != PROTOCOL_VERSION:
            raise RpcError(protocol.INVALID_PARAMS, f"protocol {wanted!r} is not supported; this core speaks {PROTOCOL_VERSION}")
        self._initialized = True
        versions = params.get("versions")
        self._log(f"initialized by {params.get('runtime', 'a client')} {versions if versions else ''}".rstrip())
        policy = self._holder.policy
        return {
            "protocol": PROTOCOL_VERSION,
            "server": {"name": "hookgate", "version": __version__, "pid": os.getpid()},
            "project": policy.project.root_text,
            "capabilities": capabilities(policy),
            "error": policy.error,
        }

    def _evaluate(self, params: Any) -> Verdict:
        if isinstance(params, EvaluateParams):
            return self._judge(params.event, None)
        raw = _object(params).get("event")
        if not isinstance(raw, dict):
            raise RpcError(protocol.INVALID_PARAMS, "invalid params: `event` must be an object (a canonical event)")
        try:
            event, error = event_from_builtins(raw), None
        except PayloadError as exc:
            name = raw.get("hook_event_name")
            if not isinstance(name, str) or not name:
                raise RpcError(protocol.INVALID_PARAMS, f"invalid params: {exc}") from None
            # a known event with unreadable fields: its gates' fail modes decide, as on the stdin path
            event, error = unknown_event(name, raw), str(exc)
        return self._judge(event, error)

    def _judge(self, event: Event, error: str | None) -> Verdict:
        if error is None and isinstance(event, ToolEvent) and event.tool_name == "apply_patch":
            return self._decide_patch(event)
        return self._decide([event], error)

    def _decide_patch(self, event: ToolEvent) -> Verdict:
        """OpenCode's plugin sends an apply_patch call as one event with the raw text (`patch`); the
        gates judge it as Codex's dialect has them judge one: an event per file, read by the one
        patch reader. A text it cannot read takes the event's fail mode, as an unreadable payload."""
        patch = event.tool_input.get("patch")
        try:
            if not isinstance(patch, str):
                raise PatchError("`patch` holds no patch text")
            events: list[Event] = [msgspec.structs.replace(event, tool_name=tool, tool_input=tool_input)
                                   for tool, tool_input in tool_calls(patch, event.cwd)]
        except PatchError as exc:
            return self._decide([event], f"invalid apply_patch call: {exc}")
        verdict = self._decide(events, None)
        if isinstance(verdict, Modify):  # the plugin hands OpenCode the patch whole, as Codex takes it
            return Block(reason=PATCH_REWRITE, message=verdict.message, context=verdict.context)
        return verdict

    def _decide(self, events: list[Event], error: str | None) -> Verdict:
        policy = self._holder.policy
        if error:
            policy = msgspec.structs.replace(policy, error=error)
        try:
            verdict, _, ctx, write = judge(policy, events)
        except Exception as exc:  # a bug in hookgate: the gates' fail modes decide
            failed = msgspec.structs.replace(policy, error=f"internal error: {type(exc).__name__}: {exc}")
            verdict, _, ctx, write = judge(failed, events)
        self._unwritten.append(write)
        for line in ctx.warnings:
            self._log(line)
        notice = self._holder.take_notice()
        if notice:
            verdict = msgspec.structs.replace(verdict, message="\n".join(filter(None, [notice, verdict.message])))
        return verdict

    # -- hot reload --------------------------------------------------------------------------
    def _watch(self, stop: threading.Event, ready: threading.Event) -> None:
        assert self._watch_set is not None

        def reload() -> None:
            error = self._holder.reload()
            self._send(protocol.notification("policy/reloaded", {
                "ok": error is None, "error": error, "generation": self._holder.generation,
                "capabilities": capabilities(self._holder.policy),
            }))

        try:
            watch(self._watch_set, reload, stop, ready)
        except Exception as exc:  # no watcher (e.g. inotify limits): decisions go on with the policy in force
            self._log(f"hot reload is off: {type(exc).__name__}: {exc}")
            ready.set()


PATCH_REWRITE = ("hookgate would rewrite this call, and OpenCode cannot carry a rewrite of one file of a patch; "
                 "it is refused instead. Make the change the policy asks for and patch again.")


def _object(params: Any) -> dict[str, Any]:
    if params is None:
        return {}
    if not isinstance(params, dict):
        raise RpcError(protocol.INVALID_PARAMS, "invalid params: expected an object (named parameters)")
    return params
