"""`SdkModel`: a `providers.model.Model` over a vendor SDK client that is built on the first
call, so constructing a model imports no SDK (the adapters import theirs lazily; import-linter
keeps every SDK to its adapter)."""

from __future__ import annotations

import contextlib
import threading
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Generic, TypeVar

from providers.errors import auth_secrets
from providers.types import ProviderError, StreamEvent
from providers.wire.streaming import Translator, VendorStream, guarded_stream

if TYPE_CHECKING:
    import ssl
    from collections.abc import AsyncIterator

    from providers.model import Endpoint
    from providers.types import ModelRequest


class SdkKeyNotFound(Exception):
    """No API key (or token) was configured or found where the vendor SDK looks for one."""


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
        self._client_lock = threading.Lock()
        """`prepare` may build the client in a worker thread while the loop asks for it."""
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
            build_client=self._sdk_client,
        )

    async def aclose(self) -> None:
        """Release the HTTP client, if one was made."""
        if self._client is not None:
            client, self._client = self._client, None
            await self._close_client(client)

    def _sdk_client(self) -> ClientT:
        client = self._client
        if client is None:
            with self._client_lock:
                if self._client is None:
                    self._client = self._new_client()
                client = self._client
        return client

    def prepare(self) -> None:
        """Build the SDK client now, off the event loop (a front end's warm-up, in a worker
        thread, once a session is open): the first call then neither imports the SDK nor loads
        the CA bundle (tens of milliseconds for every new client). Never raises: a client that
        cannot be built fails the first call, as it would have."""
        with contextlib.suppress(Exception):
            self._touch(self._sdk_client())

    def _touch(self, client: ClientT) -> None:
        """Load what the first call through `client` loads beyond building it (the resource
        modules the SDK imports on first access); `prepare` calls it. Default: nothing."""

    @abstractmethod
    def _new_client(self) -> ClientT:
        """Build the SDK client (importing the SDK), SDK retries off.

        Raises:
            SdkKeyNotFound: no key was configured or found.
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


_tls_lock = threading.Lock()
_tls_context: ssl.SSLContext | None = None


def shared_tls_context() -> ssl.SSLContext:
    """The verifying TLS context every SDK client of this process uses: the one an HTTP client
    builds for itself by default (`httpx2.create_ssl_context()`: the system's CA bundle, or
    `SSL_CERT_FILE` / `SSL_CERT_DIR`), built once. Each session has its own client, and building
    a context loads the whole CA bundle (~20 ms of CPU, nearly all of a client's construction);
    a context is meant to be shared by many connections."""
    global _tls_context
    with _tls_lock:
        if _tls_context is None:
            import httpx2

            _tls_context = httpx2.create_ssl_context()
        return _tls_context


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
