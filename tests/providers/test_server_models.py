"""What OpenAI-compatible servers say about their models, asked over loopback HTTP
(`providers.wire.server_models`), and the cache of their lists (`providers.discovery`)."""

from __future__ import annotations

import socket
import time
from pathlib import Path
from typing import Any

import pytest

from providers.discovery import Listing, ServerModel, ServerModelCache, fetch_listing
from providers.model import Endpoint
from providers.wire.server_models import (
    ServerModelsError,
    context_window,
    list_models,
    server_kind,
)
from tests.loopback import Reply, loopback

SECRET = "sk-server-secret-123456"


def model_list(*entries: dict[str, Any]) -> Reply:
    return Reply.json({"object": "list", "data": list(entries)})


def test_each_server_reports_windows_its_own_way_in_the_list() -> None:
    with loopback() as server:
        server.routes["GET /v1/models"] = model_list(
            {"id": "vllm-model", "object": "model", "max_model_len": 32768},
            {"id": "router-model", "context_length": 200000},
            {"id": "groq-model", "context_window": 131072},
            {"id": "llamacpp-model", "meta": {"n_ctx_train": 8192}},
            {"id": "bare-model"},
            {"object": "model"},  # no id: skipped
        )
        models = list_models(f"{server.url}/v1", api_key=SECRET, headers={"x-extra": "1"})
        [request] = server.requests
    assert models == [
        ServerModel("vllm-model", 32768),
        ServerModel("router-model", 200000),
        ServerModel("groq-model", 131072),
        ServerModel("llamacpp-model", 8192),
        ServerModel("bare-model", None),
    ]
    assert request.headers["authorization"] == f"Bearer {SECRET}"
    assert request.headers["x-extra"] == "1"


def test_the_keyless_placeholder_is_never_sent_as_a_credential() -> None:
    with loopback() as server:
        server.routes["GET /v1/models"] = model_list({"id": "m"})
        list_models(f"{server.url}/v1", api_key="earshot-no-key")
        [request] = server.requests
    assert "authorization" not in request.headers


def test_ollama_says_num_ctx_or_the_model_length_in_api_show() -> None:
    with loopback() as server:
        server.routes["POST /api/show"] = Reply.json(
            {
                "parameters": "stop <|im_end|>\nnum_ctx 16384",
                "model_info": {"general.architecture": "qwen3", "qwen3.context_length": 40960},
            }
        )
        assert context_window("ollama", f"{server.url}/v1", "qwen3:8b") == 16384
        assert server.requests[0].json() == {"model": "qwen3:8b"}
        server.routes["POST /api/show"] = Reply.json(
            {"model_info": {"general.architecture": "qwen3", "qwen3.context_length": 40960}}
        )
        assert context_window("ollama", f"{server.url}/v1", "qwen3:8b") == 40960


def test_lm_studio_and_llama_cpp_answer_on_their_native_apis() -> None:
    with loopback() as server:
        server.routes["GET /api/v0/models/qwen%2Fcoder"] = Reply.json(
            {
                "id": "qwen/coder",
                "state": "loaded",
                "max_context_length": 131072,
                "loaded_context_length": 8192,
            }
        )
        server.routes["GET /props"] = Reply.json({"default_generation_settings": {"n_ctx": 4096}})
        assert context_window("lmstudio", f"{server.url}/v1", "qwen/coder") == 8192
        assert context_window("llama.cpp", f"{server.url}/v1", "any") == 4096
        assert context_window("vllm", f"{server.url}/v1", "any") is None


def test_an_unreachable_server_names_the_url_and_never_the_key() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    with pytest.raises(ServerModelsError) as caught:
        list_models(url, api_key=SECRET, timeout=2)
    assert f"{url}/models" in str(caught.value)
    assert SECRET not in str(caught.value)
    with loopback() as server, pytest.raises(ServerModelsError, match="HTTP 404"):
        list_models(f"{server.url}/v1")
    with loopback() as server, pytest.raises(ServerModelsError, match="not an OpenAI model list"):
        server.routes["GET /v1/models"] = Reply.json({"models": []})
        list_models(f"{server.url}/v1")


def test_server_kind_from_the_provider_or_the_default_port() -> None:
    assert server_kind("ollama", "http://box:9999/v1") == "ollama"
    assert server_kind("my-box", "http://127.0.0.1:11434/v1") == "ollama"
    assert server_kind("studio", "http://localhost:1234/v1") == "lmstudio"
    assert server_kind("vllm", "http://localhost:8000/v1") == "vllm"
    assert server_kind("gateway", "https://llm.example/v1") == "openai-compatible"


def test_fetch_listing_asks_for_the_windows_the_list_lacks() -> None:
    with loopback() as server:
        server.routes["GET /v1/models"] = model_list({"id": "qwen3:8b"}, {"id": "llama3:8b"})
        server.routes["POST /api/show"] = Reply.json({"parameters": "num_ctx 12288"})
        endpoint = Endpoint(provider_id="ollama", api="openai-chat", base_url=f"{server.url}/v1")
        listing = fetch_listing(endpoint, windows_for=["qwen3:8b"])
        asked = [(r.method, r.path) for r in server.requests]
    assert listing.models == (ServerModel("qwen3:8b", 12288), ServerModel("llama3:8b", None))
    assert listing.windows() == {"ollama/qwen3:8b": 12288}
    assert listing.provider == "ollama" and listing.fresh()
    assert asked == [("GET", "/v1/models"), ("POST", "/api/show")]  # only the model asked for


def test_the_cache_round_trips_and_knows_its_server(tmp_path: Path) -> None:
    cache = ServerModelCache(tmp_path)
    listing = Listing(
        provider="llama.cpp",
        base_url="http://127.0.0.1:8080/v1",
        fetched_at=time.time() - 1000,
        models=(ServerModel("a", 4096), ServerModel("b")),
    )
    cache.write(listing)
    assert cache.read("llama.cpp", "http://127.0.0.1:8080/v1") == listing
    assert cache.read("llama.cpp", "http://other:8080/v1") is None  # another server's list
    assert cache.read("vllm", "http://127.0.0.1:8080/v1") is None
    assert not listing.fresh()
    assert listing.windows() == {"llama.cpp/a": 4096}
    cache.path("llama.cpp").write_text("{broken", encoding="utf-8")
    assert cache.read("llama.cpp", "http://127.0.0.1:8080/v1") is None


def test_sessions_caching_one_servers_list_at_once_leave_a_whole_one(tmp_path: Path) -> None:
    # Issue 29: sessions of one process (threads) and other processes refresh the same list.
    import threading

    cache = ServerModelCache(tmp_path)
    barrier = threading.Barrier(8)
    failures: list[BaseException] = []
    listings = [
        Listing(
            provider="ollama",
            base_url="http://127.0.0.1:11434/v1",
            fetched_at=time.time(),
            models=tuple(ServerModel(f"m{n}-{i}", 4096) for i in range(200)),
        )
        for n in range(8)
    ]

    def session(listing: Listing) -> None:
        barrier.wait()
        try:
            for _ in range(10):
                cache.write(listing)
                assert cache.read("ollama", "http://127.0.0.1:11434/v1") in listings
        except BaseException as error:  # reported below
            failures.append(error)

    threads = [threading.Thread(target=session, args=(listing,)) for listing in listings]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert failures == []
    assert cache.read("ollama", "http://127.0.0.1:11434/v1") in listings
    assert [path.name for path in tmp_path.rglob("*") if path.is_file()] == ["ollama.json"]
