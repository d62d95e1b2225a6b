"""The Gemini adapter, driven through the real `google-genai` SDK against the loopback server
with recorded streams."""

from __future__ import annotations

import base64
import json
import re
import socket
import subprocess
import sys
from collections.abc import Generator, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import anyio
import pytest
from inline_snapshot import snapshot

from providers.assemble import MessageAssembler
from providers.model import Endpoint
from providers.types import (
    ErrorEvent,
    Finish,
    FinishReason,
    ImagePart,
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
    ToolChoiceNamed,
    ToolResultPart,
    ToolSpec,
    Usage,
    UsageEvent,
)
from providers.wire import gemini
from providers.wire.gemini import create_model
from tests.fixtures import ROOT, cassette, request_body, response_body, sse_bytes
from tests.loopback import LoopbackServer, Reply, loopback
from tests.providers.hanging import hanging_server

GET_COUNTRY = ToolSpec(
    name="get_country",
    description="",
    input_schema={"additionalProperties": False, "properties": {}, "type": "object"},
)
CALL_ID = re.compile(r"^gemini_call_[0-9a-f]{12}_\d+$")


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


async def collect(
    server: LoopbackServer, request: ModelRequest, *, model_id: str = "gemini-3-pro-preview"
) -> list[StreamEvent]:
    endpoint = Endpoint(
        provider_id="google",
        api="gemini",
        base_url=server.url,
        api_key="test-key",
        headers={"x-extra": "yes"},
    )
    model = create_model(model_id, endpoint)
    try:
        with anyio.fail_after(10):
            return [event async for event in model.stream(request)]
    finally:
        await model.aclose()


def frames(*chunks: dict[str, Any]) -> bytes:
    # Gemini separates its SSE frames with CRLF pairs.
    return "".join(f"data: {json.dumps(c)}\r\n\r\n" for c in chunks).encode()


def candidate(*parts: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"content": {"parts": list(parts), "role": "model"}, "index": 0}
    if finish is not None:
        body["finishReason"] = finish
    return {"candidates": [body]}


def user(text: str) -> Message:
    return Message(role="user", parts=[TextPart(text=text)])


def normalise_ids(events: list[StreamEvent]) -> list[StreamEvent]:
    """Replace the per-stream random call-id token so snapshots are stable."""
    out: list[StreamEvent] = []
    for event in events:
        if isinstance(event, ToolCallStart | ToolCallDelta | ToolCallEnd):
            assert CALL_ID.match(event.call_id), event.call_id
            event = replace(event, call_id="gemini_call_X_" + event.call_id.rsplit("_", 1)[1])
        out.append(event)
    return out


