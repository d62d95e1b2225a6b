"""The JSON-RPC layer of the real server (in this process): initialize, errors, hostile input.
What needs a process (stdin's end, exit, signals, fd 1) is in `test_stdio.py`."""

from __future__ import annotations

import json
import sys

from tests.acp_server.client import AgentEnv, initialize, open_agent


async def test_initialize_advertises_what_is_wired(agent_env: AgentEnv) -> None:
    async with open_agent(agent_env) as client:
        result = await initialize(client, {"fs": {"readTextFile": True}, "terminal": True})
    assert result["protocolVersion"] == 1
    assert result["agentInfo"]["name"] == "earshot"
    caps = result["agentCapabilities"]
    assert caps["loadSession"] is True
    assert caps["promptCapabilities"] == {"image": True, "audio": False, "embeddedContext": True}
    assert caps["mcpCapabilities"] == {"http": True, "sse": True, "acp": True}
    assert set(caps["sessionCapabilities"]) == {
        "list",
        "resume",
        "close",
        "delete",
        "additionalDirectories",
        "fork",
        "title",
        "status",
        "archive",
        "systemPrompt",
    }
    assert caps["sessionCapabilities"]["systemPrompt"] == {"mode": {"override": {}}}
    assert caps["auth"] == {"logout": {}, "status": {}}
    # A client that cannot sign in through a terminal gets no method: the old "API key from
    # environment" made Zed call a no-op `authenticate` and stay on its sign-in screen.
    assert result["authMethods"] == []


async def test_a_terminal_sign_in_is_offered_only_to_clients_that_run_it_and_while_no_key_is_set(
    agent_env: AgentEnv,
) -> None:
    """Issue 31.10: offer only a method the client can complete (ACP terminal auth, or Zed's
    `_meta["terminal-auth"]`), and none once a key is found."""
    for capabilities in ({"auth": {"terminal": True}}, {"_meta": {"terminal-auth": True}}):
        async with open_agent(agent_env) as client:
            result = await initialize(client, capabilities)
        [method] = result["authMethods"]
        assert (method["type"], method["id"], method["args"]) == (
            "terminal",
            "earshot-login",
            ["login"],
        )
        legacy = method["_meta"]["terminal-auth"]
        assert legacy["command"] == sys.executable and legacy["args"] == ["-m", "earshot", "login"]
    agent_env.extra_env["GROQ_API_KEY"] = "gsk-test"
    async with open_agent(agent_env) as client:
        result = await initialize(client, {"auth": {"terminal": True}})
    assert result["authMethods"] == []
    del agent_env.extra_env["GROQ_API_KEY"]
    settings = agent_env.config_home / "earshot" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text('{"providers": {"openai": {"apiKey": "sk-test"}}}', encoding="utf-8")
    async with open_agent(agent_env) as client:
        result = await initialize(client, {"auth": {"terminal": True}})
    assert result["authMethods"] == []


async def test_initialize_answers_v1_below_2_and_v2_from_2(agent_env: AgentEnv) -> None:
    """Version 1 for any version below 2 (as before v2 was served); 2 and higher get the v2
    draft (`test_v2.py`)."""
    async with open_agent(agent_env) as client:
        result = await client.call("initialize", {"protocolVersion": 0})
        assert result["protocolVersion"] == 1
        error = await client.error("initialize", {"protocolVersion": "one"})
        assert error["code"] == -32602
        assert error["data"]["field"] == "protocolVersion"
    async with open_agent(agent_env) as client:
        client.protocol = 2
        result = await client.call("initialize", {"protocolVersion": 2})
        assert result["protocolVersion"] == 2


async def test_authenticate_and_logout_are_idempotent(agent_env: AgentEnv) -> None:
    async with open_agent(agent_env) as client:
        await initialize(client)
        assert await client.call("authenticate", {"methodId": "env"}) == {}
        assert await client.call("authenticate", {"methodId": "env"}) == {}
        assert await client.call("logout", {}) == {}
        error = await client.error("authenticate", {"methodId": "nope"})
        assert (error["code"], error["data"]["field"]) == (-32602, "methodId")


