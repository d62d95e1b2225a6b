"""The MCP servers of one session, started in the background: each server's client in its own
long-lived task, the tools of those that started, and what failed.

Each server's client lives in ONE long-lived task (the SDK's transports and `ClientSession` are
anyio async context managers, which must be entered and left by the same task); the task is
started with a `spawn` callable the caller owns (the session's block, `agent.tasks.SessionTasks`,
which the ACP server's session host and print mode's run hold; `earshot doctor`'s own task
group), and is stopped when the session closes. Tools call the session from the turn's tasks,
which the SDK allows (requests are correlated by id).

Nothing waits for a server to start: all start at once when the session opens (`start`: the MCP
SDK is imported in a worker thread first, a second or more on a loaded machine that would
otherwise stop the event loop), and what the session has of them reaches it through its
`ToolArrivals` (`agent.session.tool_arrivals`):
- a server that starts (has listed its tools and prompts) offers its tools, which join at the
  session's next model request, appended at the end of the tool list; the session's first turn
  waits for the servers still starting at most `mcp.startupWait` (`wait_started`), and a server
  that starts after that wait is announced (a notice: its tools were missing from a request the
  model already got);
- a server that fails, or has not started within `mcp.startupTimeout`, is reported once (a
  warning naming it and the reason), offers no tool, and shows as failed in `/mcp`, whose
  `restart NAME` tries it again (`restart`); one that stops later is reported the same way;
- a tool call the server does not answer within `mcp.toolTimeout` fails saying so, and one the
  user cancels is abandoned at once (the SDK tells the server with `notifications/cancelled`).
"""

from __future__ import annotations

import math
import sys
from collections.abc import AsyncGenerator, Callable, Coroutine, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from functools import partial
from typing import TYPE_CHECKING, Any, TextIO, cast

import anyio
import anyio.to_thread

from agent.events import Notice
from agent.session import ToolArrivals
from agent.tools import AnyTool
from earshot.mcp_tools import (
    CALL_TIMEOUT_SECONDS,
    EditorServer,
    McpFailure,
    McpServer,
    RemoteServer,
    StdioServer,
    ambiguous_servers,
    distinct_name,
    mcp_tool,
    tool_prefix,
)

if TYPE_CHECKING:
    from mcp import ClientSession
    from mcp.types import Prompt, Tool

STARTUP_WAIT_SECONDS = 1.0
"""How long a session's first prompt waits for servers still starting (`mcp.startupWait`)."""
CONNECT_TIMEOUT_SECONDS = 30.0
"""When a server that has not started is given up on (`mcp.startupTimeout`): nothing waits for
it meanwhile, so it can take its time (an `npx` package being downloaded)."""
CLOSE_TIMEOUT_SECONDS = 6.0
"""The SDK's stdio shutdown waits up to 2 s for an exit, then 2 s after SIGTERM."""

Spawn = Callable[[Callable[[], Coroutine[Any, Any, None]]], object]
"""Starts a task in a task group that outlives the caller (`SessionTasks.start_soon`)."""


# ------------------------------------------------------------------------------ connection


