"""What every SDK-backed wire adapter shares: the guarded stream loop with its one exception
policy, the lazily built client, the closing events of a failed stream, and small readers of
vendor JSON. No vendor SDK is imported here (import-linter): the adapters import theirs lazily.

The exception policy, in one place (`guarded_stream`): everything between "build the request"
and "the vendor stream is exhausted" runs in one guarded region that catches `Exception` and
hands it to the adapter's `_map_errors`, so a provider failure (or a vendor SDK raising something
unexpected) always comes out as `ErrorEvent` + `Finish(reason="error")`. Cancellation and other
`BaseException`s are never caught; the vendor stream is closed on every exit.
"""

from __future__ import annotations

import contextlib
import json
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar, cast

import anyio

from providers.errors import auth_secrets, classify, parse_retry_after
from providers.model import StreamTimeouts
from providers.types import (
    ErrorEvent,
    Finish,
    ProviderError,
    StreamEvent,
    ToolCallPart,
    Usage,
    UsageEvent,
)

if TYPE_CHECKING:
    from providers.model import Endpoint
    from providers.types import ModelRequest

JsonDict = dict[str, Any]
"""A vendor JSON object, as an SDK hands it over (`to_dict()`) or as we send it."""


class HistoryError(ValueError):
    """The history holds something this wire cannot express (a tool result in a user message)."""


class StreamEndedEarly(Exception):
    """The HTTP stream ended cleanly but without the vendor's terminal event: the response is
    truncated (a proxy cut it, the server restarted), so it is reported as a network failure."""


class MissingCredentials(Exception):
    """No API key (or token) was configured or found where the vendor SDK looks for one."""


# ------------------------------------------------------------------------------ vendor JSON

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


# ------------------------------------------------------------------------------- requests


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


# -------------------------------------------------------------------------------- streams


class Translator(Protocol):
    """A per-stream translator of vendor chunks into `StreamEvent`s."""

    def feed(self, chunk: Any, /) -> list[StreamEvent]:
        """Events for one vendor chunk (may raise for an error the vendor reported in-stream)."""
        ...

    def end(self) -> list[StreamEvent]:
        """The closing events once the vendor stream is exhausted.

        Raises:
            StreamEndedEarly: the vendor's terminal event never came.
        """
        ...

    def fail(self, error: ProviderError) -> list[StreamEvent]:
        """The closing events of a failed stream."""
        ...


class TranslatorBase:
    """Usage bookkeeping and the closing events of a failed stream, shared by the translators."""

    def __init__(self) -> None:
        self._usage: Usage | None = None

    def usage(self) -> Usage | None:
        """The normalised usage reported so far."""
        return self._usage

    def usage_events(self) -> list[StreamEvent]:
        usage = self.usage()
        return [UsageEvent(usage=usage)] if usage is not None else []

    def fail(self, error: ProviderError) -> list[StreamEvent]:
        """What was counted (the tokens were billed), the error, and the one `Finish`."""
        return [*self.usage_events(), ErrorEvent(error=error), Finish(reason="error")]


@dataclass(frozen=True, slots=True)
class VendorStream:
    """An open vendor stream: its chunks and how to release its connection."""

    chunks: AsyncIterator[Any]
    close: Callable[[], Awaitable[object]]
    decode: Callable[[Any], Any] | None = None
    """Turns an SDK chunk into what the translator reads (e.g. `to_dict`); None: as it is."""


class StreamStalled(Exception):
    """The stream stayed silent longer than its `StreamTimeouts` allow."""


