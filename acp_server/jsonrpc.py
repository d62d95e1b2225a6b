"""JSON-RPC 2.0 over newline-delimited byte streams (stdio), on anyio: the one transport.

One `Connection` owns a read fd and a write fd. Its reader never waits on our own outgoing
requests: every incoming request runs in its own task under its own cancel scope (the request
scope, `RequestContext.scope`), kept in an in-flight table so `$/cancel_request` can cancel it,
while responses to the requests WE sent are matched by id (`acp_server.outgoing`). A cancelled
request is answered -32800, unless its handler answers cancellation itself
(`answers_cancellation`: a prompt's `stopReason: cancelled`). One lock serialises writes, so each
message is exactly one line.

At the end of the input every request already read is still answered (a handler learns that the
input closed through `on_input_closed`: the server cancels prompts then, which answer
`cancelled`), and only then are the background tasks stopped and `serve` returns.

This module is also the single exception-to-error boundary: handlers raise `RpcError` (or a
domain exception the injected `error_mapper` knows); everything else becomes `-32603`.

Kept free of pydantic, structlog and the agent: it is on the path to the `initialize` reply.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias, cast

import anyio
import anyio.abc

from acp_server.fd_streams import FdReader, FdWriter, Line, read_lines
from acp_server.framing import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    REQUEST_CANCELLED,
    InputUnit,
    Message,
    RawObject,
    RpcError,
    bounded,
    decode_message,
    encode_message,
    is_response,
    parse_problem,
    request_id_problem,
    result_response,
)
from acp_server.outgoing import ClientError, ConnectionClosed, OutgoingRequests

if TYPE_CHECKING:
    from acp_server.first_line import ReadAhead
    from acp_server.protocol.methods import ClientRequestSender

__all__ = [
    "DEFAULT_LINE_LIMIT",
    "EOF_ANSWER_LIMIT_SECONDS",
    "ClientError",
    "Connection",
    "ConnectionClosed",
    "ErrorMapper",
    "LogSink",
    "NotificationHandler",
    "RequestContext",
    "RequestHandler",
    "RequestId",
    "answers_cancellation",
    "run_in_scope",
]

DEFAULT_LINE_LIMIT = 50 * 1024 * 1024
"""Longest accepted line; a longer one is skipped and answered with -32700."""
EOF_ANSWER_LIMIT_SECONDS = 10.0
"""After the input ends, how long the requests already read get to answer before they are
abandoned (a handler that ignores cancellation must not keep the process alive)."""

RequestId: TypeAlias = int | str | None


@dataclass(slots=True, kw_only=True)
class RequestContext:
    """What a request handler learns about its request."""

    request_id: RequestId
    method: str
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    """The request's cancel scope: `$/cancel_request` cancels it (also before the handler has
    started: it then starts cancelled). The handler runs inside it and a cancelled request is
    answered -32800, unless the handler is one that `answers_cancellation`, which enters it
    itself."""
    after_response: list[Callable[[], Awaitable[None]]] = field(default_factory=lambda: [])
    """Run once the response is written (e.g. `available_commands_update` after `session/load`)."""


RequestHandler: TypeAlias = Callable[[RawObject, RequestContext], Awaitable[Message]]
NotificationHandler: TypeAlias = Callable[[RawObject], Awaitable[None]]
ErrorMapper: TypeAlias = Callable[[Exception], "RpcError | None"]


class LogSink(Protocol):
    """Where the server logs (`acp_server.log.log`); a `debug` event is dropped unless debug
    logging is on."""

    def __call__(
        self, event: str, fields: Mapping[str, object], *, debug: bool = False
    ) -> None: ...


Task: TypeAlias = Callable[..., Coroutine[Any, Any, None]]


@dataclass(frozen=True, slots=True)
class _AnswersCancellation:
    handler: RequestHandler

    async def __call__(self, params: RawObject, context: RequestContext) -> Message:
        return await self.handler(params, context)


def answers_cancellation(handler: RequestHandler) -> RequestHandler:
    """`handler` enters its request's scope itself (`with context.scope:`), around what a
    cancellation stops, and answers a cancelled request its own way after it (a prompt:
    `stopReason: cancelled`, once its turn has ended), where the transport would answer
    -32800."""
    return _AnswersCancellation(handler)


async def run_in_scope(
    handler: RequestHandler, params: RawObject, context: RequestContext
) -> Message:
    """`handler` run as the transport runs it: inside its request's scope, a cancelled request
    being -32800, unless it `answers_cancellation` (it enters the scope itself). For a handler
    that picks another (`acp_server.server`'s table by version), itself `answers_cancellation`.
    """
    if isinstance(handler, _AnswersCancellation):
        return await handler(params, context)
    with context.scope:
        return await handler(params, context)
    raise RpcError(REQUEST_CANCELLED, "request cancelled")  # the scope swallowed a cancel


def _no_log(event: str, fields: Mapping[str, object], *, debug: bool = False) -> None:
    return None


def _only_exception(group: BaseExceptionGroup[BaseException]) -> Exception | None:
    """The single exception a task group wrapped, if that is all it holds."""
    if len(group.exceptions) != 1:
        return None
    inner = group.exceptions[0]
    return inner if isinstance(inner, Exception) else None


def _response(request_id: RequestId, error: RpcError) -> Message:
    return {"jsonrpc": "2.0", "id": request_id, "error": error.to_json()}


class Connection:
    """A JSON-RPC peer over a pair of fds (the same fd twice for a socket). `ahead`: input read
    before the loop ran (`acp_server.first_line`), served before the fd is read."""

    def __init__(
        self,
        *,
        read_fd: int,
        write_fd: int,
        requests: Mapping[str, RequestHandler],
        notifications: Mapping[str, NotificationHandler],
        error_mapper: ErrorMapper | None = None,
        on_input_closed: Callable[[], None] | None = None,
        log: LogSink = _no_log,
        line_limit: int = DEFAULT_LINE_LIMIT,
        input_unit: InputUnit = "line",
        ahead: ReadAhead | None = None,
    ) -> None:
        self._reader = FdReader(read_fd, ahead)
        self._answered = ahead.lines if ahead is not None else 0
        self._input_unit: InputUnit = input_unit
        self._writer = FdWriter(write_fd)
        self._requests = requests
        self._notifications = notifications
        self._error_mapper = error_mapper
        self._on_input_closed = on_input_closed
        self._log = log
        self._line_limit = line_limit
        # Uncontended writes must not yield to the loop: one checkpoint per text delta costs more
        # than the write itself.
        self._write_lock = anyio.Lock(fast_acquire=True)
        self._write_broken = False
        self._in_flight: dict[RequestId, RequestContext] = {}
        self._outgoing = OutgoingRequests()
        self.peer_cancels = False
        """Whether the peer takes `$/cancel_request` (ACP v1 has no capability for it: set by
        the server from what the client said of itself, and here once the peer sent one)."""
        self._active = 0
        """Tasks answering what was read (requests, notifications, errors)."""
        self._idle = anyio.Event()
        self._task_group: anyio.abc.TaskGroup | None = None

    @property
    def closed(self) -> bool:
        """True once the input ended: no more requests will be answered by the peer."""
        return self._outgoing.closed

    # ------------------------------------------------------------------------------ serving

    async def serve(self) -> None:
        """Read and dispatch until the input ends; answer what was read; stop the rest."""
        async with anyio.create_task_group() as task_group:
            self._task_group = task_group
            async for line in read_lines(self._reader, self._line_limit, self._answered):
                self._dispatch_line(line)
            self._outgoing.close()
            if self._on_input_closed is not None:
                self._on_input_closed()
            if self._active:
                with anyio.move_on_after(EOF_ANSWER_LIMIT_SECONDS) as waited:
                    await self._idle.wait()
                if waited.cancelled_caught:
                    self._log("requests left unanswered at the end of input", {})
            task_group.cancel_scope.cancel()

    def _dispatch_line(self, line: Line) -> None:
        if line.data is None:
            limit = f"the {self._input_unit} limit"
            self._spawn_error(None, RpcError(PARSE_ERROR, f"message exceeds {limit}"))
            return
        if not line.data.strip():
            return
        try:
            message = decode_message(line.data)
        except (ValueError, RecursionError) as exc:
            self._spawn_error(None, parse_problem(exc, line.number, self._input_unit))
            return
        if isinstance(message, list):
            self._invalid(None, "batches are not supported")
        elif not isinstance(message, dict):
            self._invalid(None, "not a JSON object")
        else:
            self._dispatch(message)  # pyright: ignore[reportUnknownArgumentType]

    def _invalid(self, request_id: RequestId, why: str) -> None:
        self._spawn_error(request_id, RpcError(INVALID_REQUEST, f"invalid request: {why}"))

    def _dispatch(self, message: RawObject) -> None:
        if is_response(message):
            # Matched to a request we sent, or dropped: a response is never answered (with or
            # without `jsonrpc`), or a stray one would get an error for an id we never sent.
            dropped = self._outgoing.resolve(message)
            if dropped is not None:
                self._log(dropped, {})
            return
        raw_id = message.get("id")
        id_problem = request_id_problem(raw_id)
        request_id = cast("RequestId", raw_id) if id_problem is None else None
        method = message.get("method")
        params: object = message.get("params")
        if message.get("jsonrpc") != "2.0":
            self._invalid(request_id, 'jsonrpc must be "2.0"')
        elif id_problem is not None:
            self._invalid(None, id_problem)
        elif method is None:
            self._invalid(request_id, "no method")
        elif not isinstance(method, str):
            self._invalid(request_id, "method must be a string")
        elif "id" not in message:
            self._dispatch_notification(method, params)
        elif params is not None and not isinstance(params, dict):
            error = RpcError(INVALID_PARAMS, "invalid params: params must be an object")
            self._spawn_error(request_id, error)
        else:
            request_params = cast("RawObject", params) if params is not None else {}
            self._dispatch_request(request_id, method, request_params)

    def _dispatch_request(self, request_id: RequestId, method: str, params: RawObject) -> None:
        handler = self._requests.get(method)
        if handler is None:
            shown = bounded(method)
            error = RpcError(METHOD_NOT_FOUND, f"method not found: {shown}", {"method": shown})
            self._spawn_error(request_id, error)
        elif request_id in self._in_flight:
            self._invalid(request_id, f"id {request_id!r} is already in use")
        else:
            context = RequestContext(request_id=request_id, method=method)
            self._in_flight[request_id] = context
            self._spawn_tracked(self._run_request, handler, params, context)

    def _dispatch_notification(self, method: str, raw_params: object) -> None:
        params: RawObject = raw_params if isinstance(raw_params, dict) else {}  # pyright: ignore[reportUnknownVariableType]
        if method == "$/cancel_request":
            self.peer_cancels = True  # it speaks the method, so it takes it too
            self._cancel_in_flight(params.get("requestId"))
            return
        handler = self._notifications.get(method)
        if handler is None:
            self._log("ignored notification", {"method": bounded(method)})
            return
        self._spawn_tracked(self._run_notification, method, handler, params)

    def _cancel_in_flight(self, request_id: object) -> None:
        if request_id_problem(request_id) is not None:
            return
        context = self._in_flight.get(request_id)  # pyright: ignore[reportArgumentType]
        if context is not None:
            context.scope.cancel()

    def _spawn_tracked(self, function: Task, *args: object) -> None:
        assert self._task_group is not None
        self._active += 1
        self._task_group.start_soon(self._tracked, function, args)

    async def _tracked(self, function: Task, args: tuple[object, ...]) -> None:
        try:
            await function(*args)
        finally:
            self._active -= 1
            if self._active == 0:
                self._idle.set()
                self._idle = anyio.Event()

    def _spawn_error(self, request_id: RequestId, error: RpcError) -> None:
        self._spawn_tracked(self._write, _response(request_id, error))

    async def _run_request(
        self, handler: RequestHandler, params: RawObject, context: RequestContext
    ) -> None:
        response: Message | None = None
        try:
            if isinstance(handler, _AnswersCancellation):
                result = await handler(params, context)
                response = result_response(context.request_id, result)
            else:
                with context.scope:
                    result = await handler(params, context)
                    response = result_response(context.request_id, result)
        except Exception as exc:
            response = _response(context.request_id, self._map_error(exc, context.method))
        finally:
            self._in_flight.pop(context.request_id, None)
        if response is None:  # our scope swallowed a peer's $/cancel_request
            response = _response(
                context.request_id, RpcError(REQUEST_CANCELLED, "request cancelled")
            )
        await self._write(response)
        if "result" in response:
            for callback in context.after_response:
                try:
                    await callback()
                except Exception as exc:
                    self._log("after-response step failed", {"error": repr(exc), "exc": exc})

    async def _run_notification(
        self, method: str, handler: NotificationHandler, params: RawObject
    ) -> None:
        try:
            await handler(params)
        except Exception as exc:
            self._log("notification failed", {"method": method, "error": repr(exc)})

    def _map_error(self, exc: Exception, method: str) -> RpcError:
        if isinstance(exc, RpcError):
            return exc
        if isinstance(exc, BaseExceptionGroup):
            inner = _only_exception(exc)
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

    async def _write(self, message: Message) -> None:
        data = encode_message(message)
        if self._write_broken:
            return
        if not self._write_lock.locked():
            # The common case, nobody mid-write: write at once, without a trip through the loop.
            # Only the unwritten rest of a full pipe waits, holding the lock so lines never
            # interleave.
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

    async def notify(self, method: str, params: Message) -> None:
        """Send a notification."""
        await self._write({"jsonrpc": "2.0", "method": method, "params": params})

    @property
    def request(self) -> ClientRequestSender:
        """Send a request and wait for its result, in its method's shape (checked at this
        boundary: `acp_server.answers`).

        Cancelling the caller forgets the request and tells the peer with `$/cancel_request`
        when it takes that (`peer_cancels`); one that does not answers the request later, and
        the answer is dropped as one to a request we no longer have.

        Raises:
            ClientError: the peer answered with an error, or with an answer that does not have
                the method's shape (`InvalidAnswer`).
            ConnectionClosed: the input ended first.
        """
        return self.send_request

    async def send_request(self, method: str, params: Message) -> Any:
        """`request`, for a method that is only known at run time (the answer still checked
        for its shape when the method is one of ACP's)."""
        request_id = self._outgoing.open(method)
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        try:
            await self._write(message)
            result = await self._outgoing.wait(request_id)
        except anyio.get_cancelled_exc_class():
            self._outgoing.forget(request_id)
            if self.peer_cancels and not self._outgoing.closed:
                with anyio.CancelScope(shield=True):
                    await self.notify("$/cancel_request", {"requestId": request_id})
            raise
        from acp_server.answers import InvalidAnswer, checked  # not on the `initialize` path

        try:
            return checked(method, result)
        except InvalidAnswer as exc:
            self._log("an answer did not validate", {"method": method, "where": exc.where})
            raise
