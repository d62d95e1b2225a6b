"""The Responses API adapter, driven through the real `openai` SDK against the loopback server
with recorded streams."""

from __future__ import annotations

import dataclasses
import json
import socket
from collections.abc import AsyncGenerator, Iterator
from typing import Any, cast

import anyio
import pytest
from inline_snapshot import snapshot

from providers.assemble import MessageAssembler
from providers.model import Endpoint
from providers.types import (
    ErrorEvent,
    Finish,
    JsonValue,
    Message,
    ModelRequest,
    ProviderError,
    ReasoningDelta,
    ReasoningPart,
    StreamEvent,
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
from providers.wire.openai_responses import (
    _build_params,  # pyright: ignore[reportPrivateUsage]
    _ResponsesTranslator,  # pyright: ignore[reportPrivateUsage]
    create_model,
)
from tests.fixtures import cassette, request_body, response_body, sse_bytes
from tests.loopback import LoopbackServer, Reply, loopback
from tests.providers.hanging import hanging_server

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
OVERFLOW_TEXT = (
    "Your input exceeds the context window of this model. Please adjust your input and try again."
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


async def collect(
    base_url: str, request: ModelRequest, model_id: str = "gpt-5"
) -> list[StreamEvent]:
    endpoint = Endpoint(
        provider_id="openai", api="openai-responses", base_url=base_url, api_key="test-key"
    )
    model = create_model(model_id, endpoint)
    try:
        with anyio.fail_after(10):
            return [event async for event in model.stream(request)]
    finally:
        await model.aclose()


def user(text: str) -> Message:
    return Message(role="user", parts=[TextPart(text=text)])


def assemble(events: list[StreamEvent]) -> Message:
    assembler = MessageAssembler()
    for event in events:
        assembler.feed(event)
    return assembler.message()


def done_items(body: bytes) -> list[dict[str, Any]]:
    """The `item` of every `response.output_item.done` event in an SSE body."""
    items: list[dict[str, Any]] = []
    for line in body.decode().splitlines():
        if line.startswith("data: ") and '"response.output_item.done"' in line:
            items.append(json.loads(line[len("data: ") :])["item"])
    return items


def without_items(events: list[StreamEvent]) -> list[StreamEvent]:
    """Events with each captured reasoning item shortened to its id, for readable snapshots."""
    shortened: list[StreamEvent] = []
    for event in events:
        bag = (
            event.provider_metadata.get("openai-responses", {})
            if isinstance(event, ReasoningDelta)
            else {}
        )
        item = bag.get("item")
        if isinstance(event, ReasoningDelta) and isinstance(item, dict):
            event = dataclasses.replace(
                event, provider_metadata={"openai-responses": {"item": f"<{item['id']}>"}}
            )
        shortened.append(event)
    return shortened


def sse(*events: dict[str, Any]) -> bytes:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


def completed(status: str = "completed", **extra: Any) -> dict[str, Any]:
    return {
        "type": f"response.{status}",
        "response": {"id": "resp_1", "object": "response", "status": status, "output": [], **extra},
    }


async def test_reasoning_then_function_call_keeps_the_done_item_whole(srv: LoopbackServer) -> None:
    body = sse_bytes("openai/responses_stream_reasoning_function_call.sse")
    srv.replies.append(Reply(body=body))
    events = await collect(srv.url, ModelRequest(system="", messages=[user("go")]))

    reasoning_done = done_items(body)[0]
    # The `done` blob, not the `added` one: their encrypted_content differ.
    assert events[0] == ReasoningDelta(
        text="", index=0, provider_metadata={"openai-responses": {"item": reasoning_done}}
    )
    assert without_items(events) == snapshot(
        [
            ReasoningDelta(
                text="",
                provider_metadata={
                    "openai-responses": {
                        "item": "<rs_0050471a34b36ae60068c97bac4dcc819595fd0f80d6b3c405>"
                    }
                },
            ),
            ToolCallStart(
                call_id="call_CWXgs68YprAjp6t0371hiPOI",
                name="final_result",
                provider_metadata={
                    "openai-responses": {
                        "item_id": "fc_0050471a34b36ae60068c97bf19d9c819590eaf42c0edc1042"
                    }
                },
            ),
            ToolCallDelta(call_id="call_CWXgs68YprAjp6t0371hiPOI", arguments_delta='{"'),
            ToolCallDelta(call_id="call_CWXgs68YprAjp6t0371hiPOI", arguments_delta="result"),
            ToolCallDelta(call_id="call_CWXgs68YprAjp6t0371hiPOI", arguments_delta='":'),
            ToolCallDelta(call_id="call_CWXgs68YprAjp6t0371hiPOI", arguments_delta="666"),
            ToolCallDelta(call_id="call_CWXgs68YprAjp6t0371hiPOI", arguments_delta="6"),
            ToolCallDelta(call_id="call_CWXgs68YprAjp6t0371hiPOI", arguments_delta="}"),
            ToolCallEnd(
                call_id="call_CWXgs68YprAjp6t0371hiPOI",
                name="final_result",
                arguments={"result": 6666},
                raw_arguments='{"result":6666}',
                provider_metadata={
                    "openai-responses": {
                        "item_id": "fc_0050471a34b36ae60068c97bf19d9c819590eaf42c0edc1042"
                    }
                },
            ),
            UsageEvent(usage=Usage(input_tokens=53, output_tokens=469, reasoning_tokens=448)),
            Finish(reason="tool_calls", raw_reason="completed"),
        ]
    )
    assert srv.requests[0].path == "/responses"


async def test_two_turns_replay_reasoning_message_and_call_in_order(srv: LoopbackServer) -> None:
    turns = cassette("openai/responses_stream_reasoning_function_call_replay.yaml")
    instructions = "Briefly narrate what you are about to do before calling each tool."
    request = ModelRequest(
        system=instructions,
        messages=[user("What is the capital of PotatoLand?")],
        tools=[GET_CAPITAL],
    )
    srv.replies.extend([Reply(body=response_body(turns[0])), Reply(body=response_body(turns[1]))])

    first = await collect(srv.url, request, "gpt-5.5")
    assert without_items(first) == snapshot(
        [
            ReasoningDelta(
                text="",
                provider_metadata={
                    "openai-responses": {
                        "item": "<rs_0fabc13af1ee0049006a691dfe60b081a1baa444d3cf19afba>"
                    }
                },
            ),
            TextDelta(text="I", index=1),
            TextDelta(text="’ll", index=1),
            TextDelta(text=" check", index=1),
            TextDelta(text=" the", index=1),
            TextDelta(text=" capital", index=1),
            TextDelta(text=" lookup", index=1),
            TextDelta(text=" tool", index=1),
            TextDelta(text=" for", index=1),
            TextDelta(text=" “", index=1),
            TextDelta(text="Pot", index=1),
            TextDelta(text="ato", index=1),
            TextDelta(text="Land", index=1),
            TextDelta(text=".”", index=1),
            TextDelta(
                text="",
                index=1,
                provider_metadata={
                    "openai-responses": {
                        "id": "msg_0fabc13af1ee0049006a691dfebdc881a1ae18d027c313d8ce",
                        "phase": "commentary",
                    }
                },
            ),
            ToolCallStart(
                call_id="call_LabG58Uhrq9kZvR52BYKjToD",
                name="get_capital",
                provider_metadata={
                    "openai-responses": {
                        "item_id": "fc_0fabc13af1ee0049006a691dff0c1481a1b4a0eec7e3c753bb"
                    }
                },
            ),
            ToolCallDelta(call_id="call_LabG58Uhrq9kZvR52BYKjToD", arguments_delta='{"'),
            ToolCallDelta(call_id="call_LabG58Uhrq9kZvR52BYKjToD", arguments_delta="country"),
            ToolCallDelta(call_id="call_LabG58Uhrq9kZvR52BYKjToD", arguments_delta='":"'),
            ToolCallDelta(call_id="call_LabG58Uhrq9kZvR52BYKjToD", arguments_delta="Pot"),
            ToolCallDelta(call_id="call_LabG58Uhrq9kZvR52BYKjToD", arguments_delta="ato"),
            ToolCallDelta(call_id="call_LabG58Uhrq9kZvR52BYKjToD", arguments_delta="Land"),
            ToolCallDelta(call_id="call_LabG58Uhrq9kZvR52BYKjToD", arguments_delta='"}'),
            ToolCallEnd(
                call_id="call_LabG58Uhrq9kZvR52BYKjToD",
                name="get_capital",
                arguments={"country": "PotatoLand"},
                raw_arguments='{"country":"PotatoLand"}',
                provider_metadata={
                    "openai-responses": {
                        "item_id": "fc_0fabc13af1ee0049006a691dff0c1481a1b4a0eec7e3c753bb"
                    }
                },
            ),
            UsageEvent(usage=Usage(input_tokens=63, output_tokens=69, reasoning_tokens=26)),
            Finish(reason="tool_calls", raw_reason="completed"),
        ]
    )
    assistant = assemble(first)
    result = Message(
        role="tool",
        parts=[
            ToolResultPart(
                tool_call_id="call_LabG58Uhrq9kZvR52BYKjToD",
                name="get_capital",
                content=[TextPart(text="Potato City")],
            )
        ],
    )
    second = await collect(
        srv.url,
        ModelRequest(
            system=instructions,
            messages=[*request.messages, assistant, result],
            tools=[GET_CAPITAL],
        ),
        "gpt-5.5",
    )
    assert without_items(second) == snapshot(
        [
            TextDelta(text="The"),
            TextDelta(text=" capital"),
            TextDelta(text=" of"),
            TextDelta(text=" Potato"),
            TextDelta(text="Land"),
            TextDelta(text=" is"),
            TextDelta(text=" **"),
            TextDelta(text="Pot"),
            TextDelta(text="ato"),
            TextDelta(text=" City"),
            TextDelta(text="**"),
            TextDelta(text="."),
            TextDelta(
                text="",
                provider_metadata={
                    "openai-responses": {
                        "id": "msg_0fabc13af1ee0049006a691e008ed881a19fb315ceb267e808",
                        "phase": "final_answer",
                    }
                },
            ),
            UsageEvent(usage=Usage(input_tokens=147, output_tokens=16)),
            Finish(reason="stop", raw_reason="completed"),
        ]
    )
    assert assemble(second).parts[0].provider_metadata == {
        "openai-responses": {
            "id": "msg_0fabc13af1ee0049006a691e008ed881a19fb315ceb267e808",
            "phase": "final_answer",
        }
    }

    sent = srv.requests[1].json()
    recorded = request_body(turns[1])
    assert sent["store"] is False and "previous_response_id" not in sent
    assert sent["include"] == recorded["include"] == ["reasoning.encrypted_content"]
    assert sent["instructions"] == recorded["instructions"]
    assert [item.get("type", "message") for item in sent["input"]] == [
        "message",
        "reasoning",
        "message",
        "function_call",
        "function_call_output",
    ]
    user_item, reasoning, message, call, output = sent["input"]
    assert user_item == recorded["input"][0]
    # The reasoning item goes back whole, as the `done` event carried it, byte-identical.
    assert reasoning == done_items(response_body(turns[0]))[0]
    for key in ("id", "type", "encrypted_content", "summary"):
        assert reasoning[key] == recorded["input"][1][key]
    # The recording's client normalised the curly quotes the model streamed; otherwise the
    # message item (with its phase) is the recorded one.
    straight = str.maketrans({"’": "'", "“": '"', "”": '"'})
    message["content"][0]["text"] = message["content"][0]["text"].translate(straight)
    assert message == recorded["input"][2]
    assert call == recorded["input"][3]
    assert output == recorded["input"][4]


async def test_insufficient_quota_in_stream_is_a_rate_limit_that_must_not_be_retried(
    srv: LoopbackServer,
) -> None:
    srv.replies.append(
        Reply(body=sse_bytes("openai/responses_stream_error_insufficient_quota.jsonl"))
    )
    events = await collect(srv.url, ModelRequest(system="", messages=[user("hi")]))
    assert events == snapshot(
        [
            ErrorEvent(
                error=ProviderError(
                    kind="rate_limit",
                    message=(
                        "openai: You exceeded your current quota, please check your plan and "
                        "billing details. For more information on this error, read the docs: "
                        "https://platform.openai.com/docs/guides/error-codes/api-errors."
                    ),
                    retryable=False,
                    code="insufficient_quota",
                    provider="openai",
                )
            ),
            Finish(reason="error"),
        ]
    )


async def test_reasoning_item_without_its_following_item_is_an_invalid_request(
    srv: LoopbackServer,
) -> None:
    interaction = cassette("openai/responses_400_reasoning_item_without_following_item.yaml")[1]
    srv.replies.append(
        Reply(
            body=response_body(interaction),
            status=400,
            headers={"content-type": "application/json"},
        )
    )
    events = await collect(srv.url, ModelRequest(system="", messages=[user("hi")]))
    assert events == snapshot(
        [
            ErrorEvent(
                error=ProviderError(
                    kind="invalid_request",
                    message=(
                        "openai: Item 'rs_68c42de022c881948db7ed1cc2529f2e0202c9ad459e0d23' of "
                        "type 'reasoning' was provided without its required following item."
                    ),
                    retryable=False,
                    status=400,
                    code="invalid_request_error",
                    provider="openai",
                )
            ),
            Finish(reason="error"),
        ]
    )


def test_a_trailing_reasoning_item_is_not_replayed_alone() -> None:
    item: dict[str, JsonValue] = {
        "type": "reasoning",
        "id": "rs_1",
        "encrypted_content": "e",
        "summary": [],
    }
    reasoning = ReasoningPart(text="", provider_metadata={"openai-responses": {"item": item}})
    call = ToolCallPart(
        id="call_1",
        name="f",
        arguments={"a": 1},
        provider_metadata={"openai-responses": {"item_id": "fc_1"}},
    )
    cut = Message(role="assistant", parts=[reasoning])
    whole = Message(role="assistant", parts=[reasoning, call])
    request = ModelRequest(system="", messages=[user("q"), cut, user("q"), whole])
    items = _build_params("gpt-5", request, Endpoint(provider_id="openai", api="openai-responses"))[
        "input"
    ]
    assert items == snapshot(
        [
            {"role": "user", "content": "q"},
            {"role": "user", "content": "q"},
            {"type": "reasoning", "id": "rs_1", "encrypted_content": "e", "summary": []},
            {
                "type": "function_call",
                "call_id": "call_1",
                "name": "f",
                "arguments": '{"a":1}',
                "id": "fc_1",
            },
        ]
    )


def test_foreign_reasoning_is_dropped_and_foreign_text_is_a_plain_message() -> None:
    foreign = Message(
        role="assistant",
        parts=[
            ReasoningPart(text="thinking", provider_metadata={"anthropic": {"signature": "s"}}),
            TextPart(text="4"),
        ],
    )
    request = ModelRequest(system="", messages=[user("2+2?"), foreign])
    items = _build_params("gpt-5", request, Endpoint(provider_id="openai", api="openai-responses"))[
        "input"
    ]
    assert items[1:] == [{"role": "assistant", "content": "4"}]


def test_summary_parts_of_one_item_are_one_reasoning_part() -> None:
    translator = _ResponsesTranslator()
    events: list[StreamEvent] = []
    for summary_index, text in ((0, "First."), (0, " More."), (1, "Second.")):
        events += translator.feed(
            {
                "type": "response.reasoning_summary_text.delta",
                "output_index": 0,
                "summary_index": summary_index,
                "delta": text,
            }
        )
    assert [e.text for e in events if isinstance(e, ReasoningDelta)] == [
        "First.",
        " More.",
        "\n\nSecond.",
    ]


async def test_incomplete_response_finishes_with_length(srv: LoopbackServer) -> None:
    srv.replies.append(
        Reply(
            body=sse(
                {
                    "type": "response.output_text.delta",
                    "output_index": 0,
                    "content_index": 0,
                    "item_id": "m",
                    "delta": "Hel",
                },
                completed(
                    "incomplete",
                    incomplete_details={"reason": "max_output_tokens"},
                    usage={
                        "input_tokens": 5,
                        "output_tokens": 3,
                        "output_tokens_details": {"reasoning_tokens": 2},
                    },
                ),
            )
        )
    )
    events = await collect(srv.url, ModelRequest(system="", messages=[user("hi")]))
    assert events == snapshot(
        [
            TextDelta(text="Hel"),
            UsageEvent(usage=Usage(input_tokens=5, output_tokens=3, reasoning_tokens=2)),
            Finish(reason="length", raw_reason="incomplete:max_output_tokens"),
        ]
    )


# --------------------------------------------------------------------------------------- errors


def only_error(events: list[StreamEvent]) -> ProviderError:
    assert len(events) == 2
    assert isinstance(events[0], ErrorEvent)
    assert events[1] == Finish(reason="error")
    return events[0].error


async def error_for(srv: LoopbackServer, reply: Reply) -> ProviderError:
    srv.replies.append(reply)
    return only_error(await collect(srv.url, ModelRequest(system="", messages=[user("hi")])))


async def test_in_stream_context_overflow_is_overflow(srv: LoopbackServer) -> None:
    # SYNTHETIC: the message and code from providers.md section 8, in the documented top-level
    # `error` event shape (no nested "error" key, so the SDK yields it instead of raising).
    event = {
        "type": "error",
        "code": "context_length_exceeded",
        "message": OVERFLOW_TEXT,
        "param": "input",
    }
    error = await error_for(srv, Reply(body=sse(event, completed("failed"))))
    assert (error.kind, error.retryable, error.code) == (
        "context_overflow",
        False,
        "context_length_exceeded",
    )


async def test_response_failed_alone_is_classified_from_its_error(srv: LoopbackServer) -> None:
    failed = completed(
        "failed", error={"code": "server_error", "message": "The server had an error."}
    )
    error = await error_for(srv, Reply(body=sse(failed)))
    assert (error.kind, error.retryable, error.code) == ("server", True, "server_error")


async def test_http_401_is_auth(srv: LoopbackServer) -> None:
    body = {
        "error": {
            "message": "Incorrect API key provided.",
            "type": "invalid_request_error",
            "code": "invalid_api_key",
        }
    }
    error = await error_for(srv, Reply.json(body, status=401))
    assert (error.kind, error.retryable, error.status) == ("auth", False, 401)


async def test_http_404_is_invalid_request(srv: LoopbackServer) -> None:
    body = {
        "error": {
            "message": "The model `gpt-9` does not exist.",
            "type": "invalid_request_error",
            "code": "model_not_found",
        }
    }
    error = await error_for(srv, Reply.json(body, status=404))
    assert (error.kind, error.retryable, error.status) == ("invalid_request", False, 404)


async def test_http_429_carries_retry_after(srv: LoopbackServer) -> None:
    body = {
        "error": {
            "message": "Rate limit reached for requests.",
            "type": "requests",
            "code": "rate_limit_exceeded",
        }
    }
    error = await error_for(srv, Reply.json(body, status=429, headers={"retry-after": "3"}))
    assert (error.kind, error.retryable, error.retry_after) == ("rate_limit", True, 3.0)
    assert len(srv.requests) == 1  # SDK retries are off: the agent owns retry policy


async def test_http_500_is_a_retryable_server_error(srv: LoopbackServer) -> None:
    body = {"error": {"message": "The server had an error.", "type": "server_error", "code": None}}
    error = await error_for(srv, Reply.json(body, status=500))
    assert (error.kind, error.retryable, error.status) == ("server", True, 500)
    assert len(srv.requests) == 1  # SDK retries are off: the agent owns retry policy


async def test_http_400_context_overflow(srv: LoopbackServer) -> None:
    # SYNTHETIC: providers.md section 8 (the-open-agent/openagent#2344).
    body = {
        "error": {
            "message": OVERFLOW_TEXT,
            "type": "invalid_request_error",
            "param": "input",
            "code": "context_length_exceeded",
        }
    }
    error = await error_for(srv, Reply.json(body, status=400))
    assert (error.kind, error.retryable, error.status) == ("context_overflow", False, 400)


async def test_a_stream_cut_before_completed_is_a_retryable_network_error(
    srv: LoopbackServer,
) -> None:
    srv.replies.append(
        Reply(
            body=sse(
                {
                    "type": "response.output_text.delta",
                    "output_index": 0,
                    "content_index": 0,
                    "item_id": "m",
                    "delta": "Hel",
                }
            )
        )
    )
    events = await collect(srv.url, ModelRequest(system="", messages=[user("hi")]))
    assert events[0] == TextDelta(text="Hel")
    error = only_error(events[1:])
    assert (error.kind, error.retryable) == ("network", True)


async def test_connection_refused_is_a_retryable_network_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    error = only_error(
        await collect(f"http://127.0.0.1:{port}/v1", ModelRequest(system="", messages=[user("hi")]))
    )
    assert (error.kind, error.retryable, error.status) == ("network", True, None)
    assert f"http://127.0.0.1:{port}/v1/responses" in error.message


async def test_a_missing_key_is_an_auth_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    model = create_model("gpt-5", Endpoint(provider_id="openai", api="openai-responses"))
    with anyio.fail_after(10):
        events = [e async for e in model.stream(ModelRequest(system="", messages=[user("hi")]))]
    error = only_error(events)
    assert (error.kind, error.retryable, error.code) == ("auth", False, "missing_credentials")


async def test_the_endpoints_key_is_masked_whatever_its_shape(srv: LoopbackServer) -> None:
    # A key of no known shape, echoed back whole: only knowing the key itself can mask it.
    srv.replies.append(
        Reply.json({"error": {"message": "Bad key zq81plainkey0", "code": "x"}}, status=401)
    )
    keyed = Endpoint(
        provider_id="openai", api="openai-responses", base_url=srv.url, api_key="zq81plainkey0"
    )
    model = create_model("gpt-5", keyed)
    with anyio.fail_after(10):
        events = [e async for e in model.stream(ModelRequest(system="", messages=[user("q")]))]
    await model.aclose()
    assert only_error(events).message == "openai: Bad key [redacted]"


async def test_truncated_arguments_are_reported_on_the_end_event_not_raised(
    srv: LoopbackServer,
) -> None:
    # The output limit cut the call mid-argument: invalid JSON, reported on `tool_call_end`.
    raw = '{"path": "src/ma'
    item = {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_t",
        "name": "read",
        "arguments": "",
        "status": "in_progress",
    }
    srv.replies.append(
        Reply(
            body=sse(
                {"type": "response.output_item.added", "output_index": 0, "item": item},
                {
                    "type": "response.function_call_arguments.delta",
                    "output_index": 0,
                    "item_id": "fc_1",
                    "delta": raw,
                },
                {
                    "type": "response.output_item.done",
                    "output_index": 0,
                    "item": {**item, "arguments": raw, "status": "incomplete"},
                },
                completed("incomplete", incomplete_details={"reason": "max_output_tokens"}),
            )
        )
    )
    events = await collect(srv.url, ModelRequest(system="", messages=[user("go")]))
    end = next(e for e in events if isinstance(e, ToolCallEnd))
    assert (end.arguments, end.raw_arguments) == (None, raw)
    assert end.invalid_reason is not None and "not valid JSON" in end.invalid_reason
    assert events[-1] == Finish(reason="length", raw_reason="incomplete:max_output_tokens")
    call = assemble(events).tool_calls[0]
    assert (call.arguments, call.invalid_arguments) == (None, raw)
    # Replayed as the model wrote it, so the model sees its own truncated call.
    endpoint = Endpoint(provider_id="openai", api="openai-responses")
    replay = _build_params(
        "gpt-5", ModelRequest(system="", messages=[user("go"), assemble(events)]), endpoint
    )
    assert replay["input"][1] == {
        "type": "function_call",
        "call_id": "call_t",
        "name": "read",
        "arguments": raw,
        "id": "fc_1",
    }


async def test_usage_details_are_subsets_of_input_and_output(srv: LoopbackServer) -> None:
    # providers.md section 7: input_tokens already includes cached reads and cache writes, and
    # output_tokens includes reasoning; the details are subsets, never added on top.
    usage = {
        "input_tokens": 1000,
        "input_tokens_details": {"cached_tokens": 600, "cache_write_tokens": 100},
        "output_tokens": 300,
        "output_tokens_details": {"reasoning_tokens": 200},
        "total_tokens": 1300,
    }
    srv.replies.append(Reply(body=sse(completed(usage=usage))))
    events = await collect(srv.url, ModelRequest(system="", messages=[user("q")]))
    assert events == [
        UsageEvent(
            usage=Usage(
                input_tokens=1000,
                cached_input_tokens=600,
                cache_write_tokens=100,
                output_tokens=300,
                reasoning_tokens=200,
            )
        ),
        Finish(reason="stop", raw_reason="completed"),
    ]
    assert isinstance(events[0], UsageEvent) and events[0].usage.total_tokens == 1300


async def test_a_consumer_that_stops_early_closes_the_stream() -> None:
    first_event = sse(
        {
            "type": "response.output_text.delta",
            "output_index": 0,
            "content_index": 0,
            "item_id": "m",
            "delta": "Hi",
        }
    )
    async with hanging_server(first_event) as server:
        endpoint = Endpoint(
            provider_id="openai", api="openai-responses", base_url=server.url, api_key="test-key"
        )
        model = create_model("gpt-5", endpoint)
        with anyio.fail_after(10):
            stream = cast(
                "AsyncGenerator[StreamEvent, None]",
                model.stream(ModelRequest(system="", messages=[user("q")])),
            )
            assert await anext(stream) == TextDelta(text="Hi")
            await stream.aclose()
            await server.closed.wait()
    await model.aclose()


async def test_cancellation_propagates_out_of_the_stream(srv: LoopbackServer) -> None:
    srv.replies.append(Reply(body=sse(completed())))
    model = create_model(
        "gpt-5",
        Endpoint(
            provider_id="openai", api="openai-responses", base_url=srv.url, api_key="test-key"
        ),
    )
    received: list[StreamEvent] = []
    with anyio.CancelScope() as scope:
        scope.cancel()
        async for event in model.stream(ModelRequest(system="", messages=[user("q")])):
            received.append(event)
    # Cancelled, not turned into an error event and swallowed.
    assert scope.cancelled_caught and received == []
    await model.aclose()


# Vendor error envelopes (status, JSON body, retry headers) through the real SDK and the
# adapter's `_map_errors`. SYNTHETIC: written from providers.md sections 6 and 8.
AZURE_TPM = (
    "Requests to the Responses_Create Operation under Azure OpenAI API version preview have "
    "exceeded token rate limit of your current OpenAI S0 pricing tier. Please retry after 6 "
    "seconds."
)
ENVELOPES = {
    "openai 429, retry-after-ms wins over retry-after": (
        "openai",
        Reply.json(
            {
                "error": {
                    "message": "Rate limit reached for requests.",
                    "type": "requests",
                    "code": "rate_limit_exceeded",
                }
            },
            status=429,
            headers={"retry-after-ms": "1500", "retry-after": "9"},
        ),
        ProviderError(
            kind="rate_limit",
            message="openai: Rate limit reached for requests.",
            retryable=True,
            retry_after=1.5,
            status=429,
            code="rate_limit_exceeded",
            provider="openai",
        ),
    ),
    "azure 429, numeric code": (
        "azure",
        Reply.json(
            {"error": {"code": "429", "message": AZURE_TPM}},
            status=429,
            headers={"retry-after": "6"},
        ),
        ProviderError(
            kind="rate_limit",
            message=f"azure: {AZURE_TPM}",
            retryable=True,
            retry_after=6.0,
            status=429,
            provider="azure",
        ),
    ),
    # The SDK does not keep a non-JSON error body of a streamed request: the status decides.
    "openai 503, no JSON body": (
        "openai",
        Reply(body=b"upstream connect error", status=503, headers={"content-type": "text/plain"}),
        ProviderError(
            kind="server",
            message="openai: Error code: 503",
            retryable=True,
            status=503,
            provider="openai",
        ),
    ),
}


@pytest.mark.parametrize("name", list(ENVELOPES))
async def test_vendor_error_envelopes_through_the_adapter(srv: LoopbackServer, name: str) -> None:
    provider, reply, expected = ENVELOPES[name]
    srv.replies.append(reply)
    endpoint = Endpoint(
        provider_id=provider, api="openai-responses", base_url=srv.url, api_key="test-key"
    )
    model = create_model("gpt-5", endpoint)
    with anyio.fail_after(10):
        events = [e async for e in model.stream(ModelRequest(system="", messages=[user("q")]))]
    await model.aclose()
    assert only_error(events) == expected
    assert len(srv.requests) == 1
