"""JSON-RPC 2.0 with LSP's `Content-Length` framing, on anyio byte streams.

Our own rather than pygls's client: pygls runs on asyncio directly (its own reader task and
futures, outside anyio's cancel scopes and task groups, so a cancelled edit could leave a wait
behind), costs 0.29 s to import against lsprotocol's 0.22 s (pygls imports lsprotocol too), and
brings a server framework we do not use. What a client needs is this module: frame, parse,
match responses to requests, answer the few requests servers send a client, and notice when the
server is gone. The messages themselves are built and read with `lsprotocol`'s types
(`agent.lsp.client`).

A server is untrusted input like any other: a frame larger than `MAX_FRAME` or a header block
that never ends is a protocol error that ends the connection, not a memory blow-up.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Awaitable, Callable
from typing import Any, Final, cast

import anyio
import orjson
from anyio.abc import ByteReceiveStream, ByteSendStream

MAX_FRAME: Final = 64 * 1024 * 1024
MAX_HEADER: Final = 8 * 1024

Json = Any
NotificationHandler = Callable[[str, Json], Awaitable[None]]
RequestHandler = Callable[[str, Json], Awaitable[Json]]


class ServerClosed(Exception):
    """The server closed its output (exited, crashed) or sent something that is not LSP."""


class ResponseError(Exception):
    """The server answered a request with an error."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(f"{message} (code {code})")
        self.code = code


class _Pending:
    __slots__ = ("done", "error", "result")

    def __init__(self) -> None:
        self.done = anyio.Event()
        self.result: Json = None
        self.error: BaseException | None = None


class JsonRpcConnection:
    """One connection. `run` reads until the stream ends (start it in a task group);
    `request` and `notify` write."""

    def __init__(
        self,
        send: ByteSendStream,
        receive: ByteReceiveStream,
        *,
        on_notification: NotificationHandler,
        on_request: RequestHandler,
    ) -> None:
        self._send = send
        self._receive = receive
        self._on_notification = on_notification
        self._on_request = on_request
        self._write_lock = anyio.Lock()
        self._pending: dict[int, _Pending] = {}
        self._next_id = 0
        self.closed: ServerClosed | None = None
        """Why the connection ended; None while it is open."""

    async def request(self, method: str, params: Json, *, timeout: float = math.inf) -> Json:
        """Send a request and wait for its result.

        Raises:
            ResponseError: the server answered with an error.
            ServerClosed: the connection ended before the answer.
            TimeoutError: no answer within `timeout` seconds.
        """
        if self.closed is not None:
            raise self.closed
        self._next_id += 1
        request_id = self._next_id
        pending = self._pending[request_id] = _Pending()
        try:
            await self._write(
                {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
            )
            with anyio.fail_after(timeout):
                await pending.done.wait()
        finally:
            self._pending.pop(request_id, None)
        if pending.error is not None:
            raise pending.error
        return pending.result

    async def notify(self, method: str, params: Json) -> None:
        if self.closed is not None:
            raise self.closed
        await self._write({"jsonrpc": "2.0", "method": method, "params": params})

    async def _write(self, message: dict[str, Json]) -> None:
        body = orjson.dumps(message)
        frame = b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
        async with self._write_lock:
            try:
                await self._send.send(frame)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as error:
                raise self._close(f"the server stopped reading ({type(error).__name__})") from None

    async def run(self) -> None:
        """Read and dispatch messages until the stream ends; then fail every pending request."""
        buffer = b""
        try:
            while True:
                header_end = buffer.find(b"\r\n\r\n")
                while header_end < 0:
                    if len(buffer) > MAX_HEADER:
                        raise self._close("the server sent a header block without an end")
                    buffer += await self._receive_some()
                    header_end = buffer.find(b"\r\n\r\n")
                length = _content_length(buffer[:header_end])
                if length is None or length > MAX_FRAME:
                    raise self._close("the server sent a frame without a valid Content-Length")
                buffer = buffer[header_end + 4 :]
                while len(buffer) < length:
                    buffer += await self._receive_some()
                body, buffer = buffer[:length], buffer[length:]
                try:
                    message = orjson.loads(body)
                except orjson.JSONDecodeError:
                    raise self._close("the server sent a frame that is not JSON") from None
                if isinstance(message, dict):
                    await self._dispatch(cast("dict[str, Json]", message))
        except ServerClosed:
            pass

    async def _receive_some(self) -> bytes:
        try:
            return await self._receive.receive()
        except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
            raise self._close("the server closed its output") from None

    def _close(self, reason: str) -> ServerClosed:
        if self.closed is None:
            self.closed = ServerClosed(reason)
            for pending in self._pending.values():
                pending.error = self.closed
                pending.done.set()
        return self.closed

    async def _dispatch(self, message: dict[str, Json]) -> None:
        method = message.get("method")
        if isinstance(method, str):
            if "id" in message:
                await self._answer(message["id"], method, message.get("params"))
            else:
                await self._on_notification(method, message.get("params"))
            return
        request_id = message.get("id")
        pending = self._pending.get(request_id) if isinstance(request_id, int) else None
        if pending is None:
            return
        error = message.get("error")
        if isinstance(error, dict):
            details = cast("dict[str, Json]", error)
            code = details.get("code", 0)
            pending.error = ResponseError(
                code if isinstance(code, int) else 0, str(details.get("message", ""))
            )
        else:
            pending.result = message.get("result")
        pending.done.set()

    async def _answer(self, request_id: Json, method: str, params: Json) -> None:
        try:
            result = await self._on_request(method, params)
            reply: dict[str, Json] = {"jsonrpc": "2.0", "id": request_id, "result": result}
        except ResponseError as error:
            reply = {
                "jsonrpc": "2.0",
                "id": request_id,
                "error": {"code": error.code, "message": str(error)},
            }
        with contextlib.suppress(ServerClosed):
            await self._write(reply)


def _content_length(header: bytes) -> int | None:
    for line in header.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            try:
                length = int(value.strip())
            except ValueError:
                return None
            return length if length >= 0 else None
    return None
