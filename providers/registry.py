"""Which providers earshot knows, how to reach each one, and how a `provider/model` name becomes a
`Model`.

Provider ids are models.dev's (`anthropic`, `fireworks-ai`, ...), so the catalog and the registry
share one key. A user's settings (`providers.<id>`) can override any field of a built-in provider
or define a new one; both arrive here as plain `UserProviderConfig` values, so this module needs no
pydantic. Wire modules are imported only when a model is created, so resolving a name stays cheap
and never loads a vendor SDK.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Final, assert_never

from providers.model import Endpoint, Model, StreamTimeouts, WireApi

if TYPE_CHECKING:
    from providers.catalog import ModelCatalog

_NO_KEY: Final = "earshot-no-key"
"""Sent to local servers that ignore the key: the OpenAI SDK refuses to start without one."""

CREDENTIAL_OPTION: Final = "credential"
"""`Endpoint.options` key saying what `Endpoint.api_key` holds: absent for an API key,
`"auth_token"` for a bearer token (the Anthropic adapter then passes it as the SDK's
`auth_token`). The secret itself stays in `api_key`, which no repr prints."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderSpec:
    """A built-in provider: where it lives and how it authenticates."""

    id: str
    """The models.dev provider id."""
    name: str
    api: WireApi
    base_url: str | None
    """None lets the vendor SDK use its default. `${VAR}` parts are filled from the environment."""
    env: tuple[str, ...] = ()
    """API-key variables, in order of preference: the first one set wins."""
    token_env: tuple[str, ...] = ()
    """Bearer-token variables (`ANTHROPIC_AUTH_TOKEN`), used only when no `env` key is set."""
    key_required: bool = True
    """False for local servers, which accept any key (a placeholder is sent)."""
    reasoning_field: str | None = None
    """For openai-chat hosts: the assistant-message field this host wants reasoning echoed back in
    on tool-call turns (`reasoning_content`). None: echo only where the catalog's `interleaved`
    says so for the model, because strict hosts (Groq, Cerebras) reject unknown fields."""
    base_url_env: tuple[str, ...] = ()
    """Variables that override `base_url` (e.g. `ANTHROPIC_BASE_URL`), first set wins."""
    required_env: tuple[str, ...] = ()
    """Non-key variables the provider cannot work without (an Azure resource, a GCP project)."""
    options: Mapping[str, object] = field(default_factory=lambda: {})
    """Extra adapter options copied onto the `Endpoint`."""
    local: bool = False
    """A server on this machine (ollama, vLLM...): no key, and maybe not running."""


@dataclass(frozen=True, slots=True, kw_only=True)
class UserProviderConfig:
    """A provider entry from settings (`providers.<id>`): every field overrides the built-in one,
    or, for an id earshot does not know, defines the provider (openai-chat unless `api` says)."""

    api: WireApi | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    api_key: str | None = field(default=None, repr=False)
    headers: Mapping[str, str] = field(default_factory=lambda: {}, repr=False)
    script: str | None = None
    """For `api: scripted`: the JSON script file the scripted model plays."""
    first_event_timeout: float | None = None
    idle_timeout: float | None = None
    """`streamTimeouts.firstEvent` and `.idle` for this provider (None: the general ones)."""


class MissingCredentials(Exception):
    """A provider needs a key (or another variable) that is not set. Names the variables only."""

    def __init__(self, provider_id: str, variables: tuple[str, ...]) -> None:
        self.provider_id = provider_id
        self.variables = variables
        if not variables:
            hint = f"set providers.{provider_id}.apiKeyEnv or apiKey in settings"
        elif len(variables) == 1:
            hint = f"set {variables[0]}"
        else:
            hint = f"set one of {', '.join(variables)}"
        super().__init__(f"provider '{provider_id}' has no credentials: {hint}")


class UnknownProvider(LookupError):
    """A model name names a provider that is neither built in nor defined in settings."""

    def __init__(self, provider_id: str) -> None:
        self.provider_id = provider_id
        super().__init__(
            f"unknown provider '{provider_id}': use one of {', '.join(PREFERENCE_ORDER[:6])}, ... "
            f"or define it under providers.{provider_id} in settings"
        )


