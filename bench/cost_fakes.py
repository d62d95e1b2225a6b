"""Loopback fakes of the four model wires that keep a prompt cache by their vendor's documented
rules, for `bench/cost.py` (and its test). Each answers with what a `Brain` says, streamed in
the vendor's own format, and reports usage with the cache fields the vendor would.

The rules emulated:
- Anthropic Messages (platform.claude.com, "Prompt caching"): only explicit `cache_control`
  breakpoints write, at most 4 a request (a 400 past that, and for a marker on a thinking block
  or an empty text), each writing the prefix up to its block when that prefix is at least the
  model's minimum; a read is the longest written prefix found at a breakpoint or in the 20
  blocks before one. Writes are `cache_creation_input_tokens`, reads `cache_read_input_tokens`,
  and `input_tokens` is the rest.
- OpenAI (Chat Completions, Responses) and Gemini: every prompt is cached by itself, in 128-token
  steps from 1,024 tokens; a read is the longest cached prefix in whole steps
  (`prompt_tokens_details.cached_tokens`, `input_tokens_details.cached_tokens`,
  `cachedContentTokenCount`, each a part of the input count).

Tokens are counted as a quarter of the characters of each segment's canonical JSON (sorted keys,
no cache markers): a segment is an Anthropic content block, a tool, the system prompt, a chat
message, a Responses input item or a Gemini part. Entries live 5 minutes (an hour for `ttl:
"1h"`), longer than any benchmark run.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
import time
from collections.abc import Callable, Generator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal, TypeAlias, cast

Wire: TypeAlias = Literal["anthropic", "openai-chat", "openai-responses", "gemini"]
WIRES: tuple[Wire, ...] = ("anthropic", "openai-chat", "openai-responses", "gemini")

CHARS_PER_TOKEN = 4
PREFIX_STEP_TOKENS = 128
PREFIX_MINIMUM_TOKENS = 1024
ANTHROPIC_MAX_BREAKPOINTS = 4
ANTHROPIC_LOOKBACK = 20
_TTL = {"5m": 300.0, "1h": 3600.0}


# ------------------------------------------------------------------------------ the brain


@dataclass
class Call:
    name: str
    arguments: dict[str, Any]


@dataclass
class Reply:
    """What the model says to one request: text, tool calls, or both."""

    text: str = ""
    calls: list[Call] = field(default_factory=lambda: [])


Brain: TypeAlias = Callable[[bool], Reply]
"""`brain(summary_requested)`: the reply to the next request (a summary request is told)."""


# ------------------------------------------------------------------------ segments, tokens


@dataclass
class Segment:
    canonical: str
    tokens: int
    breakpoint: str | None = None
    """The TTL of the `cache_control` on this segment (Anthropic), if any."""
    kind: str = ""


JsonObject: TypeAlias = dict[str, Any]


def _objects(value: object) -> list[JsonObject]:
    """`value` as a list of JSON objects (anything else: none)."""
    if not isinstance(value, list):
        return []
    return [
        cast("JsonObject", item) for item in cast("list[object]", value) if isinstance(item, dict)
    ]


def _strip_markers(value: object) -> object:
    if isinstance(value, dict):
        items = cast("JsonObject", value).items()
        return {k: _strip_markers(v) for k, v in items if k != "cache_control"}
    if isinstance(value, list):
        return [_strip_markers(v) for v in cast("list[object]", value)]
    return value


def _segment(value: object, *, breakpoint: str | None = None, kind: str = "") -> Segment:
    canonical = json.dumps(_strip_markers(value), sort_keys=True, separators=(",", ":"))
    return Segment(canonical, math.ceil(len(canonical) / CHARS_PER_TOKEN), breakpoint, kind)


def _marker(block: JsonObject) -> str | None:
    control = block.get("cache_control")
    if isinstance(control, dict):
        return str(cast("JsonObject", control).get("ttl") or "5m")
    return None


def anthropic_segments(body: JsonObject) -> list[Segment]:
    tools = _objects(body.get("tools"))
    segments = [_segment(tool, breakpoint=_marker(tool)) for tool in tools]
    system = body.get("system")
    if isinstance(system, str) and system:
        segments.append(_segment({"system": system}))
    else:
        segments += [_segment({"system": b}, breakpoint=_marker(b)) for b in _objects(system)]
    for message in _objects(body.get("messages")):
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for index, block in enumerate(_objects(blocks)):
            role = message.get("role") if index == 0 else ""
            kind = str(block.get("type"))
            segments.append(_segment({"role": role, **block}, breakpoint=_marker(block), kind=kind))
    return segments


def chat_segments(body: JsonObject) -> list[Segment]:
    tools = [_segment(tool) for tool in _objects(body.get("tools"))]
    return tools + [_segment(message) for message in _objects(body.get("messages"))]


def responses_segments(body: JsonObject) -> list[Segment]:
    segments = [_segment(tool) for tool in _objects(body.get("tools"))]
    if body.get("instructions"):
        segments.append(_segment({"instructions": body["instructions"]}))
    return segments + [_segment(item) for item in _objects(body.get("input"))]


def gemini_segments(body: JsonObject) -> list[Segment]:
    segments: list[Segment] = []
    for tool in _objects(body.get("tools")):
        segments += [_segment(d) for d in _objects(tool.get("functionDeclarations"))]
    system = body.get("systemInstruction")
    if system:
        segments.append(_segment({"system": system}))
    for content in _objects(body.get("contents")):
        for index, part in enumerate(_objects(content.get("parts"))):
            role = content.get("role", "") if index == 0 else ""
            segments.append(_segment({"role": role, **part}))
    return segments


SEGMENTERS: dict[Wire, Callable[[JsonObject], list[Segment]]] = {
    "anthropic": anthropic_segments,
    "openai-chat": chat_segments,
    "openai-responses": responses_segments,
    "gemini": gemini_segments,
}


# ------------------------------------------------------------------------------- caches


@dataclass
class CacheUse:
    input_tokens: int
    """The whole prompt."""
    read: int = 0
    written: int = 0
    written_1h: int = 0


class _Entries:
    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._expiry: dict[str, float] = {}

    def live(self, key: str) -> bool:
        expiry = self._expiry.get(key)
        return expiry is not None and expiry > self._clock()

    def keep(self, key: str, ttl: float) -> None:
        self._expiry[key] = max(self._expiry.get(key, 0.0), self._clock() + ttl)


def _chain(segments: Sequence[str]) -> list[str]:
    hashes: list[str] = []
    previous = ""
    for text in segments:
        previous = hashlib.sha1((previous + "\0" + text).encode()).hexdigest()
        hashes.append(previous)
    return hashes


class CacheRuleError(Exception):
    """A request the vendor would refuse (a 400)."""


class ExplicitCache:
    """Anthropic's cache: breakpoints, the minimum, the lookback."""

    def __init__(self, minimum_tokens: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.minimum = minimum_tokens
        self._entries = _Entries(clock)

    def use(self, segments: Sequence[Segment]) -> CacheUse:
        marked = [i for i, s in enumerate(segments) if s.breakpoint is not None]
        if len(marked) > ANTHROPIC_MAX_BREAKPOINTS:
            raise CacheRuleError(
                f"A maximum of {ANTHROPIC_MAX_BREAKPOINTS} blocks with cache_control may be "
                f"provided. Found {len(marked)}."
            )
        for index in marked:
            if segments[index].kind in ("thinking", "redacted_thinking"):
                raise CacheRuleError("cache_control cannot be set on thinking blocks")
        cumulative: list[int] = []
        total = 0
        for segment in segments:
            total += segment.tokens
            cumulative.append(total)
        hashes = _chain([s.canonical for s in segments])
        read_at = -1
        for index in marked:
            for back in range(index, max(index - ANTHROPIC_LOOKBACK, -1) - 1, -1):
                if back >= 0 and self._entries.live(hashes[back]):
                    read_at = max(read_at, back)
                    break
        read = cumulative[read_at] if read_at >= 0 else 0
        written = written_1h = 0
        reached = read
        for index in marked:  # in prompt order
            ttl = segments[index].breakpoint or "5m"
            if cumulative[index] < self.minimum:
                continue  # too short to cache: no write, no error
            if cumulative[index] > reached:
                portion = cumulative[index] - reached
                written += portion
                if ttl == "1h":
                    written_1h += portion
                reached = cumulative[index]
            self._entries.keep(hashes[index], _TTL[ttl])
        if read_at >= 0:
            self._entries.keep(hashes[read_at], _TTL["5m"])  # a read refreshes the entry
        return CacheUse(input_tokens=total, read=read, written=written, written_1h=written_1h)


class PrefixCache:
    """OpenAI's and Gemini's automatic cache: every prompt, in 128-token steps from 1,024."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._entries = _Entries(clock)

    def use(self, segments: Sequence[Segment]) -> CacheUse:
        text = "".join(s.canonical for s in segments)
        total = sum(s.tokens for s in segments)
        step = PREFIX_STEP_TOKENS * CHARS_PER_TOKEN
        chunks = [text[i : i + step] for i in range(0, len(text) - step + 1, step)]
        hashes = _chain(chunks)
        matched = 0
        for key in hashes:
            if not self._entries.live(key):
                break
            matched += 1
        read = matched * PREFIX_STEP_TOKENS
        if read < PREFIX_MINIMUM_TOKENS:
            read = 0
        if total >= PREFIX_MINIMUM_TOKENS:
            for key in hashes:
                self._entries.keep(key, _TTL["5m"])
        return CacheUse(input_tokens=total, read=read)


# ------------------------------------------------------------------------ vendor streams


def _tokens(text: str) -> int:
    return max(1, math.ceil(len(text) / CHARS_PER_TOKEN))


def _output_tokens(reply: Reply) -> int:
    return _tokens(reply.text + "".join(c.name + json.dumps(c.arguments) for c in reply.calls))


def _sse(event: str | None, data: Any) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data)}\n\n".encode()


def anthropic_stream(model: str, reply: Reply, use: CacheUse, number: int) -> bytes:
    fresh = use.input_tokens - use.read - use.written
    usage = {
        "input_tokens": fresh,
        "cache_creation_input_tokens": use.written,
        "cache_read_input_tokens": use.read,
        "cache_creation": {
            "ephemeral_5m_input_tokens": use.written - use.written_1h,
            "ephemeral_1h_input_tokens": use.written_1h,
        },
        "output_tokens": 1,
    }
    start = {"id": f"msg_{number}", "type": "message", "role": "assistant", "model": model}
    start |= {"content": [], "stop_reason": None, "stop_sequence": None, "usage": usage}
    out = [_sse("message_start", {"type": "message_start", "message": start})]
    index = 0
    if reply.text:
        out.append(_sse("content_block_start", _block_start(index, {"type": "text", "text": ""})))
        delta = {"type": "text_delta", "text": reply.text}
        out.append(_sse("content_block_delta", _block_delta(index, delta)))
        out.append(_sse("content_block_stop", {"type": "content_block_stop", "index": index}))
        index += 1
    for n, call in enumerate(reply.calls):
        block: JsonObject = {"type": "tool_use", "id": f"toolu_{number}_{n}", "name": call.name}
        block["input"] = {}
        out.append(_sse("content_block_start", _block_start(index, block)))
        delta = {"type": "input_json_delta", "partial_json": json.dumps(call.arguments)}
        out.append(_sse("content_block_delta", _block_delta(index, delta)))
        out.append(_sse("content_block_stop", {"type": "content_block_stop", "index": index}))
        index += 1
    stop = "tool_use" if reply.calls else "end_turn"
    end: JsonObject = {"type": "message_delta", "delta": {"stop_reason": stop}}
    end["usage"] = {"output_tokens": _output_tokens(reply)}
    out.append(_sse("message_delta", end))
    out.append(_sse("message_stop", {"type": "message_stop"}))
    return b"".join(out)


def _block_start(index: int, block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": block}


def _block_delta(index: int, delta: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": delta}


def chat_stream(model: str, reply: Reply, use: CacheUse, number: int) -> bytes:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        body = {"id": f"chatcmpl-{number}", "object": "chat.completion.chunk", "created": 0}
        body |= {"model": model, "choices": [choice]}
        return _sse(None, body)

    out = [chunk({"role": "assistant", "content": reply.text or None})]
    for n, call in enumerate(reply.calls):
        function = {"name": call.name, "arguments": json.dumps(call.arguments)}
        fragment = {"index": n, "id": f"call_{number}_{n}", "type": "function"}
        out.append(chunk({"tool_calls": [fragment | {"function": function}]}))
    out.append(chunk({}, "tool_calls" if reply.calls else "stop"))
    output = _output_tokens(reply)
    usage = {
        "prompt_tokens": use.input_tokens,
        "completion_tokens": output,
        "total_tokens": use.input_tokens + output,
        "prompt_tokens_details": {"cached_tokens": use.read},
        "completion_tokens_details": {"reasoning_tokens": 0},
    }
    last = {"id": f"chatcmpl-{number}", "object": "chat.completion.chunk", "created": 0}
    out.append(_sse(None, last | {"model": model, "choices": [], "usage": usage}))
    out.append(b"data: [DONE]\n\n")
    return b"".join(out)


def responses_stream(model: str, reply: Reply, use: CacheUse, number: int) -> bytes:
    out: list[bytes] = []
    sequence = 0
    items: list[dict[str, Any]] = []

    def event(kind: str, **data: Any) -> None:
        nonlocal sequence
        out.append(_sse(kind, {"type": kind, "sequence_number": sequence, **data}))
        sequence += 1

    response = {"id": f"resp_{number}", "object": "response", "created_at": 0, "model": model}
    event("response.created", response=response | {"status": "in_progress", "output": []})
    index = 0
    if reply.text:
        item_id = f"msg_{number}"
        added = {"type": "message", "id": item_id, "role": "assistant", "status": "in_progress"}
        event("response.output_item.added", output_index=index, item=added | {"content": []})
        event(
            "response.output_text.delta",
            item_id=item_id,
            output_index=index,
            content_index=0,
            delta=reply.text,
        )
        text: JsonObject = {"type": "output_text", "text": reply.text, "annotations": []}
        done = added | {"status": "completed", "content": [text]}
        event("response.output_item.done", output_index=index, item=done)
        items.append(done)
        index += 1
    for n, call in enumerate(reply.calls):
        item = {"type": "function_call", "id": f"fc_{number}_{n}", "call_id": f"call_{number}_{n}"}
        item |= {"name": call.name, "arguments": "", "status": "in_progress"}
        event("response.output_item.added", output_index=index, item=item)
        arguments = json.dumps(call.arguments)
        event(
            "response.function_call_arguments.delta",
            item_id=item["id"],
            output_index=index,
            delta=arguments,
        )
        done = item | {"arguments": arguments, "status": "completed"}
        event("response.output_item.done", output_index=index, item=done)
        items.append(done)
        index += 1
    output = _output_tokens(reply)
    usage = {
        "input_tokens": use.input_tokens,
        "input_tokens_details": {"cached_tokens": use.read},
        "output_tokens": output,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": use.input_tokens + output,
    }
    completed = response | {"status": "completed", "output": items, "usage": usage}
    event("response.completed", response=completed)
    return b"".join(out)


def gemini_stream(model: str, reply: Reply, use: CacheUse, number: int) -> bytes:
    parts: list[dict[str, Any]] = []
    if reply.text:
        parts.append({"text": reply.text})
    parts += [{"functionCall": {"name": c.name, "args": c.arguments}} for c in reply.calls]
    output = _output_tokens(reply)
    frame = {
        "candidates": [
            {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": {
            "promptTokenCount": use.input_tokens,
            "cachedContentTokenCount": use.read,
            "candidatesTokenCount": output,
            "totalTokenCount": use.input_tokens + output,
        },
        "modelVersion": model,
        "responseId": f"r{number}",
    }
    return f"data: {json.dumps(frame)}\r\n\r\n".encode()


STREAMS: dict[Wire, Callable[[str, Reply, CacheUse, int], bytes]] = {
    "anthropic": anthropic_stream,
    "openai-chat": chat_stream,
    "openai-responses": responses_stream,
    "gemini": gemini_stream,
}


# --------------------------------------------------------------------------- the server


@dataclass
class Exchange:
    """One model call as the fake saw it."""

    segments: list[Segment]
    use: CacheUse
    output_tokens: int
    summary: bool


SUMMARY_MARKERS: tuple[str, ...] = ()
"""Texts whose presence in a request body marks a compaction's summary request (set by the
benchmark from `agent.context.compaction`)."""


class FakeProvider:
    """A loopback HTTP server speaking one wire, with that vendor's prompt cache."""

    def __init__(
        self,
        wire: Wire,
        brain: Brain,
        *,
        model: str,
        minimum_tokens: int = 1024,
        summary_markers: Sequence[str] = (),
    ) -> None:
        self.wire: Wire = wire
        self.model = model
        self.exchanges: list[Exchange] = []
        self.bodies: list[JsonObject] = []
        """Every request body, as sent (refused ones too)."""
        self.errors: list[str] = []
        self._brain = brain
        self._markers = tuple(summary_markers)
        self._cache: ExplicitCache | PrefixCache = (
            ExplicitCache(minimum_tokens) if wire == "anthropic" else PrefixCache()
        )
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                status, content_type, payload = fake.answer(raw)
                self.send_response(status)
                self.send_header("content-type", content_type)
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_GET(self) -> None:
                payload = b'{"error": {"message": "not here"}}'
                self.send_response(404)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def answer(self, raw: bytes) -> tuple[int, str, bytes]:
        with self._lock:
            body = cast("JsonObject", json.loads(raw))
            self.bodies.append(body)
            segments = SEGMENTERS[self.wire](body)
            try:
                use = self._cache.use(segments)
            except CacheRuleError as exc:
                self.errors.append(str(exc))
                detail = {"type": "invalid_request_error", "message": str(exc)}
                error = {"type": "error", "error": detail}
                return 400, "application/json", json.dumps(error).encode()
            text = raw.decode("utf-8", "replace")
            summary = any(marker in text for marker in self._markers)
            reply = self._brain(summary)
            number = len(self.exchanges)
            self.exchanges.append(Exchange(segments, use, _output_tokens(reply), summary))
            return 200, "text/event-stream", STREAMS[self.wire](self.model, reply, use, number)


@contextmanager
def serving(provider: FakeProvider) -> Generator[FakeProvider]:
    provider.start()
    try:
        yield provider
    finally:
        provider.stop()