async def test_thought_signature_goes_back_on_the_function_call_part(srv: LoopbackServer) -> None:
    turns = cassette("google/stream_function_call_thought_signature.yaml")
    prompt = "What is the capital of the user country? Call the tool"
    request = ModelRequest(system="", messages=[user(prompt)], tools=[GET_COUNTRY])
    turn_one = response_body(turns[0])
    with serving(srv, Reply(body=turn_one), Reply(body=response_body(turns[1]))):
        first = await collect(srv, request)
        signature = json.loads(turn_one.split(b"\r\n\r\n")[0].removeprefix(b"data: "))[
            "candidates"
        ][0]["content"]["parts"][0]["thoughtSignature"]
        assert normalise_ids(first) == snapshot(
            [
                ToolCallStart(
                    call_id="gemini_call_X_1",
                    name="get_country",
                    provider_metadata={"gemini": {"thought_signature": signature}},
                ),
                ToolCallDelta(call_id="gemini_call_X_1", arguments_delta="{}"),
                ToolCallEnd(
                    call_id="gemini_call_X_1",
                    name="get_country",
                    arguments={},
                    raw_arguments="{}",
                ),
                UsageEvent(usage=Usage(input_tokens=29, output_tokens=212, reasoning_tokens=202)),
                Finish(reason="tool_calls", raw_reason="STOP"),
            ]
        )
        assembler = MessageAssembler()
        for event in first:
            assembler.feed(event)
        assistant = assembler.message()
        call = assistant.tool_calls[0]
        result = ToolResultPart(
            tool_call_id=call.id, name=call.name, content=[TextPart(text="Mexico")]
        )
        second = await collect(
            srv,
            ModelRequest(
                system="",
                messages=[*request.messages, assistant, Message(role="tool", parts=[result])],
                tools=[GET_COUNTRY],
            ),
        )

    sent = srv.requests[1].json()
    recorded = request_body(turns[1])
    sent_part = sent["contents"][1]["parts"][0]
    recorded_part = recorded["contents"][1]["parts"][0]
    # The same bytes as turn 1 sent them (the SDK re-encodes them URL-safe, as it did when the
    # real request was recorded).
    assert base64.urlsafe_b64decode(sent_part["thoughtSignature"]) == base64.b64decode(signature)
    assert sent_part["thoughtSignature"] == recorded_part["thoughtSignature"]
    assert sent_part["functionCall"] == {**recorded_part["functionCall"], "id": call.id}
    assert sent["contents"][2] == {
        "role": "user",
        "parts": [
            {
                "functionResponse": {
                    "id": call.id,
                    "name": "get_country",
                    "response": {"output": "Mexico"},
                }
            }
        ],
    }
    assert sent["contents"][0] == recorded["contents"][0]
    assert sent["tools"] == recorded["tools"]
    path = srv.requests[1].path
    assert path.startswith("/v1beta/") and path.endswith(":streamGenerateContent?alt=sse")
    assert srv.requests[1].headers["x-goog-api-key"] == "test-key"
    assert srv.requests[1].headers["x-extra"] == "yes"

    assert second == snapshot(
        [
            TextDelta(text="The capital of Mexico"),
            TextDelta(text=" is Mexico City."),
            UsageEvent(usage=Usage(input_tokens=257, output_tokens=8)),
            Finish(reason="stop", raw_reason="STOP"),
        ]
    )


async def test_gemini3_function_call_with_arguments(srv: LoopbackServer) -> None:
    body = sse_bytes("google/stream_function_call_args_gemini3.jsonl")
    with serving(srv, Reply(body=body)):
        events = normalise_ids(await collect(srv, ModelRequest(system="", messages=[user("?")])))
    start = events[0]
    assert isinstance(start, ToolCallStart)
    encoded = start.provider_metadata["gemini"]["thought_signature"]
    assert isinstance(encoded, str) and encoded.startswith("EpEgCo4gAb4+9vvW")
    assert events[1:] == snapshot(
        [
            ToolCallDelta(
                call_id="gemini_call_X_1", arguments_delta='{"location": "San Francisco"}'
            ),
            ToolCallEnd(
                call_id="gemini_call_X_1",
                name="weather",
                arguments={"location": "San Francisco"},
                raw_arguments='{"location": "San Francisco"}',
            ),
            UsageEvent(usage=Usage(input_tokens=29, output_tokens=819, reasoning_tokens=804)),
            Finish(reason="tool_calls", raw_reason="STOP"),
        ]
    )


async def test_not_found_from_recording_is_an_invalid_request(srv: LoopbackServer) -> None:
    (turn,) = cassette("google/error_404_not_found.yaml")
    with serving(srv, Reply.json(turn["response"]["parsed_body"], status=404)):
        events = await collect(srv, ModelRequest(system="", messages=[user("hello")]))
    assert events == snapshot(
        [
            ErrorEvent(
                error=ProviderError(
                    kind="invalid_request",
                    message="google: models/gemini-3.6-flahs is not found for API version v1beta, "
                    "or is not supported for generateContent. Call ModelService.ListModels to see "
                    "the list of available models and their supported methods.",
                    retryable=False,
                    status=404,
                    code="NOT_FOUND",
                    provider="google",
                )
            ),
            Finish(reason="error"),
        ]
    )