def _spec(
    id: str,
    name: str,
    api: WireApi,
    base_url: str | None,
    env: tuple[str, ...],
    *,
    token_env: tuple[str, ...] = (),
    key_required: bool = True,
    reasoning_field: str | None = None,
    base_url_env: tuple[str, ...] = (),
    options: Mapping[str, object] | None = None,
    local: bool = False,
) -> ProviderSpec:
    required = tuple(re.findall(r"\$\{([A-Z0-9_]+)\}", base_url or ""))
    return ProviderSpec(
        id=id,
        name=name,
        api=api,
        base_url=base_url,
        env=env,
        token_env=token_env,
        key_required=key_required,
        reasoning_field=reasoning_field,
        base_url_env=base_url_env,
        required_env=required,
        options=options or {},
        local=local,
    )


# Base URLs and variables: providers.md section 5 and models.dev api.json (`api`, `env`). The
# OpenAI provider itself speaks Responses (reasoning replay needs it); compatible hosts speak chat.
_SPECS: Final = (
    _spec(
        "anthropic",
        "Anthropic",
        "anthropic",
        None,
        ("ANTHROPIC_API_KEY",),
        # The SDK's own order: a key wins over a token when both are set.
        token_env=("ANTHROPIC_AUTH_TOKEN",),
        base_url_env=("ANTHROPIC_BASE_URL",),
    ),
    _spec(
        "openai",
        "OpenAI",
        "openai-responses",
        "https://api.openai.com/v1",
        ("OPENAI_API_KEY",),
        base_url_env=("OPENAI_BASE_URL",),
    ),
    _spec(
        "google",
        "Google (Gemini API)",
        "gemini",
        None,
        # google-genai itself prefers GOOGLE_API_KEY when both are set.
        ("GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_GENERATIVE_AI_API_KEY"),
    ),
    _spec(
        "openrouter",
        "OpenRouter",
        "openai-chat",
        "https://openrouter.ai/api/v1",
        ("OPENROUTER_API_KEY",),
    ),
    _spec(
        "groq",
        "Groq",
        "openai-chat",
        "https://api.groq.com/openai/v1",
        ("GROQ_API_KEY",),
    ),
    _spec(
        "deepseek",
        "DeepSeek",
        "openai-chat",
        "https://api.deepseek.com",
        ("DEEPSEEK_API_KEY",),
        reasoning_field="reasoning_content",
    ),
    _spec(
        "xai",
        "xAI",
        "openai-chat",
        "https://api.x.ai/v1",
        ("XAI_API_KEY",),
    ),
    _spec("mistral", "Mistral", "openai-chat", "https://api.mistral.ai/v1", ("MISTRAL_API_KEY",)),
    _spec(
        "togetherai",
        "Together AI",
        "openai-chat",
        "https://api.together.xyz/v1",
        ("TOGETHER_API_KEY",),
    ),
    _spec(
        "fireworks-ai",
        "Fireworks AI",
        "openai-chat",
        "https://api.fireworks.ai/inference/v1",
        ("FIREWORKS_API_KEY",),
    ),
    _spec(
        "cerebras",
        "Cerebras",
        "openai-chat",
        "https://api.cerebras.ai/v1",
        ("CEREBRAS_API_KEY",),
    ),
    _spec(
        "moonshotai",
        "Moonshot AI (Kimi)",
        "openai-chat",
        "https://api.moonshot.ai/v1",
        ("MOONSHOT_API_KEY",),
        reasoning_field="reasoning_content",
    ),
    _spec(
        "zai",
        "Z.AI",
        "openai-chat",
        "https://api.z.ai/api/paas/v4",
        ("ZHIPU_API_KEY",),
        reasoning_field="reasoning_content",
    ),
    _spec(
        "zhipuai",
        "Zhipu AI",
        "openai-chat",
        "https://open.bigmodel.cn/api/paas/v4",
        ("ZHIPU_API_KEY",),
        reasoning_field="reasoning_content",
    ),
    _spec(
        "minimax",
        "MiniMax",
        "anthropic",
        # models.dev lists .../anthropic/v1; the Anthropic SDK appends /v1/messages itself.
        "https://api.minimax.io/anthropic",
        ("MINIMAX_API_KEY",),
    ),
    _spec(
        "alibaba",
        "Alibaba (DashScope)",
        "openai-chat",
        "https://dashscope-intl.aliyuncs.com/compatible-mode/v1",
        ("DASHSCOPE_API_KEY",),
    ),
    _spec(
        "deepinfra",
        "Deep Infra",
        "openai-chat",
        "https://api.deepinfra.com/v1/openai",
        ("DEEPINFRA_API_KEY",),
    ),
    _spec(
        "nebius",
        "Nebius Token Factory",
        "openai-chat",
        "https://api.tokenfactory.nebius.com/v1",
        ("NEBIUS_API_KEY",),
    ),
    _spec(
        "huggingface",
        "Hugging Face",
        "openai-chat",
        "https://router.huggingface.co/v1",
        ("HF_TOKEN",),
    ),
    _spec(
        "github-models",
        "GitHub Models",
        "openai-chat",
        "https://models.github.ai/inference",
        ("GITHUB_TOKEN",),
    ),
    _spec(
        "requesty",
        "Requesty",
        "openai-chat",
        "https://router.requesty.ai/v1",
        ("REQUESTY_API_KEY",),
    ),
    _spec(
        "ollama-cloud",
        "Ollama Cloud",
        "openai-chat",
        "https://ollama.com/v1",
        ("OLLAMA_API_KEY",),
    ),
    _spec(
        "azure",
        "Azure OpenAI",
        "openai-responses",
        "https://${AZURE_RESOURCE_NAME}.openai.azure.com/openai/v1",
        ("AZURE_API_KEY",),
    ),
    _spec(
        "google-vertex",
        "Google Vertex AI",
        "gemini",
        None,
        # Vertex authenticates with Application Default Credentials for a project, or with an
        # express-mode API key (the variable @ai-sdk/google-vertex reads). Either one will do.
        ("GOOGLE_VERTEX_API_KEY",),
        key_required=False,
        options={"vertexai": True},
    ),
    _spec(
        "ollama",
        "Ollama (local)",
        "openai-chat",
        "http://localhost:11434/v1",
        ("OLLAMA_API_KEY",),
        key_required=False,
        local=True,
    ),
    _spec(
        "lmstudio",
        "LM Studio (local)",
        "openai-chat",
        "http://127.0.0.1:1234/v1",
        ("LMSTUDIO_API_KEY",),
        key_required=False,
        local=True,
    ),
    _spec(
        "vllm",
        "vLLM (local)",
        "openai-chat",
        "http://localhost:8000/v1",
        ("VLLM_API_KEY",),
        key_required=False,
        local=True,
    ),
    _spec(
        "llama.cpp",
        "llama.cpp server (local)",
        "openai-chat",
        "http://127.0.0.1:8080/v1",
        ("LLAMA_API_KEY",),
        key_required=False,
        local=True,
    ),
)

