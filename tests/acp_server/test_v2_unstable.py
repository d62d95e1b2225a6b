"""The unstable methods v2 shares with v1 (`schema/v2/schema.unstable.json`), over a v2
connection: titles, status and archiving, `auth/status` and its update, MCP servers the editor
provides over `mcp/message`, and the client's `systemPrompt`. Every message is validated against
v2's unstable schema; v1's own tests of each (`test_unstable_*.py`, `test_mcp_over_acp.py`,
`test_system_prompt.py`) say the behaviour in detail."""

from __future__ import annotations

from agent.context.system_prompt import SAFETY_RULES
from tests.acp_server.client import AgentEnv, Json, initialize_v2, open_agent
from tests.acp_server.test_mcp_over_acp import SERVER, notes_server
from tests.acp_server.test_system_prompt import _settings, _systems  # pyright: ignore[reportPrivateUsage]
from tests.acp_server.test_unstable_auth import KEY, _updates  # pyright: ignore[reportPrivateUsage]
from tests.acp_server.test_v2 import idle_stop, new_session, prompt
from tests.earshot.support import text_reply
from tests.loopback import loopback


async def test_titles_status_archiving_and_auth_status_over_v2(agent_env: AgentEnv) -> None:
    async with open_agent(agent_env) as client:
        init = await initialize_v2(client, unstable=True)
        capabilities = init["capabilities"]
        assert {"title", "status", "archive", "systemPrompt"} <= set(capabilities["session"])
        assert capabilities["session"]["mcp"]["acp"] == {}
        assert capabilities["auth"] == {"status": {}}
        assert await client.call("auth/status", {}) == {"state": "unauthenticated", "accounts": []}

        # The settings gain a key: a new session reads them, and the client that asked hears.
        agent_env.write_settings({"providers": {"anthropic": {"apiKey": KEY}}})
        session_id = await new_session(client, agent_env)
        [update] = await client.wait_for(lambda: _updates(client))
        assert update["state"] == "authenticated"

        ids = {"sessionId": session_id}
        answer = await client.call("session/set_title", {**ids, "title": " Parser\n rework "})
        assert answer == {"title": "Parser rework"}
        assert {"sessionUpdate": "session_info_update", "title": "Parser rework"} in (
            client.updates(session_id)
        )
        assert await client.call("session/status", ids) == {"status": "open"}
        await client.call("session/archive", ids)
        assert await client.call("session/status", ids) == {"status": "saved"}
        assert (await client.call("session/list", {}))["sessions"] == []
        [archived] = (await client.call("session/list", {"archived": "only"}))["sessions"]
        assert (archived["title"], archived["archived"]) == ("Parser rework", True)
        await client.call("session/unarchive", ids)
        assert [s["sessionId"] for s in (await client.call("session/list", {}))["sessions"]] == [
            session_id
        ]

    assert KEY not in "\n".join(client.raw_lines)


async def test_an_editor_mcp_server_over_v2(agent_env: AgentEnv) -> None:
    call = {"name": "mcp__notes__add", "id": "n1", "arguments": {"text": "buy milk"}}
    agent_env.script(
        [{"tool_calls": [call]}, {"text": "Noted."}], extra={"mcp": {"startupWait": 30}}
    )
    seen: list[Json] = []
    async with open_agent(agent_env) as client:
        client.handlers["mcp/message"] = notes_server(seen)
        await initialize_v2(client, unstable=True)
        params = {"cwd": str(agent_env.workspace), "mcpServers": [SERVER]}
        session_id = (await client.call("session/new", params))["sessionId"]
        await client.call("session/prompt", prompt(session_id, "note it"))
        await client.wait_for(lambda: idle_stop(client, session_id))
        assert idle_stop(client, session_id) == "end_turn"
        [asked] = client.requests_named("session/request_permission")  # the same gate
        assert asked["params"]["subject"]["toolCall"]["toolCallId"] == "n1"
        final = [
            u
            for u in client.updates(session_id)
            if u["sessionUpdate"] == "tool_call_update" and u["toolCallId"] == "n1"
        ][-1]
        assert final["status"] == "completed" and "noted: buy milk" in str(final["content"])
    assert [message["method"] for message in seen] == [
        "server/discover",
        "tools/list",
        "tools/call",
    ]


async def test_a_system_prompt_over_v2(agent_env: AgentEnv) -> None:
    with loopback(text_reply("ok")) as server:
        _settings(agent_env, server)
        async with open_agent(agent_env) as client:
            await initialize_v2(client, unstable=True)
            system_prompt = {
                "mode": "override",
                "content": [{"type": "text", "text": "You are a careful reviewer."}],
            }
            params = {"cwd": str(agent_env.workspace), "systemPrompt": system_prompt}
            session_id = (await client.call("session/new", params))["sessionId"]
            await client.call("session/prompt", prompt(session_id, "review"))
            await client.wait_for(lambda: idle_stop(client, session_id))
        [system] = _systems(server)
    assert system.startswith("You are a careful reviewer.\n")
    assert SAFETY_RULES in system