def error_body(code: int, status: str, message: str, **extra: Any) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "status": status, **extra}}


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
        srv, Reply.json(error_body(401, "UNAUTHENTICATED", "API key not valid."), status=401)
    )
    assert (auth.kind, auth.retryable, auth.status) == ("auth", False, 401)

    retry_info = {
        "@type": "type.googleapis.com/google.rpc.RetryInfo",
        "retryDelay": "17s",
    }
    limited = await run_error(
        srv,
        Reply.json(
            error_body(429, "RESOURCE_EXHAUSTED", "Quota exceeded.", details=[retry_info]),
            status=429,
        ),
    )
    assert (limited.kind, limited.retryable, limited.retry_after) == ("rate_limit", True, 17.0)

    header = await run_error(
        srv,
        Reply.json(
            error_body(429, "RESOURCE_EXHAUSTED", "Slow down."),
            status=429,
            headers={"retry-after": "3"},
        ),
    )
    assert (header.kind, header.retry_after) == ("rate_limit", 3.0)

    server = await run_error(
        srv, Reply.json(error_body(500, "INTERNAL", "Internal error encountered."), status=500)
    )
    assert (server.kind, server.retryable, server.status) == ("server", True, 500)

    # SYNTHETIC: the overflow text documented in providers.md section 8, not a recording.
    overflow = await run_error(
        srv,
        Reply.json(
            error_body(
                400,
                "INVALID_ARGUMENT",
                "The input token count (1200000) exceeds the maximum number of tokens allowed "
                "(1048576).",
            ),
            status=400,
        ),
    )
    assert (overflow.kind, overflow.retryable, overflow.code) == (
        "context_overflow",
        False,
        "INVALID_ARGUMENT",
    )


async def test_in_stream_error_frame(srv: LoopbackServer) -> None:
    body = frames(candidate({"text": "Hel"})) + frames(
        error_body(503, "UNAVAILABLE", "The model is overloaded. Please try again later.")
    )
    with serving(srv, Reply(body=body)):
        events = await collect(srv, ModelRequest(system="", messages=[user("hi")]))
    assert events == snapshot(
        [
            TextDelta(text="Hel"),
            ErrorEvent(
                error=ProviderError(
                    kind="server",
                    message="google: The model is overloaded. Please try again later.",
                    retryable=True,
                    status=503,
                    code="UNAVAILABLE",
                    provider="google",
                )
            ),
            Finish(reason="error"),
        ]
    )


async def test_stream_cut_before_finish_reason_yields_one_finish(srv: LoopbackServer) -> None:
    with serving(srv, Reply(body=frames(candidate({"text": "Hel"})))):
        events = await collect(srv, ModelRequest(system="", messages=[user("hi")]))
    assert [type(e) for e in events] == [TextDelta, ErrorEvent, Finish]
    error = events[1]
    assert isinstance(error, ErrorEvent)
    assert (error.error.kind, error.error.retryable) == ("network", True)
    assert events[-1] == Finish(reason="error")


async def test_garbled_frame_is_an_error_not_an_exception(srv: LoopbackServer) -> None:
    body = frames(candidate({"text": "Hel"})) + b"data: {not json\r\n\r\n"
    with serving(srv, Reply(body=body)):
        events = await collect(srv, ModelRequest(system="", messages=[user("hi")]))
    assert [type(e) for e in events] == [TextDelta, ErrorEvent, Finish]
    assert isinstance(events[1], ErrorEvent) and events[1].error.kind == "unknown"


async def test_connection_refused_is_a_retryable_network_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    endpoint = Endpoint(
        provider_id="google", api="gemini", base_url=f"http://127.0.0.1:{port}", api_key="test-key"
    )
    model = create_model("gemini-3-flash", endpoint)
    with anyio.fail_after(10):
        events = [e async for e in model.stream(ModelRequest(system="", messages=[user("hi")]))]
    await model.aclose()
    assert len(events) == 2
    error, finish = events
    assert isinstance(error, ErrorEvent)
    assert (error.error.kind, error.error.retryable, error.error.status) == ("network", True, None)
    assert "test-key" not in error.error.message
    assert f"http://127.0.0.1:{port}/" in error.error.message
    assert finish == Finish(reason="error")


