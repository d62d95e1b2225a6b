"""Asking an OpenAI-compatible server which models it serves, and how long their context is.

Local and self-hosted servers are not in any catalog: the picker can only offer their models by
asking them (`GET {baseUrl}/models`, the OpenAI list every such server implements), and the
context meter needs a window only the server knows. What each server says:

- vLLM: `max_model_len` on each `/v1/models` entry (the limit it was started with);
- OpenRouter: `context_length` on each `/api/v1/models` entry; Groq and some others
  `context_window`;
- llama.cpp: `GET /props` `default_generation_settings.n_ctx` (the context it runs with), else
  `meta.n_ctx_train` on the `/v1/models` entry (what the model was trained with);
- LM Studio: `GET /api/v0/models/{id}`, `loaded_context_length` when loaded, else
  `max_context_length`;
- Ollama: `POST /api/show` `{"model": id}`: a `num_ctx` parameter set for the model (what it runs
  with), else `model_info["<arch>.context_length"]`. Without `num_ctx` Ollama runs with its own
  default (`OLLAMA_CONTEXT_LENGTH`), which no endpoint reports, so the model's length is what is
  known; set `models.<id>.contextWindow` in settings when you run it shorter.

Blocking stdlib HTTP (`urllib`): the callers run it in a worker thread, in the background, never
on the way to an answer. Errors name the URL, never the key.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from typing import Any, Literal, cast

from providers.model import ServerModel

ServerKind = Literal["ollama", "lmstudio", "vllm", "llama.cpp", "openrouter", "openai-compatible"]
_LOCAL_PORTS: Mapping[int, ServerKind] = {11434: "ollama", 1234: "lmstudio"}
"""Default ports that identify a server when the provider id does not."""
_WINDOW_KEYS = ("max_model_len", "context_length", "context_window", "max_context_length")
_NO_KEY = "earshot-no-key"
"""`providers.registry`'s placeholder for keyless local servers: never sent as a credential."""


class ServerModelsError(Exception):
    """The server could not be asked (unreachable, an HTTP error, not the expected JSON)."""


def server_kind(provider_id: str, base_url: str) -> ServerKind:
    """Which server a provider is, from its id (the built-in ones) or its URL's default port."""
    match provider_id:
        case "ollama" | "ollama-cloud":
            return "ollama"
        case "lmstudio":
            return "lmstudio"
        case "vllm":
            return "vllm"
        case "llama.cpp":
            return "llama.cpp"
        case "openrouter":
            return "openrouter"
        case _:
            pass
    port = urllib.parse.urlsplit(base_url).port
    return _LOCAL_PORTS.get(port, "openai-compatible") if port is not None else "openai-compatible"


def list_models(
    base_url: str,
    *,
    api_key: str | None = None,
    headers: Mapping[str, str] | None = None,
    timeout: float = 5.0,
) -> list[ServerModel]:
    """The server's models (`GET {base_url}/models`), with any window the list carries.

    Raises:
        ServerModelsError: the server could not be asked or answered something else.
    """
    url = base_url.rstrip("/") + "/models"
    body = _request(url, api_key=api_key, headers=headers, timeout=timeout)
    entries = cast("dict[str, Any]", body).get("data") if isinstance(body, dict) else None
    if not isinstance(entries, list):
        raise ServerModelsError(f"{url}: not an OpenAI model list (no `data` array)")
    models: list[ServerModel] = []
    for raw in cast("list[object]", entries):
        if not isinstance(raw, dict):
            continue
        entry = cast("dict[str, Any]", raw)
        model_id = entry.get("id")
        if isinstance(model_id, str) and model_id:
            models.append(ServerModel(id=model_id, context_window=_window_of(entry)))
    return models


def context_window(
    kind: ServerKind,
    base_url: str,
    model_id: str,
    *,
    api_key: str | None = None,
    headers: Mapping[str, str] | None = None,
    timeout: float = 5.0,
) -> int | None:
    """The window a server runs `model_id` with, from its own API (see the module docstring);
    None when this kind of server has no such API or does not say.

    Raises:
        ServerModelsError: the server could not be asked.
    """
    root = _root(base_url)
    match kind:
        case "ollama":
            body = _request(
                f"{root}/api/show",
                api_key=api_key,
                headers=headers,
                timeout=timeout,
                payload={"model": model_id},
            )
            return _ollama_window(body)
        case "lmstudio":
            quoted = urllib.parse.quote(model_id, safe="")
            body = _request(
                f"{root}/api/v0/models/{quoted}", api_key=api_key, headers=headers, timeout=timeout
            )
            if not isinstance(body, dict):
                return None
            entry = cast("dict[str, Any]", body)
            return _positive(entry.get("loaded_context_length")) or _positive(
                entry.get("max_context_length")
            )
        case "llama.cpp":
            body = _request(f"{root}/props", api_key=api_key, headers=headers, timeout=timeout)
            if not isinstance(body, dict):
                return None
            props = cast("dict[str, Any]", body)
            settings = props.get("default_generation_settings")
            if isinstance(settings, dict):
                found = _positive(cast("dict[str, Any]", settings).get("n_ctx"))
                if found is not None:
                    return found
            return _positive(props.get("n_ctx"))
        case "vllm" | "openrouter" | "openai-compatible":
            return None


def _root(base_url: str) -> str:
    """The server's root: native APIs live beside the OpenAI-compatible `/v1`."""
    trimmed = base_url.rstrip("/")
    return trimmed[: -len("/v1")] if trimmed.endswith("/v1") else trimmed


def _window_of(entry: Mapping[str, Any]) -> int | None:
    for key in _WINDOW_KEYS:
        found = _positive(entry.get(key))
        if found is not None:
            return found
    meta = entry.get("meta")
    if isinstance(meta, dict):
        return _positive(cast("dict[str, Any]", meta).get("n_ctx_train"))
    return None


def _ollama_window(body: object) -> int | None:
    if not isinstance(body, dict):
        return None
    show = cast("dict[str, Any]", body)
    parameters = show.get("parameters")
    if isinstance(parameters, str):
        for line in parameters.splitlines():
            name, _, value = line.strip().partition(" ")
            if name == "num_ctx":
                found = _positive(_int(value.strip()))
                if found is not None:
                    return found
    info = show.get("model_info")
    if isinstance(info, dict):
        for key, value in cast("dict[str, Any]", info).items():
            if key.endswith(".context_length"):
                found = _positive(value)
                if found is not None:
                    return found
    return None


def _int(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None


def _positive(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return None


def _request(
    url: str,
    *,
    api_key: str | None,
    headers: Mapping[str, str] | None,
    timeout: float,
    payload: Mapping[str, Any] | None = None,
) -> object:
    request_headers = {"accept": "application/json", **(headers or {})}
    if api_key and api_key != _NO_KEY:
        request_headers["authorization"] = f"Bearer {api_key}"
    data = None
    if payload is not None:
        data = json.dumps(payload).encode("utf-8")
        request_headers["content-type"] = "application/json"
    request = urllib.request.Request(url, data=data, headers=request_headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            raw = response.read()
    except urllib.error.HTTPError as error:
        error.close()
        raise ServerModelsError(f"{url}: HTTP {error.code}") from None
    except (urllib.error.URLError, TimeoutError, ConnectionError, OSError) as error:
        reason = getattr(error, "reason", error)
        raise ServerModelsError(f"{url}: unreachable ({reason})") from None
    try:
        return json.loads(raw)
    except ValueError:
        raise ServerModelsError(f"{url}: not JSON") from None
