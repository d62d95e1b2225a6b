"""Reading and writing vendor JSON, shared by the wire adapters: defensive readers of what a
vendor sent, the forms a tool call's arguments go back in, and the retry-after a response asks
for."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, cast

from providers.errors import parse_retry_after
from providers.types import ToolCallPart

JsonDict = dict[str, Any]
"""A vendor JSON object, as an SDK hands it over (`to_dict()`) or as we send it."""


class HistoryError(ValueError):
    """The history holds something this wire cannot express (a tool result in a user message)."""


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


def arguments_text(call: ToolCallPart) -> str:
    """A call's arguments as the JSON text the model produced, for wires that send text back.
    Arguments that did not parse go back exactly as the model wrote them."""
    if call.invalid_arguments is not None:
        return call.invalid_arguments
    return json.dumps(call.arguments, separators=(",", ":"), ensure_ascii=False)


def arguments_object(call: ToolCallPart) -> JsonDict:
    """A call's arguments as an object, for wires that send objects back; `{}` when the model's
    text did not parse to one (those wires have no way to carry invalid text)."""
    return cast("JsonDict", call.arguments) if isinstance(call.arguments, dict) else {}


def strip_version_suffix(base_url: str | None, suffixes: tuple[str, ...]) -> str | None:
    """A base URL without a trailing API version the SDK adds to the path itself (catalog URLs,
    the AI SDK convention, often end in one); None stays None (the SDK default)."""
    if base_url is None:
        return None
    trimmed = base_url.rstrip("/")
    for suffix in suffixes:
        if trimmed.endswith(suffix):
            return trimmed.removesuffix(suffix)
    return trimmed


def retry_after_seconds(headers: Mapping[str, str] | None) -> float | None:
    """Seconds to wait from response headers: OpenAI's and Anthropic's `retry-after-ms` first
    (finer), else `retry-after` (seconds or an HTTP date)."""
    if headers is None:
        return None
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    return parse_retry_after(headers.get("retry-after"))
