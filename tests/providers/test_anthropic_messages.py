"""The Anthropic Messages adapter, driven through the real `anthropic` SDK against the loopback
server with recorded streams."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Generator, Iterator
from contextlib import contextmanager
from typing import Any

import anyio
import pytest
from inline_snapshot import snapshot

from providers.assemble import MessageAssembler
from providers.model import Endpoint
from providers.registry import create_model as create_registry_model
from providers.registry import resolve_endpoint
from providers.types import (
    ErrorEvent,
    Finish,
    FinishReason,
    Message,
    ModelRequest,
    ProviderError,
    ReasoningDelta,
    ReasoningPart,
    StreamEvent,
    TextDelta,
    TextPart,
    ToolCallEnd,
    ToolCallPart,
    ToolCallStart,
    ToolResultPart,
    ToolSpec,
    Usage,
    UsageEvent,
)
from providers.wire import anthropic_messages
from providers.wire.anthropic_messages import create_model
from tests.fixtures import ROOT, cassette, request_body, response_body
from tests.loopback import LoopbackServer, Reply, loopback
from tests.providers.hanging import hanging_server

FIXED_VERSION = ToolSpec(
    name="fixed_version",
    description="Return a fixed test version string",
    input_schema={"properties": {}, "type": "object"},
)
SIGNATURE = (
    "EoQDCm0IDhgCKkCDzGs2kL2PgnDCZU/nM2wG2P1VIXCRHVnhDDzBQxNF1fl4QBXEKLxRItNJ2MwFdW9eeZPhsxSQIxD54cv3"
    "zs29MhljbGF1ZGUtaGFpa3UtNC01LTIwMjUxMDAxOABCCHRoaW5raW5nEgy/OWlwTmmqUjC6L70aDJ4P0R5NfuIe9U5zAiIw"
    "CxPduXS2UxCNxJCee3i91qK3cAyAgxCjL2wkQ5UD56iX1hXGOyuNaiH5k+dF5OCQKsQBxiAo+NjC61hV8nRYtaiP+C4inOcu"
    "MKuTG9Z1rysxTXkKBTl3oMiOlnEPHHPpKpg4sYF2G5VoTg8JTon20hdZw4GfTEVupnU1qAmnMqyAgke9SoV7HBW/PyA/FxL/"
    "q33xJ2gKFiD+BsgI9Z0koMmFKCvm2MoYE6u+ONEwKdFQXL1FKRW6t/bYbJGrLJLwxilsL82h9j4xjggjMn8Npvpn+zsrDPW/"
    "8PuLd4Pu+/EsjoneYwyxQQtUVgzhVGhhANWRjSBwUxgB"
)


@pytest.fixture(scope="module")
def shared_server() -> Iterator[LoopbackServer]:
    # One server per module: stopping a loopback server costs half a second of polling.
    with loopback() as server:
        yield server


@pytest.fixture
def srv(shared_server: LoopbackServer) -> LoopbackServer:
    shared_server.replies.clear()
    shared_server.requests.clear()
    return shared_server


@contextmanager
def serving(server: LoopbackServer, *replies: Reply) -> Generator[LoopbackServer]:
    server.replies.extend(replies)
    yield server


def endpoint(server: LoopbackServer, **extra: Any) -> Endpoint:
    return Endpoint(
        provider_id="anthropic", api="anthropic", base_url=server.url, api_key="test-key", **extra
    )


async def collect(server: LoopbackServer, request: ModelRequest, **extra: Any) -> list[StreamEvent]:
    model = create_model("claude-haiku-4-5-20251001", endpoint(server, **extra))
    try:
        with anyio.fail_after(10):
            return [event async for event in model.stream(request)]
    finally:
        await model.aclose()


def sse(*events: dict[str, Any]) -> bytes:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


MESSAGE_START: dict[str, Any] = {
    "type": "message_start",
    "message": {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude",
        "content": [],
        "stop_reason": None,
        "usage": {"input_tokens": 10, "output_tokens": 1},
    },
}


def user(text: str) -> Message:
    return Message(role="user", parts=[TextPart(text=text)])


PROMPT = (
    "Use the fixed_version tool. Then tell me the version and make one short joke about it. "
    "Think about it first."
)


async def test_thinking_tool_use_round_trip_replays_the_signed_thinking_block(
    srv: LoopbackServer,
) -> None:
    turns = cassette("anthropic/messages_stream_thinking_tool_use.yaml")
    request = ModelRequest(
        system="",
        messages=[user(PROMPT)],
        tools=[FIXED_VERSION],
        reasoning_effort="low",
        max_output_tokens=64000,
    )
    with serving(srv, Reply(body=response_body(turns[0])), Reply(body=response_body(turns[1]))):
        first = await collect(srv, request)
        assert first == snapshot(
            [
                ReasoningDelta(text="The user wants me to:\n1"),
                ReasoningDelta(
                    text=""". Use the fixed_version tool