async def test_blocked_prompt_is_a_content_filter_finish(srv: LoopbackServer) -> None:
    body = frames(
        {
            "promptFeedback": {"blockReason": "PROHIBITED_CONTENT"},
            "usageMetadata": {"promptTokenCount": 7, "totalTokenCount": 7},
        }
    )
    with serving(srv, Reply(body=body)):
        events = await collect(srv, ModelRequest(system="", messages=[user("hi")]))
    assert events == [
        UsageEvent(usage=Usage(input_tokens=7)),
        Finish(reason="content_filter", raw_reason="blocked:PROHIBITED_CONTENT"),
    ]


async def test_finish_reasons_map(srv: LoopbackServer) -> None:
    expected: dict[str, FinishReason] = {
        "MAX_TOKENS": "length",
        "SAFETY": "content_filter",
        "RECITATION": "content_filter",
        "SPII": "content_filter",
        "MALFORMED_FUNCTION_CALL": "other",
        "OTHER": "other",
    }
    for raw, reason in expected.items():
        with serving(srv, Reply(body=frames(candidate({"text": "x"}, finish=raw)))):
            events = await collect(srv, ModelRequest(system="", messages=[user("hi")]))
        assert events[-1] == Finish(reason=reason, raw_reason=raw)


async def test_thoughts_text_signatures_and_usage_round_trip(srv: LoopbackServer) -> None:
    text_signature = base64.b64encode(b"\x00text-signature\xff").decode()
    usage = {
        "promptTokenCount": 100,
        "toolUsePromptTokenCount": 5,
        "cachedContentTokenCount": 60,
        "candidatesTokenCount": 9,
        "thoughtsTokenCount": 20,
    }
    body = frames(
        {
            **candidate({"text": "Let me ", "thought": True}),
            "usageMetadata": {"promptTokenCount": 1},
        },
        candidate({"text": "think.", "thought": True}),
        candidate({"text": "Answer "}),
        candidate({"text": "here."}),
        {
            **candidate({"text": "", "thoughtSignature": text_signature}, finish="STOP"),
            "usageMetadata": usage,
        },
    )
    with serving(
        srv, Reply(body=body), Reply(body=frames(candidate({"text": "ok"}, finish="STOP")))
    ):
        events = await collect(
            srv, ModelRequest(system="", messages=[user("hi")], reasoning_effort="high")
        )
        assert events == snapshot(
            [
                ReasoningDelta(text="Let me "),
                ReasoningDelta(text="think."),
                TextDelta(text="Answer ", index=1),
                TextDelta(text="here.", index=1),
                TextDelta(
                    text="",
                    index=1,
                    provider_metadata={"gemini": {"thought_signature": "AHRleHQtc2lnbmF0dXJl/w=="}},
                ),
                UsageEvent(
                    usage=Usage(
                        input_tokens=105,
                        cached_input_tokens=60,
                        output_tokens=29,
                        reasoning_tokens=20,
                    )
                ),
                Finish(reason="stop", raw_reason="STOP"),
            ]
        )
        assembler = MessageAssembler()
        for event in events:
            assembler.feed(event)
        assistant = assembler.message()
        await collect(
            srv,
            ModelRequest(system="", messages=[user("hi"), assistant, user("more")]),
        )
    sent = srv.requests[1].json()["contents"]
    # Unsigned thought summaries are not sent back; the signature stays on its text part.
    assert sent[1] == {
        "role": "model",
        "parts": [{"text": "Answer here.", "thoughtSignature": "AHRleHQtc2lnbmF0dXJl_w=="}],
    }
    assert base64.urlsafe_b64decode(sent[1]["parts"][0]["thoughtSignature"]) == (
        b"\x00text-signature\xff"
    )
    first_request = srv.requests[0].json()
    # The SDK writes nested config objects with their proto (snake_case) names; the API takes
    # either spelling.
    assert first_request["generationConfig"]["thinkingConfig"] == {
        "include_thoughts": True,
        "thinking_level": "HIGH",
    }


