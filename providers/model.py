"""The seam between the loop and a wire adapter."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, NamedTuple, Protocol, TypeAlias, runtime_checkable

if TYPE_CHECKING:
    # Annotations only: the registry (which needs `Endpoint`) is on the ACP start-up path, and
    # `providers.types` defines ~70 classes.
    from providers.types import ModelRequest, StreamEvent

WireApi: TypeAlias = Literal["openai-chat", "openai-responses", "anthropic", "gemini", "scripted"]
WIRE_APIS: tuple[WireApi, ...] = (
    "openai-chat",
    "openai-responses",
    "anthropic",
    "gemini",
    "scripted",
)


class ServerModel(NamedTuple):
    """A model an OpenAI-compatible server says it serves (`providers.wire.server_models`
    asks, `providers.discovery` caches), with the window it gave, if any."""

    id: str
    context_window: int | None = None


class StreamTimeouts(NamedTuple):
    """How long a model stream may stay silent before it counts as stalled: a retryable
    `network` error (the agent's retry policy repeats the call), never a turn held open until
    the user gives up. Measured between the events the vendor SDK yields, since an SDK hides
    keep-alives (Anthropic's pings, SSE comments) that would otherwise look like progress.

    A NamedTuple rather than a dataclass: this module is on the editor's start-up path, and a
    frozen dataclass costs several times more to define."""

    first_event: float = 300.0
    """Seconds from sending the request to the model's first output (text, reasoning or a tool
    call). Generous: a reasoning model may think for minutes before it says anything, and a
    local server may first load the model."""
    idle: float = 45.0
    """Once output has started, the longest silence between two stream events."""

    def merged(
        self, *, first_event: float | None = None, idle: float | None = None
    ) -> StreamTimeouts:
        """These timeouts with the given ones (None: keep) replacing them."""
        return StreamTimeouts(
            first_event=self.first_event if first_event is None else first_event,
            idle=self.idle if idle is None else idle,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Endpoint:
    """Where and how to reach one provider: what the registry resolved for an adapter."""

    provider_id: str
    """The models.dev id (`anthropic`, `openrouter`...) or the user's own id from settings."""
    api: WireApi
    base_url: str | None = None
    """None lets the vendor SDK use its default."""
    api_key: str | None = field(default=None, repr=False)
    """Never printed: excluded from repr, and nothing logs an Endpoint's fields."""
    headers: Mapping[str, str] = field(default_factory=lambda: {}, repr=False)
    options: Mapping[str, object] = field(default_factory=lambda: {})
    """Adapter-specific settings (e.g. `reasoning_field` for openai-chat hosts, a script for
    scripted)."""
    stream_timeouts: StreamTimeouts = StreamTimeouts()
    """When a silent stream counts as stalled (`providers.wire.streaming.guarded_stream`)."""


@runtime_checkable
class Model(Protocol):
    """A model bound to an endpoint. Constructing one must not import its vendor SDK."""

    @property
    def provider_id(self) -> str: ...

    @property
    def model_id(self) -> str: ...

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """Stream one call.

        Never raises for a provider failure: it yields `ErrorEvent` then `Finish(reason="error")`.
        Always ends with exactly one `Finish`. Cancellation propagates as usual.
        """
        ...

    async def aclose(self) -> None:
        """Release the HTTP client, if one was made."""
        ...
