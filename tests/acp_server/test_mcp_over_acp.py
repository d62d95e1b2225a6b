"""MCP servers the editor provides over the ACP connection itself (`mcp/message`, unstable;
`mcpCapabilities.acp`): the editor plays the MCP server here, as the TypeScript SDK's
`McpOverAcpProvider` does; its tools reach the model like any other MCP tool, through the same
permission gate."""

from __future__ import annotations

from typing import Any

import anyio

from tests.acp_server.client import AcpClient, AgentEnv, Json, initialize, open_agent
from tests.acp_server.test_sessions import new_session, text_prompt
from tests.acp_server.test_tools import call_updates

SERVER: Json = {"type": "acp", "name": "notes", "serverId": "srv-notes-1"}
NOTE_TOOL: Json = {
    "name": "add",
    "description": "Add a note.",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
}


def notes_server(seen: list[Json]) -> Any:
    """An MCP server (2026-07-28, no handshake) answering `mcp/message` requests."""

    async def answer(client: AcpClient, params: Json) -> Json:
        seen.append(params)
        cached = {"ttlMs": 0, "cacheScope": "private", "resultType": "complete"}
        match params["method"]:
            case "server/discover":
                found: Json = {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}}
                return {"result": {**found, **cached}}
            case "tools/list":
                return {"result": {"tools": [NOTE_TOOL], **cached}}
            case "tools/call":
                text = params["params"]["arguments"]["text"]
                content = [{"type": "text", "text": f"noted: {text}"}]
                return {"result": {"content": content, "resultType": "complete"}}
            case _:
                return {"error": {"code": -32601, "message": f"no method {params['method']}"}}

    return answer


async def test_an_editor_server_gives_the_model_its_tools_through_the_gate(
    agent_env: AgentEnv,
) -> None:
    call = {"name": "mcp__notes__add", "id": "n1", "arguments": {"text": "buy milk"}}
    agent_env.script(
        [{"tool_calls": [call]}, {"text": "Noted."}],
        # The first turn waits for the server (it answers at once; the wait only bounds it).
        extra={"mcp": {"startupWait": 30}},
    )
    seen: list[Json] = []
    async with open_agent(agent_env) as client:
        client.handlers["mcp/message"] = notes_server(seen)
        init = await initialize(client, unstable=True)
        assert init["agentCapabilities"]["mcpCapabilities"]["acp"] is True
        session_id = (await new_session(client, agent_env, mcpServers=[SERVER]))["sessionId"]
        done = await client.call("session/prompt", text_prompt(session_id, "note it"))
        assert done["stopReason"] == "end_turn"
        final = call_updates(client, session_id, "n1")[-1]
        assert final["status"] == "completed"
        assert "noted: buy milk" in str(final["content"])
        # Not read-only: the user was asked first, as for any MCP tool.
        [asked] = client.requests_named("session/request_permission")
        assert asked["params"]["toolCall"]["toolCallId"] == "n1"
        # A notification for no active request is dropped.
        await client.notify(
            "mcp/message",
            {"serverId": "srv-notes-1", "requestId": "gone", "method": "notifications/progress"},
        )
        await client.call("session/prompt", text_prompt(session_id, "/mcp"))
        assert "- notes (acp, from editor): connected, 1 tools" in client.text(session_id)
    assert [message["method"] for message in seen] == [
        "server/discover",
        "tools/list",
        "tools/call",
    ]
    for message in seen:
        assert message["serverId"] == "srv-notes-1"
        meta = message["params"]["_meta"]
        assert meta["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
    assert len({message["requestId"] for message in seen}) == 3


async def test_a_server_the_editor_cannot_reach_is_said_and_the_session_goes_on(
    agent_env: AgentEnv,
) -> None:
    agent_env.script([{"text": "fine without it"}], extra={"mcp": {"startupWait": 30}})

    async def unavailable(client: AcpClient, params: Json) -> Json:
        from tests.acp_server.editor import ClientError

        raise ClientError(-33001, "no server registered with that id")

    async with open_agent(agent_env) as client:
        client.handlers["mcp/message"] = unavailable
        await initialize(client, unstable=True)
        session_id = (await new_session(client, agent_env, mcpServers=[SERVER]))["sessionId"]
        done = await client.call("session/prompt", text_prompt(session_id, "hi"))
        assert done["stopReason"] == "end_turn"
        text = client.text(session_id)
    assert "MCP server 'notes' is not available" in text
    assert "no server registered with that id" in text
    assert "fine without it" in text


async def test_a_cancelled_call_withdraws_its_mcp_message(agent_env: AgentEnv) -> None:
    """The MCP SDK abandons the call (`notifications/cancelled`), which has no ACP form: its
    outer `mcp/message` request is withdrawn instead (`$/cancel_request`, to a client that takes
    it), and the turn ends at once."""
    call = {"name": "mcp__notes__add", "id": "n1", "arguments": {"text": "never"}}
    agent_env.script([{"tool_calls": [call]}], extra={"mcp": {"startupWait": 30}})
    seen: list[Json] = []
    answer = notes_server(seen)
    calling = anyio.Event()

    async def hang_on_calls(client: AcpClient, params: Json) -> Json:
        if params["method"] != "tools/call":
            return await answer(client, params)
        calling.set()
        await anyio.sleep_forever()
        raise AssertionError

    async with open_agent(agent_env) as client:
        client.handlers["mcp/message"] = hang_on_calls
        await initialize(client, {"_meta": {"earshot": {"cancelRequest": True}}}, unstable=True)
        session_id = (await new_session(client, agent_env, mcpServers=[SERVER]))["sessionId"]
        prompt = await client.start_request("session/prompt", text_prompt(session_id, "note"))
        with anyio.fail_after(30):
            await calling.wait()
        [outer] = [r["id"] for r in client.requests_named("mcp/message")][-1:]
        await client.notify("session/cancel", {"sessionId": session_id})
        done = await client.response(prompt)
        assert done["result"]["stopReason"] == "cancelled"
        await client.wait_for(lambda: outer in client.cancel_requests)