class _Connection:
    """One server: its client task (one run at a time: `/mcp restart` starts another), its
    state, and what it offered."""

    def __init__(
        self, server: McpServer, errlog: TextIO, *, rank: int, report: Callable[[_Connection], None]
    ) -> None:
        self.server = server
        self.errlog = errlog
        self.rank = rank
        """The server's place in the configuration: tools arriving together join in this order."""
        self._report = report
        self.scope = anyio.CancelScope()
        self.settled = anyio.Event()
        """The current run has started the server, or ended without."""
        self.closed = anyio.Event()
        self.stopping = False
        """Stopped on purpose (session closed, restart): its end is no failure."""
        self.session: ClientSession | None = None
        self.tools: list[Tool] = []
        self.prompts: list[Prompt] = []
        self.error: str | None = None

    def stop(self) -> None:
        self.stopping = True
        self.scope.cancel()

    def reset(self) -> None:
        """Ready for another run (the last one has ended)."""
        self.scope = anyio.CancelScope()
        self.settled = anyio.Event()
        self.closed = anyio.Event()
        self.stopping = False
        self.error = None
        self.tools = []
        self.prompts = []

    async def run(self, timeout: float) -> None:
        """Start the server, list what it offers, and keep its client until stopped. Unless
        stopped (`stop`), `report` is called once `settled` is set, started or not, and again if
        a started server ends."""
        from mcp import ClientSession, Implementation

        from earshot import __version__

        # The deadline covers the start only: lifted once the server has listed its tools.
        self.scope.deadline = anyio.current_time() + timeout
        try:
            with self.scope:
                async with AsyncExitStack() as stack:
                    read, write = await stack.enter_async_context(self._transport())
                    session = await stack.enter_async_context(
                        ClientSession(
                            read,
                            write,
                            client_info=Implementation(name="earshot", version=__version__),
                        )
                    )
                    # A server over ACP speaks MCP 2026-07-28 only: no handshake to make.
                    editor = isinstance(self.server, EditorServer)
                    started = await (session.discover() if editor else session.initialize())
                    tools = await _list_tools(session)
                    if started.capabilities.prompts is not None:
                        self.prompts = list((await session.list_prompts()).prompts)
                    # All or nothing: no tool is offered before the whole list is known.
                    self.tools, self.session = tools, session
                    self.scope.deadline = math.inf
                    self.settled.set()
                    self._report(self)
                    await anyio.sleep_forever()
            if not self.settled.is_set() and not self.stopping:
                self.error = f"did not start within {timeout:g} s"
        except Exception as exc:
            self.error = describe_error(exc)
        finally:
            started = self.session is not None
            self.session = None
            self.closed.set()
            first = not self.settled.is_set()
            self.settled.set()
            if (first or started) and not self.stopping:
                self._report(self)

    def _transport(self) -> Any:
        server = self.server
        if isinstance(server, EditorServer):
            from earshot.mcp_acp_transport import acp_transport

            return acp_transport(server.channel, server.server_id)
        if isinstance(server, StdioServer):
            from mcp import StdioServerParameters, stdio_client

            parameters = StdioServerParameters(
                command=server.command,
                args=list(server.args),
                env=dict(server.env) or None,
                cwd=server.cwd,
            )
            return stdio_client(parameters, errlog=self.errlog)
        headers = dict(server.headers)
        if server.transport == "sse":
            from mcp.client.sse import sse_client

            return sse_client(server.url, headers=headers or None)
        return _streamable_http(server.url, headers)


@asynccontextmanager
async def _streamable_http(url: str, headers: Mapping[str, str]) -> AsyncGenerator[Any]:
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    # The SDK's own defaults: 30 s to connect or write, 300 s between reads of a stream.
    async with (
        httpx2.AsyncClient(
            headers=dict(headers), timeout=httpx2.Timeout(30.0, read=300.0)
        ) as client,
        streamable_http_client(url, http_client=client) as streams,
    ):
        yield streams


async def _list_tools(session: ClientSession) -> list[Tool]:
    from mcp.types import PaginatedRequestParams

    tools: list[Tool] = []
    cursor: str | None = None
    for _ in range(100):  # a server that paginates forever cannot hang the session
        params = PaginatedRequestParams(cursor=cursor) if cursor is not None else None
        page = await session.list_tools(params=params)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if cursor is None:
            break
    return tools


def _innermost(exc: BaseException) -> BaseException:
    current: BaseException = exc
    while isinstance(current, BaseExceptionGroup):
        inner = cast("BaseExceptionGroup[BaseException]", current).exceptions
        if not inner:
            break
        current = inner[0]
    return cast("BaseException", current)


def describe_error(exc: BaseException) -> str:
    """A one-line reason, the innermost cause of an exception group; no header values."""
    exc = _innermost(exc)
    from mcp import MCPError

    if isinstance(exc, MCPError):
        if exc.error.message == "Connection closed":
            return "it closed the connection before answering (its stderr may say why)"
        return exc.error.message
    if isinstance(exc, FileNotFoundError):
        return f"command not found ({exc.filename or exc})"
    text = str(exc).strip()
    if isinstance(exc, anyio.ClosedResourceError | anyio.BrokenResourceError | anyio.EndOfStream):
        text = "the server closed the connection"
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


# ----------------------------------------------------------------------------- connections


