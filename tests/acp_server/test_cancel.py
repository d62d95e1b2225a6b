"""Cancellation at every stage, queued prompts, and EOF in the middle of a turn."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from tests.acp_server.client import (
    FULL_CAPABILITIES,
    WAIT_SECONDS,
    AcpClient,
    AgentEnv,
    Json,
    initialize,
    open_agent,
)
from tests.acp_server.env import TAKES_CANCEL_REQUEST
from tests.acp_server.test_sessions import new_session, text_prompt
from tests.acp_server.test_tools import bash_call, call_updates, write_call
from tests.earshot.support import text_reply, tool_reply
from tests.loopback import loopback
from tests.processes import running_with_argv, unique_sleep


async def test_cancel_while_the_model_streams(agent_env: AgentEnv) -> None:
    agent_env.script([{"text": "partial answer", "hang": True}])
    async with open_agent(agent_env) as client:
        await initialize(client)
        session_id = (await new_session(client, agent_env))["sessionId"]
        prompt_id = await client.start_request("session/prompt", text_prompt(session_id, "go"))
        await client.wait_for(lambda: "partial answer" in client.text(session_id))
        await client.notify("session/cancel", {"sessionId": session_id})
        response = await client.response(prompt_id)
        assert response["result"] == {"stopReason": "cancelled"}
        # The session is usable afterwards.
        assert (await client.call("session/list", {}))["sessions"]


async def test_cancel_request_on_the_prompt_answers_cancelled(agent_env: AgentEnv) -> None:
    agent_env.script([{"text": "partial", "hang": True}])
    async with open_agent(agent_env) as client:
        await initialize(client)
        session_id = (await new_session(client, agent_env))["sessionId"]
        prompt_id = await client.start_request("session/prompt", text_prompt(session_id, "go"))
        await client.wait_for(lambda: "partial" in client.text(session_id))
        await client.notify("$/cancel_request", {"requestId": prompt_id})
        response = await client.response(prompt_id)
        assert response["result"] == {"stopReason": "cancelled"}


async def test_cancel_sent_with_the_prompt_cancels_it(agent_env: AgentEnv) -> None:
    agent_env.script([{"text": "never"}])
    async with open_agent(agent_env) as client:
        await initialize(client)
        session_id = (await new_session(client, agent_env))["sessionId"]
        prompt = {
            "jsonrpc": "2.0",
            "id": "p1",
            "method": "session/prompt",
            "params": text_prompt(session_id, "go"),
        }
        cancel = {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session_id}}
        import json

        # Both go out in one raw write, so register the prompt's id the way `start_request` would.
        client._pending["p1"] = ("session/prompt", anyio.Event(), [])  # pyright: ignore[reportPrivateUsage]
        await client.send(json.dumps(prompt) + "\n" + json.dumps(cancel) + "\n")
        response = await client.response("p1")
        assert response["result"] == {"stopReason": "cancelled"}
        assert "never" not in client.text(session_id)


async def test_cancel_while_awaiting_permission(agent_env: AgentEnv) -> None:
    target = agent_env.workspace / "f.txt"
    agent_env.script([{"tool_calls": [write_call(str(target), "x")]}, {"text": "unused"}])
    async with open_agent(agent_env) as client:
        asked = anyio.Event()

        async def never_answer(client: AcpClient, params: dict[str, Any]) -> dict[str, Any]:
            asked.set()
            await anyio.sleep_forever()
            raise AssertionError

        client.handlers["session/request_permission"] = never_answer
        await initialize(client, TAKES_CANCEL_REQUEST)
        session_id = (await new_session(client, agent_env))["sessionId"]
        prompt_id = await client.start_request("session/prompt", text_prompt(session_id, "go"))
        with anyio.fail_after(WAIT_SECONDS):
            await asked.wait()
        await client.notify("session/cancel", {"sessionId": session_id})
        # Answered although the permission request never is: the cancel withdrew it.
        response = await client.response(prompt_id)
        assert response["result"] == {"stopReason": "cancelled"}
        [request] = client.requests_named("session/request_permission")
        # Our pending request was withdrawn, and the call ended failed before the answer.
        await client.wait_for(lambda: request["id"] in client.cancel_requests)
        updates = call_updates(client, session_id, "call-write")
        assert updates[-1]["status"] == "failed"
        answer_index = next(
            i for i, m in enumerate(client.messages) if m.get("id") == prompt_id and "result" in m
        )
        final_index = max(
            i
            for i, m in enumerate(client.messages)
            if m.get("method") == "session/update"
            and m["params"]["update"].get("toolCallId") == "call-write"
        )
        assert final_index < answer_index
    assert not target.exists()


@pytest.mark.parametrize(
    ("client_info", "capabilities", "withdrawn"),
    [
        (None, {}, False),  # the Python SDK 0.12.1: "Method not found" and a traceback
        ({"name": "zed", "version": "0.999.0"}, {}, True),
        ({"name": "some-editor", "version": "1"}, TAKES_CANCEL_REQUEST, True),
    ],
    ids=["unknown", "zed", "advertised"],
)
async def test_a_pending_prompt_is_withdrawn_only_from_clients_that_take_cancel_request(
    agent_env: AgentEnv, client_info: Json | None, capabilities: Json, withdrawn: bool
) -> None:
    """ACP v1 has no capability for `$/cancel_request`: it goes to Zed (by name), to a client
    that says it takes it, and to one that sent one itself. Either way the turn ends cancelled
    at once: the request is forgotten, and a late answer to it is dropped."""
    target = agent_env.workspace / "f.txt"
    agent_env.script([{"tool_calls": [write_call(str(target), "x")]}, {"text": "unused"}])
    async with open_agent(agent_env) as client:
        asked = anyio.Event()

        async def late(client: AcpClient, params: Json) -> Json:
            asked.set()
            await prompt_answered.wait()
            return {"outcome": {"outcome": "selected", "optionId": "allow_once"}}

        prompt_answered = anyio.Event()
        client.handlers["session/request_permission"] = late
        params: Json = {"protocolVersion": 1, "clientCapabilities": capabilities}
        if client_info is not None:
            params["clientInfo"] = client_info
        await client.call("initialize", params)
        session_id = (await new_session(client, agent_env))["sessionId"]
        prompt_id = await client.start_request("session/prompt", text_prompt(session_id, "go"))
        with anyio.fail_after(WAIT_SECONDS):
            await asked.wait()
        await client.notify("session/cancel", {"sessionId": session_id})
        response = await client.response(prompt_id)
        prompt_answered.set()
        assert response["result"] == {"stopReason": "cancelled"}
        [request] = client.requests_named("session/request_permission")
        if withdrawn:
            await client.wait_for(lambda: request["id"] in client.cancel_requests)
        # The late answer is dropped: the call stays refused, the server keeps serving.
        assert (await client.call("session/list", {}))["sessions"]
        assert client.cancel_requests == ([request["id"]] if withdrawn else [])
    assert not target.exists()


async def test_a_client_that_sends_cancel_request_is_sent_it(agent_env: AgentEnv) -> None:
    agent_env.script([{"text": "unused"}])
    async with open_agent(agent_env) as client:
        await initialize(client)  # says nothing of `$/cancel_request`
        session_id = (await new_session(client, agent_env))["sessionId"]
        await client.notify("$/cancel_request", {"requestId": 999})  # nothing of ours: ignored
        target = agent_env.workspace / "f.txt"
        agent_env.script([{"tool_calls": [write_call(str(target), "x")]}, {"text": "unused"}])
        asked = anyio.Event()

        async def never(client: AcpClient, params: Json) -> Json:
            asked.set()
            await anyio.sleep_forever()
            raise AssertionError

        client.handlers["session/request_permission"] = never
        session_id = (await new_session(client, agent_env))["sessionId"]
        prompt_id = await client.start_request("session/prompt", text_prompt(session_id, "go"))
        with anyio.fail_after(WAIT_SECONDS):
            await asked.wait()
        await client.notify("session/cancel", {"sessionId": session_id})
        assert (await client.response(prompt_id))["result"] == {"stopReason": "cancelled"}
        [request] = client.requests_named("session/request_permission")
        await client.wait_for(lambda: request["id"] in client.cancel_requests)


async def test_a_cancelled_permission_outcome_cancels_the_turn(agent_env: AgentEnv) -> None:
    target = agent_env.workspace / "f.txt"
    agent_env.script([{"tool_calls": [write_call(str(target), "x")]}, {"text": "unused"}])
    async with open_agent(agent_env) as client:

        async def cancelled(client: AcpClient, params: dict[str, Any]) -> dict[str, Any]:
            return {"outcome": {"outcome": "cancelled"}}

        client.handlers["session/request_permission"] = cancelled
        await initialize(client)
        session_id = (await new_session(client, agent_env))["sessionId"]
        result = await client.call("session/prompt", text_prompt(session_id, "go"))
        assert result["stopReason"] == "cancelled"
        assert "unused" not in client.text(session_id)
    assert not target.exists()


async def test_cancel_while_a_terminal_command_runs(agent_env: AgentEnv) -> None:
    agent_env.script([{"tool_calls": [bash_call("sleep 30")]}, {"text": "unused"}], mode="yolo")
    async with open_agent(agent_env) as client:
        await initialize(client, FULL_CAPABILITIES)
        session_id = (await new_session(client, agent_env))["sessionId"]
        prompt_id = await client.start_request("session/prompt", text_prompt(session_id, "go"))
        await client.wait_for(lambda: client.requests_named("terminal/wait_for_exit"))
        await client.notify("session/cancel", {"sessionId": session_id})
        # Answered although `sleep 30` is far from done: the cancel killed it.
        response = await client.response(prompt_id)
        assert response["result"] == {"stopReason": "cancelled"}
        methods = [
            r["method"] for r in client.agent_requests if r["method"].startswith("terminal/")
        ]
        assert "terminal/kill" in methods
        assert methods[-1] == "terminal/release"
        [terminal] = client.terminals.values()
        assert terminal.released
        with anyio.fail_after(WAIT_SECONDS):
            await terminal.exited.wait()
        wait_request = client.requests_named("terminal/wait_for_exit")[0]
        assert wait_request["id"] in client.cancel_requests
        assert call_updates(client, session_id, "call-bash")[-1]["status"] == "failed"


async def test_a_prompt_sent_during_a_turn_is_queued_into_it(agent_env: AgentEnv) -> None:
    target = agent_env.workspace / "f.txt"
    with loopback(
        tool_reply(("call-write", "write", {"path": str(target), "content": "x"})),
        text_reply("saw both prompts"),
    ) as model:
        # A real HTTP model (the loopback server records every request it gets).
        agent_env.write_settings(
            {
                "model": "local/test-model",
                "providers": {
                    "local": {
                        "api": "openai-chat",
                        "baseUrl": f"{model.url}/v1",
                        "apiKey": "test-key",
                    }
                },
            }
        )
        async with open_agent(agent_env) as client:
            asked = anyio.Event()
            release = anyio.Event()

            async def slow_allow(client: AcpClient, params: dict[str, Any]) -> dict[str, Any]:
                asked.set()
                await release.wait()
                option = next(o for o in params["options"] if o["kind"] == "allow_once")
                return {"outcome": {"outcome": "selected", "optionId": option["optionId"]}}

            client.handlers["session/request_permission"] = slow_allow
            await initialize(client)
            session_id = (await new_session(client, agent_env))["sessionId"]
            first = await client.start_request(
                "session/prompt", text_prompt(session_id, "first words")
            )
            with anyio.fail_after(WAIT_SECONDS):
                await asked.wait()
            second = await client.start_request(
                "session/prompt", text_prompt(session_id, "queued words")
            )
            release.set()
            assert (await client.response(first))["result"] == {"stopReason": "end_turn"}
            assert (await client.response(second))["result"] == {"stopReason": "end_turn"}
            assert client.text(session_id) == "saw both prompts"
    assert target.read_text(encoding="utf-8") == "x"
    # The model calls (the session also asked the server for its model list, in the background).
    calls = [request for request in model.requests if request.method == "POST"]
    assert len(calls) == 2
    before, after = (request.json()["messages"] for request in calls)
    assert "queued words" not in json.dumps(before)
    # The queued prompt reached the model in the same turn, after the tool result.
    roles = [m["role"] for m in after]
    user_texts = [json.dumps(m["content"]) for m in after if m["role"] == "user"]
    assert "first words" in user_texts[0]
    assert "queued words" in user_texts[-1]
    assert roles.index("tool") < len(roles) - 1 - roles[::-1].index("user")


async def test_cancel_request_on_a_queued_prompt_cancels_that_prompt_only(
    agent_env: AgentEnv,
) -> None:
    # `$/cancel_request` cancels one request: a prompt queued into the running turn answers
    # `cancelled` at once, and the turn (the other prompt's) goes on to its end.
    target = agent_env.workspace / "f.txt"
    agent_env.script([{"tool_calls": [write_call(str(target), "x")]}, {"text": "all done"}])
    async with open_agent(agent_env) as client:
        asked = anyio.Event()
        release = anyio.Event()

        async def slow_allow(client: AcpClient, params: dict[str, Any]) -> dict[str, Any]:
            asked.set()
            await release.wait()
            option = next(o for o in params["options"] if o["kind"] == "allow_once")
            return {"outcome": {"outcome": "selected", "optionId": option["optionId"]}}

        client.handlers["session/request_permission"] = slow_allow
        await initialize(client, TAKES_CANCEL_REQUEST)
        session_id = (await new_session(client, agent_env))["sessionId"]
        first = await client.start_request("session/prompt", text_prompt(session_id, "first"))
        with anyio.fail_after(WAIT_SECONDS):
            await asked.wait()
        second = await client.start_request("session/prompt", text_prompt(session_id, "queued"))
        await client.notify("$/cancel_request", {"requestId": second})
        # Answered while the turn still waits for the permission answer.
        assert (await client.response(second))["result"] == {"stopReason": "cancelled"}
        release.set()
        assert (await client.response(first))["result"] == {"stopReason": "end_turn"}
        assert "all done" in client.text(session_id)
        assert client.cancel_requests == []  # nothing of the turn was withdrawn
    assert target.read_text(encoding="utf-8") == "x"


async def test_eof_mid_turn_kills_the_command_and_keeps_the_transcript(
    agent_env: AgentEnv,
) -> None:
    sleep = unique_sleep(30)
    agent_env.script(
        [
            {"tool_calls": [bash_call(f"echo sta''rted; {sleep}")]},
            {"text": "unused"},
        ],
        mode="yolo",
    )
    async with open_agent(agent_env) as client:
        await initialize(client)
        session_id = (await new_session(client, agent_env))["sessionId"]
        await client.start_request("session/prompt", text_prompt(session_id, "remember me"))
        # The output streamed into the call says the command runs.
        await client.wait_for(
            lambda: "started" in str(call_updates(client, session_id, "call-bash"))
        )
        await client.close_stdin()
        # The server stops although the command had 30 s to go: the end of input cancelled
        # the turn, which killed the command before the server closed the session.
        await client.stopped()
        assert not running_with_argv(sleep)

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


async def test_an_id_reused_while_in_flight_is_refused(agent_env: AgentEnv) -> None:
    agent_env.script([{"text": "streaming", "hang": True}])
    async with open_agent(agent_env) as client:
        await initialize(client)
        session_id = (await new_session(client, agent_env))["sessionId"]
        prompt_id = await client.start_request(
            "session/prompt", text_prompt(session_id, "go"), request_id="dup"
        )
        await client.wait_for(lambda: "streaming" in client.text(session_id))
        await client.send({"jsonrpc": "2.0", "id": "dup", "method": "logout", "params": {}})
        refused = await client.wait_for(
            lambda: next((m for m in client.messages if m.get("id") == "dup"), None)
        )
        assert refused["error"]["code"] == -32600
        await client.notify("session/cancel", {"sessionId": session_id})
        answers = await client.wait_for(
            lambda: [m for m in client.messages if m.get("id") == prompt_id and "result" in m]
        )
        assert answers[0]["result"] == {"stopReason": "cancelled"}
