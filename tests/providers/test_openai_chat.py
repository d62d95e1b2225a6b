"""The Chat Completions adapter, driven through the real `openai` SDK against the loopback server
with recorded streams (OpenAI, OpenRouter, Groq)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from inline_snapshot import snapshot

from providers.model import Endpoint
from providers.types import (
    ErrorEvent,
    Finish,
    ImagePart,
    Message,
    ModelRequest,
    ProviderError,
    ReasoningDelta,
    ReasoningPart,
    TextDelta,
    TextPart,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallPart,
    ToolCallStart,
    ToolResultPart,
    ToolSpec,
    Usage,
    UsageEvent,
)
from providers.wire.openai_chat import (
    _ChatTranslator,  # pyright: ignore[reportPrivateUsage]
)
from providers.wire.openai_chat_request import build_params
from tests.fixtures import cassette, request_body, response_body, sse_bytes
from tests.loopback import LoopbackServer, Reply, loopback
from tests.providers.chat_support import assemble, chunk, collect, endpoint, sse, user

GET_CAPITAL = ToolSpec(
    name="get_capital",
    description="",
    input_schema={
        "additionalProperties": False,
        "properties": {"country": {"type": "string"}},
        "required": ["country"],
        "type": "object",
    },
)


@pytest.fixture(scope="module")
def shared_server() -> Iterator[LoopbackServer]:
    with loopback() as server:
        yield server


@pytest.fixture
def srv(shared_server: LoopbackServer) -> LoopbackServer:
    shared_server.replies.clear()
    shared_server.requests.clear()
    return shared_server


async def test_tool_call_round_trip_replays_tool_calls_and_the_tool_message(
    srv: LoopbackServer,
) -> None:
    turns = cassette("openai/chat_stream_tool_call.yaml")
    question = "What is the capital of the UK? Use the tool, then answer."
    request = ModelRequest(system="", messages=[user(question)], tools=[GET_CAPITAL])
    srv.replies.extend([Reply(body=response_body(turns[0])), Reply(body=response_body(turns[1]))])

    first = await collect(f"{srv.url}/v1", request)
    call_id = "call_ZR5UUuTt3pf61kjwAJIYdVMj"
    assert first == snapshot(
        [
            ToolCallStart(call_id="call_ZR5UUuTt3pf61kjwAJIYdVMj", name="get_capital"),
            ToolCallDelta(call_id="call_ZR5UUuTt3pf61kjwAJIYdVMj", arguments_delta='{"'),
            ToolCallDelta(call_id="call_ZR5UUuTt3pf61kjwAJIYdVMj", arguments_delta="country"),
            ToolCallDelta(call_id="call_ZR5UUuTt3pf61kjwAJIYdVMj", arguments_delta='":"'),
            ToolCallDelta(call_id="call_ZR5UUuTt3pf61kjwAJIYdVMj", arguments_delta="UK"),
            ToolCallDelta(call_id="call_ZR5UUuTt3pf61kjwAJIYdVMj", arguments_delta='"}'),
            ToolCallEnd(
                call_id="call_ZR5UUuTt3pf61kjwAJIYdVMj",
                name="get_capital",
                arguments={"country": "UK"},
                raw_arguments='{"country":"UK"}',
            ),
            UsageEvent(usage=Usage(input_tokens=53, output_tokens=15)),
            Finish(reason="tool_calls", raw_reason="tool_calls"),
        ]
    )
    assistant = assemble(first)
    result = Message(
        role="tool",
        parts=[
            ToolResultPart(
                tool_call_id=call_id, name="get_capital", content=[TextPart(text="London")]
            )
        ],
    )
    second = await collect(
        f"{srv.url}/v1",
        ModelRequest(
            system="", messages=[*request.messages, assistant, result], tools=[GET_CAPITAL]
        ),
    )
    assert second == snapshot(
        [
            TextDelta(text="The"),
            TextDelta(text=" capital"),
            TextDelta(text=" of"),
            TextDelta(text=" the"),
            TextDelta(text=" UK"),
            TextDelta(text=" is"),
            TextDelta(text=" London"),
            TextDelta(text="."),
            UsageEvent(usage=Usage(input_tokens=78, output_tokens=9)),
            Finish(reason="stop", raw_reason="stop"),
        ]
    )

    sent = [recorded.json() for recorded in srv.requests]
    assert srv.requests[1].path == "/v1/chat/completions"
    assert srv.requests[1].headers["authorization"] == "Bearer test-key"
    # The history goes back exactly as the recorded client sent it: assistant tool_calls with
    # content null, then one role=tool message.
    assert sent[1]["messages"] == request_body(turns[1])["messages"]
    for key in ("model", "stream", "stream_options", "tool_choice"):
        assert sent[1][key] == request_body(turns[1])[key]
    assert sent[0]["messages"] == request_body(turns[0])["messages"]


async def test_parallel_tool_calls_interleave_by_index_and_end_at_finish_reason(
    srv: LoopbackServer,
) -> None:
    srv.replies.append(Reply(body=sse_bytes("openai/chat_stream_parallel_tool_calls.sse")))
    events = await collect(f"{srv.url}/v1", ModelRequest(system="", messages=[user("go")]))
    assert events == snapshot(
        [
            ToolCallStart(call_id="call_q2UyBRP7eXNTzAoR8lEhjc9Z", name="get_country"),
            ToolCallDelta(call_id="call_q2UyBRP7eXNTzAoR8lEhjc9Z", arguments_delta="{}"),
            ToolCallStart(call_id="call_b51ijcpFkDiTQG1bQzsrmtW5", name="get_product_name"),
            ToolCallDelta(call_id="call_b51ijcpFkDiTQG1bQzsrmtW5", arguments_delta="{}"),
            ToolCallEnd(
                call_id="call_q2UyBRP7eXNTzAoR8lEhjc9Z",
                name="get_country",
                arguments={},
                raw_arguments="{}",
            ),
            ToolCallEnd(
                call_id="call_b51ijcpFkDiTQG1bQzsrmtW5",
                name="get_product_name",
                arguments={},
                raw_arguments="{}",
            ),
            UsageEvent(usage=Usage(input_tokens=364, output_tokens=40)),
            Finish(reason="tool_calls", raw_reason="tool_calls"),
        ]
    )
    assert [call.name for call in assemble(events).tool_calls] == [
        "get_country",
        "get_product_name",
    ]


async def test_openrouter_keepalives_are_skipped_and_an_in_band_error_ends_the_stream(
    srv: LoopbackServer,
) -> None:
    interaction = cassette("openrouter/chat_stream_in_band_error.yaml")[0]
    srv.replies.append(Reply(body=response_body(interaction)))
    events = await collect(
        f"{srv.url}/api/v1",
        ModelRequest(system="", messages=[user("Hello there")], max_output_tokens=10),
        provider_id="openrouter",
        model_id="minimax/minimax-m2:free",
    )
    assert events == snapshot(
        [
            ReasoningDelta(text="We need"),
            ReasoningDelta(text=" to respond to a greeting. The user"),
            ReasoningDelta(
                text="",
                provider_metadata={
                    "openai-chat": {
                        "fields": ["reasoning", "reasoning_details"],
                        "provider": "openrouter",
                        "reasoning_details": [
                            {
                                "type": "reasoning.text",
                                "text": "We need to respond to a greeting. The user",
                                "index": 0,
                                "format": None,
                            }
                        ],
                    }
                },
            ),
            ErrorEvent(
                error=ProviderError(
                    kind="invalid_request",
                    message="openrouter: Token limit reached",
                    retryable=False,
                    status=400,
                    provider="openrouter",
                )
            ),
            Finish(reason="error"),
        ]
    )
    sent = srv.requests[0].json()
    # A compatible host gets `max_tokens`; only api.openai.com gets `max_completion_tokens`.
    assert sent["max_tokens"] == 10 and "max_completion_tokens" not in sent
    assert sent["stream_options"] == {"include_usage": True}


async def test_openrouter_upstream_429_is_a_retryable_rate_limit(srv: LoopbackServer) -> None:
    interaction = cassette("openrouter/error_429_upstream_rate_limited.yaml")[0]
    srv.replies.append(
        Reply(
            body=response_body(interaction),
            status=429,
            headers={"content-type": "application/json"},
        )
    )
    events = await collect(
        f"{srv.url}/api/v1", ModelRequest(system="", messages=[user("hi")]), "openrouter"
    )
    assert events == snapshot(
        [
            ErrorEvent(
                error=ProviderError(
                    kind="rate_limit",
                    message=(
                        "openrouter: Provider returned error (Google: "
                        "google/gemini-2.0-flash-exp:free is temporarily rate-limited upstream. "
                        "Please retry shortly, or add your own key to accumulate your rate "
                        "limits: https://openrouter.ai/settings/integrations)"
                    ),
                    retryable=True,
                    status=429,
                    provider="openrouter",
                )
            ),
            Finish(reason="error"),
        ]
    )
    assert len(srv.requests) == 1  # SDK retries are off: the agent owns retry policy


async def test_groq_error_frame_after_reasoning_is_an_invalid_request(srv: LoopbackServer) -> None:
    interaction = cassette("groq/chat_stream_tool_use_failed_error.yaml")[0]
    srv.replies.append(Reply(body=response_body(interaction)))
    events = await collect(
        f"{srv.url}/openai/v1",
        ModelRequest(system="", messages=[user("go")]),
        "groq",
        "openai/gpt-oss-120b",
    )
    reasoning = "".join(e.text for e in events if isinstance(e, ReasoningDelta))
    assert reasoning.startswith("We need to call the tool with invalid parameters first")
    assert all(isinstance(e, ReasoningDelta) and e.index == 0 for e in events[:-2])
    assert events[-2:] == snapshot(
        [
            ErrorEvent(
                error=ProviderError(
                    kind="invalid_request",
                    message=(
                        "groq: Tool call validation failed: tool call validation failed: "
                        "parameters for tool get_something_by_name did not match schema: "
                        "errors: [missing properties: 'name', additionalProperties "
                        "'invalid_param' not allowed]"
                    ),
                    retryable=False,
                    status=400,
                    code="tool_use_failed",
                    provider="groq",
                )
            ),
            Finish(reason="error"),
        ]
    )


# ----------------------------------------------------------------------------- reasoning echo


def deepseek_stream() -> bytes:
    return sse(
        chunk({"role": "assistant", "content": None, "reasoning_content": "Need the"}),
        chunk({"reasoning_content": " weather."}),
        chunk(
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "call_0",
                        "type": "function",
                        "function": {"name": "weather", "arguments": '{"city":'},
                    }
                ]
            }
        ),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"Paris"}'}}]}),
        chunk({}, finish="tool_calls"),
        {
            "id": "c1",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "m",
            "choices": [],
            "usage": {
                "prompt_tokens": 20,
                "completion_tokens": 12,
                "prompt_cache_hit_tokens": 16,
                "completion_tokens_details": {"reasoning_tokens": 5},
            },
        },
    )


async def test_deepseek_reasoning_content_goes_back_on_the_tool_call_turn(
    srv: LoopbackServer,
) -> None:
    srv.replies.extend(
        [Reply(body=deepseek_stream()), Reply(body=sse(chunk({"content": "Sunny"}, "stop")))]
    )
    first = await collect(srv.url, ModelRequest(system="", messages=[user("weather?")]), "deepseek")
    assert first == snapshot(
        [
            ReasoningDelta(text="Need the"),
            ReasoningDelta(text=" weather."),
            ReasoningDelta(
                text="",
                provider_metadata={
                    "openai-chat": {"fields": ["reasoning_content"], "provider": "deepseek"}
                },
            ),
            ToolCallStart(call_id="call_0", name="weather"),
            ToolCallDelta(call_id="call_0", arguments_delta='{"city":'),
            ToolCallDelta(call_id="call_0", arguments_delta='"Paris"}'),
            ToolCallEnd(
                call_id="call_0",
                name="weather",
                arguments={"city": "Paris"},
                raw_arguments='{"city":"Paris"}',
            ),
            UsageEvent(
                usage=Usage(
                    input_tokens=20, cached_input_tokens=16, output_tokens=12, reasoning_tokens=5
                )
            ),
            Finish(reason="tool_calls", raw_reason="tool_calls"),
        ]
    )
    assistant = assemble(first)
    assert assistant.parts[0] == ReasoningPart(
        text="Need the weather.",
        provider_metadata={
            "openai-chat": {"fields": ["reasoning_content"], "provider": "deepseek"}
        },
    )
    result = Message(
        role="tool",
        parts=[
            ToolResultPart(tool_call_id="call_0", name="weather", content=[TextPart(text="sun")])
        ],
    )
    await collect(
        srv.url, ModelRequest(system="", messages=[user("weather?"), assistant, result]), "deepseek"
    )
    assert srv.requests[1].json()["messages"][1] == {
        "role": "assistant",
        "content": None,
        "reasoning_content": "Need the weather.",
        "tool_calls": [
            {
                "id": "call_0",
                "type": "function",
                "function": {"name": "weather", "arguments": '{"city":"Paris"}'},
            }
        ],
    }


def openrouter_reasoning() -> Message:
    translator = _ChatTranslator("openrouter")
    events = [
        *translator.feed(
            chunk(
                {
                    "reasoning": "Think",
                    "reasoning_details": [
                        {"type": "reasoning.text", "text": "Think", "index": 0, "format": "x"}
                    ],
                }
            )
        ),
        *translator.feed(
            chunk(
                {
                    "reasoning": " hard",
                    "reasoning_details": [
                        {"type": "reasoning.text", "text": " hard", "index": 0, "signature": "sig"}
                    ],
                }
            )
        ),
        *translator.feed(chunk({"content": "Done"}, "stop")),
        *translator.end(),
    ]
    return assemble(events)


def test_openrouter_reasoning_details_are_merged_by_index() -> None:
    message = openrouter_reasoning()
    assert message.parts == snapshot(
        [
            ReasoningPart(
                text="Think hard",
                provider_metadata={
                    "openai-chat": {
                        "fields": ["reasoning", "reasoning_details"],
                        "provider": "openrouter",
                        "reasoning_details": [
                            {
                                "type": "reasoning.text",
                                "text": "Think hard",
                                "index": 0,
                                "format": "x",
                                "signature": "sig",
                            }
                        ],
                    }
                },
            ),
            TextPart(text="Done"),
        ]
    )


def test_reasoning_is_echoed_in_the_fields_it_came_in_to_the_same_provider_only() -> None:
    message = openrouter_reasoning()
    request = ModelRequest(system="", messages=[user("q"), message, user("again")])
    same = build_params("m", request, endpoint("https://openrouter.ai/api/v1", "openrouter"))
    assert same["messages"][1] == snapshot(
        {
            "role": "assistant",
            "content": "Done",
            "reasoning": "Think hard",
            "reasoning_details": [
                {
                    "type": "reasoning.text",
                    "text": "Think hard",
                    "index": 0,
                    "format": "x",
                    "signature": "sig",
                }
            ],
        }
    )
    # Strict hosts reject unknown assistant properties: another provider gets none of it.
    other = build_params("m", request, endpoint("https://api.groq.com/openai/v1", "groq"))
    assert other["messages"][1] == {"role": "assistant", "content": "Done"}
    # A host that names its field (the catalog's `interleaved.field`) gets that field.
    named = build_params(
        "m",
        request,
        endpoint("https://api.deepseek.com", "deepseek", {"reasoning_field": "reasoning_content"}),
    )
    assert named["messages"][1] == {
        "role": "assistant",
        "content": "Done",
        "reasoning_content": "Think hard",
    }


def test_foreign_reasoning_is_dropped() -> None:
    request = ModelRequest(
        system="",
        messages=[
            user("q"),
            Message(
                role="assistant",
                parts=[
                    ReasoningPart(text="mine", provider_metadata={"anthropic": {"signature": "s"}}),
                    TextPart(text="A"),
                ],
            ),
        ],
    )
    params = build_params(
        "m",
        request,
        endpoint("https://api.deepseek.com", "deepseek", {"reasoning_field": "reasoning_content"}),
    )
    assert params["messages"][1] == {"role": "assistant", "content": "A"}


def test_max_tokens_field_and_reasoning_effort_depend_on_the_host() -> None:
    request = ModelRequest(
        system="s", messages=[user("q")], max_output_tokens=100, reasoning_effort="high"
    )
    openai = build_params("gpt-5", request, Endpoint(provider_id="openai", api="openai-chat"))
    assert openai["max_completion_tokens"] == 100 and "max_tokens" not in openai
    assert openai["reasoning_effort"] == "high"
    groq = build_params("m", request, endpoint("https://api.groq.com/openai/v1", "groq"))
    assert groq["max_tokens"] == 100 and "max_completion_tokens" not in groq


def test_images_in_tool_results_follow_in_a_user_message() -> None:
    pixel = ImagePart(media_type="image/png", data="AAAA")
    request = ModelRequest(
        system="",
        messages=[
            user("look"),
            Message(role="assistant", parts=[ToolCallPart(id="c1", name="shot", arguments={})]),
            Message(
                role="tool",
                parts=[
                    ToolResultPart(
                        tool_call_id="c1", name="shot", content=[TextPart(text="taken"), pixel]
                    )
                ],
            ),
        ],
    )
    params = build_params("m", request, endpoint("http://127.0.0.1:1/v1"))
    assert params["messages"][2:] == snapshot(
        [
            {
                "role": "tool",
                "tool_call_id": "c1",
                "content": """\
