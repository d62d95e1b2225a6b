"""MCP servers the client provides over the ACP connection itself (`mcp/message`, unstable;
advertised as `mcpCapabilities.acp`; a session's `mcpServers` names one as `{"type": "acp",
"name", "serverId"}`).

Both ways, as the schema has them: each MCP request to such a server goes to the client as an
`mcp/message` request (`serverId`, `requestId`, the inner `method` and `params`), answered with
the inner outcome (`{"result"}` or an MCP `{"error"}`); the server's notifications for a request
still active (progress...) come back as `mcp/message` notifications, which reach that request's
caller. The schema has no notification from the agent to the server: an MCP client's own
notifications are not sent (a cancelled request withdraws its outer ACP request instead, with
`$/cancel_request` to a client that takes it). The MCP client itself, with the MCP SDK, is the
composition root's (`earshot.mcp_acp_transport`); this side never imports `mcp`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Generator
from typing import Any, cast

from acp_server.framing import RawObject
from acp_server.jsonrpc import Connection

JsonObject = dict[str, Any]
Listener = Callable[[str, JsonObject | None], None]
"""Takes a notification for one active request: its inner method and params."""


class McpBindingError(Exception):
    """The client answered an `mcp/message` with an outer error (no server with that id, a
    binding limit, a backend failure): the request has no MCP outcome."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(f"{message} ({code})")
        self.code = code


class McpChannel:
    """The connection's `mcp/message` traffic, for every session's client-provided servers."""

    def __init__(self, connection: Callable[[], Connection]) -> None:
        self._connection = connection
        self._listeners: dict[tuple[str, str], Listener] = {}

    async def request(
        self, server_id: str, request_id: str, method: str, params: JsonObject | None
    ) -> JsonObject:
        """The inner outcome of one MCP request: `{"result": ...}` or `{"error": {...}}`.

        Raises:
            McpBindingError: the client answered with an outer error, or an outcome of
                neither shape.
            acp_server.jsonrpc.ConnectionClosed: the connection ended first.
        """
        from acp_server.jsonrpc import ClientError

        message: JsonObject = {"serverId": server_id, "requestId": request_id, "method": method}
        if params is not None:
            message["params"] = params
        try:
            answer = await self._connection().send_request("mcp/message", message)
        except ClientError as exc:
            raise McpBindingError(exc.code, exc.message) from None
        outcome = cast("JsonObject", answer) if isinstance(answer, dict) else {}
        if "result" in outcome:  # the receiver prefers `result` if both are there
            return {"result": outcome["result"]}
        error = outcome.get("error")
        if isinstance(error, dict):
            return {"error": error}
        raise McpBindingError(-32603, "the client answered mcp/message without an outcome")

    @contextlib.contextmanager
    def listening(self, server_id: str, request_id: str, listener: Listener) -> Generator[None]:
        """Notifications for one request reach `listener` while it is active."""
        key = (server_id, request_id)
        self._listeners[key] = listener
        try:
            yield
        finally:
            self._listeners.pop(key, None)

    async def notification(self, params: RawObject) -> None:
        """An incoming `mcp/message` notification; one for no active request is dropped."""
        server_id, request_id = params.get("serverId"), params.get("requestId")
        method, inner = params.get("method"), params.get("params")
        if not isinstance(server_id, str) or not isinstance(request_id, str):
            return
        listener = self._listeners.get((server_id, request_id))
        if listener is None or not isinstance(method, str):
            return
        listener(method, cast("JsonObject", inner) if isinstance(inner, dict) else None)


__all__ = ["McpBindingError", "McpChannel"]
