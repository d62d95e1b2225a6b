"""Prompt caching as each wire sends it, through the real SDKs over loopback: Anthropic
`cache_control` breakpoints (where, how many, never on thinking, the model's minimum, the TTL),
the same for Claude through OpenRouter's chat wire, OpenAI's `prompt_cache_key` and retention;
and the cache fields of recorded usage, normalised and priced."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, cast

import anyio
import pytest

from providers.catalog import Cost, ModelInfo, cost_usd
from providers.model import Endpoint, Model
from providers.types import (
    Message,
    ModelRequest,
    PromptCache,
    ProviderMetadata,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    ToolSpec,
    Usage,
    UsageEvent,
)
from providers.wire import anthropic_messages, gemini, openai_chat, openai_responses
from providers.wire.prompt_cache import MAX_BREAKPOINTS, anthropic_breakpoints
from tests.loopback import LoopbackServer, Reply, loopback
from tests.providers.test_anthropic_request_snapshots import MINIMAL_STREAM

DATA = Path(__file__).resolve().parents[1] / "data" / "providers"
RECORDED_USAGE: dict[str, Any] = json.loads((DATA / "cache" / "recorded_usage.json").read_text())
CACHE = PromptCache(key="session-7", ttl="5m")
SYSTEM = "You are a careful coding agent. Read before you edit. " * 120  # ~1,700 tokens
TOOLS = [
    ToolSpec(
        name=f"tool_{n}",
        description=f"Tool number {n}: does a thing with a file. " * 30,
        input_schema={"type": "object", "properties": {"path": {"type": "string"}}},
    )
    for n in range(3)
]


def _rounds(rounds: int, *, calls: int = 1, result: str = "file text " * 200) -> list[Message]:
    """A prompt, then `rounds` assistant messages of `calls` tool calls, each answered."""
    messages = [Message(role="user", parts=[TextPart(text="Look at the files.")])]
    for r in range(rounds):
        parts: list[Any] = [TextPart(text=f"Round {r}.")]
        parts += [
            ToolCallPart(id=f"c{r}_{n}", name="tool_0", arguments={"path": f"f{r}_{n}"})
            for n in range(calls)
        ]
        messages.append(Message(role="assistant", parts=parts))
        results = [
            ToolResultPart(tool_call_id=f"c{r}_{n}", name="tool_0", content=[TextPart(text=result)])
            for n in range(calls)
        ]
        messages.append(Message(role="tool", parts=results))
    return messages


def _request(messages: Sequence[Message], cache: PromptCache | None = CACHE) -> ModelRequest:
    return ModelRequest(system=SYSTEM, messages=list(messages), tools=TOOLS, cache=cache)


@pytest.fixture(scope="module")
def server() -> Iterator[LoopbackServer]:
    with loopback() as running:
        yield running


async def _sent(
    server: LoopbackServer, model: Model, request: ModelRequest, reply: bytes
) -> dict[str, Any]:
    server.replies[:] = [Reply(body=reply)]
    try:
        with anyio.fail_after(10):
            events = [event async for event in model.stream(request)]
    finally:
        await model.aclose()
    assert events[-1].kind == "finish" and events[-1].reason != "error", events
    return json.loads(server.requests[-1].body)


async def _anthropic(
    server: LoopbackServer, request: ModelRequest, model_id: str = "claude-sonnet-4-5"
) -> dict[str, Any]:
    endpoint = Endpoint(provider_id="anthropic", api="anthropic", base_url=server.url, api_key="k")
    model = anthropic_messages.create_model(model_id, endpoint)
    return await _sent(server, model, request, MINIMAL_STREAM)


def _objects(value: object) -> list[dict[str, Any]]:
    return cast("list[dict[str, Any]]", value) if isinstance(value, list) else []


def _marked(body: dict[str, Any]) -> list[tuple[str, int, int]]:
    """Where the breakpoints are: ("tools", i, -1), ("system", i, -1), ("messages", m, b)."""
    found: list[tuple[str, int, int]] = []
    for index, tool in enumerate(_objects(body.get("tools"))):
        if "cache_control" in tool:
            found.append(("tools", index, -1))
    for index, block in enumerate(_objects(body.get("system"))):
        if "cache_control" in block:
            found.append(("system", index, -1))
    for m, message in enumerate(_objects(body.get("messages"))):
        for b, block in enumerate(_objects(message["content"])):
            if "cache_control" in block:
                found.append(("messages", m, b))
    return found


# ------------------------------------------------------------------------------ Anthropic


async def test_anthropic_marks_the_tools_the_system_and_both_ends(server: LoopbackServer) -> None:
    body = await _anthropic(server, _request(_rounds(3)))
    messages = body["messages"]
    last = len(messages) - 1
    # ... the previous request ended just before the newest assistant message.
    previous_end = last - 2
    assert messages[previous_end + 1]["role"] == "assistant"
    assert _marked(body) == [
        ("tools", len(TOOLS) - 1, -1),
        ("system", 0, -1),
        ("messages", previous_end, len(messages[previous_end]["content"]) - 1),
        ("messages", last, len(messages[last]["content"]) - 1),
    ]
    assert body["system"] == [
        {"type": "text", "text": SYSTEM, "cache_control": {"type": "ephemeral", "ttl": "5m"}}
    ]
    assert messages[last]["content"][-1]["type"] == "tool_result"


async def test_a_prefix_written_by_one_request_is_where_the_next_reads(
    server: LoopbackServer,
) -> None:
    # Twelve parallel calls answered: 25 blocks appended, more than the 20-block lookback.
    history = _rounds(2)
    first = await _anthropic(server, _request(history))
    second = await _anthropic(server, _request([*history, *_rounds(1, calls=12)[1:]]))
    written = _marked(first)[-1]  # the last breakpoint writes the whole prompt
    read = _marked(second)[-2]
    assert written == read
    m = read[1]
    strip = _without_markers
    assert strip(first["messages"][: m + 1]) == strip(second["messages"][: m + 1])
    appended = sum(len(msg["content"]) for msg in second["messages"][m + 1 :])
    assert appended > 20


def _without_markers(value: object) -> object:
    if isinstance(value, dict):
        items = cast("dict[str, object]", value).items()
        return {k: _without_markers(v) for k, v in items if k != "cache_control"}
    if isinstance(value, list):
        return [_without_markers(v) for v in cast("list[object]", value)]
    return value


async def test_thinking_blocks_never_carry_a_breakpoint(server: LoopbackServer) -> None:
    signed: ProviderMetadata = {"anthropic": {"signature": "EqQBCkYIBxgCKkBzaWduZWQ="}}
    thinking = ReasoningPart(text="Let me think.", provider_metadata=signed)
    history = [
        Message(role="user", parts=[TextPart(text="Read it. " * 600)]),
        Message(
            role="assistant",
            parts=[thinking, ToolCallPart(id="c1", name="tool_0", arguments={"path": "a"})],
        ),
        Message(
            role="tool",
            parts=[ToolResultPart(tool_call_id="c1", name="tool_0", content=[TextPart(text="x")])],
        ),
    ]
    body = await _anthropic(server, _request(history))
    for section, m, b in _marked(body):
        if section == "messages":
            assert body["messages"][m]["content"][b]["type"] not in (
                "thinking",
                "redacted_thinking",
            )
    # A request ending with the model's own thinking (a prefill): the marker skips it.
    params: dict[str, Any] = {
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "q " * 3000}]},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "So far:"},
                    {"type": "thinking", "thinking": "...", "signature": "s"},
                    {"type": "redacted_thinking", "data": "d"},
                ],
            },
        ]
    }
    anthropic_breakpoints(params, "claude-sonnet-4-5", CACHE)
    content = params["messages"][-1]["content"]
    assert "cache_control" in content[0]
    assert all("cache_control" not in block for block in content[1:])


@pytest.mark.parametrize(
    ("model_id", "marked"),
    [
        ("claude-sonnet-4-5", True),  # 1,024 tokens
        ("claude-opus-5", True),  # 512
        ("claude-opus-4-7", True),  # 2,048
        ("claude-haiku-4-5", False),  # 4,096
        ("claude-opus-4-6", False),  # 4,096
    ],
)
async def test_a_prefix_under_the_models_minimum_gets_no_breakpoint(
    server: LoopbackServer, model_id: str, marked: bool
) -> None:
    # About 2,000 tokens of prompt in all.
    request = ModelRequest(
        system="Be brief. " * 400,
        messages=[Message(role="user", parts=[TextPart(text="Summarise the notes. " * 120)])],
        cache=CACHE,
    )
    body = await _anthropic(server, request, model_id)
    assert bool(_marked(body)) is marked
    small = ModelRequest(
        system="Be brief.",
        messages=[Message(role="user", parts=[TextPart(text="Hi")])],
        cache=CACHE,
    )
    assert _marked(await _anthropic(server, small, model_id)) == []


async def test_the_ttl_setting_reaches_every_breakpoint(server: LoopbackServer) -> None:
    body = await _anthropic(server, _request(_rounds(2), PromptCache(key="s", ttl="1h")))
    markers = _markers(body)
    assert len(markers) == 4 and all(m == {"type": "ephemeral", "ttl": "1h"} for m in markers)
    plain = await _anthropic(server, _request(_rounds(2), cache=None))
    assert _markers(plain) == [] and isinstance(plain["system"], str)


def _markers(value: object) -> list[object]:
    if isinstance(value, dict):
        mapping = cast("dict[str, object]", value)
        own = [mapping["cache_control"]] if "cache_control" in mapping else []
        nested = [m for k, v in mapping.items() if k != "cache_control" for m in _markers(v)]
        return own + nested
    if isinstance(value, list):
        return [m for item in cast("list[object]", value) for m in _markers(item)]
    return []


def test_never_more_than_four_breakpoints_whatever_the_history() -> None:
    for rounds in range(0, 9):
        for calls in (1, 3, 12):
            for tools in (TOOLS, []):
                for system in (SYSTEM, ""):
                    request = ModelRequest(
                        system=system, messages=_rounds(rounds, calls=calls), tools=tools
                    )
                    params = anthropic_messages._build_params(  # pyright: ignore[reportPrivateUsage]
                        "claude-sonnet-4-5", request, Endpoint(provider_id="a", api="anthropic")
                    )
                    anthropic_breakpoints(params, "claude-sonnet-4-5", CACHE)
                    assert len(_markers(params)) <= MAX_BREAKPOINTS


# ----------------------------------------------------------------- Claude through OpenRouter


def _chat_reply() -> bytes:
    chunks = [
        {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m",
         "choices": [{"index": 0, "delta": {"role": "assistant", "content": "ok"},
                      "finish_reason": "stop"}]},
    ]  # fmt: skip
    return b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in chunks) + b"data: [DONE]\n\n"


async def _chat(
    server: LoopbackServer, provider: str, model_id: str, request: ModelRequest
) -> dict[str, Any]:
    endpoint = Endpoint(provider_id=provider, api="openai-chat", base_url=server.url, api_key="k")
    return await _sent(server, openai_chat.create_model(model_id, endpoint), request, _chat_reply())


async def test_claude_through_openrouter_gets_breakpoints_on_content_parts(
    server: LoopbackServer,
) -> None:
    body = await _chat(server, "openrouter", "anthropic/claude-sonnet-4.5", _request(_rounds(2)))
    messages = body["messages"]
    marked = [
        (index, part["type"])
        for index, message in enumerate(messages)
        if isinstance(message["content"], list)
        for part in message["content"]
        if "cache_control" in part
    ]
    # The system prompt (Anthropic puts the tools before it), where the previous request ended
    # (the tool result before the newest assistant message) and the last tool result.
    assert marked == [(0, "text"), (len(messages) - 3, "text"), (len(messages) - 1, "text")]
    assert messages[-1]["role"] == "tool" and messages[-3]["role"] == "tool"
    assert "prompt_cache_key" not in body
    other = await _chat(server, "openrouter", "openai/gpt-5", _request(_rounds(2)))
    assert _markers(other) == [] and "prompt_cache_key" not in other


# ------------------------------------------------------------------------------- OpenAI


@pytest.mark.parametrize(
    ("model_id", "retention"),
    [("gpt-5.1", "24h"), ("gpt-4.1", "24h"), ("gpt-5.5", None), ("gpt-4o", None)],
)
async def test_openai_gets_the_sessions_cache_key_and_retention_where_offered(
    server: LoopbackServer, model_id: str, retention: str | None
) -> None:
    bodies = [
        await _chat(server, "openai", model_id, _request(_rounds(1))),
        await _chat(server, "openai", model_id, _request(_rounds(2))),
        await _responses(server, model_id, _request(_rounds(2))),
    ]
    for body in bodies:
        assert body["prompt_cache_key"] == "session-7"
        assert body.get("prompt_cache_retention") == retention
        assert _markers(body) == []


async def test_other_compatible_hosts_get_no_cache_parameters(server: LoopbackServer) -> None:
    body = await _chat(server, "groq", "openai/gpt-oss-120b", _request(_rounds(1)))
    assert "prompt_cache_key" not in body and "prompt_cache_retention" not in body


def _responses_reply(usage: dict[str, Any] | None = None) -> bytes:
    response: dict[str, Any] = {
        "id": "resp_1", "object": "response", "created_at": 0, "model": "m",
        "status": "completed", "output": [],
    }  # fmt: skip
    if usage is not None:
        response["usage"] = usage
    event = {"type": "response.completed", "sequence_number": 0, "response": response}
    return f"event: response.completed\ndata: {json.dumps(event)}\n\n".encode()


async def _responses(
    server: LoopbackServer, model_id: str, request: ModelRequest, reply: bytes | None = None
) -> dict[str, Any]:
    endpoint = Endpoint(
        provider_id="openai", api="openai-responses", base_url=server.url, api_key="k"
    )
    model = openai_responses.create_model(model_id, endpoint)
    return await _sent(server, model, request, reply or _responses_reply())


# --------------------------------------------------------------- recorded usage, priced


PRICES = Cost(input=3.0, output=15.0, cache_read=0.3, cache_write=3.75)


def _info(cost: Cost = PRICES) -> ModelInfo:
    return ModelInfo(
        provider="p", id="m", name="m", context_window=200_000, max_output=8_192,
        vision=False, reasoning=True, tool_call=True, cost=cost,
    )  # fmt: skip


def _anthropic_usage_stream(usage: dict[str, Any]) -> bytes:
    start: dict[str, Any] = {"id": "m", "type": "message", "role": "assistant", "model": "c"}
    start |= {"content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": start}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                           "usage": {"output_tokens": usage["output_tokens"]}}),
        ("message_stop", {"type": "message_stop"}),
    ]  # fmt: skip
    return b"".join(f"event: {e}\ndata: {json.dumps(d)}\n\n".encode() for e, d in events)


def _chat_usage_stream(usage: dict[str, Any]) -> bytes:
    last: dict[str, Any] = {"id": "c", "object": "chat.completion.chunk", "created": 0}
    last |= {"model": "m", "choices": [], "usage": usage}
    return _chat_reply().removesuffix(b"data: [DONE]\n\n") + (
        f"data: {json.dumps(last)}\n\ndata: [DONE]\n\n".encode()
    )


def _gemini_usage_stream(usage: dict[str, Any]) -> bytes:
    content = {"role": "model", "parts": [{"text": "ok"}]}
    frame: dict[str, Any] = {"candidates": [{"content": content, "finishReason": "STOP"}]}
    frame["usageMetadata"] = usage
    return f"data: {json.dumps(frame)}\r\n\r\n".encode()


async def _usage_of(server: LoopbackServer, model: Model, reply: bytes) -> Usage:
    server.replies[:] = [Reply(body=reply)]
    try:
        with anyio.fail_after(10):
            events = [event async for event in model.stream(_request(_rounds(1)))]
    finally:
        await model.aclose()
    [usage] = [event.usage for event in events if isinstance(event, UsageEvent)]
    return usage


def _endpoint(server: LoopbackServer, provider: str, api: Any) -> Endpoint:
    return Endpoint(provider_id=provider, api=api, base_url=server.url, api_key="k")


UsageCase = Callable[[LoopbackServer], "tuple[Model, bytes]"]
USAGE_CASES: dict[str, UsageCase] = {
    "anthropic": lambda s: (
        anthropic_messages.create_model(
            "claude-sonnet-4-5", _endpoint(s, "anthropic", "anthropic")
        ),
        _anthropic_usage_stream(RECORDED_USAGE["anthropic"]),
    ),
    "openai-chat": lambda s: (
        openai_chat.create_model("gpt-5.6-sol", _endpoint(s, "openai", "openai-chat")),
        _chat_usage_stream(RECORDED_USAGE["openai-chat"]),
    ),
    "openai-responses": lambda s: (
        openai_responses.create_model("gpt-5.6-sol", _endpoint(s, "openai", "openai-responses")),
        _responses_reply(RECORDED_USAGE["openai-responses"]),
    ),
    "gemini": lambda s: (
        gemini.create_model("gemini-2.5-flash", _endpoint(s, "google", "gemini")),
        _gemini_usage_stream(RECORDED_USAGE["gemini"]),
    ),
}
EXPECTED_USAGE = {
    # input = uncached + read + written; the reads and writes are parts of it.
    "anthropic": Usage(
        input_tokens=3 + 1111 + 418, cached_input_tokens=1111, cache_write_tokens=418,
        output_tokens=33,
    ),
    "openai-chat": Usage(input_tokens=4020, cached_input_tokens=4012, output_tokens=4),
    "openai-responses": Usage(input_tokens=4020, cache_write_tokens=4012, output_tokens=5),
    "gemini": Usage(
        input_tokens=373, cached_input_tokens=204, output_tokens=89 + 167, reasoning_tokens=167
    ),
}  # fmt: skip


@pytest.mark.parametrize("wire", sorted(USAGE_CASES))
async def test_recorded_cache_usage_is_normalised_and_priced(
    server: LoopbackServer, wire: str
) -> None:
    model, reply = USAGE_CASES[wire](server)
    usage = await _usage_of(server, model, reply)
    assert usage == EXPECTED_USAGE[wire]
    fresh = usage.input_tokens - usage.cached_input_tokens - usage.cache_write_tokens
    expected = (
        fresh * 3.0
        + usage.cached_input_tokens * 0.3
        + usage.cache_write_tokens * 3.75
        + usage.output_tokens * 15.0
    ) / 1_000_000
    assert cost_usd(_info(), usage) == pytest.approx(expected)


def test_hour_long_writes_cost_twice_the_input_price() -> None:
    usage = Usage(
        input_tokens=10_000,
        cached_input_tokens=6_000,
        cache_write_tokens=3_000,
        cache_write_1h_tokens=2_000,
        output_tokens=100,
    )
    expected = 1_000 * 3.0 + 6_000 * 0.3 + 1_000 * 3.75 + 2_000 * 6.0 + 100 * 15.0
    assert cost_usd(_info(), usage) == pytest.approx(expected / 1_000_000)
    # A cache price the catalog does not know makes the cost unknown, never zero.
    unknown = Cost(input=3.0, output=15.0)
    assert cost_usd(_info(unknown), usage) is None


async def test_hour_long_writes_are_counted_from_the_stream(server: LoopbackServer) -> None:
    recorded = dict(RECORDED_USAGE["anthropic"])
    recorded["cache_creation"] = {"ephemeral_1h_input_tokens": 418, "ephemeral_5m_input_tokens": 0}
    endpoint = _endpoint(server, "anthropic", "anthropic")
    model = anthropic_messages.create_model("claude-sonnet-4-5", endpoint)
    usage = await _usage_of(server, model, _anthropic_usage_stream(recorded))
    assert usage.cache_write_tokens == usage.cache_write_1h_tokens == 418