async def test_malformed_lines_are_answered_and_serving_continues(agent_env: AgentEnv) -> None:
    async with open_agent(agent_env) as client:
        await client.send("this is not json\n")
        await client.send("[1, 2, 3]\n")
        await client.send("42\n")
        await client.send('{"jsonrpc": "1.0", "id": 7, "method": "initialize"}\n')
        await client.send('{"jsonrpc": "2.0", "id": 8.5, "method": "initialize"}\n')
        await client.send(b'{"jsonrpc": "2.0", "id": 9, "method": "\xff\xfe"}\n')
        await client.send("\n   \n")
        errors = await client.wait_for(
            lambda: (
                [m for m in client.messages if "error" in m] if len(client.messages) >= 6 else None
            )
        )
        codes = [(m["id"], m["error"]["code"]) for m in errors]
        # A parse error says where: the input's line and the column in it.
        assert errors[0]["error"]["data"] == {"line": 1, "column": 1}
        assert "line 1, column 1: Expecting value" in errors[0]["error"]["message"]
        assert errors[-1]["error"]["data"]["line"] == 6
        assert codes == [
            (None, -32700),
            (None, -32600),
            (None, -32600),
            (7, -32600),
            (None, -32600),
            (None, -32700),
        ]
        # Still serving.
        result = await initialize(client)
        assert result["protocolVersion"] == 1


async def test_unknown_methods_wrong_types_and_reused_ids(agent_env: AgentEnv) -> None:
    async with open_agent(agent_env) as client:
        await initialize(client)
        error = await client.error("session/frobnicate", {"sessionId": "x"})
        assert error["code"] == -32601
        error = await client.error("_zed.dev/custom", {})
        assert error["code"] == -32601
        # Unknown notifications (custom or not) are ignored.
        await client.notify("_zed.dev/whatever", {"x": 1})
        await client.notify("session/unknown", {})
        error = await client.error("session/new", {"cwd": 5, "mcpServers": []})
        assert (error["code"], error["data"]["field"]) == (-32602, "cwd")
        error = await client.error("session/new", {"cwd": "relative/path", "mcpServers": []})
        assert (error["code"], error["data"]["field"]) == (-32602, "cwd")
        error = await client.error("session/prompt", {"sessionId": "nope", "prompt": []})
        assert error["code"] == -32002
        error = await client.error("session/set_mode", {"sessionId": 3, "modeId": "ask"})
        assert (error["code"], error["data"]["field"]) == (-32602, "sessionId")
        response = await client.response(
            await client.start_request("initialize", [1], request_id="array-params")
        )
        assert response["error"]["code"] == -32602
        # An id that is reused after its request was answered is fine.
        await client.response(await client.start_request("logout", {}, request_id="again"))
        response = await client.response(
            await client.start_request("logout", {}, request_id="again")
        )
        assert response["result"] == {}


async def test_a_ten_megabyte_line_is_handled(agent_env: AgentEnv) -> None:
    async with open_agent(agent_env) as client:
        await initialize(client)
        huge = "x" * (10 * 1024 * 1024)
        error = await client.error("authenticate", {"methodId": huge})
        assert error["code"] == -32602
        assert len(json.dumps(error)) < 1000  # the message does not echo the input
        assert await client.call("logout", {}) == {}


async def test_a_first_line_that_is_not_initialize_is_served_normally(agent_env: AgentEnv) -> None:
    async with open_agent(agent_env) as client:
        assert await client.call("logout", {}) == {}
        await client.send('{"jsonrpc": "2.0", "id": 9, "method": "initialize", "params": {}}\n')
        result = await initialize(client)
        assert result["protocolVersion"] == 1
        errors = [m for m in client.messages if m.get("id") == 9]
        assert errors[0]["error"]["data"]["field"] == "protocolVersion"


async def test_a_line_over_the_limit_is_a_parse_error(agent_env: AgentEnv) -> None:
    agent_env.extra_env["EARSHOT_ACP_LINE_LIMIT"] = str(1024 * 1024)
    async with open_agent(agent_env) as client:
        await initialize(client)
        await client.send('{"jsonrpc": "2.0", "id": 5, "method": "logout", "params": {"x": "')
        await client.send("y" * (3 * 1024 * 1024))
        await client.send('"}}\n')
        error = await client.wait_for(
            lambda: next((m for m in client.messages if m.get("id") is None), None)
        )
        assert error["error"]["code"] == -32700
        assert await client.call("logout", {}) == {}
