"""`SdkModel.prepare`: a front end builds the model's SDK client in a worker thread once a session
is open, so the first call neither imports the SDK nor loads the CA bundle. The client it builds
is the one the calls use, built once however the two race, and a client that cannot be built
fails the first call, not the warm-up."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from openai import AsyncOpenAI

from providers.model import Endpoint
from providers.wire.openai_chat import ChatCompletionsModel
from providers.wire.sdk_model import SdkKeyNotFound


class CountingModel(ChatCompletionsModel):
    """Counts the clients it builds; each build waits until `release` is set, so a test can
    hold one build open while another thread asks for the client."""

    def __init__(self, endpoint: Endpoint) -> None:
        super().__init__("m", endpoint)
        self.builds = 0
        self.building = threading.Event()
        self.release = threading.Event()
        self.release.set()

    def _new_client(self) -> AsyncOpenAI:
        self.builds += 1
        self.building.set()
        assert self.release.wait(timeout=30)
        return super()._new_client()

    def client(self) -> AsyncOpenAI:
        """The client a call would use."""
        return self._sdk_client()


LOCAL = Endpoint(provider_id="local", api="openai-chat", base_url="http://127.0.0.1:9/v1")


def test_prepare_builds_the_client_the_calls_use() -> None:
    model = CountingModel(LOCAL)
    model.prepare()
    assert model.builds == 1
    first = model.client()
    assert model.client() is first
    assert model.builds == 1


def test_a_call_racing_the_warm_up_waits_for_its_client() -> None:
    model = CountingModel(LOCAL)
    model.release.clear()
    warm_up = threading.Thread(target=model.prepare)
    warm_up.start()
    assert model.building.wait(timeout=30)
    got: list[AsyncOpenAI] = []
    call = threading.Thread(target=lambda: got.append(model.client()))
    call.start()
    model.release.set()
    warm_up.join(timeout=30)
    call.join(timeout=30)
    assert model.builds == 1
    assert got == [model.client()]


def test_a_client_that_cannot_be_built_fails_the_first_call_not_the_warm_up(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    model = CountingModel(Endpoint(provider_id="openai", api="openai-chat"))  # no key anywhere
    model.prepare()  # does not raise
    with pytest.raises(SdkKeyNotFound):
        model.client()


def test_every_sdk_client_verifies_tls_with_the_one_context_of_the_process() -> None:
    # A context loads the whole CA bundle; every session has its own client.
    from anthropic import AsyncAnthropic

    from providers.wire.anthropic_messages import AnthropicMessagesModel
    from providers.wire.openai_responses import ResponsesModel
    from providers.wire.sdk_model import shared_tls_context

    openai_host = Endpoint(
        provider_id="openai", api="openai-chat", base_url="https://api.example/v1", api_key="k"
    )
    anthropic_host = Endpoint(
        provider_id="anthropic",
        api="anthropic",
        base_url="https://claude.example",
        api_key="k",
    )
    chat, responses = ChatCompletionsModel("m", openai_host), ResponsesModel("m", openai_host)
    claude = AnthropicMessagesModel("m", anthropic_host)
    clients: list[AsyncOpenAI | AsyncAnthropic] = []
    for model in (chat, responses, claude):
        model.prepare()
        clients.append(model._sdk_client())  # pyright: ignore[reportPrivateUsage]
    # httpx2's own attributes: the pool its transport opens connections from.
    transports: list[Any] = [client._client._transport for client in clients]  # pyright: ignore[reportPrivateUsage]
    pools: list[Any] = [transport._pool for transport in transports]
    assert {id(pool._ssl_context) for pool in pools} == {id(shared_tls_context())}
    assert shared_tls_context().verify_mode.name == "CERT_REQUIRED"
