"""Pieces the two OpenAI wire adapters share that need no SDK: error-body classification and
small request helpers. Nothing here imports `openai` (import-linter: only the adapter modules
may); the client and the SDK exception mapping live in `openai_chat`, which Responses reuses."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlparse

from providers.errors import classify
from providers.types import ImagePart, ProviderError, ToolChoice, ToolChoiceNamed
from providers.wire.vendor_json import JsonDict, as_object


class InStreamError(Exception):
    """A failure the vendor reported inside an HTTP 200 stream as an event the SDK did not raise
    for itself (Responses `response.failed`, or an `error` event without a nested `error` key)."""

    def __init__(self, body: Mapping[str, Any]) -> None:
        super().__init__(str(body.get("message") or "the response failed"))
        self.body = dict(body)


def is_openai_host(base_url: str | None) -> bool:
    """Whether the endpoint is OpenAI's own API (None means the SDK default, which is)."""
    if base_url is None:
        return True
    return (urlparse(base_url).hostname or "") == "api.openai.com"


def image_url(image: ImagePart) -> str:
    """A `data:` URL for inline bytes, or the https reference itself."""
    if image.url is not None:
        return image.url
    return f"data:{image.media_type};base64,{image.data}"


def chat_tool_choice(choice: ToolChoice) -> str | JsonDict:
    """The Chat Completions `tool_choice` value."""
    if isinstance(choice, ToolChoiceNamed):
        return {"type": "function", "function": {"name": choice.name}}
    return choice


def error_from_body(
    provider: str,
    *,
    body: object,
    fallback_message: str,
    status: int | None,
    retry_after: float | None = None,
    secrets: tuple[str, ...] = (),
) -> ProviderError:
    """Classify an OpenAI-shaped error object (`{"message", "type", "code", "param"}`).

    Only the vendor's own message, code and type reach `classify`, never request data. An
    OpenRouter upstream failure hides the useful text in `metadata.raw`, so it is appended.
    """
    message = fallback_message
    code: str | None = None
    error = as_object(body)
    if error:
        if isinstance(error.get("message"), str) and error["message"]:
            message = error["message"]
        metadata = as_object(error.get("metadata"))
        raw, upstream = metadata.get("raw"), metadata.get("provider_name")
        if isinstance(raw, str) and raw:
            message = f"{message} ({upstream}: {raw})" if upstream else f"{message} ({raw})"
        raw_code = error.get("code")
        if isinstance(raw_code, str) and raw_code and not raw_code.isdigit():
            code = raw_code
        elif isinstance(error.get("type"), str) and error["type"]:
            code = error["type"]
        # Hosts that report errors in-band put the HTTP status they meant in the body.
        if status is None:
            embedded = error.get("status_code", raw_code)
            if isinstance(embedded, int) and not isinstance(embedded, bool):
                status = embedded
            elif isinstance(embedded, str) and embedded.isdigit():
                status = int(embedded)
    return classify(
        provider=provider,
        status=status,
        message=message,
        code=code,
        retry_after=retry_after,
        secrets=secrets,
    )


def flat_error_body(response: object) -> Mapping[str, Any] | None:
    """`{"message": ...}` from an error envelope that carries its text at the top level
    (`{"error": "Too Many Requests", "message": "..."}`), read from the SDK's (already read)
    response; None when there is no such text."""
    try:
        envelope = json.loads(getattr(response, "text", "") or "")
    except ValueError:
        return None
    message = as_object(envelope).get("message")
    return {"message": message} if isinstance(message, str) and message else None


def network_error(provider: str, message: str, secrets: tuple[str, ...] = ()) -> ProviderError:
    return classify(provider=provider, status=None, message=message, network=True, secrets=secrets)
