"""Pieces the two OpenAI wire adapters share. Nothing here imports the `openai` SDK: only the
adapter modules may (import-linter), and only lazily."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast
from urllib.parse import urlparse

from providers.errors import classify, parse_retry_after
from providers.types import ImagePart, ProviderError, ToolChoice, ToolChoiceNamed

JsonDict = dict[str, Any]
"""A vendor JSON object, as the SDK hands it over (`to_dict()`) or as we send it."""


class HistoryError(ValueError):
    """The history holds something this wire cannot express (a tool result in a user message)."""


class StreamEndedEarly(Exception):
    """The HTTP stream ended cleanly but without the vendor's terminal event: the response is
    truncated (a proxy cut it, the server restarted), so it is reported as a network failure."""


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


_EMPTY: Mapping[str, Any] = {}


def as_object(value: object) -> Mapping[str, Any]:
    """`value` if it is a JSON object, else an empty one: vendor JSON is read defensively."""
    return cast("Mapping[str, Any]", value) if isinstance(value, Mapping) else _EMPTY


def as_list(value: object) -> list[Any]:
    """`value` if it is a JSON array, else an empty one."""
    return cast("list[Any]", value) if isinstance(value, list) else []


def as_int(value: object) -> int:
    """A token count from vendor JSON; absent, null or malformed counts are 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


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
    retry_after: str | None = None,
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
        retry_after=parse_retry_after(retry_after),
    )


def network_error(provider: str, message: str) -> ProviderError:
    return classify(provider=provider, status=None, message=message, network=True)


def retry_after_header(headers: Mapping[str, str]) -> str | None:
    """`retry-after`, or OpenAI's millisecond `retry-after-ms` converted to seconds."""
    value = headers.get("retry-after")
    if value:
        return value
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return str(float(millis) / 1000)
        except ValueError:
            return None
    return None
