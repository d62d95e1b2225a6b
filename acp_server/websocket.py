"""ACP over WebSocket (`earshot serve`): one ACP connection per WebSocket, several at once.

Each WebSocket gets its own `AcpServer`, served exactly as on stdio: the server reads and writes
one end of a socket pair, and two pumps carry the messages between the other end and the
WebSocket (one text message = one JSON-RPC message = one line). So every behaviour of the stdio
path holds here too: when the client goes away, the server sees the end of its input, cancels
its prompts (answered `cancelled`), answers what it had read and closes its sessions, which
stay on disk and loadable.

Access needs a bearer token on the opening handshake (`Authorization: Bearer <token>`, or a
`token` query parameter for browsers, which cannot set headers on a WebSocket). It is compared
in constant time; a wrong or missing one gets HTTP 401 (saying which) before any ACP is spoken.

Messages are text: a binary message is answered with a parse error and not passed on (the
server keeps serving). A parse error says which message was at fault (they are counted as the
stdio path counts lines). A client that closes while it no longer reads what it was sent is not
left waiting for a closing handshake that cannot get through: the connection is dropped half a
second after its close frame (`_closing_aware`), which ends the server's input and cancels its
prompts, rather than after the client's close timeout while the turn runs on. The server
listens on loopback unless told otherwise: the way to reach it from another machine is an SSH
forward (README, "earshot serve").

`websockets` is imported here only, when `earshot serve` starts.
"""

from __future__ import annotations

import contextlib
import hmac
import http
import json
import socket
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, urlsplit

import anyio
from anyio.abc import SocketStream

from acp_server.framing import PARSE_ERROR
from acp_server.log import log

if TYPE_CHECKING:
    from websockets.asyncio.server import ServerConnection
    from websockets.http11 import Request, Response

    from acp_server.ports import Ports

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "::1", "localhost"})
MAX_MESSAGE_BYTES = 50 * 1024 * 1024
"""The largest WebSocket message accepted: the stdio line limit."""
CLOSING_GRACE_SECONDS = 0.5
"""How long a closing handshake the client started may take before the connection is dropped
(`_closing_aware`)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ServeOptions:
    host: str
    port: int
    """0 picks a free port (the one chosen is given to `on_listening`)."""
    token: str


def offered_token(request: Request) -> str:
    """The bearer token the handshake carries (header, else query), or ""."""
    offered = ""
    header = request.headers.get("Authorization", "")
    scheme, _, value = header.partition(" ")
    if scheme.lower() == "bearer":
        offered = value.strip()
    if not offered:
        query = parse_qs(urlsplit(request.path).query)
        offered = (query.get("token") or [""])[0]
    return offered


def token_matches(expected: str, request: Request) -> bool:
    """Whether the handshake carries `expected` as a bearer token (header or query)."""
    offered = offered_token(request)
    return bool(offered) and hmac.compare_digest(offered.encode(), expected.encode())


async def serve_websocket(
    options: ServeOptions,
    *,
    ports: Callable[[], Ports],
    version: str,
    on_listening: Callable[[str, int], None],
    on_closed: Callable[[], None] | None = None,
) -> None:
    """Accept WebSocket clients until cancelled; each one an ACP connection of its own with
    ports of its own (`ports()`: as a process started by an editor would have). `on_closed`
    runs after a connection's server has stopped (its sessions closed)."""
    from websockets.asyncio.server import serve

    def authorise(connection: ServerConnection, request: Request) -> Response | None:
        if token_matches(options.token, request):
            return None
        given = bool(offered_token(request))
        said = "the bearer token is wrong" if given else "a bearer token is required"
        log(f"websocket refused: {said}", {"peer": str(connection.remote_address)})
        return connection.respond(http.HTTPStatus.UNAUTHORIZED, said + "\n")

    async def handle(connection: ServerConnection) -> None:
        try:
            await serve_connection(connection, ports=ports(), version=version)
        finally:
            if on_closed is not None:
                on_closed()

    async with serve(
        handle,
        options.host,
        options.port,
        process_request=authorise,
        create_connection=_closing_aware(),
        max_size=MAX_MESSAGE_BYTES,
        compression=None,
    ) as server:
        sockets = list(server.sockets)
        host, port = sockets[0].getsockname()[:2]
        on_listening(str(host), int(port))
        await anyio.sleep_forever()


