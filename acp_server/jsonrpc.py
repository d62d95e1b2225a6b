"""JSON-RPC 2.0 over newline-delimited byte streams (stdio), on anyio.

One `Connection` owns a read fd and a write fd. Its reader never waits on our own outgoing
requests: every incoming request runs in its own task under its own `CancelScope`, kept in an
in-flight table so `$/cancel_request` can reach it, while responses to the requests WE sent are
matched by id to pending slots. One lock serialises writes, so each message is exactly one line.

This module is also the single exception-to-error boundary: handlers raise `RpcError` (or a
domain exception the injected `error_mapper` knows); everything else becomes `-32603`.

Kept free of pydantic, structlog and the agent so that answering `initialize` stays cheap.
"""

from __future__ import annotations

import os
import stat
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias, cast

import anyio
import anyio.abc
import anyio.lowlevel

from acp_server.wire import (
    AUTH_REQUIRED,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    REQUEST_CANCELLED,
    RESOURCE_NOT_FOUND,
    InvalidParams,
    JsonObject,
    RpcError,
    bounded,
    decode_message,
    encode_message,
    is_response,
    request_id_problem,
)

__all__ = [
    "AUTH_REQUIRED",
    "DEFAULT_LINE_LIMIT",
    "EOF_GRACE_SECONDS",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "REQUEST_CANCELLED",
    "RESOURCE_NOT_FOUND",
    "ClientError",
    "Connection",
    "ConnectionClosed",
    "ErrorMapper",
    "InvalidParams",
    "JsonObject",
    "Logger",
    "NotificationHandler",
    "RequestContext",
    "RequestHandler",
    "RequestId",
    "RpcError",
]

DEFAULT_LINE_LIMIT = 50 * 1024 * 1024
"""Longest accepted line; a longer one is skipped and answered with -32700."""
EOF_GRACE_SECONDS = 0.05
"""After the input ends, how long handlers get to answer before they are cancelled."""

RequestId: TypeAlias = "int | str | None"


class ClientError(Exception):
    """The other side answered one of our requests with an error."""

    def __init__(self, method: str, code: int, message: str, data: object = None) -> None:
        super().__init__(f"{method}: {message} ({code})")
        self.method = method
        self.code = code
        self.message = message
        self.data = data


class ConnectionClosed(Exception):
    """The stream ended (or broke) before our request was answered."""


@dataclass(slots=True, kw_only=True)
class RequestContext:
    """What a request handler learns about its request."""

    request_id: RequestId
    method: str
    soft_cancel: Callable[[], None] | None = None
    """Set by a handler that prefers to wind down and answer normally when `$/cancel_request`
    arrives (a prompt answers `stopReason: cancelled`); otherwise the handler's scope is cancelled
    and the request is answered -32800."""
    after_response: list[Callable[[], Awaitable[None]]] = field(default_factory=lambda: [])
    """Run once the response is written (e.g. `available_commands_update` after `session/new`)."""


RequestHandler: TypeAlias = Callable[[JsonObject, RequestContext], Awaitable[object]]
NotificationHandler: TypeAlias = Callable[[JsonObject], Awaitable[None]]
ErrorMapper: TypeAlias = Callable[[Exception], "RpcError | None"]
Logger: TypeAlias = Callable[[str, Mapping[str, object]], None]


@dataclass(slots=True)
class _InFlight:
    scope: anyio.CancelScope
    context: RequestContext
    cancelled_by_peer: bool = False


@dataclass(slots=True)
class _Pending:
    method: str
    done: anyio.Event = field(default_factory=anyio.Event)
    result: object = None
    error: Exception | None = None


def _no_log(event: str, fields: Mapping[str, object]) -> None:
    return None


def _only_exception(group: BaseExceptionGroup[BaseException]) -> Exception | None:
    """The single exception a task group wrapped, if that is all it holds."""
    if len(group.exceptions) != 1:
        return None
    inner = group.exceptions[0]
    return inner if isinstance(inner, Exception) else None


def _valid_id(value: object) -> bool:
    return request_id_problem(value) is None


