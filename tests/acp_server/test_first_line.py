"""`initialize` answered before the event loop (`acp_server.first_line`): the same answer, the
same connection afterwards, and any other first line answered exactly as the transport alone
answers it.

Most cases run in this process, the way `earshot --stdio` runs (`answer_first_line`, then the
server's transport over the same fd), against the transport alone, over a socketpair: the bytes
written must be equal. The real process is driven twice: the answer over stdio against the
transport's, and a client (Zed's name, elicitation) whose capabilities later behaviour depends on.
What loads before the answer is checked in `test_stdio.py`."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from typing import Any

import anyio
import pytest

from acp_server.first_line import (
    FIRST_LINE_BOUND,
    FirstLine,
    answer_first_line,
    first_line_bound,
)
from acp_server.server import AcpServer, ServerLimits
from earshot.acp_main import earshot_ports
from tests.acp_server.client import WAIT_SECONDS, AcpClient, AgentEnv, Json, spawn_agent
from tests.acp_server.protocol_examples import INITIALIZE_PARAMS
from tests.acp_server.test_sessions import new_session, text_prompt
from tests.acp_server.test_tools import call_updates, write_call

ZED: Json = json.loads(json.dumps(INITIALIZE_PARAMS))
ZED["clientCapabilities"]["_meta"]["terminal-auth"] = True
"""What Zed sends: its name (it takes `$/cancel_request`), elicitation, notices, and the legacy
terminal sign-in (so the answer offers `earshot login` while no key is set)."""


V2: Json = {
    "protocolVersion": 2,
    "capabilities": {"auth": {"terminal": {}}},
    "info": {"name": "zed", "version": "0.200.0"},
}
"""A v2 client (negotiated on the early path too: answered in v2's shape, the connection then
speaks v2, so the v1 `initialize` after it is refused the same way on both paths)."""


def line(message: Any) -> bytes:
    return json.dumps(message).encode() + b"\n"


def initialize(request_id: Any = 1, params: Any = None, **extra: Any) -> bytes:
    message = {"jsonrpc": "2.0", "id": request_id, "method": "initialize", **extra}
    message["params"] = {"protocolVersion": 1} if params is None else params
    return line(message)


class Served:
    """What the server wrote for an input, and the server afterwards."""

    def __init__(self, written: bytes, server: AcpServer, early: FirstLine | None) -> None:
        self.written = written
        self.server = server
        self.early = early
        """What `answer_first_line` gave the transport (None: the transport alone served)."""

    @property
    def answers(self) -> list[Json]:
        return [json.loads(answer) for answer in self.written.splitlines()]


async def served(
    env: AgentEnv, data: bytes, *, early: bool, line_limit: int | None = None
) -> Served:
    """The input `data` (then its end) served through `answer_first_line` and then the
    transport, as `earshot --stdio` serves it (`early`), or by the transport alone."""
    ours, theirs = socket.socketpair()
    with ours, theirs:
        ours.sendall(data)
        ours.shutdown(socket.SHUT_WR)
        ports = earshot_ports(environ=env.environ())
        limits = ServerLimits(line_limit=line_limit) if line_limit else None
        server = AcpServer(ports=ports, version="0.1.0", limits=limits)
        fd = theirs.fileno()
        start = None
        if early:
            environ = {"EARSHOT_ACP_LINE_LIMIT": str(line_limit)} if line_limit else {}
            start = answer_first_line(
                fd,
                fd,
                version="0.1.0",
                credentials_found=ports.workspaces.credentials_found,
                bound=first_line_bound(environ),
            )
        with anyio.fail_after(WAIT_SECONDS):
            await server.serve(read_fd=fd, write_fd=fd, start=start)
        theirs.shutdown(socket.SHUT_WR)
        written = b""
        while chunk := ours.recv(1 << 20):
            written += chunk
    return Served(written, server, start)


AFTER = initialize(99) + b"not json\n"
"""What follows the first line in every case: an `initialize` (the transport's), and a parse
error that says which line (the numbering goes on after a first line answered early)."""
PADDED: Json = {"protocolVersion": 1, "clientCapabilities": {"_meta": {"pad": "x" * 70_000}}}

ANSWERED = {
    "plain": initialize(),
    "zed": initialize("init-1", ZED),
    "id null": initialize(None),
    "an unknown member": initialize(7, extra=1),
    "CRLF": initialize().replace(b"\n", b"\r\n"),
    "v2": initialize(2, V2),
    "a version we do not know": initialize(3, {**V2, "protocolVersion": 7}),
}
"""First lines answered before the loop."""
NOT_ANSWERED = {
    "not JSON": b"{oops\n",
    "blank": b"\n",
    "a batch": line([json.loads(initialize())]),
    "a notification": line({"jsonrpc": "2.0", "method": "initialize", "params": {}}),
    "no params": line({"jsonrpc": "2.0", "id": 1, "method": "initialize"}),
    "params not an object": initialize(params=[1]),
    "invalid params": initialize(params={"protocolVersion": "one"}),
    "jsonrpc 1.0": initialize(jsonrpc="1.0"),
    "an id of the wrong type": initialize(True),
    "an id too long": initialize("i" * 300),
    "a response": line({"jsonrpc": "2.0", "id": 1, "result": {}}),
    "another method": line({"jsonrpc": "2.0", "id": 1, "method": "logout", "params": {}}),
    "longer than the bound": initialize(params=PADDED),
    "the end of input before a newline": initialize().rstrip(b"\n"),
    "nothing": b"",
}
"""First lines left to the transport."""


@pytest.mark.parametrize(
    ("first", "answered"),
    [*((first, True) for first in ANSWERED.values())]
    + [(first, False) for first in NOT_ANSWERED.values()],
    ids=[*ANSWERED, *NOT_ANSWERED],
)
async def test_every_first_line_is_answered_as_the_transport_answers_it(
    agent_env: AgentEnv, first: bytes, answered: bool
) -> None:
    data = first + (AFTER if first.endswith(b"\n") else b"")
    alone = await served(agent_env, data, early=False)
    early = await served(agent_env, data, early=True)
    assert early.early is not None
    assert (early.early.initialized is not None) is answered
    assert early.written == alone.written
    assert early.server.client == alone.server.client
    assert early.server.protocol == alone.server.protocol
    assert early.server.connection.peer_cancels == alone.server.connection.peer_cancels
    if first.endswith(b"\n"):  # what came after the first line was served, numbered on
        error = early.answers[-1]["error"]
        assert (error["code"], error["data"]["line"]) == (-32700, 3)


async def test_the_connection_starts_with_what_initialize_said_of_the_client(
    agent_env: AgentEnv,
) -> None:
    early = await served(agent_env, initialize(1, ZED), early=True)
    client = early.server.client
    assert client.elicitation_form and client.notices and client.terminal_auth
    assert client.cancel_request and early.server.connection.peer_cancels  # Zed, by name
    [method] = early.answers[0]["result"]["authMethods"]  # no key in the test's environment
    assert method["id"] == "earshot-login"


async def test_a_first_line_over_the_transports_limit_is_left_to_it(agent_env: AgentEnv) -> None:
    # A test-sized line limit, below the bound: the transport refuses the line, as before.
    first = initialize(params={"protocolVersion": 1, "clientInfo": {"name": "x" * 150}})
    alone = await served(agent_env, first, early=False, line_limit=100)
    early = await served(agent_env, first, early=True, line_limit=100)
    assert early.early is not None and early.early.initialized is None
    assert early.written == alone.written
    assert early.answers[0]["error"]["code"] == -32700
    assert len(NOT_ANSWERED["longer than the bound"]) > FIRST_LINE_BOUND


# --------------------------------------------------------------------------- the process


def run(env: AgentEnv, stdin: bytes) -> bytes:
    result = subprocess.run(
        [sys.executable, "-m", "earshot", "--stdio"],
        input=stdin,
        capture_output=True,
        cwd=env.workspace,
        env=env.environ(),
        timeout=WAIT_SECONDS,
        check=True,
    )
    return result.stdout


def test_over_stdio_the_early_answer_is_the_transports(agent_env: AgentEnv) -> None:
    agent_env.script([])
    early = run(agent_env, initialize(1, ZED))  # answered before the loop
    refused, late = run(agent_env, b"{oops\n" + initialize(1, ZED)).splitlines(keepends=True)
    assert early == late  # answered by the transport
    assert json.loads(refused)["error"]["data"] == {"line": 1, "column": 2}
    assert json.loads(early)["result"]["authMethods"]  # no key in the test's environment


async def test_zed_answered_before_the_loop_gets_elicitation_and_cancel_request(
    agent_env: AgentEnv,
) -> None:
    """What `initialize` said of the client holds for the connection: a question is an
    elicitation form, and a withdrawn permission request is cancelled with `$/cancel_request`
    (Zed, by name)."""
    target = agent_env.workspace / "f.txt"
    choices = {"question": "Which?", "choices": ["red", "blue"]}
    question = {"name": "question", "id": "call-q", "arguments": choices}
    agent_env.script(
        [
            {"tool_calls": [question]},
            {"text": "ok"},
            {"tool_calls": [write_call(str(target), "x")]},
            {"text": "unused"},
        ]
    )
    async with spawn_agent(agent_env) as client:
        asked = anyio.Event()

        async def blue(client: AcpClient, params: Json) -> Json:
            return {"action": "accept", "content": {"answer": "blue"}}

        async def never(client: AcpClient, params: Json) -> Json:
            asked.set()
            await anyio.sleep_forever()
            raise AssertionError

        client.handlers["elicitation/create"] = blue
        client.handlers["session/request_permission"] = never
        await client.call("initialize", ZED)  # the first line: answered before the loop
        session_id = (await new_session(client, agent_env))["sessionId"]
        await client.call("session/prompt", text_prompt(session_id, "ask me"))
        assert "blue" in str(call_updates(client, session_id, "call-q")[-1]["content"])
        prompt_id = await client.start_request("session/prompt", text_prompt(session_id, "go"))
        with anyio.fail_after(WAIT_SECONDS):
            await asked.wait()
        await client.notify("session/cancel", {"sessionId": session_id})
        assert (await client.response(prompt_id))["result"] == {"stopReason": "cancelled"}
        [request] = client.requests_named("session/request_permission")
        await client.wait_for(lambda: request["id"] in client.cancel_requests)
    assert not target.exists()