async def guarded_stream(
    open_stream: Callable[[], Awaitable[VendorStream]],
    translator: Translator,
    map_errors: Callable[[Exception], ProviderError],
    *,
    provider: str = "",
    timeouts: StreamTimeouts | None = None,
    prepare: Callable[[], object] | None = None,
) -> AsyncIterator[StreamEvent]:
    """Run one vendor stream through `translator`; never raises for a provider failure.

    `open_stream` builds the request and the client and starts the call, inside the guarded
    region, so a missing key or a history the wire cannot express is an error event too.

    The stall watch (`timeouts`, the one implementation for every wire): `prepare` (building
    the SDK client: importing it is our time, not the provider's) runs first; then opening the
    stream and every wait for the next chunk has a deadline: `first_event` seconds from the
    request until the translator has produced output, then `idle` seconds from the previous
    chunk. A missed deadline ends the stream as a retryable `network` error.
    """
    timeouts = timeouts or StreamTimeouts()
    try:
        if prepare is not None:
            prepare()
        first_deadline = anyio.current_time() + timeouts.first_event
        stream = None
        with anyio.move_on_at(first_deadline):
            stream = await open_stream()
        if stream is None:
            raise StreamStalled(f"no response within {timeouts.first_event:g} seconds")
        try:
            decode = stream.decode
            chunks = aiter(stream.chunks)
            started = False
            while True:
                deadline = first_deadline if not started else anyio.current_time() + timeouts.idle
                waited: list[Any] = []
                with anyio.move_on_at(deadline):
                    waited.append(await anext(chunks, _END))
                if not waited:
                    raise StreamStalled(_silence(timeouts, started=started))
                chunk = waited[0]
                if chunk is _END:
                    break
                events = translator.feed(chunk if decode is None else decode(chunk))
                started = started or bool(events)
                # Yielded outside the deadline's scope: the consumer's time is not the stream's.
                for event in events:
                    yield event
        finally:
            # Release the connection even when the consumer stopped early or was cancelled; a
            # failure while closing changes nothing about the outcome, so it is not reported.
            with anyio.CancelScope(shield=True), contextlib.suppress(Exception):
                await stream.close()
        closing = translator.end()
    except StreamStalled as exc:
        error = classify(provider=provider, status=None, message=str(exc), network=True)
        for event in translator.fail(error):
            yield event
        return
    except Exception as exc:
        for event in translator.fail(map_errors(exc)):
            yield event
        return
    for event in closing:
        yield event


_END: Any = object()
"""What `anext` returns once the vendor's chunks are exhausted."""


def _silence(timeouts: StreamTimeouts, *, started: bool) -> str:
    if started:
        return f"the stream stalled: no data for {timeouts.idle:g} seconds"
    return f"no output within {timeouts.first_event:g} seconds"


# ---------------------------------------------------------------------------------- models

ClientT = TypeVar("ClientT")


class SdkModel(ABC, Generic[ClientT]):
    """`providers.model.Model` over a vendor SDK client that is built on the first call (so
    constructing a model imports no SDK). Subclasses say how to build and close the client,
    open one vendor stream, translate it and map its failures."""

    def __init__(
        self, model_id: str, endpoint: Endpoint, *, http_client: object | None = None
    ) -> None:
        self._model_id = model_id
        self._endpoint = endpoint
        self._http_client = http_client
        self._client: ClientT | None = None
        self._secrets = auth_secrets(endpoint.api_key, endpoint.headers)
        """The key and auth header values `_map_errors` masks in messages, whatever their shape:
        a vendor may echo a key back, and `redact` alone knows only the common key shapes."""

    @property
    def provider_id(self) -> str:
        return self._endpoint.provider_id

    @property
    def model_id(self) -> str:
        return self._model_id

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """Stream one call; failures come out as `ErrorEvent` + `Finish(reason="error")`."""
        return guarded_stream(
            lambda: self._open(request),
            self._new_translator(),
            self._map_errors,
            provider=self.provider_id,
            timeouts=self._endpoint.stream_timeouts,
            prepare=self._sdk_client,
        )

    async def aclose(self) -> None:
        """Release the HTTP client, if one was made."""
        if self._client is not None:
            client, self._client = self._client, None
            await self._close_client(client)

    def _sdk_client(self) -> ClientT:
        if self._client is None:
            self._client = self._new_client()
        return self._client

    @abstractmethod
    def _new_client(self) -> ClientT:
        """Build the SDK client (importing the SDK), SDK retries off.

        Raises:
            MissingCredentials: no key was configured or found.
        """

    @abstractmethod
    async def _close_client(self, client: ClientT) -> None: ...

    @abstractmethod
    async def _open(self, request: ModelRequest) -> VendorStream:
        """Build the vendor request and start the streaming call."""

    @abstractmethod
    def _new_translator(self) -> Translator: ...

    @abstractmethod
    def _map_errors(self, exc: Exception) -> ProviderError:
        """The adapter's one translation of any failure into a `ProviderError`."""


def with_request_url(message: str, exc: BaseException) -> str:
    """`message`, naming the URL the failed request went to when the exception knows it (an
    unreachable `baseUrl` should say which one was tried). The query string is left out: some
    hosts take a key there."""
    try:
        url: object = getattr(getattr(exc, "request", None), "url", None)
    except RuntimeError:  # httpx raises when an error has no request attached
        url = None
    if url is None:
        return message
    shown = str(url).split("?", 1)[0]
    return f"{message} (request to {shown})" if shown and shown not in message else message