class _FdReader:
    """Reads chunks from an fd without blocking the event loop (pipes, sockets, ttys are polled;
    regular files and /dev/null, which epoll refuses, are simply read)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.pollable = not stat.S_ISREG(os.fstat(fd).st_mode)

    async def read(self) -> bytes:
        while True:
            if self.pollable:
                try:
                    await anyio.wait_readable(self.fd)
                except OSError:
                    self.pollable = False
            if not self.pollable:
                await anyio.lowlevel.checkpoint()
            try:
                return os.read(self.fd, 1 << 20)
            except BlockingIOError:
                continue


class _FdWriter:
    def __init__(self, fd: int) -> None:
        self.fd = fd
        mode = os.fstat(fd).st_mode
        # Only pipes and sockets go non-blocking: on a tty the flag would leak into the shell.
        self.pollable = stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)
        if self.pollable:
            os.set_blocking(fd, False)

    def write_nowait(self, data: bytes) -> int:
        """Write what the fd takes without waiting; returns the byte count written."""
        try:
            return os.write(self.fd, data)
        except BlockingIOError:
            return 0

    async def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            try:
                written = os.write(self.fd, view)
            except BlockingIOError:
                await anyio.wait_writable(self.fd)
                continue
            view = view[written:]


class Connection:
    """A JSON-RPC peer over a pair of fds."""

    def __init__(
        self,
        *,
        read_fd: int,
        write_fd: int,
        requests: Mapping[str, RequestHandler],
        notifications: Mapping[str, NotificationHandler],
        error_mapper: ErrorMapper | None = None,
        on_eof: Callable[[], Awaitable[None]] | None = None,
        on_input_closed: Callable[[], None] | None = None,
        log: Logger = _no_log,
        line_limit: int = DEFAULT_LINE_LIMIT,
        initial_data: bytes = b"",
        input_ended: bool = False,
        on_start: Callable[[], None] | None = None,
    ) -> None:
        """`initial_data` is input already read (by the start-up fast path); `input_ended` says
        the input already reached its end while reading it."""
        self._reader = _FdReader(read_fd)
        self._writer = _FdWriter(write_fd)
        self._requests = requests
        self._notifications = notifications
        self._error_mapper = error_mapper
        self._on_eof = on_eof
        self._on_input_closed = on_input_closed
        self._initial_data = initial_data
        self._input_ended = input_ended
        self._on_start = on_start
        self._active = 0
        self._idle = anyio.Event()
        self._log = log
        self._line_limit = line_limit
        # Uncontended writes must not yield to the loop: one checkpoint per text delta costs more
        # than the write itself.
        self._write_lock = anyio.Lock(fast_acquire=True)
        self._in_flight: dict[RequestId, _InFlight] = {}
        self._pending: dict[int, _Pending] = {}
        self._next_id = 0
        self._closed = False
        self._write_broken = False
        self._task_group: anyio.abc.TaskGroup | None = None

    @property
    def closed(self) -> bool:
        """True once the input ended: no more requests will be answered by the peer."""
        return self._closed

    # ------------------------------------------------------------------------------ serving

    async def serve(self) -> None:
        """Read and dispatch until the input ends; then stop every handler and run `on_eof`."""
        async with anyio.create_task_group() as task_group:
            self._task_group = task_group
            if self._on_start is not None:
                self._on_start()
            async for line in self._lines():
                self._dispatch_line(line)
            self._closed = True
            for pending in self._pending.values():
                pending.error = ConnectionClosed("the client closed the connection")
                pending.done.set()
            if self._on_input_closed is not None:
                self._on_input_closed()
            # Answers already under way (errors, cancelled prompts) still get written.
            if self._active:
                with anyio.move_on_after(EOF_GRACE_SECONDS):
                    await self._idle.wait()
            task_group.cancel_scope.cancel()
        if self._on_eof is not None:
            with anyio.CancelScope(shield=True):
                await self._on_eof()

    def spawn(self, function: Callable[..., Coroutine[Any, Any, None]], *args: object) -> None:
        """Run a background task that ends with the connection (not waited for at EOF)."""
        assert self._task_group is not None
        self._task_group.start_soon(function, *args)

    async def _lines(self) -> AsyncIterator[bytes | None]:
        """Complete lines; None stands for a line that exceeded the limit (already skipped)."""
        buffer = bytearray(self._initial_data)
        self._initial_data = b""
        ended = self._input_ended
        scanned = 0
        skipping = False
        while True:
            while True:
                newline = buffer.find(b"\n", scanned)
                if newline < 0:
                    scanned = len(buffer)
                    if len(buffer) > self._line_limit:
                        if not skipping:
                            skipping = True
                            yield None
                        buffer.clear()
                        scanned = 0
                    break
                line = bytes(buffer[:newline])
                del buffer[: newline + 1]
                scanned = 0
                if skipping:
                    skipping = False
                    continue
                if len(line) > self._line_limit:
                    yield None
                    continue
                yield line
            if ended:
                break
            chunk = await self._reader.read()
            if not chunk:
                break
            buffer += chunk
        if buffer.strip() and not skipping:
            yield bytes(buffer)

    def _dispatch_line(self, line: bytes | None) -> None:
        if line is None:
            self._spawn_error(None, PARSE_ERROR, "message exceeds the line limit")
            return
        if not line.strip():
            return
        try:
            message = decode_message(line)
        except (ValueError, RecursionError):
            self._spawn_error(None, PARSE_ERROR, "parse error: not valid JSON")
            return
        if isinstance(message, list):
            self._spawn_error(None, INVALID_REQUEST, "invalid request: batches are not supported")
            return
        if not isinstance(message, dict):
            self._spawn_error(None, INVALID_REQUEST, "invalid request: not a JSON object")
            return
        self._dispatch(message)  # pyright: ignore[reportUnknownArgumentType]

    def _dispatch(self, message: JsonObject) -> None:
        if is_response(message):
            # Matched to a request we sent, or dropped: a response is never answered (with or
            # without `jsonrpc`), or a stray one would get an error for an id we never sent.
            self._resolve_pending(message)
            return
        raw_id = message.get("id")
        id_problem = request_id_problem(raw_id)
        request_id: RequestId = raw_id if id_problem is None else None
        if message.get("jsonrpc") != "2.0":
            self._spawn_error(request_id, INVALID_REQUEST, 'invalid request: jsonrpc must be "2.0"')
            return
        if id_problem is not None:
            self._spawn_error(None, INVALID_REQUEST, f"invalid request: {id_problem}")
            return
        method = message.get("method")
        if method is None:
            self._spawn_error(request_id, INVALID_REQUEST, "invalid request: no method")
            return
        if not isinstance(method, str):
            self._spawn_error(
                request_id, INVALID_REQUEST, "invalid request: method must be a string"
            )
            return
        params: object = message.get("params")
        if "id" not in message:
            self._dispatch_notification(method, params)
            return
        if params is None:
            params = {}
        if not isinstance(params, dict):
            self._spawn_error(
                request_id, INVALID_PARAMS, "invalid params: params must be an object"
            )
            return
        request_params = cast("JsonObject", params)
        handler = self._requests.get(method)
        if handler is None:
            shown = bounded(method)
            self._spawn_error(
                request_id, METHOD_NOT_FOUND, f"method not found: {shown}", {"method": shown}
            )
            return
        if request_id in self._in_flight:
            self._spawn_error(
                request_id, INVALID_REQUEST, f"invalid request: id {request_id!r} is already in use"
            )
            return
        context = RequestContext(request_id=request_id, method=method)
        entry = _InFlight(scope=anyio.CancelScope(), context=context)
        self._in_flight[request_id] = entry
        self._spawn(self._run_request, handler, request_params, entry)

    def _dispatch_notification(self, method: str, raw_params: object) -> None:
        params = cast("JsonObject", raw_params) if isinstance(raw_params, dict) else {}
        if method == "$/cancel_request":
            # Run as a task, after the tasks of the requests read before it have started: a
            # request and its cancel read in one chunk must reach the handler's `soft_cancel`.
            self._spawn(self._run_cancel, params.get("requestId"))
            return
        handler = self._notifications.get(method)
        if handler is None:
            self._log("ignored notification", {"method": bounded(method)})
            return
        self._spawn(self._run_notification, method, handler, params)

    async def _run_cancel(self, request_id: object) -> None:
        self._cancel_in_flight(request_id)

    def _cancel_in_flight(self, request_id: object) -> None:
        if not _valid_id(request_id):
            return
        entry = self._in_flight.get(request_id)  # pyright: ignore[reportArgumentType]
        if entry is None:
            return
        if entry.context.soft_cancel is not None:
            entry.context.soft_cancel()
            return
        entry.cancelled_by_peer = True
        entry.scope.cancel()

    def _resolve_pending(self, message: JsonObject) -> None:
        raw_id = message.get("id")
        pending = self._pending.get(raw_id) if type(raw_id) is int else None
        if pending is None:
            shown = bounded(raw_id) if isinstance(raw_id, str) else raw_id
            self._log("response to an unknown request, dropped", {"id": shown})
            return
        error: object = message.get("error")
        if error is not None:
            fields = cast("JsonObject", error) if isinstance(error, dict) else {}
            code = fields.get("code")
            pending.error = ClientError(
                pending.method,
                code if type(code) is int else INTERNAL_ERROR,
                str(fields.get("message", error)),
                fields.get("data"),
            )
        else:
            pending.result = message.get("result")
        pending.done.set()

    def _spawn(self, function: Callable[..., Coroutine[Any, Any, None]], *args: object) -> None:
        assert self._task_group is not None
        self._active += 1
        self._task_group.start_soon(self._tracked, function, args)

    async def _tracked(
        self, function: Callable[..., Coroutine[Any, Any, None]], args: tuple[object, ...]
    ) -> None:
        try:
            await function(*args)
        finally:
            self._active -= 1
            if self._active == 0:
                self._idle.set()
                self._idle = anyio.Event()

    def _spawn_error(
        self, request_id: RequestId, code: int, message: str, data: object = None
    ) -> None:
        self._spawn(self._send_error, request_id, RpcError(code, message, data))

    async def _send_error(self, request_id: RequestId, error: RpcError) -> None:
        await self._write({"jsonrpc": "2.0", "id": request_id, "error": error.to_json()})

    async def _run_request(
        self, handler: RequestHandler, params: JsonObject, entry: _InFlight
    ) -> None:
        context = entry.context
        response: JsonObject | None = None
        try:
            with entry.scope:
                result = await handler(params, context)
                response = {"jsonrpc": "2.0", "id": context.request_id, "result": result}
        except Exception as exc:
            error = self._map_error(exc, context.method)
            response = {"jsonrpc": "2.0", "id": context.request_id, "error": error.to_json()}
        finally:
            self._in_flight.pop(context.request_id, None)
        if response is None:
            # Our scope swallowed a peer's $/cancel_request.
            response = {
                "jsonrpc": "2.0",
                "id": context.request_id,
                "error": {"code": REQUEST_CANCELLED, "message": "request cancelled"},
            }
        await self._write(response)
        if "result" in response:
            for callback in context.after_response:
                try:
                    await callback()
                except Exception as exc:
                    self._log("after-response step failed", {"error": repr(exc), "exc": exc})

    async def _run_notification(
        self, method: str, handler: NotificationHandler, params: JsonObject
    ) -> None:
        try:
            await handler(params)
        except Exception as exc:
            self._log("notification failed", {"method": method, "error": repr(exc)})

    def _map_error(self, exc: Exception, method: str) -> RpcError:
        if isinstance(exc, RpcError):
            return exc
        if isinstance(exc, BaseExceptionGroup):
            inner = _only_exception(cast("BaseExceptionGroup[BaseException]", exc))
            if inner is not None:
                return self._map_error(inner, method)
        if self._error_mapper is not None:
            mapped = self._error_mapper(exc)
            if mapped is not None:
                return mapped
        self._log(
            "internal error", {"method": method, "error": bounded(repr(exc), 2000), "exc": exc}
        )
        return RpcError(INTERNAL_ERROR, f"internal error: {type(exc).__name__}: {exc}")

    # ------------------------------------------------------------------------------ sending

    async def _write(self, message: JsonObject) -> None:
        data = encode_message(message)
        if self._write_broken:
            return
        if not self._write_lock.locked():
            # The common case, nobody mid-write: write at once, without a trip through the loop
            # (one per text delta would cost more than the write). Only the unwritten rest of a
            # full pipe waits, holding the lock so lines never interleave.
            try:
                data = data[self._writer.write_nowait(data) :]
            except (BrokenPipeError, ConnectionResetError):
                self._write_broken = True
                return
            if not data:
                return
        async with self._write_lock:
            if self._write_broken:
                return
            try:
                await self._writer.write(data)
            except (BrokenPipeError, ConnectionResetError):
                self._write_broken = True

    async def notify(self, method: str, params: JsonObject) -> None:
        """Send a notification."""
        await self._write({"jsonrpc": "2.0", "method": method, "params": params})

    async def request(self, method: str, params: JsonObject) -> Any:
        """Send a request and wait for its result.

        Cancelling the caller forgets the request and tells the peer with `$/cancel_request`.

        Raises:
            ClientError: the peer answered with an error.
            ConnectionClosed: the input ended first.
        """
        if self._closed:
            raise ConnectionClosed("the client closed the connection")
        self._next_id += 1
        request_id = self._next_id
        pending = _Pending(method=method)
        self._pending[request_id] = pending
        try:
            await self._write(
                {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
            )
            await pending.done.wait()
        except anyio.get_cancelled_exc_class():
            if not self._closed:
                with anyio.CancelScope(shield=True):
                    await self.notify("$/cancel_request", {"requestId": request_id})
            raise
        finally:
            self._pending.pop(request_id, None)
        if pending.error is not None:
            raise pending.error
        return pending.result