async def test_history_and_options_in_the_request(srv: LoopbackServer) -> None:
    signed = ReasoningPart(text="plan", provider_metadata={"gemini": {"thought_signature": "c2ln"}})
    request = ModelRequest(
        system="Be brief.",
        tools=[GET_COUNTRY],
        tool_choice=ToolChoiceNamed(name="get_country"),
        max_output_tokens=512,
        reasoning_effort="low",
        messages=[
            user("first"),
            Message(
                role="user",
                parts=[TextPart(text=""), ImagePart(media_type="image/png", data="iVBO")],
            ),
            Message(
                role="assistant",
                parts=[
                    ReasoningPart(text="foreign thoughts"),
                    signed,
                    TextPart(text=""),
                    ToolCallPart(id="c1", name="get_country", arguments={}),
                ],
            ),
            Message(
                role="tool",
                parts=[
                    ToolResultPart(
                        tool_call_id="c1",
                        name="get_country",
                        content=[TextPart(text="boom")],
                        is_error=True,
                    )
                ],
            ),
            user("next"),
        ],
    )
    with serving(srv, Reply(body=frames(candidate({"text": "ok"}, finish="STOP")))):
        await collect(srv, request, model_id="gemini-2.5-flash")
    sent = srv.requests[0].json()
    assert sent["contents"] == [
        {
            "role": "user",
            "parts": [
                {"text": "first"},
                {"inlineData": {"mime_type": "image/png", "data": "iVBO"}},
            ],
        },
        {
            "role": "model",
            "parts": [
                {"text": "plan", "thought": True, "thoughtSignature": "c2ln"},
                {"functionCall": {"id": "c1", "name": "get_country", "args": {}}},
            ],
        },
        {
            "role": "user",
            "parts": [
                {
                    "functionResponse": {
                        "id": "c1",
                        "name": "get_country",
                        "response": {"error": "boom"},
                    }
                },
                {"text": "next"},
            ],
        },
    ]
    assert sent["systemInstruction"] == {"parts": [{"text": "Be brief."}], "role": "user"}
    assert sent["toolConfig"] == {
        "functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["get_country"]}
    }
    assert sent["generationConfig"]["maxOutputTokens"] == 512
    assert sent["generationConfig"]["thinkingConfig"] == {
        "include_thoughts": True,
        "thinking_budget": 1024,
    }
    assert not {"temperature", "topP", "topK"} & set(sent["generationConfig"])


def test_catalog_base_url_with_version_suffix_is_not_doubled() -> None:
    assert gemini.sdk_base_url("https://generativelanguage.googleapis.com/v1beta/") == (
        "https://generativelanguage.googleapis.com"
    )
    assert gemini.sdk_base_url("https://proxy.example/google/v1") == "https://proxy.example/google"
    assert gemini.sdk_base_url(None) is None