_BY_ID: Final = {spec.id: spec for spec in _SPECS}

_VERTEX_PROJECT_ENV: Final = ("GOOGLE_VERTEX_PROJECT", "GOOGLE_CLOUD_PROJECT")
_VERTEX_LOCATION_ENV: Final = ("GOOGLE_VERTEX_LOCATION", "GOOGLE_CLOUD_LOCATION")

PREFERENCE_ORDER: Final = tuple(spec.id for spec in _SPECS)
"""Which credentialed provider to default to: the first four first, then the rest as listed."""

_WIRE_MODULES: Final[Mapping[WireApi, str]] = {
    "openai-chat": "providers.wire.openai_chat",
    "openai-responses": "providers.wire.openai_responses",
    "anthropic": "providers.wire.anthropic_messages",
    "gemini": "providers.wire.gemini",
    "scripted": "providers.wire.scripted",
}


def first_call_warm_up(
    name: str,
    *,
    user_providers: Mapping[str, UserProviderConfig] | None = None,
    environ: Mapping[str, str] | None = None,
) -> Callable[[], None]:
    """A function loading what the first call to `provider/model` loads: its wire module, its
    vendor SDK and the parts of it a call uses (each SDK adapter's `warm_up`). A front end runs
    it in a worker thread once a session is open, so the user's first prompt does not wait for
    a few hundred milliseconds of imports. It touches nothing shared and never raises (a failure
    shows at the first call); for a name no provider resolves, it does nothing."""
    try:
        provider_id, _ = split_model_name(name)
        api = resolve_endpoint(provider_id, user_providers, environ).api
    except (ValueError, UnknownProvider, MissingCredentials):
        api = "scripted"
    module_name = _WIRE_MODULES[api]

    def warm_up() -> None:
        if api == "scripted":
            return
        with contextlib.suppress(Exception):
            importlib.import_module(module_name).warm_up()

    return warm_up