class McpConnections:
    """The MCP servers of one session, started at once in the background (see the module
    docstring); what they offer reaches the session through `arrivals`. Close it with the
    session."""

    def __init__(
        self,
        servers: Sequence[McpServer],
        *,
        spawn: Spawn | None,
        arrivals: ToolArrivals | None = None,
        startup_timeout: float = CONNECT_TIMEOUT_SECONDS,
        call_timeout: float = CALL_TIMEOUT_SECONDS,
        errlog: TextIO | None = None,
    ) -> None:
        """The servers, not started yet (`start`; `spawn` runs their clients, None: never).

        Args:
            errlog: where stdio servers' stderr goes (default: earshot's stderr, i.e. the log).
        """
        self.spawn = spawn
        self.arrivals = arrivals or ToolArrivals()
        self.startup_timeout = startup_timeout
        self.call_timeout = call_timeout
        self.failures: list[McpFailure] = ambiguous_servers(servers)
        """What failed, one per server (the latest), with why."""
        self.tools: list[AnyTool] = []
        """Every tool offered so far, in the order they were offered."""
        self._offered: dict[tuple[str, str], AnyTool] = {}
        """(server, tool as the server names it) -> the tool offered for it."""
        self._quiet: set[str] = set()
        """Servers whose outcome the caller says itself (`/mcp restart`)."""
        refused = {failure.server for failure in self.failures}
        errors = errlog or sys.stderr
        self._connections = [
            _Connection(server, errors, rank=rank, report=self._report)
            for rank, server in enumerate(servers)
            if server.name not in refused
        ]
        prefixes: set[str] = set()
        self._hashed: set[str] = set()
        """Servers whose tool names begin like an earlier server's (`a.b` after `a_b`): all
        their tools get distinct names, whichever server starts first."""
        for connection in self._connections:
            prefix = tool_prefix(connection.server.name)
            if prefix in prefixes:
                self._hashed.add(connection.server.name)
            prefixes.add(prefix)
        for failure in self.failures:
            self.arrivals.say(Notice(severity="warning", message=failure.notice))
        self._loaded = anyio.Event()
        """The SDK is imported and the clients started (or they cannot be)."""
        self._started = False
        self._warmed = False
        """Started by a front end that had loaded what a turn needs first (the ACP warm-up): a
        turn then goes on while the SDK loads, within its wait."""
        self._closing = False
        self._running: set[_Connection] = set()
        """The connections whose client task was spawned (closing waits for them)."""

    @property
    def connections(self) -> list[_Connection]:
        return self._connections

    def start(self, *, warmed: bool = False) -> None:
        """Start every server, in the background (once): the SDK is imported in a worker
        thread first, then each client's task is spawned. `warmed`: what a turn imports is
        imported already (so a turn can run beside the SDK's import)."""
        if self._started or self.spawn is None or not self._connections:
            return
        self._started, self._warmed = True, warmed
        self.spawn(self._start_all)

    async def _start_all(self) -> None:
        spawn = self.spawn
        assert spawn is not None
        try:
            await load_sdk(self._connections)
        except Exception as exc:  # an install without the SDK, or a broken one
            reason = f"the MCP SDK could not be loaded: {describe_error(exc)}"
            for connection in self._connections:
                connection.error = reason
                connection.settled.set()
                connection.closed.set()
                self._report(connection)
            return
        finally:
            self._loaded.set()
        for connection in self._connections:
            if not self._closing:  # closed while the SDK loaded: nothing to start
                self._running.add(connection)
                spawn(partial(connection.run, self.startup_timeout))

    async def wait_started(self, budget: float) -> None:
        """Until every server has started or failed, at most `budget` seconds (the servers are
        started first if nothing started them). Loading the SDK counts in the budget once a
        front end has warmed up (`start(warmed=True)`); otherwise it is waited for first,
        whatever it takes: the turn would import its model's SDK beside it."""
        self.start()
        if not self._started:
            return
        if not self._warmed:
            await self._loaded.wait()
        if budget <= 0:
            return
        with anyio.move_on_after(budget):
            await self._loaded.wait()
            for connection in self._connections:
                await connection.settled.wait()

    async def restart(self, name: str) -> str:
        """Stop the client of server `name` and start a new one, waiting for it (bounded by
        the startup timeout; cancellable); says what happened."""
        connection = next((c for c in self._connections if c.server.name == name), None)
        if connection is None:
            return f"No MCP server named '{name}' can be restarted in this session."
        if self.spawn is None:
            return "This front end cannot restart MCP servers."
        if not self._started:
            self.start()
        await self._loaded.wait()
        connection.stop()
        with anyio.move_on_after(CLOSE_TIMEOUT_SECONDS):
            await connection.closed.wait()
        connection.reset()
        before = len(self.tools)
        self._quiet.add(name)
        try:
            self._running.add(connection)
            self.spawn(partial(connection.run, self.startup_timeout))
            await connection.settled.wait()  # the run's own deadline bounds it
        finally:
            self._quiet.discard(name)
        if connection.session is None:
            return f"Restarting '{name}' failed: {connection.error or 'it exited'}."
        added = len(self.tools) - before
        if added:
            return f"Restarted '{name}': its {_tools(added)} can be used from the next request."
        return f"Restarted '{name}'."

    def cancel(self) -> None:
        """Stop every client task (they shut their servers down in the background)."""
        self._closing = True
        for connection in self._connections:
            connection.stop()

    async def aclose(self) -> None:
        """Stop every client and wait (bounded) for the servers to be shut down."""
        self.cancel()
        with anyio.CancelScope(shield=True), anyio.move_on_after(CLOSE_TIMEOUT_SECONDS):
            for connection in list(self._running):
                await connection.closed.wait()

    def _report(self, connection: _Connection) -> None:
        """A run has settled (or a started server stopped): its tools offered, or its failure
        recorded and said. Runs in the client's task: never raises."""
        name = connection.server.name
        self.failures = [failure for failure in self.failures if failure.server != name]
        quiet = name in self._quiet
        if connection.session is None:
            failure = McpFailure(server=name, message=connection.error or "it exited")
            self.failures.append(failure)
            if not quiet:
                retry = f"; `/mcp restart {name}` tries again"
                self.arrivals.say(Notice(severity="warning", message=failure.notice + retry))
            return
        offered = self._offer(connection)
        if offered and self.arrivals.started and not quiet:
            self.arrivals.say(
                Notice(
                    severity="info",
                    message=f"MCP server '{name}' has started: its {_tools(len(offered))} can "
                    "be used from the next model request.",
                    prominent=True,
                )
            )

    def _offer(self, connection: _Connection) -> list[AnyTool]:
        """The server's tools not offered yet, built and handed to the session."""
        name = connection.server.name
        taken = {tool.name for tool in self.tools}
        listed: set[str] = set()
        fresh: list[AnyTool] = []
        for tool in connection.tools:
            if tool.name in listed:
                failure = McpFailure(server=name, message=f"it offers the tool {tool.name!r} twice")
                self.failures.append(failure)
                self.arrivals.say(Notice(severity="warning", message=failure.notice))
                continue
            listed.add(tool.name)
            if (name, tool.name) in self._offered:
                continue  # offered before a restart: it calls the new client
            built = mcp_tool(connection, tool, call_timeout=self.call_timeout)
            if built.name in taken or name in self._hashed:
                label = distinct_name(name, tool.name)
                built = mcp_tool(connection, tool, label=label, call_timeout=self.call_timeout)
            taken.add(built.name)
            self._offered[name, tool.name] = built
            fresh.append(built)
        self.tools.extend(fresh)
        self.arrivals.add(fresh, rank=connection.rank)  # its prompts are commands, too
        return fresh


