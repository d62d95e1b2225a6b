"""The Chat Completions adapter's failures and plumbing, through the real `openai` SDK against
the loopback server: HTTP and in-stream errors, cut streams, connection failures, headers, lazy
SDK import and early close."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import AsyncGenerator, Iterator
from typing import cast

import anyio
import pytest
from inline_snapshot import snapshot

from providers.model import Endpoint
from providers.types import (
    Finish,
    ModelRequest,
    ProviderError,
    StreamEvent,
    TextDelta,
)
from providers.wire.openai_chat import create_model
from tests.fixtures import ROOT
from tests.loopback import LoopbackServer, Reply, loopback
from tests.providers.chat_support import chunk, collect, endpoint, only_error, sse, user


@pytest.fixture(scope="module")
def shared_server() -> Iterator[LoopbackServer]:
    with loopback() as server:
        yield server


@pytest.fixture
def srv(shared_server: LoopbackServer) -> LoopbackServer:
    shared_server.replies.clear()
    shared_server.requests.clear()
    return shared_server


# --------------------------------------------------------------------------------------- errors


async def error_events(srv: LoopbackServer, reply: Reply) -> list[StreamEvent]:
    srv.replies.append(reply)
    return await collect(f"{srv.url}/v1", ModelRequest(system="", messages=[user("hi")]))


async def test_http_401_is_auth(srv: LoopbackServer) -> None:
    body = {
        "error": {
            "message": "Incorrect API key provided: test-key.",
            "type": "invalid_request_error",
            "code": "invalid_api_key",
        }
    }
    error = only_error(await error_events(srv, Reply.json(body, status=401)))
    assert error == snapshot(
        ProviderError(
            kind="auth",
            message="openai: Incorrect API key provided: [redacted].",
            retryable=False,
            status=401,
            code="invalid_api_key",
            provider="openai",
        )
    )


async def test_http_404_is_invalid_request(srv: LoopbackServer) -> None:
    body = {
        "error": {
            "message": "The model `nope` does not exist",
            "type": "invalid_request_error",
            "code": "model_not_found",
        }
    }
    error = only_error(await error_events(srv, Reply.json(body, status=404)))
    assert (error.kind, error.retryable, error.status) == ("invalid_request", False, 404)


async def test_http_429_carries_retry_after(srv: LoopbackServer) -> None:
    body = {
        "error": {
            "message": "Rate limit reached for gpt-4o-mini",
            "type": "requests",
            "code": "rate_limit_exceeded",
        }
    }
    error = only_error(
        await error_events(srv, Reply.json(body, status=429, headers={"retry-after": "7"}))
    )
    assert (error.kind, error.retryable, error.retry_after, error.code) == (
        "rate_limit",
        True,
        7.0,
        "rate_limit_exceeded",
    )
    assert len(srv.requests) == 1  # SDK retries are off: the agent owns retry policy


async def test_http_500_is_a_retryable_server_error(srv: LoopbackServer) -> None:
    body = {"error": {"message": "The server had an error", "type": "server_error", "code": None}}
    error = only_error(await error_events(srv, Reply.json(body, status=500)))
    assert (error.kind, error.retryable, error.status) == ("server", True, 500)
    assert len(srv.requests) == 1  # SDK retries are off: the agent owns retry policy


async def test_http_400_context_overflow(srv: LoopbackServer) -> None:
    # SYNTHETIC: the message text from providers.md section 8 (chathub-dev/chathub#126).
    body = {
        "error": {
            "message": "This model's maximum context length is 128000 tokens. However, your "
            "messages resulted in 130000 tokens.",
            "type": "invalid_request_error",
            "param": "messages",
            "code": "context_length_exceeded",
        }
    }
    error = only_error(await error_events(srv, Reply.json(body, status=400)))
    assert (error.kind, error.retryable, error.code) == (
        "context_overflow",
        False,
        "context_length_exceeded",
    )


async def test_a_stream_cut_before_finish_reason_is_a_retryable_network_error(
    srv: LoopbackServer,
) -> None:
    events = await error_events(srv, Reply(body=sse(chunk({"content": "Hel"}), done=False)))
    assert events[0] == TextDelta(text="Hel")
    error = only_error(events[1:])
    assert (error.kind, error.retryable) == ("network", True)


async def test_a_stream_without_done_but_with_finish_reason_finishes_normally(
    srv: LoopbackServer,
) -> None:
    events = await error_events(srv, Reply(body=sse(chunk({"content": "Hi"}, "stop"), done=False)))
    assert events == [TextDelta(text="Hi"), Finish(reason="stop", raw_reason="stop")]


async def test_connection_refused_is_a_retryable_network_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    events = await collect(
        f"http://127.0.0.1:{port}/v1", ModelRequest(system="", messages=[user("hi")])
    )
    error = only_error(events)
    assert (error.kind, error.retryable, error.status) == ("network", True, None)
    # An unreachable baseUrl names the URL it tried.
    assert f"http://127.0.0.1:{port}/v1/chat/completions" in error.message


async def test_the_key_never_reaches_the_error_message(srv: LoopbackServer) -> None:
    body = {
        "error": {
            "message": "Incorrect API key provided: sk-proj-abcdefghijklmnop",
            "code": "invalid_api_key",
        }
    }
    error = only_error(await error_events(srv, Reply.json(body, status=401)))
    assert "abcdefghijklmnop" not in error.message


# ------------------------------------------------------------------------------------ plumbing


async def test_headers_go_through_and_a_local_server_needs_no_key(srv: LoopbackServer) -> None:
    srv.replies.append(Reply(body=sse(chunk({"content": "hi"}, "stop"))))
    local = Endpoint(
        provider_id="ollama", api="openai-chat", base_url=srv.url, headers={"X-Title": "earshot"}
    )
    model = create_model("llama3", local)
    with anyio.fail_after(10):
        events = [
            event async for event in model.stream(ModelRequest(system="", messages=[user("q")]))
        ]
    await model.aclose()
    assert events[-1] == Finish(reason="stop", raw_reason="stop")
    assert srv.requests[0].headers["x-title"] == "earshot"
    assert srv.requests[0].headers["authorization"] == "Bearer unused"


def test_building_models_does_not_import_the_sdk() -> None:
    code = (
        "import sys\n"
        "from providers.model import Endpoint\n"
        "from providers.wire import openai_chat, openai_responses\n"
        "openai_chat.create_model('m', Endpoint(provider_id='x', api='openai-chat'))\n"
        "openai_responses.create_model('m', Endpoint(provider_id='x', api='openai-responses'))\n"
        "assert 'openai' not in sys.modules, 'the SDK was imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, timeout=30)


async def test_a_consumer_that_stops_early_closes_the_stream(srv: LoopbackServer) -> None:
    body = sse(chunk({"content": "a"}), chunk({"content": "b"}), chunk({}, "stop"))
    srv.replies.extend([Reply(body=body), Reply(body=body)])
    model = create_model("m", endpoint(srv.url))
    with anyio.fail_after(10):
        stream = cast(
            "AsyncGenerator[StreamEvent, None]",
            model.stream(ModelRequest(system="", messages=[user("q")])),
        )
        assert await anext(stream) == TextDelta(text="a")
        await stream.aclose()
        again = [
            event async for event in model.stream(ModelRequest(system="", messages=[user("q")]))
        ]
    await model.aclose()
    assert again[-1] == Finish(reason="stop", raw_reason="stop")


async def test_the_endpoints_key_is_masked_whatever_its_shape(srv: LoopbackServer) -> None:
    # A key of no known shape, echoed back whole: only knowing the key itself can mask it.
    srv.replies.append(
        Reply.json(
            {"error": {"message": "Bad key zq81plainkey0 (header Bearer zq81plainkey0)"}},
            status=401,
        )
    )
    keyed = Endpoint(
        provider_id="custom", api="openai-chat", base_url=srv.url, api_key="zq81plainkey0"
    )
    model = create_model("m", keyed)
    with anyio.fail_after(10):
        events = [e async for e in model.stream(ModelRequest(system="", messages=[user("q")]))]
    await model.aclose()
    error = only_error(events)
    assert error.message == "custom: Bad key [redacted] (header Bearer [redacted])"


async def test_a_missing_key_is_an_auth_error(monkeypatch: pytest.MonkeyPatch) -> None:
    # OpenAI's own API (no base URL) without a key, none in the environment either.
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    model = create_model("gpt-5", Endpoint(provider_id="openai", api="openai-chat"))
    with anyio.fail_after(10):
        events = [e async for e in model.stream(ModelRequest(system="", messages=[user("hi")]))]
    error = only_error(events)
    assert (error.kind, error.retryable, error.code) == ("auth", False, "missing_credentials")


# Each vendor's own error envelope (status, JSON body, retry headers) through the real SDK and
# the adapter's `_map_errors`, so a slip in how it reads status, message, code or the wait fails
# here. SYNTHETIC: bodies written from the shapes and texts in providers.md sections 6 and 8 and
# the public reports named in tests/providers/test_errors.py; ids and numbers made up.
AZURE_TPM = (
    "Requests to the ChatCompletions_Create Operation under Azure OpenAI API version 2024-10-21 "
    "have exceeded token rate limit of your current OpenAI S0 pricing tier. Please retry after "
    "6 seconds."
)
AZURE_FILTER = (
    "The response was filtered due to the prompt triggering Azure OpenAI's content management "
    "policy. Please modify your prompt and retry."
)
FIREWORKS_LIMIT = (
    "You have exceeded your usage limits. Please try again later or contact Fireworks to "
    "explore dedicated capacity."
)
OPENAI_RPM = (
    "Rate limit reached for gpt-4o in organization org-x on requests per min (RPM): Limit 500, "
    "Used 500, Requested 1. Please try again in 120ms."
)
ENVELOPES = {
    "openai 429, retry-after-ms wins": (
        "openai",
        Reply.json(
            {"error": {"message": OPENAI_RPM, "type": "requests", "code": "rate_limit_exceeded"}},
            status=429,
            headers={"retry-after-ms": "120", "retry-after": "1"},
        ),
        ProviderError(
            kind="rate_limit",
            message=f"openai: {OPENAI_RPM}",
            retryable=True,
            retry_after=0.12,
            status=429,
            code="rate_limit_exceeded",
            provider="openai",
        ),
    ),
    "azure 429, numeric code, retry-after": (
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
    "azure 400 content filter": (
        "azure",
        Reply.json(
            {
                "error": {
                    "message": AZURE_FILTER,
                    "type": None,
                    "param": "prompt",
                    "code": "content_filter",
                    "status": 400,
                }
            },
            status=400,
        ),
        ProviderError(
            kind="invalid_request",
            message=f"azure: {AZURE_FILTER}",
            retryable=False,
            status=400,
            code="content_filter",
            provider="azure",
        ),
    ),
    "fireworks 429, text at the top level": (
        "fireworks-ai",
        Reply.json({"error": "Too Many Requests", "message": FIREWORKS_LIMIT}, status=429),
        ProviderError(
            kind="rate_limit",
            message=f"fireworks-ai: {FIREWORKS_LIMIT}",
            retryable=True,
            status=429,
            provider="fireworks-ai",
        ),
    ),
    "ollama 404 unknown model, type api_error": (
        "ollama",
        Reply.json(
            {
                "error": {
                    "message": 'model "llama9" not found, try pulling it first',
                    "type": "api_error",
                    "param": None,
                    "code": None,
                }
            },
            status=404,
        ),
        ProviderError(
            kind="invalid_request",
            message='ollama: model "llama9" not found, try pulling it first',
            retryable=False,
            status=404,
            code="api_error",
            provider="ollama",
        ),
    ),
    "ollama 500 runner crash": (
        "ollama",
        Reply.json(
            {
                "error": {
                    "message": "llama runner process has terminated: exit status 2",
                    "type": "api_error",
                    "param": None,
                    "code": None,
                }
            },
            status=500,
        ),
        ProviderError(
            kind="server",
            message="ollama: llama runner process has terminated: exit status 2",
            retryable=True,
            status=500,
            code="api_error",
            provider="ollama",
        ),
    ),
}


@pytest.mark.parametrize("name", list(ENVELOPES))
async def test_vendor_error_envelopes_through_the_adapter(srv: LoopbackServer, name: str) -> None:
    provider, reply, expected = ENVELOPES[name]
    srv.replies.append(reply)
    events = await collect(
        f"{srv.url}/v1", ModelRequest(system="", messages=[user("hi")]), provider_id=provider
    )
    assert only_error(events) == expected
    assert len(srv.requests) == 1
