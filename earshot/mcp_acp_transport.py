"""The MCP SDK's client transport for a server the ACP client provides over the connection itself
(`mcp/message`: `acp_server.mcp_over_acp`).

The SDK's `ClientSession` reads and writes JSON-RPC messages on two memory streams, as with its
stdio transport; here each request it writes becomes one `mcp/message` request (its own task,
so calls run side by side), and the outcome comes back as the response to the SDK's id. The
binding speaks MCP 2026-07-28 only: the session starts with `server/discover` (no `initialize`
handshake), and every request carries its version in `_meta` (the SDK stamps it). The schema has
no notification from the agent to the server, so the SDK's own notifications are not sent,
except that `notifications/cancelled` (a call abandoned: the user cancelled, or it timed out)
withdraws its outer request (`$/cancel_request`, where the client takes it). The server's
notifications for an active request (progress) reach the SDK as the server sent them. An outer
error (no such server, the client's backend failed, the connection closed) answers the request
with an MCP error saying so: the call fails, the session goes on.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, cast

import anyio

if TYPE_CHECKING:
    from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
    from mcp.shared.message import SessionMessage

    from acp_server.mcp_over_acp import McpChannel

JsonObject = dict[str, Any]
BINDING_FAILED = -32603
"""The MCP error code a request gets when the ACP side failed (no MCP outcome came back)."""


@asynccontextmanager
async def acp_transport(
    channel: McpChannel, server_id: str
) -> AsyncGenerator[
    tuple[MemoryObjectReceiveStream[SessionMessage | Exception], MemoryObjectSendStream[Any]]
]:
    from mcp.shared.message import SessionMessage

    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](16)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)
    active: dict[str, anyio.CancelScope] = {}
    """Outer requests in flight, by the inner request's id (as `requestId`)."""

    async with anyio.create_task_group() as group:

        async def deliver(message: JsonObject) -> None:
            from mcp.types import jsonrpc_message_adapter

            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                # (else the session is gone)
                await read_writer.send(
                    SessionMessage(jsonrpc_message_adapter.validate_python(message))
                )

        async def forward(message: JsonObject) -> None:
            request_id = str(message["id"])
            params = message.get("params")
            scope = anyio.CancelScope()
            active[request_id] = scope

            def notified(method: str, inner: JsonObject | None) -> None:
                note: JsonObject = {"jsonrpc": "2.0", "method": method}
                if inner is not None:
                    note["params"] = inner
                group.start_soon(deliver, note)

            outcome: JsonObject | None = None
            try:
                with scope, channel.listening(server_id, request_id, notified):
                    outcome = await _outcome(channel, server_id, request_id, message, params)
            finally:
                active.pop(request_id, None)
            if outcome is None:
                return  # the SDK abandoned it: nobody waits for an answer
            await deliver({"jsonrpc": "2.0", "id": message["id"], **outcome})

        async def pump() -> None:
            async with write_reader:
                async for session_message in write_reader:
                    data = session_message.message.model_dump(
                        by_alias=True, mode="json", exclude_unset=True
                    )
                    if "method" in data and "id" in data:
                        group.start_soon(forward, data)
                    elif data.get("method") == "notifications/cancelled":
                        cancelled = cast("JsonObject", data.get("params") or {}).get("requestId")
                        scope = active.get(str(cancelled))
                        if scope is not None:
                            scope.cancel()

        group.start_soon(pump)
        try:
            yield read_stream, write_stream
        finally:
            group.cancel_scope.cancel()
            for stream in (read_writer, read_stream, write_stream, write_reader):
                await stream.aclose()


async def _outcome(
    channel: McpChannel,
    server_id: str,
    request_id: str,
    message: JsonObject,
    params: object,
) -> JsonObject:
    """`{"result"}` or `{"error"}` for one request, whatever happened on the ACP side."""
    from acp_server.jsonrpc import ConnectionClosed
    from acp_server.mcp_over_acp import McpBindingError

    inner = cast("JsonObject", params) if isinstance(params, dict) else None
    try:
        outcome = await channel.request(server_id, request_id, message["method"], inner)
    except McpBindingError as exc:
        return _error(f"the editor could not pass the request on: {exc}")
    except ConnectionClosed:
        return _error("the connection to the editor closed")
    if "result" in outcome and not isinstance(outcome["result"], dict):
        return _error("the editor's MCP server answered with a result that is not an object")
    return outcome


def _error(message: str) -> JsonObject:
    return {"error": {"code": BINDING_FAILED, "message": message}}


__all__ = ["acp_transport"]
