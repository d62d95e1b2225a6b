"""The ACP agent: method routing, and the methods on sessions once they exist.

`initialize` settles the protocol version (`acp_server.initialization`): v1, or the v2 draft for a
client that asks for it, whose methods are `acp_server.v2.methods` (loaded then) over the same
sessions. Only the transport, the typed params and the capability tables load before the
`initialize` reply. Opening sessions (`session/new|load|resume`) is `acp_server.opening`; the
sessions of the connection are a table of slots (`acp_server.session_table`), and a request for a
session that is still opening waits for it.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar, cast

from acp_server import params as p
from acp_server.advertised import AUTH_METHOD_ID, LOGIN_METHOD_ID, PROTOCOL_VERSION
from acp_server.auth_status import AuthStatus
from acp_server.capabilities import ClientCapabilities, ClientLearned
from acp_server.framing import (
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    InputUnit,
    InvalidParams,
    Message,
    RawObject,
    RpcError,
    bounded,
    shown,
)
from acp_server.initialization import Initialized, respond
from acp_server.jsonrpc import (
    DEFAULT_LINE_LIMIT,
    Connection,
    LogSink,
    NotificationHandler,
    RequestContext,
    RequestHandler,
    answers_cancellation,
    run_in_scope,
)
from acp_server.mcp_over_acp import McpChannel
from acp_server.opening import SessionOpener
from acp_server.providers_methods import ProviderMethods
from acp_server.session_methods import SessionMethods
from acp_server.session_table import SessionSlot, SessionTable

if TYPE_CHECKING:
    from acp_server.first_line import FirstLine
    from acp_server.ports import Ports
    from acp_server.protocol.connection import (
        AuthenticateRequest,
        AuthenticateResponse,
        LogoutResponse,
    )
    from acp_server.protocol.prompt import CancelNotification, PromptRequest, PromptResponse
    from acp_server.protocol.sessions import (
        CloseSessionRequest,
        CloseSessionResponse,
        DeleteSessionRequest,
        DeleteSessionResponse,
        SetSessionConfigOptionRequestValueId,
        SetSessionConfigOptionResponse,
        SetSessionModeRequest,
        SetSessionModeResponse,
    )
    from acp_server.protocol.unstable.sessions import (
        ListSessionsRequest,
        ListSessionsResponse,
        SessionInfo,
    )

Params = TypeVar("Params")


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerLimits:
    line_limit: int = DEFAULT_LINE_LIMIT
    """Longest accepted message line (50 MB)."""
    list_page: int = 50
    """Sessions per `session/list` page."""

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> ServerLimits:
        """`EARSHOT_ACP_LINE_LIMIT` and `EARSHOT_ACP_LIST_PAGE` (they exist for tests)."""
        line_limit = environ.get("EARSHOT_ACP_LINE_LIMIT")
        list_page = environ.get("EARSHOT_ACP_LIST_PAGE")
        return cls(
            line_limit=int(line_limit) if line_limit else DEFAULT_LINE_LIMIT,
            list_page=int(list_page) if list_page else 50,
        )


def _no_log(event: str, fields: Mapping[str, object], *, debug: bool = False) -> None:
    return None


def _typed(
    parse: Callable[[RawObject], Params],
    handler: Callable[[Params, RequestContext], Awaitable[Message]],
) -> RequestHandler:
    """A handler taking the typed params `parse` checked (the boundary: -32602 names the field)."""

    async def run(params: RawObject, context: RequestContext) -> Message:
        return await handler(parse(params), context)

    return run


def _then(handler: RequestHandler, after: Callable[[], Awaitable[None]]) -> RequestHandler:
    """`handler`, and `after` once its answer is written (when it answered)."""

    async def run(params: RawObject, context: RequestContext) -> Message:
        result = await handler(params, context)
        context.after_response.append(after)
        return result

    return run


V2_METHODS = (
    "initialize",
    "auth/login",
    "auth/logout",
    "session/new",
    "session/list",
    "session/delete",
    "session/resume",
    "session/fork",
    "session/close",
    "session/set_config_option",
    "session/prompt",
    "tool_call/cancel",
    "terminal/cancel",
    "providers/list",
    "providers/set",
    "providers/disable",
    "session/set_title",
    "session/status",
    "session/archive",
    "session/unarchive",
    "auth/status",
)
"""The requests a v2 connection answers (`acp_server.v2.methods`, imported at the first)."""


def _by_version(
    v1: dict[str, RequestHandler],
    v2: Callable[[], Mapping[str, RequestHandler]],
    protocol: Callable[[], int],
) -> dict[str, RequestHandler]:
    """One table for both versions: each request goes to the handler of the version the
    connection negotiated when it runs (a request pipelined after `initialize` is handled after
    it). A method the version does not have is -32601, as an unknown one is (`jsonrpc`). The
    chosen handler meets cancellation as the transport would have run it (`run_in_scope`): v1's
    prompt answers `cancelled` itself, anything else is -32800."""

    def route(method: str) -> RequestHandler:
        async def run(params: RawObject, context: RequestContext) -> Message:
            handler = (v2() if protocol() == 2 else v1).get(method)
            if handler is None:
                name = bounded(method)
                raise RpcError(METHOD_NOT_FOUND, f"method not found: {name}", {"method": name})
            return await run_in_scope(handler, params, context)

        return answers_cancellation(run)

    return {method: route(method) for method in dict.fromkeys([*v1, *V2_METHODS])}


def _fork_handler(server: AcpServer) -> RequestHandler:
    """`session/fork` (unstable; `acp_server.branches`, imported at its first call): the copy
    is opened by `session/resume`."""

    async def handle(params: RawObject, context: RequestContext) -> Message:
        from acp_server.branches import session_fork

        return await session_fork(server.sessions.store, server.opener.resume, params, context)

    return handle


class AcpServer:
    """Serves one client over one connection."""

    def __init__(
        self,
        *,
        ports: Ports,
        version: str,
        log: LogSink = _no_log,
        limits: ServerLimits | None = None,
        input_unit: InputUnit = "line",
    ) -> None:
        self.workspaces = ports.workspaces
        self.sessions = ports.sessions
        self._providers = ports.providers
        self.signalled: int | None = None
        """The signal that ended serving (`serve(close_on_signals=True)`), if one did."""
        self._input_unit: InputUnit = input_unit
        self._version = version
        self.log = log
        self._limits = limits or ServerLimits.from_environ(os.environ)
        self.client = ClientCapabilities()
        self.protocol = PROTOCOL_VERSION
        """The ACP version `initialize` settled: 1, or 2 for the v2 draft."""
        self.learned = ClientLearned()
        self.table = SessionTable(log)
        self.opener = SessionOpener(self)
        self.session_methods = SessionMethods(sessions=self.sessions, table=self.table)
        self.mcp = McpChannel(lambda: self.connection)
        """The client's MCP servers over this connection (`mcp/message`)."""
        self.auth = AuthStatus(
            workspaces=self.workspaces,
            slots=self.table.slots,
            notify=lambda method, params: self.connection.notify(method, params),
        )
        self._connection: Connection | None = None
        self._v2: dict[str, RequestHandler] | None = None

    # ----------------------------------------------------------------------------- wiring

    def requests(self) -> dict[str, RequestHandler]:
        # Where credentials can have changed, a client that asked `auth/status` hears of it.
        changed = self.auth.changed
        v1: dict[str, RequestHandler] = {
            "initialize": self.initialize,
            "authenticate": _then(_typed(p.authenticate, self.authenticate), changed),
            "logout": _then(self.logout, changed),
            "auth/status": self.auth.status,
            "session/new": _then(_typed(p.new_session, self.opener.new), changed),
            "session/load": _then(_typed(p.load_session, self.opener.load), changed),
            "session/resume": _then(_typed(p.resume_session, self.opener.resume), changed),
            "session/list": _typed(p.list_sessions, self.session_list),
            "session/close": _typed(p.close_session, self.session_close),
            "session/delete": _typed(p.delete_session, self.session_delete),
            "session/set_mode": _typed(p.set_mode, self.session_set_mode),
            "session/set_config_option": _typed(
                p.set_config_option, self.session_set_config_option
            ),
            "session/prompt": answers_cancellation(_typed(p.prompt, self.session_prompt)),
            **ProviderMethods(
                admin=self._providers,
                workspaces=self.workspaces,
                slots=self.table.slots,
                changed=changed,
            ).handlers(),
            "session/fork": _fork_handler(self),
            **self.session_methods.handlers(),
        }

        def v2() -> Mapping[str, RequestHandler]:
            if self._v2 is None:
                from acp_server.v2.methods import V2Methods

                self._v2 = V2Methods(self, v1).handlers()
            return self._v2

        return _by_version(v1, v2, lambda: self.protocol)

    def notifications(self) -> dict[str, NotificationHandler]:
        async def cancel(params: RawObject) -> None:
            request = p.cancel(params)
            if request is not None:
                await self.session_cancel(request)

        return {"session/cancel": cancel, "mcp/message": self.mcp.notification}

    async def serve(
        self,
        *,
        read_fd: int,
        write_fd: int,
        close_on_signals: bool = False,
        start: FirstLine | None = None,
    ) -> None:
        """Serve until the client closes our input and every request read is answered; then
        close every session (flushing its file). `close_on_signals` (the stdio server, in the
        main thread): SIGTERM or SIGHUP closes every session while the connection still serves,
        so that the editor terminals they hold are killed and released, then ends serving
        (`signalled` says which signal). `start`: what was read (and answered) before the event
        loop ran (`acp_server.first_line`)."""
        from acp_server.errors import map_exception

        self._connection = Connection(
            read_fd=read_fd,
            write_fd=write_fd,
            requests=self.requests(),
            notifications=self.notifications(),
            error_mapper=map_exception,
            on_input_closed=self.table.cancel_all,
            log=self.log,
            line_limit=self._limits.line_limit,
            input_unit=self._input_unit,
            ahead=start.ahead if start is not None else None,
        )
        if start is not None and start.initialized is not None:
            self.adopt(start.initialized)
        unbuilt: list[SessionSlot] = []
        try:
            # Each session's block is held by a host the table runs; at the end every session
            # is closed (its file flushed).
            async with self.table.hosting():
                try:
                    if close_on_signals:
                        await self._serve_until_signalled(self._connection)
                    else:
                        await self._connection.serve()
                finally:
                    unbuilt = [slot for slot in self.table.slots() if slot.live is None]
        finally:
            for slot in unbuilt:  # its build never ran, or was cut short
                self.sessions.release(slot.session_id, slot.setup.cwd)

    async def _serve_until_signalled(self, connection: Connection) -> None:
        import signal

        import anyio

        from acp_server.interrupt import handlers_kept

        numbers = (signal.SIGTERM, signal.SIGHUP)
        async with anyio.create_task_group() as group:

            async def close_on_signal(*, task_status: anyio.abc.TaskStatus[None]) -> None:
                with handlers_kept(*numbers), anyio.open_signal_receiver(*numbers) as received:
                    task_status.started()
                    async for number in received:
                        self.signalled = number
                        await self.table.close_all()
                        group.cancel_scope.cancel()

            await group.start(close_on_signal)
            await connection.serve()
            group.cancel_scope.cancel()

    @property
    def connection(self) -> Connection:
        assert self._connection is not None
        return self._connection

    # ------------------------------------------------------------------- initialize, auth

    async def initialize(self, params: RawObject, context: RequestContext) -> Message:
        """The answer in the version `initialize` negotiates (`acp_server.initialization`, the
        same code that answers a first line before the event loop)."""
        initialized = respond(
            params, version=self._version, credentials_found=self.workspaces.credentials_found
        )
        if self.protocol == 2 and initialized.protocol != 2:
            # v2: a repeated `initialize` must ask for v2 again (the connection never goes back)
            raise RpcError(INVALID_REQUEST, "invalid request: this connection speaks ACP v2")
        self.adopt(initialized)
        return cast("Message", initialized.result)

    def adopt(self, initialized: Initialized) -> None:
        """The connection's state after `initialize`, however it was answered (by `initialize`,
        or before the event loop: `acp_server.first_line`): its version and the client."""
        self.protocol = initialized.protocol
        self.client = initialized.client
        if self.client.cancel_request:
            self.connection.peer_cancels = True

    async def authenticate(
        self, request: AuthenticateRequest, context: RequestContext
    ) -> AuthenticateResponse:
        method = request["methodId"]
        if method not in (AUTH_METHOD_ID, LOGIN_METHOD_ID):
            raise InvalidParams("methodId", f"invalid params: unknown auth method {shown(method)}")
        return {}

    async def logout(self, params: RawObject, context: RequestContext) -> LogoutResponse:
        return {}

    # ------------------------------------------------------------------ other sessions

    async def session_list(
        self, request: ListSessionsRequest, context: RequestContext
    ) -> ListSessionsResponse:
        from pathlib import Path

        from acp_server.branches import list_filter, list_meta

        cwd = request.get("cwd")
        children, parent_id = list_filter(request)
        try:
            page = self.sessions.store.list(
                Path(cwd) if cwd is not None else None,
                cursor=request.get("cursor"),
                limit=self._limits.list_page,
                children=children,
                parent_id=parent_id,
                # Archived sessions are hidden unless asked for (`sessionCapabilities.archive`).
                archived=p.archive_filter(request.get("archived")),
            )
        except ValueError as exc:
            raise InvalidParams("cursor", f"invalid params: bad cursor ({exc})") from exc
        sessions: list[SessionInfo] = []
        for item in page.items:
            info: SessionInfo = {
                "sessionId": item.id,
                "cwd": item.cwd,
                "updatedAt": item.updated,
                "archived": item.archived,  # on every session, as the capability requires
            }
            if item.title:
                info["title"] = item.title
            if item.additional_directories:
                info["additionalDirectories"] = list(item.additional_directories)
            if (meta := list_meta(item)) is not None:
                info["_meta"] = meta
            sessions.append(info)
        result: ListSessionsResponse = {"sessions": sessions}
        if page.next_cursor is not None:
            result["nextCursor"] = page.next_cursor
        return result

    async def session_close(
        self, request: CloseSessionRequest, context: RequestContext
    ) -> CloseSessionResponse:
        await self.table.close(request["sessionId"])
        return {}

    async def session_delete(
        self, request: DeleteSessionRequest, context: RequestContext
    ) -> DeleteSessionResponse:
        await self.table.close(request["sessionId"])
        await self.sessions.store.delete(request["sessionId"])
        return {}

    # --------------------------------------------------------------- one open session

    async def session_set_mode(
        self, request: SetSessionModeRequest, context: RequestContext
    ) -> SetSessionModeResponse:
        from acp_server.config import parse_mode

        live = await self.table.session(request["sessionId"])
        mode = parse_mode(request["modeId"])
        if mode is None:
            raise InvalidParams(
                "modeId", f"invalid params: unknown mode {shown(request['modeId'])}"
            )
        await live.pickers.set_mode(mode)
        return {}

    async def session_set_config_option(
        self, request: SetSessionConfigOptionRequestValueId, context: RequestContext
    ) -> SetSessionConfigOptionResponse:
        live = await self.table.session(request["sessionId"])
        options = await live.pickers.set_config_option(request["configId"], request["value"])
        return {"configOptions": options}

    async def session_prompt(
        self, request: PromptRequest, context: RequestContext
    ) -> PromptResponse:
        """Under its request's scope, which `$/cancel_request` cancels, and `session/cancel`
        with the session's other prompts in flight; a prompt whose scope was cancelled is
        answered `cancelled`, once the turn it started has ended (`PromptRun`)."""
        from acp_server.live import PromptRun

        slot = self.table.slot(request["sessionId"])
        with slot.prompting(context.scope):  # before any await: a cancel read next finds it
            prompt = PromptRun(slot.session, request["prompt"])
            with context.scope:
                await prompt.run()
            return {"stopReason": await prompt.answer(cancelled=context.scope.cancel_called)}

    async def session_cancel(self, request: CancelNotification) -> None:
        """Every prompt of the session in flight: their request scopes are cancelled; on a
        subagent's session, its work only."""
        session_id = request["sessionId"]
        if self.table.get(session_id) is not None:
            self.table.cancel(session_id)
            return
        for slot in self.table.slots():  # a subagent's session: its work only
            view = None if slot.live is None else slot.live.channel.subagents
            if view is not None and view.cancel(session_id):
                return
