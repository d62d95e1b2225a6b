"""The sandbox's way out to the network (Linux): an HTTP proxy earshot runs for the commands'
network namespace (`agent.sandbox.network`).

Sandboxed commands have a network namespace of their own, with only a loopback interface: they
reach nothing of the host's directly, neither its abstract unix sockets (D-Bus, X11) nor its
loopback services. Their way out is this proxy, set for them as `HTTP_PROXY`, `HTTPS_PROXY` and
`ALL_PROXY` (and the lower-case names): `pip`, `npm`, `git` over http(s), `curl`, `cargo`,
`go`, `uv` honour these. It speaks the two forms those clients use:

- `CONNECT host:port` (https, and any TCP a client tunnels): a tunnel, bytes both ways;
- a request in absolute form (`GET http://host/path`): forwarded to the host in origin form,
  with `Connection: close`, then bytes both ways.

It resolves names itself (the namespace has no DNS) and connects wherever the host can, the
host's own loopback included: a command that asks the proxy for `127.0.0.1:PORT` reaches the
host's service there, as it did before it had a namespace; a command that connects to
`127.0.0.1` itself reaches its own namespace (other sandboxed commands' servers). When earshot
itself runs behind a proxy (its environment's `HTTPS_PROXY`, `HTTP_PROXY`, `NO_PROXY`), requests
go on through that one.

With the network off (`"network": false`) the same proxy answers every request `403` with a
sentence that says why, and remembers which command asked (the `Proxy-Authorization` user name
`earshot` and a password that is a token of the command's launch): a request the proxy refused
is something the sandbox saw, which no output a command prints can fake
(`agent.sandbox.command_sandbox`).

It runs in a thread of its own with its own event loop: it serves every session of the process,
for the life of the process, and a session's event loop (a test's) may come and go.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import ipaddress
import socket
import ssl
import threading
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TypeAlias

import anyio
import anyio.abc
from anyio.streams.buffered import BufferedByteReceiveStream

HEAD_LIMIT = 64 * 1024
"""Longest request or response head read (request line and headers)."""
HEAD_SECONDS = 30.0
CONNECT_SECONDS = 30.0
PROXY_USER = "earshot"
"""The user name in the proxy URL whose password is a launch token."""
Stream: TypeAlias = anyio.abc.ByteStream
_HOP_BY_HOP = frozenset(
    {"connection", "keep-alive", "proxy-connection", "proxy-authorization", "te", "upgrade"}
)


class ProxyError(Exception):
    """A request that cannot be forwarded: answered with `status` and the message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True, slots=True)
class Upstream:
    """The proxy earshot itself must use (from its environment)."""

    host: str
    port: int
    tls: bool
    authorization: str | None


def upstream_proxies(environ: Mapping[str, str]) -> dict[str, str]:
    """`{"http": url, "https": url, "no": hosts}` from `environ`, as urllib reads them (lower
    case wins over upper case; an upper-case `HTTP_PROXY` is ignored when `REQUEST_METHOD` says
    this is a CGI script)."""
    proxies: dict[str, str] = {}
    for name, value in environ.items():
        if value and name.lower().endswith("_proxy"):
            proxies[name.lower()[:-6]] = value
    for name, value in environ.items():
        if name.endswith("_proxy") and name == name.lower():
            if value:
                proxies[name[:-6]] = value
            else:
                proxies.pop(name[:-6], None)
    if "REQUEST_METHOD" in environ:
        proxies.pop("http", None)
    return proxies


def _upstream(url: str) -> Upstream | None:
    parts = urllib.parse.urlsplit(url if "://" in url else f"http://{url}")
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None  # a SOCKS proxy: not followed (the request goes direct)
    authorization = None
    if parts.username is not None:
        user = urllib.parse.unquote(parts.username)
        pair = f"{user}:{urllib.parse.unquote(parts.password or '')}"
        authorization = "Basic " + base64.b64encode(pair.encode()).decode()
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return Upstream(parts.hostname, port, parts.scheme == "https", authorization)


