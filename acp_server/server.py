"""The ACP v1 agent: method routing and the session lifecycle.

Only `jsonrpc`, `capabilities` and `params` load before the `initialize` reply; the session
machinery (agent, sessions, providers) is imported when the first session is made, and the
session factory is warmed in the background right after `initialize` is answered.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from acp_server import params as p
from acp_server.advertised import AUTH_METHOD_ID, initialize_result
from acp_server.capabilities import ClientCapabilities
from acp_server.early import EarlyInput
from acp_server.jsonrpc import (
    DEFAULT_LINE_LIMIT,
    Connection,
    InvalidParams,
    JsonObject,
    Logger,
    NotificationHandler,
    RequestContext,
    RequestHandler,
)
from acp_server.pending import PendingSessions
from acp_server.setup_params import SessionSetup, parse_setup

if TYPE_CHECKING:
    from acp_server.early_session import EarlySession, Planner
    from acp_server.factory import SessionFactory, SessionIO
    from acp_server.live import LiveSession
    from agent.session import AgentSession

Spawn = Callable[[Callable[[], Awaitable[None]]], None]
"""Starts a long-lived background task on the connection (MCP clients use it)."""
FactoryProvider = Callable[[Spawn], Awaitable["SessionFactory"]]
"""Builds the session factory, once, when the server first needs it."""
LINE_LIMIT = int(os.environ.get("EARSHOT_ACP_LINE_LIMIT") or DEFAULT_LINE_LIMIT)
"""Longest accepted message line (50 MB; the variable exists for tests)."""
SESSION_LIST_PAGE = int(os.environ.get("EARSHOT_ACP_LIST_PAGE", "50") or 50)
"""Sessions per `session/list` page (the variable exists for tests)."""


def _no_log(event: str, fields: Any) -> None:
    return None


def _fork_handler(server: AcpServer) -> RequestHandler:
    """`session/fork` (`acp_server.branches`, imported at its first call): the copy is opened
    by `session/resume`."""

    async def handle(params: JsonObject, context: RequestContext) -> JsonObject:
        from acp_server.branches import session_fork

        store = (await server.factory()).store
        return await session_fork(store, server.session_resume, params, context)

    return handle


class AcpServer:
    """Serves one client over one connection."""

    def __init__(
        self,
        *,
        factory_provider: FactoryProvider,
        version: str,
        log: Logger = _no_log,
        planner: Planner | None = None,
    ) -> None:
        self._factory_provider = factory_provider
        self._planner = planner
        """`SessionFactory.plan_new`, usable before the factory exists: a `session/new` that
        arrives before the warm-up has finished is answered from it (`acp_server.early_session`)."""
        self._factory: SessionFactory | None = None
        self._factory_lock = anyio.Lock()
        self._warming: anyio.Event | None = None
        self._version = version
        self._log = log
        self.client = ClientCapabilities()
        self.sessions: dict[str, LiveSession] = {}
        self._pending = PendingSessions()
        """Sessions answered in advance (`acp_server.early_session`) and still being built."""
        self._connection: Connection | None = None

    # ----------------------------------------------------------------------------- wiring

    def requests(self) -> dict[str, RequestHandler]:
        return {
            "initialize": self.initialize,
            "authenticate": self.authenticate,
            "logout": self.logout,
            "session/new": self.session_new,
            "session/load": self.session_load,
            "session/resume": self.session_resume,
            "session/list": self.session_list,
            "session/close": self.session_close,
            "session/delete": self.session_delete,
            "session/set_mode": self.session_set_mode,
            "session/set_config_option": self.session_set_config_option,
            "session/prompt": self.session_prompt,
            "session/fork": _fork_handler(self),
        }

    def notifications(self) -> dict[str, NotificationHandler]:
        return {"session/cancel": self.session_cancel}

    async def serve(self, *, read_fd: int, write_fd: int, early: EarlyInput | None = None) -> None:
        """Serve until the client closes our input. `early` is what the start-up fast path read
        (and whether it already answered `initialize`)."""
        from acp_server.errors import map_exception

        early = early or EarlyInput()
        if early.initialize_params is not None:
            self.client = ClientCapabilities.parse(
                early.initialize_params.get("clientCapabilities")
            )
        self._connection = Connection(
            read_fd=read_fd,
            write_fd=write_fd,
            requests=self.requests(),
            notifications=self.notifications(),
            error_mapper=map_exception,
            on_eof=self.shutdown,
            on_input_closed=self._cancel_all,
            log=self._log,
            initial_data=early.data,
            input_ended=early.ended,
            on_start=self._on_start(early),
            line_limit=LINE_LIMIT,
        )
        await self._connection.serve()

    def _on_start(self, early: EarlyInput) -> Callable[[], None] | None:
        """What starts with the transport: the warm-up when `initialize` was answered early, and
        the build of a session whose `session/new` was too."""
        promised = early.session
        if promised is None:
            return self._start_warming_now if early.initialize_params is not None else None
        # Registered before the transport reads anything: every request for the session waits.
        self._pending.promise(promised.session_id)

        def start() -> None:
            self._start_warming_now()
            self.connection.spawn(self._build_promised, promised)

        return start

    def _answer_before_built(self, params: JsonObject) -> JsonObject | None:
        """While the session machinery is still loading, answer a `session/new` from the plan
        and build its session in the background, as the start-up path does; None: the normal
        path answers (the machinery is loaded, or the plan cannot answer this request)."""
        if self._planner is None or (self._warming is not None and self._warming.is_set()):
            return None
        from acp_server.early_session import answer_session_new

        promised = answer_session_new(params, self._planner)
        if promised is None:
            return None
        self._pending.promise(promised.session_id)
        self.connection.spawn(self._build_promised, promised)
        return promised.result

    async def _build_promised(self, promised: EarlySession) -> None:
        session_id = promised.session_id
        started = time.perf_counter()
        try:
            factory = await self.factory()

            async def make(io: SessionIO) -> AgentSession:
                return await factory.create(
                    cwd=promised.setup.cwd,
                    additional_directories=promised.setup.additional_directories,
                    mcp_servers=promised.setup.mcp_servers,
                    io=io,
                    session_id=session_id,
                )

            live = await self._open(promised.setup, make)
        except Exception as exc:
            self._pending.failed(session_id, exc)
            self._log(
                "building a session answered in advance failed",
                {"session": session_id, "error": repr(exc), "exc": exc},
            )
            return
        except BaseException:
            self._pending.failed(session_id, RuntimeError("the server is shutting down"))
            raise
        self._pending.built(session_id)
        await live.send_commands()
        self.connection.spawn(live.refresh_models)
        # Logged last: the first log line imports structlog.
        self._log(
            "built a session answered in advance",
            {"session": session_id, "ms": round((time.perf_counter() - started) * 1000, 1)},
        )

    @property
    def connection(self) -> Connection:
        assert self._connection is not None
        return self._connection

    def _cancel_all(self) -> None:
        self._pending.cancel_prompts()
        for live in self.sessions.values():
            live.cancel()

    async def shutdown(self) -> None:
        """Input ended: turns are already cancelled, and so are the builds of sessions promised
        at start-up that nobody used yet; let those end, then close every session (flushing
        files)."""
        with anyio.move_on_after(2):
            await self._pending.wait_all()
        sessions = list(self.sessions.values())
        self.sessions.clear()
        with anyio.move_on_after(2):
            async with anyio.create_task_group() as task_group:
                for live in sessions:
                    live.cancel()
                    task_group.start_soon(self._close_quietly, live.agent)

    async def _close_quietly(self, agent: AgentSession) -> None:
        try:
            await agent.aclose()
        except Exception as exc:
            self._log("closing a session failed", {"error": repr(exc), "exc": exc})

    async def factory(self) -> SessionFactory:
        """The session factory, once the warm-up (if one started) has finished."""
        if self._warming is not None:
            await self._warming.wait()
        return await self._build_factory()

    async def _build_factory(self) -> SessionFactory:
        async with self._factory_lock:
            if self._factory is None:
                self._factory = await self._factory_provider(self._spawn_background)
            return self._factory

    def _spawn_background(self, function: Callable[[], Awaitable[None]]) -> None:
        async def run() -> None:
            await function()

        self.connection.spawn(run)

    async def _warm(self, done: anyio.Event) -> None:
        """Right after `initialize`: load what `session/new` needs, so an editor that opens its
        first session a moment later finds it ready (editors start in the project directory).
        The loading runs in a worker thread so the connection stays responsive (an editor that
        closes us at once is not kept waiting for imports)."""
        import anyio.to_thread

        try:
            factory = await self._build_factory()
            await anyio.to_thread.run_sync(self._prepare, factory, abandon_on_cancel=True)
        except Exception as exc:
            self._log("warming the session factory failed", {"error": repr(exc)})
        finally:
            done.set()

    @staticmethod
    def _prepare(factory: SessionFactory) -> None:
        from acp_server.log import install

        install()
        importlib.import_module("acp_server.live")
        factory.prepare(Path.cwd())

    # ------------------------------------------------------------------- initialize, auth

    async def initialize(self, params: JsonObject, context: RequestContext) -> JsonObject:
        p.protocol_version(params)
        self.client = ClientCapabilities.parse(params.get("clientCapabilities"))
        context.after_response.append(self._start_warming)
        return initialize_result(self._version)

    async def _start_warming(self) -> None:
        self._start_warming_now()

    def _start_warming_now(self) -> None:
        if self._warming is None:
            self._warming = anyio.Event()
            self.connection.spawn(self._warm, self._warming)

    async def authenticate(self, params: JsonObject, context: RequestContext) -> JsonObject:
        method = p.require_str(params, "methodId")
        if method != AUTH_METHOD_ID:
            raise InvalidParams(
                "methodId", f"invalid params: unknown auth method {p.shown(method)}"
            )
        return {}

    async def logout(self, params: JsonObject, context: RequestContext) -> JsonObject:
        return {}

    # -------------------------------------------------------------------------- sessions

    def live(self, params: JsonObject) -> LiveSession:
        from acp_server.errors import UnknownSession

        session_id = p.require_session_id(params)
        live = self.sessions.get(session_id)
        if live is None:
            raise UnknownSession(session_id)
        return live

    async def live_when_built(self, params: JsonObject) -> LiveSession:
        """`live`, after waiting for the session when it was answered in advance."""
        await self._pending.wait(p.require_session_id(params))
        return self.live(params)

    async def _open(
        self, setup: SessionSetup, make: Callable[[SessionIO], Awaitable[AgentSession]]
    ) -> LiveSession:
        from acp_server.client_io import AcpFiles, AcpInteraction, AcpProcesses, SessionChannel
        from acp_server.factory import SessionIO
        from acp_server.live import LiveSession
        from agent.local import LocalFiles, LocalProcesses

        factory = await self.factory()
        cwd = setup.cwd
        channel = SessionChannel(self.connection, self.client)
        files = AcpFiles(channel, (cwd, *setup.additional_directories), LocalFiles())
        io = SessionIO(
            files=files,
            processes=AcpProcesses(channel, LocalProcesses()),
            interaction=AcpInteraction(channel),
        )
        agent = await make(io)
        channel.session_id = agent.id
        files.roots = tuple(agent.roots) or files.roots
        live = LiveSession(
            agent=agent, channel=channel, factory=factory, files=files, skills=factory.skills(cwd)
        )
        previous = self.sessions.pop(agent.id, None)
        if previous is not None:
            await previous.aclose()
        self.sessions[agent.id] = live
        return live

    async def session_new(self, params: JsonObject, context: RequestContext) -> JsonObject:
        from acp_server.errors import AuthRequired

        answered = self._answer_before_built(params)
        if answered is not None:
            return answered
        setup = parse_setup(params, servers_required=True)
        factory = await self.factory()
        problem = factory.plan_new(setup.cwd).problem
        if problem is not None:
            raise AuthRequired(problem)

        async def make(io: SessionIO) -> AgentSession:
            return await factory.create(
                cwd=setup.cwd,
                additional_directories=setup.additional_directories,
                mcp_servers=setup.mcp_servers,
                io=io,
            )

        live = await self._open(setup, make)
        context.after_response.append(live.send_commands)
        context.after_response.append(self._refresh_models_later(live))
        return {"sessionId": live.id, **live.setup_result()}

    def _refresh_models_later(self, live: LiveSession) -> Callable[[], Awaitable[None]]:
        """Run after a session's answer: start refreshing its model picker in the background
        (servers may take seconds to answer, or never; the request is done either way)."""

        async def start() -> None:
            self.connection.spawn(live.refresh_models)

        return start

    async def _reopen(self, params: JsonObject) -> LiveSession:
        session_id = p.require_session_id(params)
        setup = parse_setup(params)
        await self._pending.wait(session_id)
        factory = await self.factory()
        live = self.sessions.get(session_id)
        if live is not None:
            return live
        factory.refresh(setup.cwd)

        async def make(io: SessionIO) -> AgentSession:
            return await factory.resume(
                session_id,
                cwd=setup.cwd,
                additional_directories=setup.additional_directories,
                mcp_servers=setup.mcp_servers,
                io=io,
            )

        return await self._open(setup, make)

    async def session_load(self, params: JsonObject, context: RequestContext) -> JsonObject:
        live = await self._reopen(params)
        await live.replay()
        context.after_response.append(live.send_commands)
        context.after_response.append(self._refresh_models_later(live))
        return live.setup_result()

    async def session_resume(self, params: JsonObject, context: RequestContext) -> JsonObject:
        live = await self._reopen(params)
        context.after_response.append(live.send_usage)
        context.after_response.append(live.send_commands)
        context.after_response.append(self._refresh_models_later(live))
        return live.setup_result()

    async def session_list(self, params: JsonObject, context: RequestContext) -> JsonObject:
        cwd = (
            Path(p.require_absolute_path(params, "cwd")) if params.get("cwd") is not None else None
        )
        from acp_server.branches import list_filter, list_meta

        cursor = p.optional_str(params, "cursor")
        children, parent_id = list_filter(params)
        factory = await self.factory()
        with anyio.move_on_after(5):
            # A session answered in advance is listed once its transcript exists.
            await self._pending.wait_all()
        try:
            page = factory.store.list(
                cwd, cursor=cursor, limit=SESSION_LIST_PAGE, children=children, parent_id=parent_id
            )
        except ValueError as exc:
            raise InvalidParams("cursor", f"invalid params: bad cursor ({exc})") from exc
        sessions: list[JsonObject] = []
        for item in page.items:
            info: JsonObject = {"sessionId": item.id, "cwd": item.cwd, "updatedAt": item.updated}
            if item.title:
                info["title"] = item.title
            if item.additional_directories:
                info["additionalDirectories"] = list(item.additional_directories)
            if (meta := list_meta(item)) is not None:
                info["_meta"] = meta
            sessions.append(info)
        result: JsonObject = {"sessions": sessions}
        if page.next_cursor is not None:
            result["nextCursor"] = page.next_cursor
        return result

    async def _settled(self, session_id: str) -> None:
        """Wait for a session answered in advance, whether or not it could be built, and
        forget its failure (the client is done with it)."""
        with contextlib.suppress(Exception):
            await self._pending.wait(session_id)
        self._pending.forget(session_id)

    async def session_close(self, params: JsonObject, context: RequestContext) -> JsonObject:
        session_id = p.require_session_id(params)
        await self._settled(session_id)
        live = self.sessions.pop(session_id, None)
        if live is not None:
            await live.aclose()
        return {}

    async def session_delete(self, params: JsonObject, context: RequestContext) -> JsonObject:
        session_id = p.require_session_id(params)
        await self._settled(session_id)
        live = self.sessions.pop(session_id, None)
        if live is not None:
            await live.aclose()
        factory = await self.factory()
        await factory.store.delete(session_id)
        return {}

    async def session_set_mode(self, params: JsonObject, context: RequestContext) -> JsonObject:
        from acp_server.config import parse_mode

        live = await self.live_when_built(params)
        mode = parse_mode(params.get("modeId"))
        if mode is None:
            raise InvalidParams(
                "modeId", f"invalid params: unknown mode {p.shown(params.get('modeId'))}"
            )
        await live.set_mode(mode)
        return {}

    async def session_set_config_option(
        self, params: JsonObject, context: RequestContext
    ) -> JsonObject:
        live = await self.live_when_built(params)
        config_id = p.require_str(params, "configId")
        if params.get("type") == "boolean":
            raise InvalidParams("type", "invalid params: earshot has no boolean options")
        if "value" not in params:
            raise InvalidParams("value", "invalid params: value is required")
        options = await live.set_config_option(config_id, params["value"])
        return {"configOptions": options}

    async def session_prompt(self, params: JsonObject, context: RequestContext) -> JsonObject:
        from acp_server.content import check_blocks

        # Everything up to the first await is synchronous: a session/cancel dispatched right
        # after this request must find the prompt registered (or its wait for a session still
        # being built, which that cancel ends).
        wait = self._pending.prompt_wait(p.require_session_id(params))
        if wait is not None:
            blocks = check_blocks(p.require_list(params, "prompt"))
            context.soft_cancel = wait.cancel
            if not await wait.wait():
                return {"stopReason": "cancelled"}
            live = self.live(params)
        else:
            live = self.live(params)
            blocks = check_blocks(p.require_list(params, "prompt"))
        context.soft_cancel = live.cancel
        return {"stopReason": await live.prompt(blocks)}

    async def session_cancel(self, params: JsonObject) -> None:
        session_id = params.get("sessionId")
        if not isinstance(session_id, str):
            return
        self._pending.cancel_prompts(session_id)
        live = self.sessions.get(session_id)
        if live is not None:
            live.cancel()