async def serve_connection(connection: ServerConnection, *, ports: Ports, version: str) -> None:
    """One ACP connection over one WebSocket, until the client closes it and every request read
    is answered."""
    from acp_server.server import AcpServer

    server_end, client_end = socket.socketpair()
    server = AcpServer(ports=ports, version=version, log=log, input_unit="message")
    stream = await SocketStream.from_socket(client_end)
    try:
        async with anyio.create_task_group() as tasks:

            async def run_server() -> None:
                try:
                    await server.serve(read_fd=server_end.fileno(), write_fd=server_end.fileno())
                finally:
                    # Everything the server wrote is in the pair: the pump sends it, then ends.
                    with contextlib.suppress(OSError):
                        server_end.shutdown(socket.SHUT_WR)

            tasks.start_soon(run_server)
            tasks.start_soon(_to_server, connection, stream)
            await _to_client(stream, connection)
            tasks.cancel_scope.cancel()
    finally:
        server_end.close()
        await stream.aclose()


async def _to_server(connection: ServerConnection, stream: SocketStream) -> None:
    """Client messages to the server, one line each; the end of the WebSocket is the end of the
    server's input (its prompts are cancelled, what it read is answered)."""
    from websockets.exceptions import ConnectionClosed

    try:
        async for message in connection:
            if isinstance(message, bytes):
                # Refused, and an empty line passed on instead: the server counts its input's
                # lines, so the next error still names the right message.
                await stream.send(b"\n")
                await connection.send(_BINARY_REFUSED)
                continue
            # Raw line breaks can only be whitespace between JSON tokens (inside a string they
            # are escaped): a pretty-printed message still reaches the server as one line.
            data = message.encode().replace(b"\r", b" ").replace(b"\n", b" ")
            await stream.send(data + b"\n")
    except ConnectionClosed:
        pass
    finally:
        with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            await stream.send_eof()


async def _to_client(stream: SocketStream, connection: ServerConnection) -> None:
    """Server lines to the client, one text message each, until the server is done. After the
    client went away, the rest is read and dropped, so the server never blocks on a full pair."""
    from websockets.exceptions import ConnectionClosed

    pending = b""
    client_gone = False
    while True:
        try:
            chunk = await stream.receive()
        except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
            return
        pending += chunk
        *lines, pending = pending.split(b"\n")
        for line in lines:
            if client_gone or not line.strip():
                continue
            try:
                await connection.send(line.decode("utf-8", errors="replace"))
            except ConnectionClosed:
                client_gone = True


_BINARY_REFUSED = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": None,
        "error": {
            "code": PARSE_ERROR,
            "message": "parse error: a binary message: send each JSON-RPC message as text",
        },
    }
)


def _closing_aware() -> type[ServerConnection]:
    """A `ServerConnection` that drops the connection when the closing handshake the client
    started has not ended `CLOSING_GRACE_SECONDS` after its close frame came in. A client that
    stopped reading and then closed will not read the output waiting for it, nor the close frame
    and the end of stream queued behind that (in the kernel's buffers, out of sight): its close
    could only end with its own close timeout (10 s, code 1006) while the turn ran on. Dropped,
    the connection ends (`connection_lost`: the end of the server's input, which cancels its
    prompts). A client that reads ends the handshake in milliseconds."""
    from websockets.asyncio.server import ServerConnection
    from websockets.protocol import State

    class ClosingAware(ServerConnection):
        drop_scheduled = False

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self.protocol.close_rcvd is not None and not self.drop_scheduled:
                self.drop_scheduled = True
                self.loop.call_later(CLOSING_GRACE_SECONDS, self.drop_if_open)

        def drop_if_open(self) -> None:
            if self.state is not State.CLOSED:
                log("websocket client closed but does not read: connection dropped", {})
                self.transport.abort()

    return ClosingAware