2. Tell them the version
3. Make a short joke about it

Let me first call the fixed_version tool to see what version it returns."""
                ),
                ReasoningDelta(text="", provider_metadata={"anthropic": {"signature": SIGNATURE}}),
                ToolCallStart(call_id="toolu_01825dXWLSoJwCst1qTsiWdb", name="fixed_version"),
                ToolCallEnd(
                    call_id="toolu_01825dXWLSoJwCst1qTsiWdb",
                    name="fixed_version",
                    arguments={},
                    raw_arguments="",
                ),
                UsageEvent(usage=Usage(input_tokens=598, output_tokens=92, reasoning_tokens=53)),
                Finish(reason="tool_calls", raw_reason="tool_use"),
            ]
        )
        assembler = MessageAssembler()
        for event in first:
            assembler.feed(event)
        assistant = assembler.message()
        call = assistant.tool_calls[0]
        result = Message(
            role="tool",
            parts=[
                ToolResultPart(
                    tool_call_id=call.id, name=call.name, content=[TextPart(text="0.32a0")]
                )
            ],
        )
        second = await collect(
            srv,
            ModelRequest(
                system="",
                messages=[*request.messages, assistant, result],
                tools=request.tools,
                reasoning_effort="low",
                max_output_tokens=64000,
            ),
        )
        sent = srv.requests[1].json()

    recorded = request_body(turns[1])
    # The assistant turn goes back exactly as the real client sent it: thinking (text and
    # signature byte-identical) first, then the tool_use.
    assert sent["messages"][1] == recorded["messages"][1]
    assert sent["messages"][1]["content"][0]["signature"] == SIGNATURE
    assert [block["type"] for block in sent["messages"][1]["content"]] == ["thinking", "tool_use"]
    assert sent["messages"][2] == {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_01825dXWLSoJwCst1qTsiWdb",
                "content": [{"type": "text", "text": "0.32a0"}],
            }
        ],
    }
    # The 2026-10-21 API rejects sampling parameters the recording still carried.
    assert "temperature" in recorded and "temperature" not in sent
    assert sent["thinking"] == {"type": "enabled", "budget_tokens": 1024}
    assert srv.requests[1].headers["anthropic-version"] == "2026-10-21"
    assert srv.requests[1].headers["authorization"] == "Bearer test-key"
    assert srv.requests[1].path == "/v1/messages"

    texts = "".join(e.text for e in second if isinstance(e, TextDelta))
    assert texts.startswith("The version is **0.32a0**.")
    assert {e.index for e in second if isinstance(e, TextDelta)} == {0}
    assert second[-2:] == snapshot(
        [
            UsageEvent(usage=Usage(input_tokens=707, output_tokens=89)),
            Finish(reason="stop", raw_reason="end_turn"),
        ]
    )


async def test_redacted_thinking_arrives_whole_and_replays_in_order(srv: LoopbackServer) -> None:
    (turn,) = cassette("anthropic/messages_stream_redacted_thinking.yaml")
    with serving(srv, Reply(body=response_body(turn)), Reply(body=sse(MESSAGE_START))):
        events = await collect(srv, ModelRequest(system="", messages=[user("trigger")]))
        reasoning = [e for e in events if isinstance(e, ReasoningDelta)]
        assert [(e.index, e.text) for e in reasoning] == [(0, ""), (1, "")]
        data = [e.provider_metadata["anthropic"]["redacted"] for e in reasoning]
        assert all(isinstance(d, str) and d.startswith("E") for d in data)
        assert events[-2:] == snapshot(
            [
                UsageEvent(usage=Usage(input_tokens=92, output_tokens=189)),
                Finish(reason="stop", raw_reason="end_turn"),
            ]
        )
        assembler = MessageAssembler()
        for event in events:
            assembler.feed(event)
        assistant = assembler.message()
        assert [part.kind for part in assistant.parts] == ["reasoning", "reasoning", "text"]

        await collect(
            srv, ModelRequest(system="", messages=[user("trigger"), assistant, user("again")])
        )
        sent = srv.requests[1].json()
    content = sent["messages"][1]["content"]
    assert [block["type"] for block in content] == [
        "redacted_thinking",
        "redacted_thinking",
        "text",
    ]
    assert [block["data"] for block in content[:2]] == data
    assert content[2]["text"].startswith("I notice that you've sent what")


async def test_not_found_from_recording_is_an_invalid_request(srv: LoopbackServer) -> None:
    (turn,) = cassette("anthropic/error_404_not_found_error.yaml")
    reply = Reply.json(turn["response"]["parsed_body"], status=404)
    with serving(srv, reply):
        events = await collect(srv, ModelRequest(system="", messages=[user("hello")]))
    assert events == snapshot(
        [
            ErrorEvent(
                error=ProviderError(
                    kind="invalid_request",
                    message="anthropic: model: claude-sonet-4-5",
                    retryable=False,
                    status=404,
                    code="not_found_error",
                    provider="anthropic",
                )
            ),
            Finish(reason="error"),
        ]
    )


def error_body(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}, "request_id": "req_1"}


async def run_error(srv: LoopbackServer, reply: Reply) -> ProviderError:
    srv.requests.clear()
    with serving(srv, reply):
        events = await collect(srv, ModelRequest(system="", messages=[user("hi")]))
    # SDK retries are off (429, 500 and 529 included): the agent owns the retry policy.
    assert len(srv.requests) == 1
    assert isinstance(events[-1], Finish) and events[-1].reason == "error"
    assert sum(isinstance(e, Finish) for e in events) == 1
    assert isinstance(events[-2], ErrorEvent)
    return events[-2].error


async def test_http_errors_are_classified(srv: LoopbackServer) -> None:
    auth = await run_error(
        srv, Reply.json(error_body("authentication_error", "invalid x-api-key"), status=401)
    )
    assert (auth.kind, auth.retryable, auth.status) == ("auth", False, 401)

    limited = await run_error(
        srv,
        Reply.json(
            error_body("rate_limit_error", "Number of requests has exceeded your rate limit"),
            status=429,
            headers={"retry-after": "7"},
        ),
    )
    assert (limited.kind, limited.retryable, limited.retry_after) == ("rate_limit", True, 7.0)

    server = await run_error(srv, Reply.json(error_body("api_error", "Internal server error"), 500))
    assert (server.kind, server.retryable, server.status) == ("server", True, 500)

    overloaded = await run_error(srv, Reply.json(error_body("overloaded_error", "Overloaded"), 529))
    assert (overloaded.kind, overloaded.retryable, overloaded.code) == (
        "server",
        True,
        "overloaded_error",
    )

    # SYNTHETIC: the overflow text documented in providers.md section 8, not a recording.
    overflow = await run_error(
        srv,
        Reply.json(
            error_body(
                "invalid_request_error", "prompt is too long: 208310 tokens > 200000 maximum"
            ),
            status=400,
        ),
    )
    assert (overflow.kind, overflow.retryable, overflow.status) == ("context_overflow", False, 400)


async def test_mid_stream_error_event_is_classified_by_its_type(srv: LoopbackServer) -> None:
    body = sse(MESSAGE_START) + (
        b"event: error\n"
        b'data: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n'
    )
    with serving(srv, Reply(body=body)):
        events = await collect(srv, ModelRequest(system="", messages=[user("hi")]))
    assert events == snapshot(
        [
            UsageEvent(usage=Usage(input_tokens=10, output_tokens=1)),
            ErrorEvent(
                error=ProviderError(
                    kind="server",
                    message="anthropic: Overloaded",
                    retryable=True,
                    code="overloaded_error",
                    provider="anthropic",
                )
            ),
            Finish(reason="error"),
        ]
    )


async def test_stream_cut_before_message_stop_yields_one_finish(srv: LoopbackServer) -> None:
    body = sse(
        MESSAGE_START,
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "text", "text": ""},
        },
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}},
    )
    with serving(srv, Reply(body=body)):
        events = await collect(srv, ModelRequest(system="", messages=[user("hi")]))
    assert events[0] == TextDelta(text="Hi")
    assert [type(e) for e in events[1:]] == [UsageEvent, ErrorEvent, Finish]
    error = events[2]
    assert isinstance(error, ErrorEvent) and error.error.kind == "network"
    assert error.error.retryable
    assert events[-1] == Finish(reason="error")


async def test_garbled_event_is_an_error_not_an_exception(srv: LoopbackServer) -> None:
    body = sse(MESSAGE_START) + b"event: content_block_start\ndata: {not json\n\n"
    with serving(srv, Reply(body=body)):
        events = await collect(srv, ModelRequest(system="", messages=[user("hi")]))
    assert [type(e) for e in events] == [UsageEvent, ErrorEvent, Finish]
    assert isinstance(events[1], ErrorEvent) and events[1].error.kind == "unknown"


async def test_connection_refused_is_a_retryable_network_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    model = create_model(
        "claude",
        Endpoint(
            provider_id="anthropic",
            api="anthropic",
            base_url=f"http://127.0.0.1:{port}",
            api_key="test-key",
        ),
    )
    with anyio.fail_after(10):
        events = [e async for e in model.stream(ModelRequest(system="", messages=[user("hi")]))]
    await model.aclose()
    assert len(events) == 2
    error, finish = events
    assert isinstance(error, ErrorEvent)
    assert (error.error.kind, error.error.retryable, error.error.status) == ("network", True, None)
    assert f"http://127.0.0.1:{port}/v1/messages" in error.error.message
    assert finish == Finish(reason="error")


def block_events(
    index: int, block: dict[str, Any], *deltas: dict[str, Any]
) -> list[dict[str, Any]]:
    return [
        {"type": "content_block_start", "index": index, "content_block": block},
        *({"type": "content_block_delta", "index": index, "delta": d} for d in deltas),
        {"type": "content_block_stop", "index": index},
    ]


async def test_streamed_tool_arguments_stop_reasons_and_cache_usage(srv: LoopbackServer) -> None:
    start = {
        **MESSAGE_START,
        "message": {
            **MESSAGE_START["message"],
            "usage": {
                "input_tokens": 5,
                "cache_read_input_tokens": 100,
                "cache_creation_input_tokens": 20,
                "output_tokens": 1,
            },
        },
    }
    tool: dict[str, Any] = {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {}}
    body = sse(
        start,
        *block_events(
            0,
            tool,
            {"type": "input_json_delta", "partial_json": '{"pa'},
            {"type": "input_json_delta", "partial_json": 'th": "a"}'},
        ),
        *block_events(
            1, {**tool, "id": "toolu_2"}, {"type": "input_json_delta", "partial_json": "{"}
        ),
        {
            "type": "message_delta",
            "delta": {"stop_reason": "model_context_window_exceeded"},
            "usage": {"output_tokens": 30},
        },
        {"type": "message_stop"},
    )
    with serving(srv, Reply(body=body)):
        events = await collect(srv, ModelRequest(system="", messages=[user("hi")]))
    ends = [e for e in events if isinstance(e, ToolCallEnd)]
    assert ends[0].arguments == {"path": "a"} and ends[0].raw_arguments == '{"path": "a"}'
    assert ends[1].arguments is None and ends[1].invalid_reason is not None
    assert events[-2:] == [
        UsageEvent(
            usage=Usage(
                input_tokens=125, cached_input_tokens=100, cache_write_tokens=20, output_tokens=30
            )
        ),
        Finish(reason="context_overflow", raw_reason="model_context_window_exceeded"),
    ]


async def test_other_stop_reasons_map(srv: LoopbackServer) -> None:
    expected: dict[str, FinishReason] = {
        "max_tokens": "length",
        "refusal": "refusal",
        "pause_turn": "other",
        "stop_sequence": "stop",
    }
    for raw, reason in expected.items():
        body = sse(
            MESSAGE_START,
            {"type": "message_delta", "delta": {"stop_reason": raw}, "usage": {"output_tokens": 2}},
            {"type": "message_stop"},
        )
        with serving(srv, Reply(body=body)):
            events = await collect(srv, ModelRequest(system="", messages=[user("hi")]))
        assert events[-1] == Finish(reason=reason, raw_reason=raw)


async def test_history_is_cleaned_and_merged_for_the_api(srv: LoopbackServer) -> None:
    foreign = ReasoningPart(text="I was thought by another model", provider_metadata={})
    request = ModelRequest(
        system="Be brief.",
        messages=[
            user("first"),
            Message(role="user", parts=[TextPart(text="  "), TextPart(text="second")]),
            Message(
                role="assistant",
                parts=[
                    foreign,
                    TextPart(text=""),
                    ToolCallPart(id="c1", name="read", arguments={}),
                ],
            ),
            Message(
                role="tool",
                parts=[ToolResultPart(tool_call_id="c1", name="read", content=[], is_error=True)],
            ),
            user("third"),
            Message(role="assistant", parts=[foreign]),
            user("fourth"),
        ],
    )
    with serving(srv, Reply(body=sse(MESSAGE_START))):
        await collect(srv, request, headers={"x-extra": "yes"})
    sent = srv.requests[0].json()
    assert sent["messages"] == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "first"}, {"type": "text", "text": "second"}],
        },
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "c1", "name": "read", "input": {}}],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "c1", "is_error": True},
                {"type": "text", "text": "third"},
                {"type": "text", "text": "fourth"},
            ],
        },
    ]
    assert sent["system"] == "Be brief."
    assert sent["max_tokens"] == anthropic_messages.DEFAULT_MAX_TOKENS
    assert not {"temperature", "top_p", "top_k"} & set(sent)
    assert srv.requests[0].headers["x-extra"] == "yes"


def params(request: ModelRequest) -> dict[str, Any]:
    endpoint = Endpoint(provider_id="anthropic", api="anthropic")
    return anthropic_messages._build_params("claude", request, endpoint)  # pyright: ignore[reportPrivateUsage]


def test_reasoning_effort_maps_to_a_thinking_budget_below_max_tokens() -> None:
    base = ModelRequest(system="", messages=[user("hi")])
    assert "thinking" not in params(base)
    minimal = params(ModelRequest(system="", messages=[user("hi")], reasoning_effort="minimal"))
    assert minimal["thinking"] == {"type": "disabled"}
    high = params(ModelRequest(system="", messages=[user("hi")], reasoning_effort="high"))
    assert high["thinking"] == {"type": "enabled", "budget_tokens": 16384}
    assert high["max_tokens"] > 16384
    medium = params(
        ModelRequest(
            system="", messages=[user("hi")], reasoning_effort="medium", max_output_tokens=32000
        )
    )
    assert (medium["thinking"]["budget_tokens"], medium["max_tokens"]) == (4096, 32000)


def text_reply(text: str) -> Reply:
    return Reply(
        body=sse(
            MESSAGE_START,
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text"}},
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": text},
            },
            {"type": "content_block_stop", "index": 0},
            {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {}},
            {"type": "message_stop"},
        )
    )


async def registry_stream(srv: LoopbackServer, environ: dict[str, str]) -> list[StreamEvent]:
    model = create_registry_model(
        "anthropic/claude-haiku-4-5", environ={**environ, "ANTHROPIC_BASE_URL": srv.url}
    )
    try:
        with anyio.fail_after(10):
            return [e async for e in model.stream(ModelRequest(system="", messages=[user("hi")]))]
    finally:
        await model.aclose()


async def test_an_auth_token_from_the_environment_is_sent_as_the_sdks_auth_token(
    srv: LoopbackServer,
) -> None:
    with serving(srv, text_reply("hello")):
        events = await registry_stream(srv, {"ANTHROPIC_AUTH_TOKEN": "test-token"})
    assert isinstance(events[-1], Finish) and events[-1].reason == "stop"
    (sent,) = srv.requests
    assert sent.headers["authorization"] == "Bearer test-token"
    assert "x-api-key" not in sent.headers


async def test_an_api_key_wins_over_an_auth_token(srv: LoopbackServer) -> None:
    environ = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_AUTH_TOKEN": "test-token"}
    with serving(srv, text_reply("hello")):
        events = await registry_stream(srv, environ)
    assert isinstance(events[-1], Finish) and events[-1].reason == "stop"
    (sent,) = srv.requests
    assert sent.headers["authorization"] == "Bearer test-key"


def test_the_credential_option_picks_the_sdk_argument() -> None:
    # This SDK sends a key and a token the same way on the wire (`Authorization: Bearer`), so the
    # argument itself is what tells them apart; older and future SDKs treat them differently.
    key = Endpoint(provider_id="anthropic", api="anthropic", api_key="test-key")
    token = Endpoint(
        provider_id="anthropic",
        api="anthropic",
        api_key="test-token",
        options={"credential": "auth_token"},
    )
    assert anthropic_messages.credentials(key) == ("test-key", None)
    assert anthropic_messages.credentials(token) == (None, "test-token")
    assert "test-token" not in repr(token)


async def test_the_sdk_client_holds_the_token_as_auth_token() -> None:
    endpoint = resolve_endpoint(
        "anthropic", {}, {"ANTHROPIC_AUTH_TOKEN": "test-token", "ANTHROPIC_API_KEY": " "}
    )
    model = create_model("claude", endpoint)
    try:
        client = model._sdk_client()  # pyright: ignore[reportPrivateUsage]
        assert (client.auth_token, client.api_key) == ("test-token", None)
    finally:
        await model.aclose()


def test_catalog_base_url_with_v1_suffix_is_not_doubled() -> None:
    assert anthropic_messages.sdk_base_url("https://x.example/anthropic/v1") == (
        "https://x.example/anthropic"
    )
    assert anthropic_messages.sdk_base_url("https://api.anthropic.com/") == (
        "https://api.anthropic.com"
    )
    assert anthropic_messages.sdk_base_url(None) is None


def test_importing_the_adapter_does_not_import_the_sdk() -> None:
    code = (
        "import sys, providers.wire.anthropic_messages as m\n"
        "from providers.model import Endpoint\n"
        "m.create_model('c', Endpoint(provider_id='a', api='anthropic'))\n"
        "assert 'anthropic' not in sys.modules, 'anthropic imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


async def test_cancellation_propagates_and_closes_the_connection() -> None:
    first_event = sse(
        MESSAGE_START,
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}},
    )
    received: list[StreamEvent] = []
    async with hanging_server(first_event) as server:
        model = create_model(
            "claude",
            Endpoint(
                provider_id="anthropic", api="anthropic", base_url=server.url, api_key="test-key"
            ),
        )
        with anyio.fail_after(10):
            with anyio.CancelScope() as scope:
                request = ModelRequest(system="", messages=[user("hi")])
                async for event in model.stream(request):
                    received.append(event)
                    scope.cancel()
            assert scope.cancelled_caught
            await server.closed.wait()
    await model.aclose()
    assert received == [TextDelta(text="Hi")]


async def test_the_endpoints_key_and_auth_headers_are_masked_whatever_their_shape(
    srv: LoopbackServer,
) -> None:
    # Secrets of no known shape, echoed back whole: only knowing them can mask them.
    body = error_body("authentication_error", "bad key zq81plainkey0, bad proxy token tok-42xyz")
    with serving(srv, Reply.json(body, status=401)):
        model = create_model(
            "claude",
            Endpoint(
                provider_id="gateway",
                api="anthropic",
                base_url=srv.url,
                api_key="zq81plainkey0",
                headers={"X-Proxy-Token": "tok-42xyz"},
            ),
        )
        with anyio.fail_after(10):
            events = [e async for e in model.stream(ModelRequest(system="", messages=[user("q")]))]
        await model.aclose()
    error = events[-2]
    assert isinstance(error, ErrorEvent)
    assert error.error.message == "gateway: bad key [redacted], bad proxy token [redacted]"
    assert srv.requests[0].headers["x-proxy-token"] == "tok-42xyz"


async def test_a_missing_key_is_an_auth_error(
    srv: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A user-defined provider with no key, and none in the environment: the SDK refuses to
    # send anything, which is an auth error of this stream, not an exception.
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    model = create_model(
        "claude", Endpoint(provider_id="my-proxy", api="anthropic", base_url=srv.url)
    )
    with anyio.fail_after(10):
        events = [e async for e in model.stream(ModelRequest(system="", messages=[user("hi")]))]
    await model.aclose()
    assert len(events) == 2 and events[1] == Finish(reason="error")
    error = events[0]
    assert isinstance(error, ErrorEvent)
    assert (error.error.kind, error.error.retryable, error.error.code) == (
        "auth",
        False,
        "missing_credentials",
    )
    assert srv.requests == []


# Vendor error envelopes (status, JSON body, retry headers) through the real SDK and the
# adapter's `_map_errors`. SYNTHETIC: written from providers.md sections 6 and 8.
OVERFLOW_WITH_MAX_TOKENS = (
    "input length and `max_tokens` exceed context limit: 197000 + 8192 > 200000, decrease input "
    "length or `max_tokens` and try again"
)
ENVELOPES = {
    "429 rate_limit_error, retry-after": (
        Reply.json(
            error_body("rate_limit_error", "Number of request tokens has exceeded your rate limit"),
            status=429,
            headers={"retry-after": "30"},
        ),
        ProviderError(
            kind="rate_limit",
            message="anthropic: Number of request tokens has exceeded your rate limit",
            retryable=True,
            retry_after=30.0,
            status=429,
            code="rate_limit_error",
            provider="anthropic",
        ),
    ),
    "529 overloaded_error": (
        Reply.json(error_body("overloaded_error", "Overloaded"), status=529),
        ProviderError(
            kind="server",
            message="anthropic: Overloaded",
            retryable=True,
            status=529,
            code="overloaded_error",
            provider="anthropic",
        ),
    ),
    "413 request_too_large is bytes, not tokens": (
        Reply.json(
            error_body("request_too_large", "Request exceeds the maximum allowed number of bytes."),
            status=413,
        ),
        ProviderError(
            kind="invalid_request",
            message="anthropic: Request exceeds the maximum allowed number of bytes.",
            retryable=False,
            status=413,
            code="request_too_large",
            provider="anthropic",
        ),
    ),
    "400 input plus max_tokens overflow": (
        Reply.json(error_body("invalid_request_error", OVERFLOW_WITH_MAX_TOKENS), status=400),
        ProviderError(
            kind="context_overflow",
            message=f"anthropic: {OVERFLOW_WITH_MAX_TOKENS}",
            retryable=False,
            status=400,
            code="invalid_request_error",
            provider="anthropic",
            context_limit=200_000,
        ),
    ),
    "403 permission_error": (
        Reply.json(
            error_body("permission_error", "Your API key does not have permission."), status=403
        ),
        ProviderError(
            kind="auth",
            message="anthropic: Your API key does not have permission.",
            retryable=False,
            status=403,
            code="permission_error",
            provider="anthropic",
        ),
    ),
}


@pytest.mark.parametrize("name", list(ENVELOPES))
async def test_vendor_error_envelopes_through_the_adapter(srv: LoopbackServer, name: str) -> None:
    reply, expected = ENVELOPES[name]
    assert await run_error(srv, reply) == expected
