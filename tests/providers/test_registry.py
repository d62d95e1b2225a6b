"""The provider registry: built-in specs, user-defined providers, credentials, model creation."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from providers.catalog import ModelCatalog
from providers.model import WIRE_APIS, Endpoint
from providers.registry import (
    MissingCredentials,
    ProviderSpec,
    UnknownProvider,
    UserProviderConfig,
    all_providers,
    create_model,
    credentialed_providers,
    has_credentials,
    provider_spec,
    resolve_endpoint,
    split_model_name,
)
from providers.types import ErrorEvent, Finish, ModelRequest, TextDelta

FAKE_KEY = "test-key-do-not-print-0123456789"

REQUIRED_IDS = {
    "anthropic",
    "openai",
    "google",
    "openrouter",
    "groq",
    "deepseek",
    "xai",
    "mistral",
    "togetherai",
    "fireworks-ai",
    "cerebras",
    "moonshotai",
    "zai",
    "ollama",
    "lmstudio",
    "vllm",
    "llama.cpp",
    "azure",
    "google-vertex",
}


def full_environ() -> dict[str, str]:
    """Every variable any built-in provider reads, set to a fake value."""
    environ = {name: FAKE_KEY for spec in all_providers() for name in spec.env}
    environ.update(
        {
            "AZURE_RESOURCE_NAME": "myresource",
            "GOOGLE_VERTEX_PROJECT": "my-project",
            "GOOGLE_VERTEX_LOCATION": "europe-west4",
        }
    )
    return environ


def test_the_registry_has_every_required_provider() -> None:
    ids = [spec.id for spec in all_providers()]
    assert len(ids) >= 20
    assert len(set(ids)) == len(ids)
    assert set(ids) >= REQUIRED_IDS
    assert ids[:4] == ["anthropic", "openai", "google", "openrouter"]
    assert all(spec.api in WIRE_APIS for spec in all_providers())


@pytest.mark.parametrize("spec", all_providers(), ids=lambda spec: spec.id)
def test_every_provider_resolves(spec: ProviderSpec) -> None:
    provider_id = spec.id
    endpoint = resolve_endpoint(provider_id, {}, full_environ())
    assert endpoint.provider_id == provider_id
    assert endpoint.api == spec.api
    assert provider_spec(provider_id) is spec
    if endpoint.base_url is not None:
        assert endpoint.base_url.startswith(("https://", "http://localhost", "http://127.0.0.1"))
        assert not endpoint.base_url.endswith("/")
        assert "${" not in endpoint.base_url
    if provider_id != "google-vertex":
        assert endpoint.api_key == FAKE_KEY


@pytest.mark.parametrize(
    ("provider_id", "api", "base_url"),
    [
        ("anthropic", "anthropic", None),
        ("openai", "openai-responses", "https://api.openai.com/v1"),
        ("google", "gemini", None),
        ("openrouter", "openai-chat", "https://openrouter.ai/api/v1"),
        ("groq", "openai-chat", "https://api.groq.com/openai/v1"),
        ("deepseek", "openai-chat", "https://api.deepseek.com"),
        ("fireworks-ai", "openai-chat", "https://api.fireworks.ai/inference/v1"),
        ("zai", "openai-chat", "https://api.z.ai/api/paas/v4"),
        ("ollama", "openai-chat", "http://localhost:11434/v1"),
        ("lmstudio", "openai-chat", "http://127.0.0.1:1234/v1"),
        ("vllm", "openai-chat", "http://localhost:8000/v1"),
        ("llama.cpp", "openai-chat", "http://127.0.0.1:8080/v1"),
        ("azure", "openai-responses", "https://myresource.openai.azure.com/openai/v1"),
        ("minimax", "anthropic", "https://api.minimax.io/anthropic"),
    ],
)
def test_wire_and_base_url(provider_id: str, api: str, base_url: str | None) -> None:
    endpoint = resolve_endpoint(provider_id, {}, full_environ())
    assert (endpoint.api, endpoint.base_url) == (api, base_url)


def test_the_first_key_variable_wins() -> None:
    environ = {"GEMINI_API_KEY": "second", "GOOGLE_API_KEY": "first"}
    assert resolve_endpoint("google", {}, environ).api_key == "first"
    assert resolve_endpoint("google", {}, {"GEMINI_API_KEY": "second"}).api_key == "second"


def test_an_empty_variable_counts_as_unset() -> None:
    with pytest.raises(MissingCredentials):
        resolve_endpoint("anthropic", {}, {"ANTHROPIC_API_KEY": "  "})


def test_local_servers_need_no_key() -> None:
    for provider_id in ("ollama", "lmstudio", "vllm", "llama.cpp"):
        endpoint = resolve_endpoint(provider_id, {}, {})
        assert endpoint.api_key  # the OpenAI SDK refuses to start without one
        assert has_credentials(provider_id, {}, {})
    assert resolve_endpoint("vllm", {}, {"VLLM_API_KEY": "served-key"}).api_key == "served-key"


def test_base_url_variable_overrides_the_default() -> None:
    environ = {"ANTHROPIC_API_KEY": FAKE_KEY, "ANTHROPIC_BASE_URL": "http://127.0.0.1:9/"}
    assert resolve_endpoint("anthropic", {}, environ).base_url == "http://127.0.0.1:9"


def test_reasoning_field_only_for_hosts_that_want_it_back() -> None:
    environ = full_environ()
    assert resolve_endpoint("deepseek", {}, environ).options["reasoning_field"] == (
        "reasoning_content"
    )
    # Groq rejects unknown assistant fields: nothing is echoed unless the catalog asks.
    assert "reasoning_field" not in resolve_endpoint("groq", {}, environ).options


def test_missing_credentials_names_the_variable() -> None:
    with pytest.raises(MissingCredentials) as caught:
        resolve_endpoint("anthropic", {}, {"OPENAI_API_KEY": FAKE_KEY})
    assert caught.value.provider_id == "anthropic"
    assert caught.value.variables == ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
    assert "ANTHROPIC_API_KEY" in str(caught.value)
    assert FAKE_KEY not in str(caught.value)


def test_missing_credentials_lists_every_alternative() -> None:
    with pytest.raises(MissingCredentials) as caught:
        resolve_endpoint("google", {}, {})
    message = str(caught.value)
    assert "GOOGLE_API_KEY" in message and "GEMINI_API_KEY" in message


def test_azure_needs_its_resource_name_and_vertex_its_project() -> None:
    with pytest.raises(MissingCredentials) as azure:
        resolve_endpoint("azure", {}, {"AZURE_API_KEY": FAKE_KEY})
    assert azure.value.variables == ("AZURE_RESOURCE_NAME",)
    with pytest.raises(MissingCredentials) as vertex:
        resolve_endpoint("google-vertex", {}, {})
    assert vertex.value.variables == (
        "GOOGLE_VERTEX_PROJECT",
        "GOOGLE_CLOUD_PROJECT",
        "GOOGLE_VERTEX_API_KEY",
    )
    endpoint = resolve_endpoint("google-vertex", {}, {"GOOGLE_CLOUD_PROJECT": "p"})
    assert endpoint.options == {"vertexai": True, "project": "p", "location": "global"}
    assert endpoint.api_key is None


def test_vertex_express_mode_needs_only_a_key() -> None:
    endpoint = resolve_endpoint("google-vertex", {}, {"GOOGLE_VERTEX_API_KEY": FAKE_KEY})
    assert endpoint.api_key == FAKE_KEY
    assert endpoint.options == {"vertexai": True, "project": None, "location": "global"}
    # Google's own variables are read too, and the Vertex-specific ones win.
    environ = {
        "GOOGLE_CLOUD_PROJECT": "general",
        "GOOGLE_VERTEX_PROJECT": "specific",
        "GOOGLE_CLOUD_LOCATION": "us-central1",
    }
    endpoint = resolve_endpoint("google-vertex", {}, environ)
    assert endpoint.options == {"vertexai": True, "project": "specific", "location": "us-central1"}


def test_anthropic_takes_a_bearer_token_when_no_key_is_set() -> None:
    token = resolve_endpoint("anthropic", {}, {"ANTHROPIC_AUTH_TOKEN": "test-token"})
    assert token.api_key == "test-token"
    assert token.options == {"credential": "auth_token"}
    assert "test-token" not in repr(token)
    both = {"ANTHROPIC_API_KEY": FAKE_KEY, "ANTHROPIC_AUTH_TOKEN": "test-token"}
    key = resolve_endpoint("anthropic", {}, both)
    assert (key.api_key, key.options) == (FAKE_KEY, {})
    # A key from settings is a key, whatever the environment holds.
    users = {"anthropic": UserProviderConfig(api_key=FAKE_KEY)}
    configured = resolve_endpoint("anthropic", users, {"ANTHROPIC_AUTH_TOKEN": "test-token"})
    assert (configured.api_key, configured.options) == (FAKE_KEY, {})
    assert credentialed_providers({"ANTHROPIC_AUTH_TOKEN": "test-token"}) == ["anthropic"]


def test_a_user_defined_provider() -> None:
    users = {
        "local": UserProviderConfig(
            api="openai-chat",
            base_url="http://127.0.0.1:11434/v1",
            api_key_env="LOCAL_KEY",
            headers={"x-team": "a"},
        )
    }
    endpoint = resolve_endpoint("local", users, {"LOCAL_KEY": FAKE_KEY})
    assert endpoint == Endpoint(
        provider_id="local",
        api="openai-chat",
        base_url="http://127.0.0.1:11434/v1",
        api_key=FAKE_KEY,
        headers={"x-team": "a"},
    )
    assert FAKE_KEY not in repr(endpoint)


def test_a_user_defined_provider_with_a_missing_key_names_its_variable() -> None:
    users = {"local": UserProviderConfig(base_url="http://127.0.0.1:1/v1", api_key_env="LOCAL_KEY")}
    with pytest.raises(MissingCredentials) as caught:
        resolve_endpoint("local", users, {"ANTHROPIC_API_KEY": FAKE_KEY})
    assert caught.value.variables == ("LOCAL_KEY",)
    assert "LOCAL_KEY" in str(caught.value)
    assert FAKE_KEY not in str(caught.value)


def test_a_user_defined_provider_without_key_settings_is_keyless() -> None:
    users = {"box": UserProviderConfig(base_url="http://127.0.0.1:1/v1")}
    endpoint = resolve_endpoint("box", users, {})
    assert endpoint.api == "openai-chat"  # the default for a provider of one's own
    assert endpoint.api_key


def test_user_settings_override_a_built_in() -> None:
    users = {
        "openai": UserProviderConfig(base_url="http://127.0.0.1:9/v1", api_key="inline-key-12345"),
        "anthropic": UserProviderConfig(api_key_env="WORK_ANTHROPIC_KEY"),
    }
    openai = resolve_endpoint("openai", users, {})
    assert (openai.api, openai.base_url, openai.api_key) == (
        "openai-responses",
        "http://127.0.0.1:9/v1",
        "inline-key-12345",
    )
    environ = {"ANTHROPIC_API_KEY": "ignored", "WORK_ANTHROPIC_KEY": FAKE_KEY}
    assert resolve_endpoint("anthropic", users, environ).api_key == FAKE_KEY
    with pytest.raises(MissingCredentials) as caught:
        resolve_endpoint("anthropic", users, {"ANTHROPIC_API_KEY": "ignored"})
    assert caught.value.variables == ("WORK_ANTHROPIC_KEY",)


def test_an_unknown_provider() -> None:
    with pytest.raises(UnknownProvider) as caught:
        resolve_endpoint("nope", {}, {})
    assert "providers.nope" in str(caught.value)
    assert not has_credentials("nope", {}, {})


@pytest.mark.parametrize(
    ("name", "parts"),
    [
        ("anthropic/claude-sonnet-4-5", ("anthropic", "claude-sonnet-4-5")),
        ("openrouter/qwen/qwen3-coder", ("openrouter", "qwen/qwen3-coder")),
        (
            "fireworks-ai/accounts/fireworks/models/kimi-k2",
            ("fireworks-ai", "accounts/fireworks/models/kimi-k2"),
        ),
        ("llama.cpp/model", ("llama.cpp", "model")),
        (" ollama/qwen3:8b ", ("ollama", "qwen3:8b")),
    ],
)
def test_split_model_name(name: str, parts: tuple[str, str]) -> None:
    assert split_model_name(name) == parts


@pytest.mark.parametrize("name", ["claude", "/claude", "anthropic/", ""])
def test_split_model_name_rejects(name: str) -> None:
    with pytest.raises(ValueError, match="provider/model"):
        split_model_name(name)


def test_credentialed_providers_in_preference_order() -> None:
    environ = {
        "GROQ_API_KEY": FAKE_KEY,
        "OPENROUTER_API_KEY": FAKE_KEY,
        "ANTHROPIC_API_KEY": FAKE_KEY,
        "GEMINI_API_KEY": FAKE_KEY,
    }
    assert credentialed_providers(environ, {}) == ["anthropic", "google", "openrouter", "groq"]


def test_credentialed_providers_counts_local_servers_only_when_configured() -> None:
    assert credentialed_providers({}, {}) == []
    users = {
        "ollama": UserProviderConfig(base_url="http://127.0.0.1:11434/v1"),
        "mine": UserProviderConfig(base_url="http://127.0.0.1:1/v1", api_key_env="MINE_KEY"),
        "other": UserProviderConfig(base_url="http://127.0.0.1:2/v1"),
    }
    assert credentialed_providers({"VLLM_API_KEY": "k"}, users) == ["ollama", "vllm", "other"]


async def test_create_model_scripted_with_a_script(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [{"text": "hello"}]}), encoding="utf-8")
    users = {"fake": UserProviderConfig(api="scripted", script=str(script))}
    model = create_model("fake/demo", user_providers=users, environ={})
    assert (model.provider_id, model.model_id) == ("fake", "demo")
    events = [event async for event in model.stream(ModelRequest(system="", messages=[]))]
    assert [type(event) for event in events] == [TextDelta, Finish]
    assert isinstance(events[0], TextDelta) and events[0].text == "hello"


async def test_create_model_scripted_without_a_script_has_no_turns() -> None:
    users = {"fake": UserProviderConfig(api="scripted")}
    model = create_model("fake/demo", user_providers=users, environ={})
    events = [event async for event in model.stream(ModelRequest(system="", messages=[]))]
    assert isinstance(events[0], ErrorEvent)
    assert events[-1] == Finish(reason="error")


def test_create_model_propagates_missing_credentials() -> None:
    with pytest.raises(MissingCredentials):
        create_model("anthropic/claude-sonnet-4-5", environ={})


@pytest.mark.parametrize(
    ("name", "module"),
    [
        ("anthropic/claude-sonnet-4-5", "providers.wire.anthropic_messages"),
        ("groq/openai/gpt-oss-120b", "providers.wire.openai_chat"),
        ("google/gemini-2.5-pro", "providers.wire.gemini"),
        ("openai/gpt-5", "providers.wire.openai_responses"),
    ],
)
def test_create_model_picks_the_wire_module(name: str, module: str) -> None:
    pytest.importorskip(module)
    model = create_model(name, environ=full_environ())
    provider_id, model_id = split_model_name(name)
    assert (model.provider_id, model.model_id) == (provider_id, model_id)
    assert type(model).__module__ == module


def test_create_model_takes_the_echo_field_from_the_catalog() -> None:
    wire = pytest.importorskip("providers.wire.openai_chat")
    catalog = ModelCatalog.load()
    model = create_model(
        "openrouter/moonshotai/kimi-k2-thinking", environ=full_environ(), catalog=catalog
    )
    info = catalog.get("openrouter", "moonshotai/kimi-k2-thinking")
    assert info is not None and info.interleaved_field is not None
    endpoint = getattr(model, "_endpoint", None)
    if not isinstance(endpoint, Endpoint):
        pytest.skip(f"{wire.__name__} does not keep its endpoint as _endpoint")
    assert endpoint.options["reasoning_field"] == info.interleaved_field


def test_resolving_and_creating_imports_no_vendor_sdk() -> None:
    code = (
        "import sys\n"
        "from providers.registry import create_model, resolve_endpoint\n"
        "env = {'ANTHROPIC_API_KEY': 'k', 'OPENAI_API_KEY': 'k', 'GOOGLE_API_KEY': 'k',"
        " 'GROQ_API_KEY': 'k'}\n"
        "for name in ('anthropic/claude-sonnet-4-5', 'openai/gpt-5', 'google/gemini-2.5-pro',"
        " 'groq/llama'):\n"
        "    try:\n"
        "        create_model(name, environ=env)\n"
        "    except ImportError:\n"
        "        pass\n"
        "print(sorted(m for m in ('openai', 'anthropic', 'google.genai') if m in sys.modules))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=30
    )
    assert result.stdout.strip() == "[]"
