"""Opening sessions: `session/new` (answered before its session is built), `session/load` and
`session/resume` (built, then answered), and what follows an open: the slash commands, the model
list refresh and the warm-up of what the first prompt needs.

`session/new` is answered from the directory's `Workspace` (`Workspaces.open`: the settings read
again, the credentials, the catalog) with an id whose file `SessionMaker.reserve` put on disk
(another process can load it at once); the session is then built as a task on the event loop
(`SessionMaker.open`: the agent, its skills and its warm-up in one answer), *opening* in the
session table until then. Once open, what its first prompt needs is loaded in a worker thread
(the model's SDK and client, the tool modules: `_warm_up` says why).

Every session lives in its own block (`agent.tasks.SessionTasks`), which its host task holds
(`_host`, run by the session table while the connection is served): the build happens in it,
and what outlives a turn starts there and ends with it (the warm-up, the model list refresh, the
MCP clients, language servers, index refreshes). Closing the session leaves the block.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from functools import partial
from typing import TYPE_CHECKING, Protocol

import anyio
import anyio.abc

from acp_server import params as p
from acp_server.session_table import SessionSlot

if TYPE_CHECKING:
    from acp_server.capabilities import ClientCapabilities, ClientLearned
    from acp_server.jsonrpc import Connection, LogSink, RequestContext
    from acp_server.live import LiveSession
    from acp_server.mcp_over_acp import McpChannel
    from acp_server.params import OpeningParams
    from acp_server.ports import (
        SessionMaker,
        Workspace,
        Workspaces,
    )
    from acp_server.protocol.sessions import (
        LoadSessionResponse,
        NewSessionResponse,
        ResumeSessionResponse,
    )
    from acp_server.protocol.unstable.sessions import (
        LoadSessionRequest,
        NewSessionRequest,
        ResumeSessionRequest,
    )
    from acp_server.session_table import SessionTable
    from agent.tasks import SessionTasks


class OpeningHost(Protocol):
    """What opening a session uses of the server (`acp_server.server.AcpServer`)."""

    @property
    def workspaces(self) -> Workspaces: ...
    @property
    def sessions(self) -> SessionMaker: ...
    @property
    def client(self) -> ClientCapabilities: ...
    @property
    def learned(self) -> ClientLearned: ...
    @property
    def table(self) -> SessionTable: ...
    @property
    def log(self) -> LogSink: ...
    @property
    def connection(self) -> Connection: ...
    @property
    def mcp(self) -> McpChannel: ...
    @property
    def protocol(self) -> int:
        """The ACP version the connection speaks (1 or 2)."""
        ...


class SessionOpener:
    """The `session/new`, `session/load` and `session/resume` handlers of one server."""

    def __init__(self, server: OpeningHost) -> None:
        self.server = server

    async def new(self, request: NewSessionRequest, context: RequestContext) -> NewSessionResponse:
        """Answered before the session is built: its id (the file reserved), the modes and the
        pickers from the settings; the build follows on the loop."""
        from acp_server.config import ConfigState, setup_result
        from acp_server.errors import AuthRequired

        setup = p.setup(request)
        workspace = self.server.workspaces.open(setup.cwd)
        defaults = workspace.defaults
        if defaults.problem is not None:
            raise AuthRequired(defaults.problem)
        session_id = self.server.sessions.reserve(setup.cwd, setup.additional_directories)
        slot = SessionSlot(session_id, setup)
        self.server.table.add(slot)
        self.server.table.host(self._host_new, slot, workspace)
        state = ConfigState(
            mode=defaults.mode,
            model=defaults.model,
            effort=None,
            reasoning=defaults.reasoning,
            models=defaults.models,
        )
        return {"sessionId": session_id, **setup_result(state)}

    async def _host_new(self, slot: SessionSlot, workspace: Workspace) -> None:
        """A `session/new` session's host: built after its answer; a build that never happens
        (failed, or the input closed first) lets go of its reserved file's writer lock."""
        started = time.perf_counter()

        def opened(live: LiveSession, tasks: SessionTasks) -> None:
            elapsed = round((time.perf_counter() - started) * 1000, 1)
            self.server.log(
                "opened a session", {"session": slot.session_id, "ms": elapsed}, debug=True
            )
            # Before any prompt can reach the session: a first prompt waits for the warm-up
            # rather than run beside its thread (both would load the tool modules at once).
            live.warming = warming = anyio.Event()
            tasks.start_soon(self._after_new, live, tasks, warming)

        try:
            await self._host(slot, workspace, new=True, keep_failure=True, opened=opened)
        finally:
            if slot.live is None:  # failed, or the input closed first
                self.server.sessions.release(slot.session_id, slot.setup.cwd)

    async def _host(
        self,
        slot: SessionSlot,
        workspace: Workspace,
        *,
        new: bool,
        keep_failure: bool,
        opened: Callable[[LiveSession, SessionTasks], None] | None = None,
        task_status: anyio.abc.TaskStatus[LiveSession | None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        """The session's block, held from its build until the session is closed: the build
        (its outcome to `task_status`), then what runs beside its turns, then its close."""
        from agent.tasks import SessionTasks

        with slot.hosted():
            async with SessionTasks() as tasks:
                live = await self.server.table.build(
                    slot,
                    lambda: self._open(slot.setup, slot.session_id, workspace, tasks, new=new),
                    keep_failure=keep_failure,
                )
                task_status.started(live)
                if live is None:
                    return
                if opened is not None:
                    opened(live, tasks)
                await slot.closing()
                await live.aclose()  # what runs is cancelled; the block's end closes the rest

    async def _after_new(
        self, live: LiveSession, tasks: SessionTasks, warming: anyio.Event
    ) -> None:
        """In the block of a new session: its commands, the warm-up (`warming` set at its end),
        then what starts in the background (MCP servers, the model list refresh)."""
        await live.send_commands()
        started = time.perf_counter()
        try:
            await self._warm_up(live)
        finally:
            warming.set()
            # Then what starts in the background (MCP servers): their SDK loads after what
            # the first prompt needs, not before it.
            live.agent.tool_arrivals.begin()
        # After the warm-up: the refresh's HTTP client would import what the thread imports.
        tasks.start_soon(live.refresh_models)
        await _realise_records()
        elapsed = round((time.perf_counter() - started) * 1000, 1)
        self.server.log("warmed up a session", {"session": live.id, "ms": elapsed}, debug=True)

    async def _warm_up(self, live: LiveSession) -> None:
        """Load and build what the session's first prompt needs, in a worker thread: an SDK takes
        a few hundred milliseconds to import and its client tens more to build, which on the
        loop would hold up every request meanwhile. A prompt that needs a module first waits on
        the import lock, the model's client on its build lock (no work twice); the warm-up
        touches nothing else of the session."""
        import anyio.to_thread

        await anyio.to_thread.run_sync(live.opened.warm_up, abandon_on_cancel=True)
        # On the loop (the session's own state): its tools loaded and their specs built, which
        # the first model call would do. With the modules imported this takes milliseconds.
        try:
            live.agent.tools.specs  # noqa: B018 (built on first access)
        except Exception as exc:  # only the warm-up is lost: the first turn builds them again
            self.server.log("warming up the tools failed", {"error": repr(exc), "exc": exc})

    async def _open(
        self,
        setup: OpeningParams,
        session_id: str,
        workspace: Workspace,
        tasks: SessionTasks,
        *,
        new: bool,
    ) -> LiveSession:
        from acp_server.client_io import AcpFiles, AcpInteraction, SessionChannel
        from acp_server.live import LiveSession
        from acp_server.log import install
        from acp_server.ports import Opening, SessionIO
        from agent.local import LocalFiles, LocalProcesses

        install()  # before the agent first logs: its loggers go where the server's do

        channel_class = SessionChannel
        if self.server.protocol == 2:  # v2: local files, the session's own terminals
            from acp_server.v2.channel import V2Channel as channel_class
        channel = channel_class(self.server.connection, self.server.client, self.server.learned)
        files = AcpFiles(channel, (setup.cwd, *setup.additional_directories), LocalFiles())
        io = SessionIO(
            files=files,
            processes=channel.processes(LocalProcesses()),
            interaction=AcpInteraction(channel),
            tasks=tasks,
            mcp=self.server.mcp,
        )
        opened = await self.server.sessions.open(
            Opening(
                cwd=setup.cwd,
                additional_directories=setup.additional_directories,
                mcp_servers=setup.mcp_servers,
                io=io,
                session_id=session_id,
                new=new,
                system_prompt=setup.system_prompt,
            )
        )
        channel.session_id = opened.agent.id
        files.roots = tuple(opened.agent.roots) or files.roots
        return LiveSession(
            opened=opened, channel=channel, workspace=workspace, files=files, tasks=tasks
        )

    async def _reopen(self, request: LoadSessionRequest | ResumeSessionRequest) -> LiveSession:
        session_id = request["sessionId"]
        setup = p.setup(request)
        slot = self.server.table.get(session_id)
        if slot is not None and (slot.opening or slot.live is not None):
            return await slot.session()
        workspace = self.server.workspaces.open(setup.cwd)
        slot = SessionSlot(session_id, setup)
        self.server.table.add(slot)
        await self.server.table.host_until_built(
            partial(self._host, slot, workspace, new=False, keep_failure=False)
        )
        return await slot.session()

    def _refresh_models_later(self, live: LiveSession) -> Callable[[], Awaitable[None]]:
        """Run after a session's answer: start refreshing its model picker in the background,
        in the session's block (servers may take seconds to answer, or never; the request is
        done either way)."""

        async def start() -> None:
            live.tasks.start_soon(live.refresh_models)

        return start

    async def load(
        self, request: LoadSessionRequest, context: RequestContext
    ) -> LoadSessionResponse:
        live = await self._reopen(request)
        await live.replay()
        context.after_response.append(live.send_commands)
        context.after_response.append(self._refresh_models_later(live))
        return live.pickers.setup_result()

    async def resume(
        self, request: ResumeSessionRequest, context: RequestContext
    ) -> ResumeSessionResponse:
        live = await self._reopen(request)
        context.after_response.append(live.send_usage)
        context.after_response.append(live.send_commands)
        context.after_response.append(self._refresh_models_later(live))
        return live.pickers.setup_result()


async def _realise_records() -> None:
    """The record classes loaded so far (events, transcript entries...), processed now rather
    than at their first use in the first turn: one at a time on the loop (the thread that uses
    them; a turn may run meanwhile), so a request waits for one class at most."""
    import anyio.lowlevel

    from providers.records import realise, unprocessed

    for record in unprocessed():
        realise(record)
        await anyio.lowlevel.checkpoint()