taken
[1 image(s) attached in the next user message]\
""",
            },
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Images returned by the tools:"},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
                ],
            },
        ]
    )


def test_calls_without_an_index_are_told_apart_by_id() -> None:
    translator = _ChatTranslator("ollama")
    events = [
        *translator.feed(
            chunk({"tool_calls": [{"id": "a", "function": {"name": "x", "arguments": "{}"}}]})
        ),
        *translator.feed(
            chunk({"tool_calls": [{"id": "b", "function": {"name": "y", "arguments": "{}"}}]})
        ),
        *translator.feed(chunk({}, "stop")),
        *translator.end(),
    ]
    assert [(e.call_id, e.name) for e in events if isinstance(e, ToolCallEnd)] == [
        ("a", "x"),
        ("b", "y"),
    ]
    # "stop" after tool calls (Ollama, Gemini's compatibility layer) still means tool use.
    assert events[-1] == Finish(reason="tool_calls", raw_reason="stop")


def test_a_host_that_sends_no_call_id_gets_one_made_up() -> None:
    translator = _ChatTranslator("llamacpp")
    events = [
        *translator.feed(chunk({"tool_calls": [{"index": 0, "function": {"name": "x"}}]})),
        *translator.feed(chunk({"tool_calls": [{"index": 0, "function": {"arguments": "{}"}}]})),
        *translator.feed(chunk({}, "tool_calls")),
        *translator.end(),
    ]
    start, delta, end = events[:3]
    assert isinstance(start, ToolCallStart) and start.call_id.startswith("call_")
    assert delta == ToolCallDelta(call_id=start.call_id, arguments_delta="{}")
    assert isinstance(end, ToolCallEnd) and end.call_id == start.call_id


async def test_truncated_arguments_are_reported_on_the_end_event_not_raised(
    srv: LoopbackServer,
) -> None:
    # The output limit cut the call mid-argument: invalid JSON, reported on `tool_call_end`.
    first = {"index": 0, "id": "call_t", "function": {"name": "read", "arguments": '{"path": '}}
    srv.replies.append(
        Reply(
            body=sse(
                chunk({"tool_calls": [first]}),
                chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"src/ma'}}]}),
                chunk({}, "length"),
            )
        )
    )
    events = await collect(f"{srv.url}/v1", ModelRequest(system="", messages=[user("go")]))
    end = next(e for e in events if isinstance(e, ToolCallEnd))
    assert (end.arguments, end.raw_arguments) == (None, '{"path": "src/ma')
    assert end.invalid_reason is not None and "not valid JSON" in end.invalid_reason
    assert events[-1] == Finish(reason="length", raw_reason="length")
    call = assemble(events).tool_calls[0]
    assert (call.arguments, call.invalid_arguments) == (None, '{"path": "src/ma')
    # Replayed as the model wrote it, so the model sees its own truncated call.
    replay = build_params(
        "m", ModelRequest(system="", messages=[user("go"), assemble(events)]), endpoint(srv.url)
    )
    assert replay["messages"][1]["tool_calls"][0]["function"]["arguments"] == '{"path": "src/ma'


async def test_usage_details_are_subsets_of_input_and_output(srv: LoopbackServer) -> None:
    # providers.md section 7: prompt_tokens already includes cached reads and cache writes, and
    # completion_tokens includes reasoning; the details are subsets, never added on top.
    usage = {
        "prompt_tokens": 1000,
        "completion_tokens": 300,
        "total_tokens": 1300,
        "prompt_tokens_details": {"cached_tokens": 600, "cache_write_tokens": 100},
        "completion_tokens_details": {"reasoning_tokens": 200},
    }
    tail = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    srv.replies.append(
        Reply(body=sse(chunk({"content": "ok"}, "stop"), {**tail, "choices": [], "usage": usage}))
    )
    events = await collect(f"{srv.url}/v1", ModelRequest(system="", messages=[user("q")]))
    assert events[-2] == UsageEvent(
        usage=Usage(
            input_tokens=1000,
            cached_input_tokens=600,
            cache_write_tokens=100,
            output_tokens=300,
            reasoning_tokens=200,
        )
    )
    assert isinstance(events[-2], UsageEvent) and events[-2].usage.total_tokens == 1300
