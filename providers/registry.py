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
from typing import Final, Protocol, assert_never

from providers.builtin_providers import BUILTIN_PROVIDERS, ProviderSpec
from providers.model import Endpoint, Model, StreamTimeouts, WireApi

_NO_KEY: Final = "earshot-no-key"
"""Sent to local servers that ignore the key: the OpenAI SDK refuses to start without one."""

CREDENTIAL_OPTION: Final = "credential"
"""`Endpoint.options` key saying what `Endpoint.api_key` holds: absent for an API key,
`"auth_token"` for a bearer token (the Anthropic adapter then passes it as the SDK's
`auth_token`). The secret itself stays in `api_key`, which no repr prints."""


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


_BY_ID: Final = {spec.id: spec for spec in BUILTIN_PROVIDERS}

_VERTEX_PROJECT_ENV: Final = ("GOOGLE_VERTEX_PROJECT", "GOOGLE_CLOUD_PROJECT")
_VERTEX_LOCATION_ENV: Final = ("GOOGLE_VERTEX_LOCATION", "GOOGLE_CLOUD_LOCATION")

PREFERENCE_ORDER: Final = tuple(spec.id for spec in BUILTIN_PROVIDERS)
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
    return list(BUILTIN_PROVIDERS)


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
    for spec in BUILTIN_PROVIDERS:
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


class _ModelFacts(Protocol):
    @property
    def interleaved_field(self) -> str | None: ...


class ModelFacts(Protocol):
    """What `create_model` asks of a catalog (`providers.catalog.ModelCatalog`, which sits above
    this module: it knows the providers from here)."""

    def get(self, provider: str, model: str) -> _ModelFacts | None: ...


def create_model(
    name: str,
    *,
    user_providers: Mapping[str, UserProviderConfig] | None = None,
    environ: Mapping[str, str] | None = None,
    catalog: ModelFacts | None = None,
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
