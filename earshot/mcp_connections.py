"""The MCP servers of one session: each server's client in its own long-lived task, and what the
session has of them (their tools, what failed).

Each server's client lives in ONE long-lived task (the SDK's transports and `ClientSession` are
anyio async context managers, which must be entered and left by the same task); the task is
started with a `spawn` callable the caller owns (the ACP connection's task group, or print mode's
own), and is cancelled when the session closes. Tools call the session from the turn's tasks,
which the SDK allows (requests are correlated by id).

All servers connect concurrently and each gets `CONNECT_TIMEOUT_SECONDS`; one that fails or is
too slow is reported as an `McpFailure` and the session goes on without it.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncGenerator, Callable, Coroutine, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO, cast

import anyio

from agent.tools.base import AnyTool
from earshot.mcp_tools import (
    McpFailure,
    McpServer,
    StdioServer,
    ambiguous_servers,
    distinct_name,
    mcp_tool,
)

if TYPE_CHECKING:
    from mcp import ClientSession
    from mcp.types import Prompt, Tool

CONNECT_TIMEOUT_SECONDS = 10.0
CLOSE_TIMEOUT_SECONDS = 6.0
"""The SDK's stdio shutdown waits up to 2 s for an exit, then 2 s after SIGTERM."""

Spawn = Callable[[Callable[[], Coroutine[Any, Any, None]]], object]
"""Starts a task in a task group that outlives the caller (e.g. `TaskGroup.start_soon`)."""


# ------------------------------------------------------------------------------ connection


class _Connection:
    """One server: its client task, its state and the tools it offered."""

    def __init__(self, server: McpServer, errlog: TextIO) -> None:
        self.server = server
        self.errlog = errlog
        self.scope = anyio.CancelScope()
        self.ready = anyio.Event()
        self.closed = anyio.Event()
        self.session: ClientSession | None = None
        self.tools: list[Tool] = []
        self.prompts: list[Prompt] = []
        self.error: str | None = None

    async def run(self) -> None:
        from mcp import ClientSession, Implementation

        from earshot import __version__

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
                    started = await session.initialize()
                    self.tools = await _list_tools(session)
                    if started.capabilities.prompts is not None:
                        self.prompts = list((await session.list_prompts()).prompts)
                    self.session = session
                    self.ready.set()
                    await anyio.sleep_forever()
        except Exception as exc:
            self.error = describe_error(exc)
        finally:
            self.session = None
            self.ready.set()
            self.closed.set()

    def _transport(self) -> Any:
        server = self.server
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


@dataclass(slots=True)
class McpConnections:
    """The MCP servers of one session: their tools and what failed. Close it with the session."""

    tools: list[AnyTool]
    failures: list[McpFailure]
    _connections: list[_Connection]
    spawn: Spawn | None = None
    """Where the clients' tasks run (`/mcp restart` starts a new one there)."""

    @property
    def connections(self) -> list[_Connection]:
        return self._connections

    @property
    def notices(self) -> list[str]:
        return [failure.notice for failure in self.failures]

    def cancel(self) -> None:
        """Stop every client task (they shut their servers down in the background)."""
        for connection in self._connections:
            connection.scope.cancel()

    async def aclose(self) -> None:
        """Stop every client and wait (bounded) for the servers to be shut down."""
        self.cancel()
        with anyio.CancelScope(shield=True), anyio.move_on_after(CLOSE_TIMEOUT_SECONDS):
            for connection in self._connections:
                await connection.closed.wait()


async def connect_servers(
    servers: Sequence[McpServer],
    *,
    spawn: Spawn,
    timeout: float = CONNECT_TIMEOUT_SECONDS,
    errlog: TextIO | None = None,
) -> McpConnections:
    """Start every server's client task at once and wait until each has listed its tools, failed,
    or run out of `timeout` (cancelled and reported). Never raises for a server's failure.

    Args:
        spawn: starts a task that outlives this call; the clients live in it.
        errlog: where stdio servers' stderr goes (default: earshot's stderr, i.e. the log).
    """
    failures: list[McpFailure] = ambiguous_servers(servers)
    refused = {failure.server for failure in failures}
    errors = errlog or sys.stderr
    connections = [_Connection(s, errors) for s in servers if s.name not in refused]
    for connection in connections:
        spawn(connection.run)
    if connections:
        with anyio.move_on_after(timeout):
            async with anyio.create_task_group() as waiting:
                for connection in connections:
                    waiting.start_soon(connection.ready.wait)
    tools: list[AnyTool] = []
    taken: set[str] = set()
    for connection in connections:
        name = connection.server.name
        if not connection.ready.is_set():
            connection.scope.cancel()
            failures.append(McpFailure(server=name, message=f"did not start within {timeout:g} s"))
            continue
        if connection.session is None:
            failures.append(McpFailure(server=name, message=connection.error or "it exited"))
            continue
        offered: set[str] = set()
        for tool in connection.tools:
            if tool.name in offered:
                failures.append(
                    McpFailure(server=name, message=f"it offers the tool {tool.name!r} twice")
                )
                continue
            offered.add(tool.name)
            built = mcp_tool(connection, tool)
            if built.name in taken:
                built = mcp_tool(connection, tool, label=distinct_name(name, tool.name))
            taken.add(built.name)
            tools.append(built)
    return McpConnections(tools=tools, failures=failures, _connections=connections, spawn=spawn)
