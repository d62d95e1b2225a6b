"""The Gemini adapter on Vertex AI: express mode (an API key), Application Default Credentials,
and missing credentials, through the real `google-genai` SDK against the loopback server.

The SDK's Vertex routing (google-genai 3.x `_api_client.py`): API version `v1beta1`; with a project
and location the path is `projects/P/locations/L/publishers/google/models/M:...`, with a key alone
it is `publishers/google/models/M:...`; a key goes in `x-goog-api-key` and no ADC is loaded, while
without a key `google.auth.default()` runs on the first request and its token is sent as
`Authorization: Bearer`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import pytest

from providers.model import Endpoint, Model
from providers.registry import UserProviderConfig
from providers.registry import create_model as create_registry_model
from providers.types import (
    ErrorEvent,
    Finish,
    Message,
    ModelRequest,
    StreamEvent,
    TextDelta,
    TextPart,
)
from providers.wire import gemini
from providers.wire.gemini import create_model
from tests.loopback import LoopbackServer, Reply, loopback

REQUEST = ModelRequest(system="", messages=[Message(role="user", parts=[TextPart(text="hi")])])
MODEL = "gemini-2.5-flash"


@pytest.fixture(scope="module")
def shared_server() -> Iterator[LoopbackServer]:
    with loopback() as server:
        yield server


@pytest.fixture
def srv(shared_server: LoopbackServer) -> LoopbackServer:
    shared_server.replies.clear()
    shared_server.requests.clear()
    return shared_server


@pytest.fixture
def no_adc(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if anything asks google-auth for Application Default Credentials."""
    import google.auth

    def refuse(*args: object, **kwargs: object) -> Any:
        raise AssertionError("google.auth.default() was called")

    monkeypatch.setattr(google.auth, "default", refuse)


def hello_stream() -> Reply:
    frame = {
        "candidates": [
            {"content": {"role": "model", "parts": [{"text": "hello"}]}, "finishReason": "STOP"}
        ]
    }
    return Reply(body=f"data: {json.dumps(frame)}\r\n\r\n".encode())


def vertex_endpoint(server: LoopbackServer, **options: object) -> Endpoint:
    return Endpoint(
        provider_id="google-vertex",
        api="gemini",
        base_url=server.url,
        options={"vertexai": True, **options},
    )


async def run(model: Model) -> list[StreamEvent]:
    try:
        with anyio.fail_after(10):
            return [event async for event in model.stream(REQUEST)]
    finally:
        await model.aclose()


HELLO = [TextDelta(text="hello"), Finish(reason="stop", raw_reason="STOP")]


@pytest.mark.usefixtures("no_adc")
async def test_express_mode_through_the_registry_with_a_project(srv: LoopbackServer) -> None:
    environ = {
        "GOOGLE_VERTEX_API_KEY": "test-key",
        "GOOGLE_VERTEX_PROJECT": "P",
        "GOOGLE_VERTEX_LOCATION": "L",
    }
    users = {"google-vertex": UserProviderConfig(base_url=srv.url)}
    model = create_registry_model(f"google-vertex/{MODEL}", user_providers=users, environ=environ)
    srv.replies.append(hello_stream())
    assert await run(model) == HELLO
    (sent,) = srv.requests
    assert sent.path == (
        f"/v1beta1/projects/P/locations/L/publishers/google/models/{MODEL}"
        ":streamGenerateContent?alt=sse"
    )
    assert sent.headers["x-goog-api-key"] == "test-key"
    assert "authorization" not in sent.headers
    assert sent.json()["contents"] == [{"role": "user", "parts": [{"text": "hi"}]}]


@pytest.mark.usefixtures("no_adc")
async def test_express_mode_with_a_key_alone_uses_the_publisher_path(
    srv: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The SDK would otherwise pick these up; the endpoint says what to use.
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "from-environment")
    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "europe-west4")
    endpoint = replace(vertex_endpoint(srv, project=None, location="global"), api_key="test-key")
    srv.replies.append(hello_stream())
    assert await run(create_model(MODEL, endpoint)) == HELLO
    (sent,) = srv.requests
    assert sent.path == f"/v1beta1/publishers/google/models/{MODEL}:streamGenerateContent?alt=sse"
    assert sent.headers["x-goog-api-key"] == "test-key"


