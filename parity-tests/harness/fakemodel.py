"""A scripted fake model server for driving the real runtimes offline (127.0.0.1 only, stdlib only).

It speaks the four wire APIs the runtimes use: Anthropic Messages (Claude Code), OpenAI Responses
(Codex), OpenAI Chat Completions (OpenCode) and Gemini's generateContent (Gemini CLI: its streaming
form, and the plain one its side requests use).

It keeps no conversation state, so subagents, retries and side requests cannot confuse it:
- the *scenario* is the first `SCENARIO:<name>` marker in user-authored text (tool results excluded);
- the *step* is the number of assistant tool-call turns already in the conversation;
- a request that offers no tools (a title or summary request) gets a plain text reply.

Step texts and arguments may use `{{last_output}}` and `{{last_json.KEY}}`, filled from the latest
tool result; an argument that is all `{{last_int:PATTERN}}` becomes the number PATTERN's group
finds there (Codex's write_stdin takes the session id an exec_command printed). Every request is kept (`requests`) so tests can assert what reached the model.
"""

from __future__ import annotations

import json
import re
import threading
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

MARKER = re.compile(r"SCENARIO:([A-Za-z0-9_.-]+)")


@dataclass(frozen=True)
class Call:
    """The model calls a tool. `args` is a dict (a JSON function call) or, for a freeform custom
    tool such as Codex's apply_patch, the raw text. `namespace` is for Codex's namespaced tools."""

    name: str
    args: dict[str, Any] | str = field(default_factory=dict)
    namespace: str | None = None


@dataclass(frozen=True)
class Say:
    text: str


@dataclass(frozen=True)
class Either:
    """`then` if the latest user-authored text contains `when`, else `otherwise`. Steps count
    tool-call turns only, so when a hook holds a stop by sending a user message (OpenCode), the
    model is asked the same step again: this is how a script answers the hold."""

    when: str
    then: "Call | Say"
    otherwise: "Call | Say"


Step = Call | Say | Either


@dataclass
class Request:
    api: str  # "anthropic" | "responses" | "chat" | "gemini"
    path: str
    body: dict[str, Any]
    scenario: str | None
    step: int
    tool_results: list[str]
    reply: Call | Say | None = None

    @property
    def user_texts(self) -> list[str]:
        return API[self.api].user_texts(self.body)


class FakeModel:
    def __init__(self) -> None:
        self.scripts: dict[str, list[Step]] = {}
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    # -- scripting ---------------------------------------------------------------------------
    def script(self, name: str, *steps: Step) -> str:
        """Register a scenario; returns the marker to put in the prompt."""
        self.scripts[name] = list(steps)
        return f"SCENARIO:{name}"

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self) -> "FakeModel":
        handler = _handler_for(self)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, name="fakemodel", daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server:
            self._server.shutdown()
            self._server.server_close()

    def __enter__(self) -> "FakeModel":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._server is not None
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # -- what reached the model ------------------------------------------------------------
    def seen(self, scenario: str | None = None) -> list[Request]:
        with self._lock:
            return [r for r in self.requests if scenario is None or r.scenario == scenario]

    def tool_results(self, scenario: str | None = None) -> list[str]:
        """Every tool result text the runtime sent back (latest requests carry all earlier ones)."""
        results: list[str] = []
        for request in self.seen(scenario):
            for text in request.tool_results:
                if text not in results:
                    results.append(text)
        return results

    # -- one request -----------------------------------------------------------------------
    def reply_for(self, api: str, path: str, body: dict[str, Any]) -> Call | Say:
        dialect = API[api]
        scenario = next((m.group(1) for t in dialect.user_texts(body) for m in [MARKER.search(t)] if m), None)
        step = dialect.tool_turns(body)
        results = dialect.tool_results(body)
        if not body.get("tools"):
            reply: Step = Say("Scripted side reply")
        else:
            script = self.scripts.get(scenario or "", [])
            reply = script[step] if step < len(script) else Say(f"Scenario {scenario} done.")
            if isinstance(reply, Either):
                texts = dialect.user_texts(body)
                reply = reply.then if texts and reply.when in texts[-1] else reply.otherwise
            reply = _fill(reply, results[-1] if results else "")
        with self._lock:
            self.requests.append(Request(api, path, body, scenario, step, results, reply))
        return reply


