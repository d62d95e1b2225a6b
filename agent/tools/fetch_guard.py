"""Where a fetch may connect, and the connection pinned to what was checked.

The permission prompt for a fetch names a host. Before any byte is sent, `FetchGuard.admit`
resolves that host and, when it resolves to a loopback, private or link-local address
(`agent.network`) the prompt did not already cover (the URL named an IP literal or `localhost`
and the gate asked about that), asks the gate again (`RECHECK_PERMISSION`) with a request that
says so; the policy asks the user unless an allow rule names the host exactly. The addresses
checked are the only ones the connection may use: the transport's network backend connects to
them instead of resolving the name again, so a name that answers a public address to the check
and `127.0.0.1` to the connection (DNS rebinding) reaches nothing it was not allowed to.

With an HTTP proxy configured for the URL (`HTTP_PROXY`, `HTTPS_PROXY`, and the host not in
`NO_PROXY`: `proxy_for`), the proxy resolves the name and connects: on networks where only the
proxy can resolve names, resolving them here would fail every fetch, and whatever earshot
resolved, the proxy would connect to its own answer. So earshot does not resolve the name; it
refuses (or asks about) what it can tell is local from the URL alone: IP literals in any form and
the names known to mean a local place (`localhost`, `*.localhost`, `*.internal`, `*.local`, the
cloud metadata names, a name without a dot: `agent.network.local_host`). The request then goes to
exactly the proxy that was judged, never by the HTTP client's own reading of the environment.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from agent.network import local_address, local_host, resolve
from agent.tools.base import PermissionRequest

if TYPE_CHECKING:
    import httpx2

Recheck = Callable[[PermissionRequest], Awaitable[bool]]
"""Asks the permission gate about a follow-up request of the running call (see
`ToolServices.recheck_permission`): True when it may go ahead."""
Resolver = Callable[[str, int], Awaitable[Sequence[str]]]

_DEFAULT_PORTS = {"http": 80, "https": 443}


def origin(url: str) -> tuple[str, str, int]:
    """`(scheme, host, port)`, the port made explicit."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").lower(), parts.port or _DEFAULT_PORTS.get(scheme, 0)


def same_origin(old: str, new: str) -> bool:
    """Whether a redirect from `old` to `new` stays at the origin the user allowed: the same
    scheme, host and port. Anything else, an upgrade to https included, is a new fetch: checked
    again, and asked again where the first one was asked (a redirect is the server's choice,
    not the user's)."""
    return origin(old) == origin(new)


def proxy_for(url: str) -> str | None:
    """The proxy URL a fetch of `url` goes through (`HTTP_PROXY`/`HTTPS_PROXY`, or an HTTP
    `ALL_PROXY`, unless the host is in `NO_PROXY`), or None for a direct connection."""
    # Here, not at the top: urllib.request brings http.client, ssl and email (~40 ms), which only
    # a fetch needs, and the tools load before a session's first model call.
    import urllib.request

    scheme, host, _ = origin(url)
    proxies = urllib.request.getproxies()
    proxy = proxies.get(scheme)
    if proxy is None and proxies.get("all", "").startswith(("http://", "https://")):
        proxy = proxies["all"]  # ALL_PROXY, when it is an HTTP proxy (SOCKS needs an extra)
    if not proxy or urllib.request.proxy_bypass(host):
        return None
    return proxy


class FetchRefused(Exception):
    """The host may not be reached (resolves to a local address the user did not allow)."""