async def test_application_default_credentials_are_loaded_and_sent_as_a_bearer_token(
    srv: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A real ADC file, loaded by the real google-auth. Its access token is still valid, so no
    # refresh request is made (google-auth always refreshes authorized-user credentials at
    # oauth2.googleapis.com, whatever the file says, so a refresh cannot be pointed here).
    adc = tmp_path / "adc.json"
    adc.write_text(
        json.dumps(
            {
                "type": "authorized_user",
                "client_id": "test-client",
                "client_secret": "test-secret",
                "refresh_token": "test-refresh",
                "token": "test-access-token",
                "expiry": "2999-01-01T00:00:00Z",
            }
        )
    )
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(adc))
    # The SDK would use this key in express mode if the adapter let it read the environment.
    monkeypatch.setenv("GOOGLE_API_KEY", "test-key-that-must-not-be-used")
    srv.replies.append(hello_stream())
    model = create_model(MODEL, vertex_endpoint(srv, project="P", location="us-central1"))
    assert await run(model) == HELLO
    (sent,) = srv.requests
    assert sent.path == (
        f"/v1beta1/projects/P/locations/us-central1/publishers/google/models/{MODEL}"
        ":streamGenerateContent?alt=sse"
    )
    assert sent.headers["authorization"] == "Bearer test-access-token"
    assert "x-goog-api-key" not in sent.headers


async def test_missing_adc_is_an_auth_error_on_the_first_stream(
    srv: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An explicit, missing credentials file makes google-auth fail at once, without probing the
    # gcloud config or the GCE metadata server.
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(tmp_path / "missing.json"))
    model = create_model(MODEL, vertex_endpoint(srv, project="P", location="global"))
    events = await run(model)
    assert len(events) == 2
    error, finish = events
    assert isinstance(error, ErrorEvent)
    assert (error.error.kind, error.error.retryable) == ("auth", False)
    assert (error.error.status, error.error.provider) == (None, "google-vertex")
    assert "gcloud auth application-default login" in error.error.message
    assert "missing.json" in error.error.message
    assert finish == Finish(reason="error")
    assert srv.requests == []


def test_credential_refresh_failures_are_classified() -> None:
    from google.auth import exceptions

    refused = exceptions.TransportError("connection refused")
    network = gemini._map_errors(refused, "google-vertex")  # pyright: ignore[reportPrivateUsage]
    assert network is not None and (network.kind, network.retryable) == ("network", True)
    revoked = exceptions.RefreshError("invalid_grant: Token has been expired or revoked.")
    auth = gemini._map_errors(revoked, "google-vertex")  # pyright: ignore[reportPrivateUsage]
    assert auth is not None and (auth.kind, auth.retryable) == ("auth", False)
    assert "invalid_grant" in auth.message


async def test_the_vertex_switch_in_the_environment_does_not_reroute_the_gemini_api(
    srv: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GOOGLE_GENAI_USE_VERTEXAI", "true")
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "from-environment")
    endpoint = Endpoint(provider_id="google", api="gemini", base_url=srv.url, api_key="test-key")
    srv.replies.append(hello_stream())
    assert await run(create_model(MODEL, endpoint)) == HELLO
    (sent,) = srv.requests
    assert sent.path == f"/v1beta/models/{MODEL}:streamGenerateContent?alt=sse"


def test_client_settings() -> None:
    def settings(api_key: str | None = None, **options: object) -> dict[str, object]:
        endpoint = Endpoint(
            provider_id="x", api="gemini", api_key=api_key, options={"vertexai": True, **options}
        )
        return gemini.client_settings(endpoint)

    assert settings(project="P", location="L") == {
        "vertexai": True,
        "api_key": None,
        "project": "P",
        "location": "L",
    }
    # No location alone: the SDK would route to `projects/None/locations/L/...`.
    assert settings("k", project=None, location="L") == {"vertexai": True, "api_key": "k"}
    assert settings(project="P")["location"] == "global"
    plain = Endpoint(provider_id="google", api="gemini", api_key="k")
    assert gemini.client_settings(plain) == {"vertexai": False, "api_key": "k"}
    assert gemini.sdk_base_url("https://proxy.example/vertex/v1beta1") == (
        "https://proxy.example/vertex"
    )
