"""`earshot serve`: ACP over WebSocket. The stdio scenarios imported below run here again over a
WebSocket (this module's `agent_env` sets `over_websocket`); the tests after them cover what
only the WebSocket server has: the token, several clients at once, a client that goes away."""

from __future__ import annotations

import io
import json
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from acp_server.log import log_to
from earshot.acp_main import earshot_ports
from earshot.serve_cli import TokenFileError, read_token_file
from tests.acp_server.client import (
    WAIT_SECONDS,
    AcpClient,
    AgentEnv,
    initialize,
    make_env,
    open_agent,
)
from tests.acp_server.test_cancel import (
    test_cancel_while_awaiting_permission as test_cancel_while_awaiting_permission,
)
from tests.acp_server.test_cancel import (
    test_cancel_while_the_model_streams as test_cancel_while_the_model_streams,
)
from tests.acp_server.test_cancel import (
    test_eof_mid_turn_kills_the_command_and_keeps_the_transcript as test_eof_mid_turn_kills_the_command_and_keeps_the_transcript,  # noqa: E501
)
from tests.acp_server.test_questions import (
    test_a_choice_question_becomes_an_elicitation_form as test_a_choice_question_becomes_an_elicitation_form,  # noqa: E501
)
from tests.acp_server.test_sessions import new_session, text_prompt
from tests.acp_server.test_sessions import (
    test_list_resume_close_delete as test_list_resume_close_delete,
)
from tests.acp_server.test_sessions import (
    test_load_replays_everything_in_a_fresh_process as test_load_replays_everything_in_a_fresh_process,  # noqa: E501
)
from tests.acp_server.test_sessions import (
    test_new_session_then_a_scripted_prompt as test_new_session_then_a_scripted_prompt,
)
from tests.acp_server.test_tools import call_updates, write_call
from tests.acp_server.test_tools import (
    test_commands_run_in_an_editor_terminal as test_commands_run_in_an_editor_terminal,
)
from tests.acp_server.test_tools import (
    test_permission_round_trip_for_an_edit as test_permission_round_trip_for_an_edit,
)
from tests.acp_server.test_tools import (
    test_reads_and_writes_go_through_the_editor_when_advertised as test_reads_and_writes_go_through_the_editor_when_advertised,  # noqa: E501
)
from tests.acp_server.test_updates import test_usage_plan_and_title as test_usage_plan_and_title
from tests.acp_server.websocket_client import TOKEN, connected, serving


@pytest.fixture
def agent_env(tmp_path: Path) -> AgentEnv:
    env = make_env(tmp_path)
    env.over_websocket = True
    return env


INITIALIZE = '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}'


async def test_a_connection_without_the_token_is_refused(agent_env: AgentEnv) -> None:
    environ = agent_env.environ()
    async with serving(lambda: earshot_ports(environ=environ)) as url:
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}):
            with pytest.raises(InvalidStatus) as refused:
                async with connect(url, additional_headers=headers):
                    pass
            assert refused.value.response.status_code == 401
        with pytest.raises(InvalidStatus):
            async with connect(url + "?token=wrong"):
                pass
        # A browser cannot set headers: the query parameter is accepted too.
        async with connect(url + f"?token={TOKEN}") as connection:
            await connection.send(INITIALIZE)
            with anyio.fail_after(30):
                answer = await connection.recv()
            assert '"protocolVersion":1' in str(answer).replace(" ", "")


async def test_several_clients_at_once_each_with_its_own_sessions(agent_env: AgentEnv) -> None:
    agent_env.script([{"text": "answer"}])
    environ = agent_env.environ()
    async with (
        serving(lambda: earshot_ports(environ=environ)) as url,
        connected(url) as first,
        connected(url) as second,
    ):
        await initialize(first)
        await initialize(second)
        one = (await new_session(first, agent_env))["sessionId"]
        two = (await new_session(second, agent_env))["sessionId"]
        assert one != two
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(first.call, "session/prompt", text_prompt(one, "hi"))
            tasks.start_soon(second.call, "session/prompt", text_prompt(two, "hi"))
        assert first.text(one) == second.text(two) == "answer"
        # Each client sees its own session only.
        assert not first.updates(two) and not second.updates(one)
        assert first.violations == second.violations == []