class EgressProxy:
    """The proxy on one listening socket (in the commands' namespace); `egress` False refuses
    every request and records who asked."""

    def __init__(
        self, listener: socket.socket, *, egress: bool, environ: Mapping[str, str] | None = None
    ) -> None:
        import os

        self._listener = listener
        self.egress = egress
        self._proxies = upstream_proxies(os.environ if environ is None else environ)
        self._refused: dict[str, list[str]] = {}
        self._lock = threading.Lock()
        self._ready = threading.Event()
        self._failure: BaseException | None = None

    def start(self) -> None:
        """Serve in a daemon thread; returns once it accepts connections.

        Raises:
            OSError: the server could not start.
        """
        thread = threading.Thread(target=self._run, name="earshot-sandbox-proxy", daemon=True)
        thread.start()
        self._ready.wait()
        if self._failure is not None:
            raise OSError(f"the sandbox's proxy did not start: {self._failure}")

    def refused(self, token: str) -> tuple[str, ...]:
        """The targets refused to the launch with `token` (network off), and forget them."""
        with self._lock:
            return tuple(self._refused.pop(token, ()))

    # ------------------------------------------------------------------------ serving

    def _run(self) -> None:
        try:
            anyio.run(self._serve)
        except BaseException as failure:
            self._failure = failure
            self._ready.set()

    async def _serve(self) -> None:
        listener = await anyio.abc.SocketListener.from_socket(self._listener)
        self._ready.set()
        await listener.serve(self._handle)

    async def _handle(self, client: anyio.abc.SocketStream) -> None:
        async with client:
            reader = BufferedByteReceiveStream(client)
            try:
                with anyio.fail_after(HEAD_SECONDS):
                    head = await reader.receive_until(b"\r\n\r\n", HEAD_LIMIT)
                upstream = await self._answer(head, client)
                async with upstream:
                    await _relay(reader, client, upstream)
            except ProxyError as error:
                await _fail(client, error.status, str(error))
            except (anyio.IncompleteRead, anyio.DelimiterNotFound, TimeoutError):
                await _fail(client, 400, "earshot's sandbox proxy could not read the request")
            except (OSError, anyio.BrokenResourceError, anyio.EndOfStream, UnicodeDecodeError):
                pass  # either side went away

    async def _answer(self, head: bytes, client: anyio.abc.SocketStream) -> Stream:
        """Open the way for one request: the stream to relay the rest of it to."""
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) != 3 or not parts[2].startswith("HTTP/"):
            raise ProxyError(400, "earshot's sandbox proxy did not understand the request line")
        method, target, version = parts
        headers = [line for line in lines[1:] if line]
        if not self.egress:
            self._record(headers, target)
            raise ProxyError(
                403,
                f"earshot: the sandbox's network is off (the `sandbox.network` setting), so "
                f"{target} was not reached.",
            )
        if method == "CONNECT":
            host, port = _host_port(target, default=443)
            upstream = await self._tunnel(host, port)
            await client.send(b"HTTP/1.1 200 Connection established\r\n\r\n")
            return upstream
        url = urllib.parse.urlsplit(target)
        if url.scheme != "http" or not url.hostname:
            raise ProxyError(400, f"earshot's sandbox proxy forwards http:// URLs, not {target!r}")
        host, port = url.hostname, url.port or 80
        via = self._upstream_for("http", host)
        kept = [line for line in headers if _header_name(line) not in _HOP_BY_HOP]
        if via is None:
            path = urllib.parse.urlunsplit(("", "", url.path or "/", url.query, ""))
            first = f"{method} {path} {version}"
            upstream = await _open(host, port)
        else:
            first = f"{method} {target} {version}"
            if via.authorization:
                kept.append(f"Proxy-Authorization: {via.authorization}")
            upstream = await _open(via.host, via.port, tls=via.tls)
        request = "\r\n".join([first, *kept, "Connection: close", "", ""])
        await upstream.send(request.encode("latin-1"))
        return upstream

    async def _tunnel(self, host: str, port: int) -> Stream:
        via = self._upstream_for("https", host)
        if via is None:
            return await _open(host, port)
        upstream = await _open(via.host, via.port, tls=via.tls)
        authority = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        request = [f"CONNECT {authority} HTTP/1.1", f"Host: {authority}"]
        if via.authorization:
            request.append(f"Proxy-Authorization: {via.authorization}")
        await upstream.send("\r\n".join([*request, "", ""]).encode("latin-1"))
        answer = b""
        with anyio.fail_after(HEAD_SECONDS):
            while b"\r\n\r\n" not in answer and len(answer) < HEAD_LIMIT:
                answer += await upstream.receive(1)  # byte by byte: nothing of the tunnel read
        if answer.split(b" ", 2)[1:2] != [b"200"]:
            await upstream.aclose()
            raise ProxyError(502, f"the upstream proxy refused {authority}: {answer[:200]!r}")
        return upstream

    def _upstream_for(self, scheme: str, host: str) -> Upstream | None:
        url = self._proxies.get(scheme) or self._proxies.get("all")
        if not url or _loopback(host):
            return None  # no proxy of the user's can reach this machine's loopback
        no_proxy = self._proxies.get("no", "")
        if _bypassed(host, no_proxy):
            return None
        return _upstream(url)

    def _record(self, headers: list[str], target: str) -> None:
        token = _launch_token(headers)
        if token is None:
            return
        with self._lock:
            self._refused.setdefault(token, []).append(target)