class FetchGuard:
    """The addresses one fetch call has checked, per `(host, port)`."""

    def __init__(self, recheck: Recheck | None, resolver: Resolver = resolve) -> None:
        self._recheck = recheck
        self._resolve = resolver
        self._pinned: dict[tuple[str, int], tuple[str, ...]] = {}

    @property
    def can_ask(self) -> bool:
        return self._recheck is not None

    async def allowed(self, request: PermissionRequest) -> bool:
        """Ask the gate about `request` (a redirect to another origin); False without a gate."""
        return self._recheck is not None and await self._recheck(request)

    async def admit(self, url: str, *, approved_local: bool, proxied: bool = False) -> None:
        """Resolve the URL's host and check its addresses; remember them for the connection.
        `approved_local`: the gate already asked about this host as a local one. `proxied`: the
        request goes through a proxy, which resolves the name: nothing is resolved here, and
        only what the URL itself says is local is checked (see the module docstring).

        Raises:
            FetchRefused: a local address nobody allowed, or a name that does not resolve.
        """
        _, host, port = origin(url)
        if proxied:
            if local_host(host) and not approved_local:
                await self._ask_local(url, host, f"{host} is a local network address")
            return
        try:
            addresses = tuple(await self._resolve(host, port))
        except OSError as error:
            raise FetchRefused(f"cannot resolve {host}: {error}") from error
        local = [address for address in addresses if local_address(address)]
        if local and not approved_local:
            why = f"{host} resolves to {local[0]}, a local network address"
            await self._ask_local(url, host, why)
        self._pinned[(host, port)] = addresses

    async def _ask_local(self, url: str, host: str, why: str) -> None:
        request = PermissionRequest(
            rule_tool="Fetch", description=f"Fetch {url} ({why})", domain=host, local_network=True
        )
        if not await self.allowed(request):
            raise FetchRefused(f"{why}, and fetching it was not allowed")

    def addresses(self, host: str, port: int) -> tuple[str, ...]:
        return self._pinned.get((host.lower(), port), ())

    def client(
        self, *, timeout: float, headers: dict[str, str], proxy: str | None
    ) -> httpx2.AsyncClient:
        """An HTTP client that connects only to admitted addresses, or only to `proxy` (the one
        `proxy_for` chose for the URL: see the module docstring)."""
        import httpx2

        if proxy is not None:
            # The environment is not read again (`trust_env=False`): the request goes to the
            # proxy judged above, or fails.
            return httpx2.AsyncClient(
                timeout=timeout,
                follow_redirects=False,
                headers=headers,
                proxy=proxy,
                trust_env=False,
            )
        transport = httpx2.AsyncHTTPTransport(trust_env=False)
        transport._pool = _pinned_pool(self)  # pyright: ignore[reportPrivateUsage]
        return httpx2.AsyncClient(
            timeout=timeout,
            follow_redirects=False,
            headers=headers,
            transport=transport,
            trust_env=False,
        )


def _pinned_pool(guard: FetchGuard) -> Any:
    import httpcore2
    import httpx2

    class PinnedBackend(httpcore2.AsyncNetworkBackend):
        """Connects to the addresses the guard admitted for a host, never to a fresh lookup."""

        def __init__(self) -> None:
            # The class itself, not `httpcore2.AnyIOBackend` (typed as a stand-in for when
            # anyio is missing).
            from httpcore2._backends.anyio import AnyIOBackend

            self._inner = AnyIOBackend()

        async def connect_tcp(
            self,
            host: str,
            port: int,
            timeout: float | None = None,
            local_address: str | None = None,
            socket_options: Iterable[Any] | None = None,
        ) -> httpcore2.AsyncNetworkStream:
            addresses = guard.addresses(host, port)
            if not addresses:
                raise httpcore2.ConnectError(f"{host}:{port} was not checked before connecting")
            error: Exception | None = None
            for address in addresses:
                try:
                    return await self._inner.connect_tcp(
                        address, port, timeout, local_address, socket_options
                    )
                except httpcore2.ConnectError as failed:
                    error = failed
            assert error is not None
            raise error

        async def connect_unix_socket(
            self,
            path: str,
            timeout: float | None = None,
            socket_options: Iterable[Any] | None = None,
        ) -> httpcore2.AsyncNetworkStream:
            raise httpcore2.ConnectError("fetch does not connect to unix sockets")

        async def sleep(self, seconds: float) -> None:
            await self._inner.sleep(seconds)

    return httpcore2.AsyncConnectionPool(
        ssl_context=httpx2.create_ssl_context(),
        network_backend=PinnedBackend(),
        http1=True,
        http2=False,
    )
