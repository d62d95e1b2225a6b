"""The one stream loop every SDK-backed wire adapter runs (`guarded_stream`), with its one
exception policy and its stall deadlines.

Everything between "build the request" and "the vendor stream is exhausted" runs in one guarded
region that catches `Exception` and hands it to the adapter's `map_errors`, so a provider failure
(or a vendor SDK raising something unexpected) always comes out as `ErrorEvent` +
`Finish(reason="error")`. Cancellation and other `BaseException`s are never caught; the vendor
stream is closed on every exit. No vendor SDK is imported here (import-linter).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

import anyio

from providers.errors import classify
from providers.model import StreamTimeouts
from providers.types import ErrorEvent, Finish, ProviderError, StreamEvent, Usage, UsageEvent


class StreamEndedEarly(Exception):
    """The HTTP stream ended cleanly but without the vendor's terminal event: the response is
    truncated (a proxy cut it, the server restarted), so it is reported as a network failure."""


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
    """What the translator reads, chunk by chunk (the JSON the SDK decoded, or its own objects
    where an SDK offers nothing else)."""
    close: Callable[[], Awaitable[object]]


class StreamStalled(Exception):
    """The stream stayed silent longer than its `StreamTimeouts` allow."""


async def guarded_stream(
    open_stream: Callable[[], Awaitable[VendorStream]],
    translator: Translator,
    map_errors: Callable[[Exception], ProviderError],
    *,
    provider: str = "",
    timeouts: StreamTimeouts | None = None,
    build_client: Callable[[], object] | None = None,
) -> AsyncIterator[StreamEvent]:
    """Run one vendor stream through `translator`; never raises for a provider failure.

    `open_stream` builds the request and the client and starts the call, inside the guarded
    region, so a missing key or a history the wire cannot express is an error event too.

    The stall watch (`timeouts`, the one implementation for every wire): `build_client` (the
    SDK client: importing it is our time, not the provider's) runs first; then opening the
    stream and every wait for the next chunk has a deadline: `first_event` seconds from the
    request until the translator has produced output, then `idle` seconds from the previous
    chunk. A missed deadline ends the stream as a retryable `network` error.
    """
    timeouts = timeouts or StreamTimeouts()
    try:
        if build_client is not None:
            build_client()
        first_deadline = anyio.current_time() + timeouts.first_event
        stream = None
        with anyio.move_on_at(first_deadline):
            stream = await open_stream()
        if stream is None:
            raise StreamStalled(f"no response within {timeouts.first_event:g} seconds")
        try:
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
                events = translator.feed(chunk)
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
