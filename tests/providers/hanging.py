"""A 127.0.0.1 server that sends one streamed event and then hangs, to prove that an adapter
closes its connection when the consumer stops or is cancelled (only the client closing ends it)."""

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


@asynccontextmanager
async def hanging_server(first_event: bytes) -> AsyncGenerator[HangingServer]:
    closed = anyio.Event()

    async def serve(stream: anyio.abc.SocketStream) -> None:
        async with stream:
            await stream.receive()
            await stream.send(HEAD + f"{len(first_event):x}\r\n".encode() + first_event + b"\r\n")
            try:
                while await stream.receive():
                    pass
            except (anyio.EndOfStream, anyio.BrokenResourceError):
                closed.set()

    async with await anyio.create_tcp_listener(local_host="127.0.0.1") as listener:
        port = listener.extra(anyio.abc.SocketAttribute.local_port)
        async with anyio.create_task_group() as group:
            group.start_soon(listener.serve, serve)
            yield HangingServer(url=f"http://127.0.0.1:{port}", closed=closed)
            group.cancel_scope.cancel()