def _loopback(host: str) -> bool:
    name = host.lower().rstrip(".")
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name.strip("[]")).is_loopback
    except ValueError:
        return False


def _bypassed(host: str, no_proxy: str) -> bool:
    """Whether `NO_PROXY` (`*`, or names, each matching itself and its subdomains, with or
    without a leading dot or a port) sends `host` direct, as curl and urllib read it."""
    host = host.lower().rstrip(".")
    for entry in no_proxy.lower().split(","):
        name = entry.strip()
        if name == "*":
            return True
        if name.startswith("[") and "]" in name:
            name = name[1 : name.index("]")]
        elif name.count(":") == 1:
            name = name.split(":", 1)[0]
        name = name.lstrip(".").rstrip(".")
        if name and (host == name or host.endswith("." + name)):
            return True
    return False


def _launch_token(headers: list[str]) -> str | None:
    for line in headers:
        name, _, value = line.partition(":")
        if name.strip().lower() != "proxy-authorization":
            continue
        scheme, _, encoded = value.strip().partition(" ")
        if scheme.lower() != "basic":
            return None
        try:
            user, _, password = base64.b64decode(encoded.strip()).decode().partition(":")
        except (binascii.Error, UnicodeDecodeError):
            return None
        return password if user == PROXY_USER and password else None
    return None


def _host_port(authority: str, *, default: int) -> tuple[str, int]:
    host, port = authority, default
    if authority.startswith("["):
        host, _, rest = authority[1:].partition("]")
        if rest.startswith(":"):
            port = _port(rest[1:])
    elif authority.count(":") == 1:
        host, _, text = authority.partition(":")
        port = _port(text)
    if not host:
        raise ProxyError(400, f"earshot's sandbox proxy got no host in {authority!r}")
    return host, port


def _port(text: str) -> int:
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise ProxyError(400, f"earshot's sandbox proxy got a bad port {text!r}")
    return int(text)


def _header_name(line: str) -> str:
    return line.split(":", 1)[0].strip().lower()


async def _open(host: str, port: int, *, tls: bool = False) -> Stream:
    try:
        with anyio.fail_after(CONNECT_SECONDS):
            if tls:
                return await anyio.connect_tcp(
                    host, port, tls=True, ssl_context=ssl.create_default_context()
                )
            return await anyio.connect_tcp(host, port)
    except (OSError, TimeoutError) as error:
        reason = "timed out" if isinstance(error, TimeoutError) else str(error)
        message = f"earshot's sandbox proxy could not reach {host}:{port}: {reason}"
        raise ProxyError(502, message) from error


async def _relay(
    reader: BufferedByteReceiveStream, client: anyio.abc.SocketStream, upstream: Stream
) -> None:
    """Bytes both ways (what the client sent after its request head first, from `reader`),
    until the upstream side ends: the server is done then (`Connection: close`, or the tunnel's
    far end closed), and the client's side is cut if it has not ended itself."""
    async with anyio.create_task_group() as group:
        group.start_soon(_copy, reader, upstream)
        await _copy(upstream, client)
        group.cancel_scope.cancel()


async def _copy(source: anyio.abc.ByteReceiveStream, sink: Stream) -> None:
    """Copy until `source` ends, then half-close `sink` where it can be (TLS cannot)."""
    with contextlib.suppress(anyio.EndOfStream, anyio.BrokenResourceError, OSError):
        while True:
            await sink.send(await source.receive())
    with contextlib.suppress(
        anyio.BrokenResourceError, anyio.ClosedResourceError, NotImplementedError, OSError
    ):
        await sink.send_eof()


async def _fail(client: anyio.abc.SocketStream, status: int, message: str) -> None:
    reason = {400: "Bad Request", 403: "Forbidden", 502: "Bad Gateway"}.get(status, "Error")
    body = (message + "\n").encode()
    head = (
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        await client.send(head.encode() + body)


__all__ = ["PROXY_USER", "EgressProxy", "ProxyError", "Upstream", "upstream_proxies"]