def test_importing_the_adapter_does_not_import_the_sdk() -> None:
    code = (
        "import sys, providers.wire.gemini as m\n"
        "from providers.model import Endpoint\n"
        "m.create_model('g', Endpoint(provider_id='google', api='gemini'))\n"
        "assert not [n for n in sys.modules if n.startswith('google.genai')], 'sdk imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


async def test_cancellation_propagates_and_closes_the_connection() -> None:
    first_event = frames(candidate({"text": "Hi"}))
    received: list[StreamEvent] = []
    async with hanging_server(first_event) as server:
        model = create_model(
            "gemini-3-flash",
            Endpoint(provider_id="google", api="gemini", base_url=server.url, api_key="test-key"),
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


async def test_the_endpoints_key_is_masked_whatever_its_shape(srv: LoopbackServer) -> None:
    # A key of no known shape, echoed back whole: only knowing the key itself can mask it.
    body = error_body(400, "INVALID_ARGUMENT", "API key not valid: zq81plainkey0")
    with serving(srv, Reply.json(body, status=400)):
        model = create_model(
            "gemini-3-flash",
            Endpoint(provider_id="google", api="gemini", base_url=srv.url, api_key="zq81plainkey0"),
        )
        with anyio.fail_after(10):
            events = [e async for e in model.stream(ModelRequest(system="", messages=[user("q")]))]
        await model.aclose()
    error = events[-2]
    assert isinstance(error, ErrorEvent)
    assert error.error.message == "google: API key not valid: [redacted]"


async def test_a_missing_key_is_an_auth_error(
    srv: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A user-defined provider with no key, and none in the environment: the SDK refuses to
    # build a client, which is an auth error of this stream, not an exception.
    for name in ("GOOGLE_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    model = create_model(
        "gemini-3-flash", Endpoint(provider_id="my-gemini", api="gemini", base_url=srv.url)
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
# adapter's `_map_errors`. SYNTHETIC: written from providers.md sections 6 and 8 and the Vertex
# 429 quoted in google-gemini/gemini-cli#14811 (Vertex streams errors as a one-element list).
VERTEX_429 = (
    "Resource exhausted. Please try again later. Please refer to "
    "https://cloud.google.com/vertex-ai/generative-ai/docs/error-code-429 for more details."
)
API_KEY_INVALID = {
    "@type": "type.googleapis.com/google.rpc.ErrorInfo",
    "reason": "API_KEY_INVALID",
    "domain": "googleapis.com",
}
ENVELOPES = {
    "google 429 with RetryInfo": (
        "google",
        Reply.json(
            error_body(
                429,
                "RESOURCE_EXHAUSTED",
                "Quota exceeded for metric: generate_content_free_tier_requests.",
                details=[
                    {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "17s"}
                ],
            ),
            status=429,
        ),
        ProviderError(
            kind="rate_limit",
            message="google: Quota exceeded for metric: generate_content_free_tier_requests.",
            retryable=True,
            retry_after=17.0,
            status=429,
            code="RESOURCE_EXHAUSTED",
            provider="google",
        ),
    ),
    "google 400 API_KEY_INVALID is auth": (
        "google",
        Reply.json(
            error_body(
                400,
                "INVALID_ARGUMENT",
                "API key not valid. Please pass a valid API key.",
                details=[API_KEY_INVALID],
            ),
            status=400,
        ),
        ProviderError(
            kind="auth",
            message="google: API key not valid. Please pass a valid API key.",
            retryable=False,
            status=400,
            code="API_KEY_INVALID",
            provider="google",
        ),
    ),
    "vertex 429 as a one-element list, retry-after": (
        "google-vertex",
        Reply.json(
            [error_body(429, "RESOURCE_EXHAUSTED", VERTEX_429)],
            status=429,
            headers={"retry-after": "4"},
        ),
        ProviderError(
            kind="rate_limit",
            message=f"google-vertex: {VERTEX_429}",
            retryable=True,
            retry_after=4.0,
            status=429,
            code="RESOURCE_EXHAUSTED",
            provider="google-vertex",
        ),
    ),
    "vertex 403 PERMISSION_DENIED": (
        "google-vertex",
        Reply.json(
            error_body(
                403,
                "PERMISSION_DENIED",
                "Permission 'aiplatform.endpoints.predict' denied on resource.",
            ),
            status=403,
        ),
        ProviderError(
            kind="auth",
            message="google-vertex: Permission 'aiplatform.endpoints.predict' denied on resource.",
            retryable=False,
            status=403,
            code="PERMISSION_DENIED",
            provider="google-vertex",
        ),
    ),
}


@pytest.mark.parametrize("name", list(ENVELOPES))
async def test_vendor_error_envelopes_through_the_adapter(srv: LoopbackServer, name: str) -> None:
    provider, reply, expected = ENVELOPES[name]
    srv.requests.clear()
    srv.replies.append(reply)
    model = create_model(
        "gemini-3-flash",
        Endpoint(provider_id=provider, api="gemini", base_url=srv.url, api_key="test-key"),
    )
    with anyio.fail_after(10):
        events = [e async for e in model.stream(ModelRequest(system="", messages=[user("q")]))]
    await model.aclose()
    assert events[-2:] == [ErrorEvent(error=expected), Finish(reason="error")]
    assert len(srv.requests) == 1
