"""`acp_server.jsonrpc.Connection` in process, over real pipes: what the server's methods are too
quick to show from outside (a hard-cancelled request answers -32800; outgoing requests are
matched by id while incoming ones keep being served)."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

import anyio

from acp_server.jsonrpc import ClientError, Connection, RequestContext, answers_cancellation
from tests.acp_server.client import schema_errors

JsonObject = dict[str, Any]


class Peer:
    """The other end of the pipes: writes lines, reads lines."""

    def __init__(self, to_server: int, from_server: int) -> None:
        self.to_server = to_server
        self.from_server = from_server
        self.buffer = b""

    def send(self, message: JsonObject) -> None:
        os.write(self.to_server, (json.dumps(message) + "\n").encode())

    async def receive(self) -> JsonObject:
        while b"\n" not in self.buffer:
            await anyio.wait_readable(self.from_server)
            self.buffer += os.read(self.from_server, 65536)
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line)


@asynccontextmanager
async def connected(
    requests: dict[str, Any], notifications: dict[str, Any] | None = None
) -> AsyncGenerator[tuple[Connection, Peer]]:
    server_in, peer_out = os.pipe()
    peer_in, server_out = os.pipe()
    connection = Connection(
        read_fd=server_in,
        write_fd=server_out,
        requests=requests,
        notifications=notifications or {},
    )
    peer = Peer(peer_out, peer_in)
    try:
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(connection.serve)
            yield connection, peer
            os.close(peer_out)
    finally:
        for fd in (server_in, peer_in, server_out):
            os.close(fd)


async def test_cancel_request_on_a_plain_request_answers_request_cancelled() -> None:
    started = anyio.Event()

    async def slow(params: JsonObject, context: RequestContext) -> JsonObject:
        started.set()
        await anyio.sleep_forever()
        return {}

    async def quick(params: JsonObject, context: RequestContext) -> JsonObject:
        return {}

    async with connected({"session/close": slow, "logout": quick}) as (_, peer):
        with anyio.fail_after(5):
            peer.send({"jsonrpc": "2.0", "id": "a", "method": "session/close", "params": {}})
            await started.wait()
            peer.send({"jsonrpc": "2.0", "id": "b", "method": "logout", "params": {}})
            assert (await peer.receive()) == {"jsonrpc": "2.0", "id": "b", "result": {}}
            peer.send(
                {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": "a"}}
            )
            reply = await peer.receive()
    assert reply["id"] == "a"
    assert reply["error"]["code"] == -32800
    assert schema_errors("Error", reply["error"]) == []


async def test_a_cancel_read_together_with_its_request_reaches_a_handler_that_answers_it() -> None:
    # An editor may write a prompt and its $/cancel_request back to back: both lines arrive in
    # one read, and the cancel must still reach the request's scope, which the handler enters
    # itself (a prompt then answers normally, with stopReason cancelled), not end a handler that
    # has not started with -32800.
    async def prompt(params: JsonObject, context: RequestContext) -> JsonObject:
        with context.scope:
            await anyio.sleep_forever()
        return {"stopReason": "cancelled" if context.scope.cancel_called else "end_turn"}

    async with connected({"session/prompt": answers_cancellation(prompt)}) as (_, peer):
        request: JsonObject = {"jsonrpc": "2.0", "id": 7, "method": "session/prompt", "params": {}}
        cancel = {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 7}}
        os.write(peer.to_server, (json.dumps(request) + "\n" + json.dumps(cancel) + "\n").encode())
        with anyio.fail_after(5):
            reply = await peer.receive()
    assert reply == {"jsonrpc": "2.0", "id": 7, "result": {"stopReason": "cancelled"}}


async def test_outgoing_requests_are_matched_by_id_while_serving() -> None:
    async def quick(params: JsonObject, context: RequestContext) -> JsonObject:
        return {"echo": params}

    async with connected({"logout": quick}) as (connection, peer):
        results: dict[str, Any] = {}

        async def ask(name: str) -> None:
            try:
                results[name] = await connection.request("fs/read_text_file", {"path": name})
            except ClientError as exc:
                results[name] = exc.code

        with anyio.fail_after(5):
            async with anyio.create_task_group() as asks:
                asks.start_soon(ask, "/one")
                first = await peer.receive()
                asks.start_soon(ask, "/two")
                second = await peer.receive()
                # An incoming request is served while ours are pending.
                peer.send({"jsonrpc": "2.0", "id": 1, "method": "logout", "params": {"x": 1}})
                assert (await peer.receive())["result"] == {"echo": {"x": 1}}
                peer.send({"jsonrpc": "2.0", "id": second["id"], "result": {"content": "2"}})
                peer.send(
                    {
                        "jsonrpc": "2.0",
                        "id": first["id"],
                        "error": {"code": -32002, "message": "not found"},
                    }
                )
    assert results == {"/one": -32002, "/two": {"content": "2"}}
