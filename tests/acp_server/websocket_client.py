"""The test client over `earshot serve`'s WebSocket server: the same `AcpClient`, its messages
carried one per WebSocket message. `open_agent` uses it for an `AgentEnv` with
`over_websocket=True`, so any scenario test can run over WebSocket unchanged."""

from __future__ import annotations

import io
import os
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from typing import TYPE_CHECKING

import anyio

from tests.acp_server.client import (
    AcpClient,
    _environment,  # pyright: ignore[reportPrivateUsage]
    _raise_violations,  # pyright: ignore[reportPrivateUsage]
)

if TYPE_CHECKING:
    from websockets.asyncio.client import ClientConnection

    from acp_server.ports import Ports
    from tests.acp_server.env import AgentEnv

TOKEN = "test-token-0123456789"


class WebSocketTransport:
    """Lines out as WebSocket messages, messages in as lines."""

    def __init__(self, connection: ClientConnection) -> None:
        self.connection = connection
        self._partial = b""

    async def send(self, data: bytes) -> None:
        from websockets.exceptions import ConnectionClosed

        *lines, self._partial = (self._partial + data).split(b"\n")
        for line in lines:
            if line.strip():
                with suppress(ConnectionClosed):
                    await self.connection.send(line.decode("utf-8", errors="surrogateescape"))

    async def receive(self) -> AsyncIterator[bytes]:
        from websockets.exceptions import ConnectionClosed

        with suppress(ConnectionClosed):
            async for message in self.connection:
                text = message if isinstance(message, str) else message.decode()
                yield text.encode() + b"\n"

    async def close_input(self) -> None:
        """The client goes away: over WebSocket, the end of the server's input."""
        await self.connection.close()


@asynccontextmanager
async def serving(
    ports: Callable[[], Ports],
    *,
    token: str = TOKEN,
    on_closed: Callable[[], None] | None = None,
) -> AsyncGenerator[str]:
    """`earshot serve`'s server on a free loopback port in this process; yields its URL."""
    from acp_server.websocket import ServeOptions, serve_websocket
    from earshot import __version__

    address: list[str] = []
    listening = anyio.Event()

    def on_listening(host: str, port: int) -> None:
        address.append(f"ws://{host}:{port}/")
        listening.set()

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(
            lambda: serve_websocket(
                ServeOptions(host="127.0.0.1", port=0, token=token),
                ports=ports,
                version=__version__,
                on_listening=on_listening,
                on_closed=on_closed,
            )
        )
        with anyio.fail_after(30):
            await listening.wait()
        try:
            yield address[0]
        finally:
            tasks.cancel_scope.cancel()


@asynccontextmanager
async def connected(url: str, server_done: anyio.Event | None = None) -> AsyncGenerator[AcpClient]:
    """An `AcpClient` on a new WebSocket to `url`. On exit it disconnects, then waits for the
    server's side to stop when `server_done` is given (set by `serving`'s `on_closed`)."""
    from websockets.asyncio.client import connect

    editor_environ = dict(os.environ)
    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with (
        connect(url, additional_headers=headers, max_size=None) as connection,
        anyio.create_task_group() as task_group,
    ):
        client = AcpClient(WebSocketTransport(connection), task_group)
        client.environ = editor_environ

        async def server_stopped() -> None:
            assert server_done is not None
            await server_done.wait()
            client.server_done.set()

        if server_done is not None:
            task_group.start_soon(server_stopped)
        task_group.start_soon(client.read_output)
        try:
            yield client
            await client.close_stdin()
            if server_done is not None:
                await client.stopped()
            await client.wait_for(lambda: client.closed)
        finally:
            task_group.cancel_scope.cancel()


@asynccontextmanager
async def open_agent_over_websocket(
    env: AgentEnv,
    *,
    check: bool = True,
    ports: Callable[[dict[str, str]], Ports] | None = None,
) -> AsyncGenerator[AcpClient]:
    """As `open_agent`, through a WebSocket to an in-process `earshot serve`."""
    from acp_server.log import log_to
    from earshot.acp_main import earshot_ports

    environ = env.environ()
    logged = io.StringIO()
    server_done = anyio.Event()

    def make_ports() -> Ports:
        return ports(environ) if ports else earshot_ports(environ=environ)

    with _environment(environ):
        log_to(logged)
        async with (
            serving(make_ports, on_closed=server_done.set) as url,
            connected(url, server_done) as client,
        ):
            yield client
    client.stderr = logged.getvalue()
    if check:
        _raise_violations(client, client.stderr)