def provider_spec(provider_id: str) -> ProviderSpec | None:
    """The built-in provider with this models.dev id, if there is one."""
    return _BY_ID.get(provider_id)


def all_providers() -> list[ProviderSpec]:
    """Every built-in provider, in preference order."""
    return list(_SPECS)


def split_model_name(name: str) -> tuple[str, str]:
    """Split `provider/model` at the first slash; the model id may contain more slashes.

    Raises:
        ValueError: the name has no provider or no model part.
    """
    provider, slash, model = name.strip().partition("/")
    if not slash or not provider or not model:
        raise ValueError(
            f"model name '{name}' must look like 'provider/model', e.g. anthropic/claude-sonnet-4-5"
        )
    return provider, model


def _first_set(environ: Mapping[str, str], names: tuple[str, ...]) -> str | None:
    for name in names:
        value = environ.get(name, "").strip()
        if value:
            return value
    return None


def resolve_endpoint(
    provider_id: str,
    user_providers: Mapping[str, UserProviderConfig] | None = None,
    environ: Mapping[str, str] | None = None,
) -> Endpoint:
    """Work out where and how to call `provider_id`: the built-in spec overlaid with the user's
    `providers.<id>` settings, keys read from `environ`.

    Raises:
        UnknownProvider: neither built in nor defined in settings.
        MissingCredentials: a needed key or variable is not set (the message names it).
    """
    environ = os.environ if environ is None else environ
    user = (user_providers or {}).get(provider_id)
    spec = _BY_ID.get(provider_id)
    if spec is None and user is None:
        raise UnknownProvider(provider_id)

    api: WireApi = (user.api if user else None) or (spec.api if spec else "openai-chat")
    base_url = _resolve_base_url(provider_id, spec, user, environ)
    api_key, is_token = _resolve_key(provider_id, spec, user, environ, api)

    headers: dict[str, str] = dict(user.headers) if user else {}
    options: dict[str, object] = dict(spec.options) if spec else {}
    if is_token:
        options[CREDENTIAL_OPTION] = "auth_token"
    if spec is not None and spec.reasoning_field is not None and api == "openai-chat":
        options["reasoning_field"] = spec.reasoning_field
    if user is not None and user.script is not None:
        options["script"] = user.script
    if options.get("vertexai"):
        options["project"] = _first_set(environ, _VERTEX_PROJECT_ENV)
        options["location"] = _first_set(environ, _VERTEX_LOCATION_ENV) or "global"
        if options["project"] is None and api_key is None:
            # Application Default Credentials need a project; an express-mode key does not.
            raise MissingCredentials(
                provider_id, (*_VERTEX_PROJECT_ENV, *(spec.env if spec else ()))
            )
    return Endpoint(
        provider_id=provider_id,
        api=api,
        base_url=base_url.rstrip("/") if base_url else None,
        api_key=api_key,
        headers=headers,
        options=options,
    )


def _resolve_base_url(
    provider_id: str,
    spec: ProviderSpec | None,
    user: UserProviderConfig | None,
    environ: Mapping[str, str],
) -> str | None:
    if user is not None and user.base_url:
        return user.base_url
    if spec is None:
        return None
    override = _first_set(environ, spec.base_url_env)
    if override is not None:
        return override
    if spec.base_url is None:
        return None
    missing = tuple(name for name in spec.required_env if _first_set(environ, (name,)) is None)
    if missing:
        raise MissingCredentials(provider_id, missing)
    return re.sub(
        r"\$\{([A-Z0-9_]+)\}", lambda match: environ[match.group(1)].strip(), spec.base_url
    )