async def test_a_client_that_goes_away_mid_prompt_loses_nothing(agent_env: AgentEnv) -> None:
    # The model asks to write a file; the client never answers the permission prompt: it
    # disconnects instead.
    target = agent_env.workspace / "f.txt"
    agent_env.script([{"tool_calls": [write_call(str(target), "x")]}, {"text": "unused"}])
    asked = anyio.Event()

    async def never_answer(client: AcpClient, params: dict[str, Any]) -> dict[str, Any]:
        asked.set()
        await anyio.sleep_forever()
        raise AssertionError

    async with open_agent(agent_env) as client:
        client.handlers["session/request_permission"] = never_answer
        await initialize(client)
        session_id = (await new_session(client, agent_env))["sessionId"]
        await client.start_request("session/prompt", text_prompt(session_id, "remember me"))
        with anyio.fail_after(WAIT_SECONDS):
            await asked.wait()
        await client.close_stdin()
        # The server stops: the end of the connection cancelled the turn and closed the session.
        await client.stopped()
    assert not target.exists()

    # Another client loads it: the prompt and the call are there, the call ended failed.
    async with open_agent(agent_env) as client:
        await initialize(client)
        await client.call(
            "session/load",
            {"sessionId": session_id, "cwd": str(agent_env.workspace), "mcpServers": []},
        )
        users = [
            u for u in client.updates(session_id) if u["sessionUpdate"] == "user_message_chunk"
        ]
        assert users[0]["content"]["text"] == "remember me"
        assert call_updates(client, session_id, "call-write")[-1]["status"] == "failed"


