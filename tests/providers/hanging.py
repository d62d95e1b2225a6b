"""A 127.0.0.1 server that sends the head of a streamed response and one event, and then hangs,
to prove that an adapter closes its connection when the consumer stops or is cancelled (only the
client closing ends it), and that a stalled stream is given up on. With `respond=False` it reads
the request and never answers at all; with an empty `first_event` it sends only the head."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from dataclasses import dataclass

import anyio
import anyio.abc

HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"


@dataclass
class HangingServer:
    url: str
    closed: anyio.Event
    """Set once the client closed the connection."""
    requests: int = 0
    """Requests received (a client cancelled before it connected sends none)."""


@asynccontextmanager
async def hanging_server(
    first_event: bytes, *, respond: bool = True
) -> AsyncGenerator[HangingServer]:
    closed = anyio.Event()
    server: HangingServer | None = None

    async def serve(stream: anyio.abc.SocketStream) -> None:
        async with stream:
            try:
                await stream.receive()
                assert server is not None
                server.requests += 1
                if respond:
                    body = f"{len(first_event):x}\r\n".encode() + first_event + b"\r\n"
                    await stream.send(HEAD + (body if first_event else b""))
                while await stream.receive():
                    pass
            except (anyio.EndOfStream, anyio.BrokenResourceError):
                closed.set()

    async with await anyio.create_tcp_listener(local_host="127.0.0.1") as listener:
        port = listener.extra(anyio.abc.SocketAttribute.local_port)
        async with anyio.create_task_group() as group:
            group.start_soon(listener.serve, serve)
            server = HangingServer(url=f"http://127.0.0.1:{port}", closed=closed)
            yield server
            group.cancel_scope.cancel()