async def load_sdk(connections: Sequence[_Connection]) -> None:
    """Import what the clients of `connections` use, in a worker thread (taking turns with the
    other big imports: `earshot.import_lock`); at once when it is imported already."""
    remote = {server.transport for c in connections if isinstance(server := c.server, RemoteServer)}
    modules = ["mcp", "mcp.types", *(_TRANSPORTS[transport] for transport in sorted(remote))]
    if _LOADED.issuperset(modules):
        return

    def load() -> None:
        import importlib

        from earshot.import_lock import IMPORTS

        with IMPORTS:
            for module in modules:
                importlib.import_module(module)
                _LOADED.add(module)

    await anyio.to_thread.run_sync(load, abandon_on_cancel=True)


_TRANSPORTS = {"http": "mcp.client.streamable_http", "sse": "mcp.client.sse"}
_LOADED: set[str] = set()
"""Modules `load_sdk` has imported whole (`sys.modules` also holds one another thread is still
importing)."""


def _tools(count: int) -> str:
    return "tool" if count == 1 else f"{count} tools"


async def connect_servers(
    servers: Sequence[McpServer],
    *,
    spawn: Spawn,
    timeout: float = CONNECT_TIMEOUT_SECONDS,
    errlog: TextIO | None = None,
) -> McpConnections:
    """Start every server and wait until each has started or failed (within `timeout`, and
    its shutdown): for `earshot doctor`, which reports on each. Never raises for a server."""
    connections = McpConnections(servers, spawn=spawn, startup_timeout=timeout, errlog=errlog)
    connections.start()
    await connections.wait_started(math.inf)
    return connections