async def test_earshot_serve_prints_where_and_the_token_and_serves(agent_env: AgentEnv) -> None:
    """The real command: it prints the URL and a fresh token on stderr, serves ACP, refuses a
    client without the token and ends quietly on Ctrl-C."""
    env = {**agent_env.environ(), "PYTHONUNBUFFERED": "1"}
    async with await anyio.open_process(
        [sys.executable, "-m", "earshot", "serve", "--port", "0"],
        env=env,
        cwd=agent_env.workspace,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as process:
        assert process.stderr is not None
        printed = ""
        with anyio.fail_after(WAIT_SECONDS):
            async for chunk in process.stderr:
                printed += chunk.decode()
                if "token " in printed and printed.endswith("\n"):
                    break
        url = re.search(r"ws://127\.0\.0\.1:\d+/", printed)
        token = re.search(r"token (\S+) ", printed)
        assert url is not None and token is not None, printed
        assert token.group(1) != TOKEN and len(token.group(1)) >= 32
        with pytest.raises(InvalidStatus):
            async with connect(url.group(0)):
                pass
        headers = {"Authorization": f"Bearer {token.group(1)}"}
        async with connect(url.group(0), additional_headers=headers) as connection:
            await connection.send(INITIALIZE)
            with anyio.fail_after(WAIT_SECONDS):
                answer = json.loads(await connection.recv())
            assert answer["result"]["protocolVersion"] == 1
        process.send_signal(signal.SIGINT)
        with anyio.fail_after(WAIT_SECONDS):
            status = await process.wait()
        rest = b"".join([chunk async for chunk in process.stderr]).decode()
        assert status == 130
        assert "Traceback" not in printed + rest


def test_a_token_file_others_can_read_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "token"
    path.write_text("secret-token\n", encoding="utf-8")
    path.chmod(0o644)
    with pytest.raises(TokenFileError, match="chmod 600"):
        read_token_file(path)
    path.chmod(0o600)
    assert read_token_file(path) == "secret-token"
    path.write_text("\n", encoding="utf-8")
    with pytest.raises(TokenFileError, match="empty"):
        read_token_file(path)
    with pytest.raises(TokenFileError, match="cannot read"):
        read_token_file(tmp_path / "missing")


async def test_a_wrong_token_is_told_so_and_binary_and_broken_messages_are_answered(
    agent_env: AgentEnv,
) -> None:
    """Issue 26.16: a wrong token got "a bearer token is required"; a binary message was taken
    although messages are text; a parse error counted lines where the client sent messages."""
    environ = agent_env.environ()
    async with serving(lambda: earshot_ports(environ=environ)) as url:
        for headers, said in (
            ({"Authorization": "Bearer wrong"}, b"the bearer token is wrong\n"),
            ({}, b"a bearer token is required\n"),
        ):
            with pytest.raises(InvalidStatus) as refused:
                async with connect(url, additional_headers=headers):
                    pass
            assert refused.value.response.body == said
        headers = {"Authorization": f"Bearer {TOKEN}"}
        async with connect(url, additional_headers=headers) as connection:
            await connection.send(INITIALIZE.encode())  # binary
            await connection.send('{"jsonrpc": "2.0",\n "id": 2, "method": ')  # message 2
            await connection.send(INITIALIZE)
            with anyio.fail_after(WAIT_SECONDS):
                answers = [json.loads(await connection.recv()) for _ in range(3)]
    binary, broken, initialized = sorted(answers, key=lambda a: json.dumps(a["id"]))[::-1]
    assert initialized["id"] == 1 and initialized["result"]["protocolVersion"] == 1
    errors = sorted((binary, broken), key=lambda a: "binary" in a["error"]["message"])
    broken, binary = errors
    assert binary["id"] is None and binary["error"]["code"] == -32700
    assert "send each JSON-RPC message as text" in binary["error"]["message"]
    assert broken["error"]["message"].startswith("parse error: not valid JSON at message 2,")
    assert broken["error"]["data"]["message"] == 2


async def test_a_client_that_stopped_reading_and_closes_ends_its_turn_at_once(
    agent_env: AgentEnv,
) -> None:
    """Issue 26.16: the client stops reading mid-stream, then closes. Its close frame reaches
    the server, but nothing the server sends reaches it any more (its library stopped reading
    the socket), so the closing handshake cannot end: the server used to wait for the client's
    close timeout while the turn ran on. Now it drops the connection and ends the turn while the
    client is still closing."""
    agent_env.script([{"text": "streamed " * 20_000, "chunk_size": 500, "hang": True}])
    environ = agent_env.environ()
    server_done = anyio.Event()
    logged = io.StringIO()
    log_to(logged)

    def request(request_id: int, method: str, params: Any) -> str:
        return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})

    async with serving(lambda: earshot_ports(environ=environ), on_closed=server_done.set) as url:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        async with connect(url, additional_headers=headers, max_queue=1, close_timeout=600) as c:
            await c.send(INITIALIZE)
            await c.recv()
            new: dict[str, Any] = {"cwd": str(agent_env.workspace), "mcpServers": []}
            await c.send(request(2, "session/new", new))
            session_id = json.loads(await c.recv())["result"]["sessionId"]
            await c.send(request(3, "session/prompt", text_prompt(session_id, "stream")))
            while "agent_message_chunk" not in str(await c.recv()):
                pass  # the stream has started: from here on, the client reads no more
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(c.close)
                with anyio.fail_after(WAIT_SECONDS):
                    await server_done.wait()
                c.transport.abort()  # the client's own close would wait its 600 s
                tasks.cancel_scope.cancel()
    # Dropped by the server after its grace (without it, the client's close timeout or the
    # server's own, 10 s, would end it while the turn runs on).
    assert "client closed but does not read: connection dropped" in logged.getvalue()
    # The turn was cancelled and the session closed, on disk.
    async with open_agent(agent_env) as client:
        await initialize(client)
        load: dict[str, Any] = {
            "sessionId": session_id,
            "cwd": str(agent_env.workspace),
            "mcpServers": [],
        }
        await client.call("session/load", load)
    assert "streamed" in client.text(session_id)