def _resolve_key(
    provider_id: str,
    spec: ProviderSpec | None,
    user: UserProviderConfig | None,
    environ: Mapping[str, str],
    api: WireApi,
) -> tuple[str | None, bool]:
    """The credential and whether it is a bearer token rather than an API key."""
    if user is not None and user.api_key:
        return user.api_key, False
    if user is not None and user.api_key_env:
        key = _first_set(environ, (user.api_key_env,))
        if key is None:
            raise MissingCredentials(provider_id, (user.api_key_env,))
        return key, False
    if spec is not None:
        key = _first_set(environ, spec.env)
        if key is not None:
            return key, False
        token = _first_set(environ, spec.token_env)
        if token is not None:
            return token, True
        if spec.key_required:
            raise MissingCredentials(provider_id, (*spec.env, *spec.token_env))
        return (None if api == "gemini" else _NO_KEY), False
    # A user-defined provider with no key settings is a local server.
    return (None if api in ("gemini", "scripted") else _NO_KEY), False


def has_credentials(
    provider_id: str,
    user_providers: Mapping[str, UserProviderConfig] | None = None,
    environ: Mapping[str, str] | None = None,
) -> bool:
    """Whether `resolve_endpoint` would succeed for this provider."""
    try:
        resolve_endpoint(provider_id, user_providers, environ)
    except (MissingCredentials, UnknownProvider):
        return False
    return True


def credentialed_providers(
    environ: Mapping[str, str] | None = None,
    user_providers: Mapping[str, UserProviderConfig] | None = None,
) -> list[str]:
    """Providers a default model could come from, best first: built-ins whose key is set, then the
    user's own providers. Keyless local servers count only when settings configure them, since
    nothing says one is actually running."""
    user_providers = user_providers or {}
    environ = os.environ if environ is None else environ
    chosen: list[str] = []
    for spec in _SPECS:
        unannounced = spec.id not in user_providers and _first_set(environ, spec.env) is None
        if spec.local and unannounced:
            continue
        if has_credentials(spec.id, user_providers, environ):
            chosen.append(spec.id)
    chosen.extend(
        provider_id
        for provider_id in user_providers
        if provider_id not in _BY_ID and has_credentials(provider_id, user_providers, environ)
    )
    return chosen


def create_model(
    name: str,
    *,
    user_providers: Mapping[str, UserProviderConfig] | None = None,
    environ: Mapping[str, str] | None = None,
    catalog: ModelCatalog | None = None,
    http_client: object | None = None,
    stream_timeouts: StreamTimeouts | None = None,
) -> Model:
    """Build the `Model` for a `provider/model` name. Imports only the wire module it needs.

    The catalog, when given, supplies per-model facts the adapter needs (e.g. which field a host
    wants reasoning echoed back in). `stream_timeouts` are the general ones (the defaults when
    None); the provider's own settings override them key by key.

    Raises:
        ValueError: the name is not `provider/model`.
        UnknownProvider: the provider is neither built in nor defined in settings.
        MissingCredentials: its key is not set.
    """
    provider_id, model_id = split_model_name(name)
    endpoint = resolve_endpoint(provider_id, user_providers, environ)
    user = (user_providers or {}).get(provider_id)
    timeouts = (stream_timeouts or StreamTimeouts()).merged(
        first_event=user.first_event_timeout if user else None,
        idle=user.idle_timeout if user else None,
    )
    endpoint = replace(endpoint, stream_timeouts=timeouts)
    if catalog is not None and endpoint.api == "openai-chat":
        info = catalog.get(provider_id, model_id)
        if info is not None and info.interleaved_field is not None:
            endpoint = _with_option(endpoint, "reasoning_field", info.interleaved_field)
    api = endpoint.api
    match api:
        case "scripted":
            return _scripted_model(model_id, endpoint)
        case "openai-chat" | "openai-responses" | "anthropic" | "gemini":
            module = importlib.import_module(_WIRE_MODULES[api])
            model: Model = module.create_model(model_id, endpoint, http_client=http_client)
            return model
        case _:
            assert_never(api)


def _with_option(endpoint: Endpoint, key: str, value: object) -> Endpoint:
    return replace(endpoint, options={**endpoint.options, key: value})


def _scripted_model(model_id: str, endpoint: Endpoint) -> Model:
    from providers.wire.scripted import ScriptedModel, turns_from_json

    script = endpoint.options.get("script")
    if not isinstance(script, str):
        return ScriptedModel((), model_id=model_id, provider_id=endpoint.provider_id)
    # Like ScriptedModel.from_file, but keeping the provider id the user chose.
    data = json.loads(Path(script).expanduser().read_text(encoding="utf-8"))
    return ScriptedModel(turns_from_json(data), model_id=model_id, provider_id=endpoint.provider_id)