def _fill(step: Call | Say, last_output: str) -> Call | Say:
    def sub(text: str) -> str:
        text = text.replace("{{last_output}}", last_output)

        def from_json(match: re.Match[str]) -> str:
            try:
                return str(json.loads(_json_part(last_output))[match.group(1)])
            except (ValueError, KeyError, TypeError):
                return ""

        return re.sub(r"\{\{last_json\.([A-Za-z0-9_]+)\}\}", from_json, text)

    def number(match: re.Match[str]) -> str:
        found = re.search(match.group(1), last_output)
        return found.group(1) if found else "0"

    if isinstance(step, Say):
        return Say(sub(step.text))
    # "{{last_int:PATTERN}}", a whole string argument: the number PATTERN's group finds in the last output
    args = json.loads(sub(re.sub(r'"\{\{last_int:(.+?)\}\}"', number, json.dumps(step.args)))) \
        if isinstance(step.args, dict) else sub(step.args)
    return Call(step.name, args, step.namespace)


def _json_part(text: str) -> str:
    start = text.find("{")
    return text[start:] if start >= 0 else text


# ---------------------------------------------------------------------------------------------
# wire APIs


def _text_of(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [p.get("text", "") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]
    return []


class Anthropic:
    @staticmethod
    def user_texts(body: dict[str, Any]) -> list[str]:
        texts: list[str] = []
        for message in body.get("messages", []):
            if message.get("role") != "user":
                continue
            content = message.get("content")
            if isinstance(content, str):
                texts.append(content)
            elif isinstance(content, list):
                texts += [b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"]
        return texts

    @staticmethod
    def tool_turns(body: dict[str, Any]) -> int:
        return sum(
            1 for m in body.get("messages", [])
            if m.get("role") == "assistant" and isinstance(m.get("content"), list)
            and any(isinstance(b, dict) and b.get("type") == "tool_use" for b in m["content"])
        )

    @staticmethod
    def tool_results(body: dict[str, Any]) -> list[str]:
        results = []
        for message in body.get("messages", []):
            if message.get("role") == "user" and isinstance(message.get("content"), list):
                for block in message["content"]:
                    if isinstance(block, dict) and block.get("type") == "tool_result":
                        results.append("\n".join(_text_of(block.get("content"))))
        return results

    @staticmethod
    def events(step: Step, model: str) -> list[tuple[str, dict[str, Any]]]:
        msg_id = f"msg_{uuid.uuid4().hex[:20]}"
        usage = {"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
        start = {"type": "message_start", "message": {
            "id": msg_id, "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": None, "stop_sequence": None, "usage": usage}}
        if isinstance(step, Call):
            block = {"type": "tool_use", "id": f"toolu_{uuid.uuid4().hex[:20]}", "name": step.name, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(step.args)}
            stop = "tool_use"
        else:
            block = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": step.text}
            stop = "end_turn"
        return [
            ("message_start", start),
            ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                               "usage": {"output_tokens": 5}}),
            ("message_stop", {"type": "message_stop"}),
        ]


class Responses:
    @staticmethod
    def _items(body: dict[str, Any]) -> list[dict[str, Any]]:
        items = body.get("input", [])
        return [i for i in items if isinstance(i, dict)] if isinstance(items, list) else []

    @classmethod
    def user_texts(cls, body: dict[str, Any]) -> list[str]:
        texts: list[str] = []
        for item in cls._items(body):
            if item.get("type", "message") == "message" and item.get("role") == "user":
                texts += _text_of(item.get("content"))
        return texts

    @classmethod
    def tool_turns(cls, body: dict[str, Any]) -> int:
        return sum(1 for i in cls._items(body) if i.get("type") in ("function_call", "custom_tool_call"))

    @classmethod
    def tool_results(cls, body: dict[str, Any]) -> list[str]:
        results = []
        for item in cls._items(body):
            if item.get("type") in ("function_call_output", "custom_tool_call_output"):
                output = item.get("output")
                results.append(output if isinstance(output, str) else "\n".join(_text_of(output)))
        return results

    @staticmethod
    def events(step: Step, model: str) -> list[tuple[str, dict[str, Any]]]:
        resp_id = f"resp_{uuid.uuid4().hex[:20]}"
        base = {"id": resp_id, "object": "response", "model": model, "status": "in_progress", "output": []}
        if isinstance(step, Call) and isinstance(step.args, str):
            item = {"type": "custom_tool_call", "id": f"ctc_{uuid.uuid4().hex[:16]}", "status": "completed",
                    "call_id": f"call_{uuid.uuid4().hex[:16]}", "name": step.name, "input": step.args}
            middle: list[tuple[str, dict[str, Any]]] = []
        elif isinstance(step, Call):
            item = {"type": "function_call", "id": f"fc_{uuid.uuid4().hex[:16]}", "status": "completed",
                    "call_id": f"call_{uuid.uuid4().hex[:16]}", "name": step.name, "arguments": json.dumps(step.args)}
            if step.namespace:
                item["namespace"] = step.namespace
            middle = [
                ("response.function_call_arguments.delta",
                 {"type": "response.function_call_arguments.delta", "item_id": item["id"], "output_index": 0,
                  "delta": item["arguments"]}),
                ("response.function_call_arguments.done",
                 {"type": "response.function_call_arguments.done", "item_id": item["id"], "output_index": 0,
                  "arguments": item["arguments"]}),
            ]
        else:
            item = {"type": "message", "id": f"msg_{uuid.uuid4().hex[:16]}", "status": "completed", "role": "assistant",
                    "content": [{"type": "output_text", "text": step.text, "annotations": []}]}
            part = {"type": "output_text", "text": "", "annotations": []}
            middle = [
                ("response.content_part.added", {"type": "response.content_part.added", "item_id": item["id"],
                                                 "output_index": 0, "content_index": 0, "part": part}),
                ("response.output_text.delta", {"type": "response.output_text.delta", "item_id": item["id"],
                                                "output_index": 0, "content_index": 0, "delta": step.text}),
                ("response.output_text.done", {"type": "response.output_text.done", "item_id": item["id"],
                                               "output_index": 0, "content_index": 0, "text": step.text}),
                ("response.content_part.done", {"type": "response.content_part.done", "item_id": item["id"],
                                                "output_index": 0, "content_index": 0,
                                                "part": {**part, "text": step.text}}),
            ]
        added = {**item, "status": "in_progress"}
        if "arguments" in added:
            added["arguments"] = ""
        usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
                 "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}
        return [
            ("response.created", {"type": "response.created", "response": base}),
            ("response.in_progress", {"type": "response.in_progress", "response": base}),
            ("response.output_item.added", {"type": "response.output_item.added", "output_index": 0, "item": added}),
            *middle,
            ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}),
            ("response.completed", {"type": "response.completed",
                                    "response": {**base, "status": "completed", "output": [item], "usage": usage}}),
        ]


class Chat:
    @staticmethod
    def user_texts(body: dict[str, Any]) -> list[str]:
        texts: list[str] = []
        for message in body.get("messages", []):
            if message.get("role") == "user":
                texts += _text_of(message.get("content"))
        return texts

    @staticmethod
    def tool_turns(body: dict[str, Any]) -> int:
        return sum(1 for m in body.get("messages", []) if m.get("role") == "assistant" and m.get("tool_calls"))

    @staticmethod
    def tool_results(body: dict[str, Any]) -> list[str]:
        return ["\n".join(_text_of(m.get("content"))) for m in body.get("messages", []) if m.get("role") == "tool"]

    @staticmethod
    def events(step: Step, model: str) -> list[tuple[str, dict[str, Any]]]:
        chunk_id = f"chatcmpl-{uuid.uuid4().hex[:20]}"

        def chunk(delta: dict[str, Any], finish: str | None = None) -> tuple[str, dict[str, Any]]:
            return ("", {"id": chunk_id, "object": "chat.completion.chunk", "created": 0, "model": model,
                         "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

        if isinstance(step, Call):
            call = {"index": 0, "id": f"call_{uuid.uuid4().hex[:16]}", "type": "function",
                    "function": {"name": step.name, "arguments": json.dumps(step.args)}}
            body, finish = chunk({"tool_calls": [call]}), "tool_calls"
        else:
            body, finish = chunk({"content": step.text}), "stop"
        usage = ("", {"id": chunk_id, "object": "chat.completion.chunk", "created": 0, "model": model, "choices": [],
                      "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
        return [chunk({"role": "assistant", "content": ""}), body, chunk({}, finish), usage]


class Gemini:
    """Gemini's generateContent: `contents[]` of role user / model, whose parts are text,
    functionCall {name, args} or functionResponse {name, response}; tools are `functionDeclarations`."""

    @staticmethod
    def _contents(body: dict[str, Any]) -> list[dict[str, Any]]:
        contents = body.get("contents", [])
        return [c for c in contents if isinstance(c, dict)] if isinstance(contents, list) else []

    @staticmethod
    def _parts(content: dict[str, Any]) -> list[dict[str, Any]]:
        parts = content.get("parts", [])
        return [p for p in parts if isinstance(p, dict)] if isinstance(parts, list) else []

    @classmethod
    def user_texts(cls, body: dict[str, Any]) -> list[str]:
        return [p["text"] for c in cls._contents(body) if c.get("role") == "user"
                for p in cls._parts(c) if isinstance(p.get("text"), str)]

    @classmethod
    def tool_turns(cls, body: dict[str, Any]) -> int:
        return sum(1 for c in cls._contents(body)
                   if c.get("role") == "model" and any("functionCall" in p for p in cls._parts(c)))

    @classmethod
    def tool_results(cls, body: dict[str, Any]) -> list[str]:
        results = []
        for content in cls._contents(body):
            for part in cls._parts(content):
                if isinstance(part.get("functionResponse"), dict):
                    response = part["functionResponse"].get("response")
                    results.append(response.get("output", json.dumps(response)) if isinstance(response, dict)
                                   and isinstance(response.get("output"), str) else json.dumps(response))
        return results

    @staticmethod
    def events(step: Step, model: str) -> list[tuple[str, dict[str, Any]]]:
        part: dict[str, Any] = ({"functionCall": {"name": step.name, "args": step.args}} if isinstance(step, Call)
                                else {"text": step.text})
        return [("", {"candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP",
                                      "index": 0}],
                      "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
                      "modelVersion": model})]


API: dict[str, Any] = {"anthropic": Anthropic, "responses": Responses, "chat": Chat, "gemini": Gemini}
ROUTES: dict[str, str] = {"/v1/messages": "anthropic", "/v1/responses": "responses", "/v1/chat/completions": "chat"}
# APIs whose path names the model: (pattern, api, streams); a `:countTokens` is answered apart
PATTERN_ROUTES: tuple[tuple[re.Pattern[str], str, bool], ...] = (
    (re.compile(r"^/v1(?:beta|alpha)?/models/[^/:]+:streamGenerateContent$"), "gemini", True),
    (re.compile(r"^/v1(?:beta|alpha)?/models/[^/:]+:generateContent$"), "gemini", False),
)


def route(path: str) -> tuple[str, bool] | None:
    """(api, streams) of a request path, or None when the fake model has no such route."""
    if path in ROUTES:
        return ROUTES[path], True
    return next(((api, streams) for pattern, api, streams in PATTERN_ROUTES if pattern.match(path)), None)


def _handler_for(model: FakeModel) -> Callable[..., BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:  # keep test output clean
            pass

        def do_HEAD(self) -> None:
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_GET(self) -> None:
            self._json(200, {"object": "list", "data": []})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            path = self.path.split("?", 1)[0]
            if path.endswith(":countTokens"):
                self._json(200, {"totalTokens": 10})
                return
            found = route(path)
            if found is None:
                self._json(404, {"error": {"message": f"fake model: no route {path}"}})
                return
            api, streams = found
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                self._json(400, {"error": {"message": "fake model: body is not JSON"}})
                return
            step = model.reply_for(api, path, body)
            events = API[api].events(step, str(body.get("model", "fake-model")))
            if streams:
                self._stream(events, api)
            else:  # the whole answer at once: the one event's data
                self._json(200, events[-1][1])

        def _json(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _stream(self, events: list[tuple[str, dict[str, Any]]], api: str) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for name, data in events:
                # Gemini's SSE parser splits frames on a blank line in CRLF form
                end = "\r\n\r\n" if api == "gemini" else "\n\n"
                frame = (f"event: {name}\n" if name else "") + f"data: {json.dumps(data)}{end}"
                self._chunk(frame.encode())
            if api == "chat":
                self._chunk(b"data: [DONE]\n\n")
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

        def _chunk(self, data: bytes) -> None:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

    return Handler
