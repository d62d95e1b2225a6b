"""ACP's unstable session methods (`schema.unstable.json`): `session/set_title` and `/title`,
`session/status`, `session/archive` / `session/unarchive` and `session/list`'s `archived`
filter, driven as an editor drives them (every message validated against the unstable schema).
"""

from __future__ import annotations

from typing import Any

from tests.acp_server.client import AcpClient, AgentEnv, initialize, open_agent
from tests.acp_server.test_sessions import new_session, text_prompt


async def _listed(client: AcpClient, **params: Any) -> dict[str, dict[str, Any]]:
    page = await client.call("session/list", params)
    return {info["sessionId"]: info for info in page["sessions"]}


async def test_a_title_the_client_sets_is_stored_listed_and_never_replaced(
    agent_env: AgentEnv,
) -> None:
    agent_env.script([{"text": "one"}, {"text": "two"}])
    async with open_agent(agent_env) as client:
        init = await initialize(client, unstable=True)
        sessions = init["agentCapabilities"]["sessionCapabilities"]
        assert {"title", "status", "archive"} <= set(sessions)
        session_id = (await new_session(client, agent_env))["sessionId"]
        await client.call("session/prompt", text_prompt(session_id, "fix the parser"))
        assert (await _listed(client))[session_id]["title"] == "fix the parser"

        answer = await client.call(
            "session/set_title", {"sessionId": session_id, "title": "  Parser\n  rework  "}
        )
        assert answer == {"title": "Parser rework"}  # one line, trimmed: what was stored
        assert client.updates(session_id)[-1] == {
            "sessionUpdate": "session_info_update",
            "title": "Parser rework",
        }
        await client.call("session/prompt", text_prompt(session_id, "and the lexer"))
        assert (await _listed(client))[session_id]["title"] == "Parser rework"

        # A session this connection has not open is retitled in its file.
        await client.call("session/close", {"sessionId": session_id})
        await client.call("session/set_title", {"sessionId": session_id, "title": "Closed one"})
        assert (await _listed(client))[session_id]["title"] == "Closed one"

        empty = await client.error("session/set_title", {"sessionId": session_id, "title": " "})
        assert (empty["code"], empty["data"]) == (-32602, {"field": "title"})
        unknown = await client.error("session/set_title", {"sessionId": "nope", "title": "x"})
        assert (unknown["code"], unknown["data"]) == (-32002, {"sessionId": "nope"})
    async with open_agent(agent_env) as client:  # another process finds it
        await initialize(client, unstable=True)
        assert (await _listed(client))[session_id]["title"] == "Closed one"


async def test_slash_title_names_the_session(agent_env: AgentEnv) -> None:
    agent_env.script([])
    async with open_agent(agent_env) as client:
        await initialize(client)
        session_id = (await new_session(client, agent_env))["sessionId"]
        await client.call("session/prompt", text_prompt(session_id, "/title"))
        assert "no title yet" in client.text(session_id)
        await client.call("session/prompt", text_prompt(session_id, "/title Release notes"))
        assert "Title: Release notes." in client.text(session_id)
        assert {"sessionUpdate": "session_info_update", "title": "Release notes"} in (
            client.updates(session_id)
        )
        assert (await _listed(client))[session_id]["title"] == "Release notes"


async def test_status_says_whether_the_session_is_in_memory(agent_env: AgentEnv) -> None:
    agent_env.script([])
    async with open_agent(agent_env) as client:
        await initialize(client, unstable=True)
        session_id = (await new_session(client, agent_env))["sessionId"]
        status = {"sessionId": session_id}
        assert await client.call("session/status", status) == {"status": "open"}
        await client.call("session/close", status)
        assert await client.call("session/status", status) == {"status": "saved"}
        unknown = await client.error("session/status", {"sessionId": "nope"})
        assert (unknown["code"], unknown["data"]) == (-32002, {"sessionId": "nope"})
        # No side effect: asking did not open it.
        assert await client.call("session/status", status) == {"status": "saved"}


async def test_archived_sessions_leave_the_default_list_and_come_back(
    agent_env: AgentEnv,
) -> None:
    agent_env.script([])
    async with open_agent(agent_env) as client:
        await initialize(client, unstable=True)
        kept = (await new_session(client, agent_env))["sessionId"]
        archived = (await new_session(client, agent_env))["sessionId"]
        listed = await _listed(client)
        assert {info["archived"] for info in listed.values()} == {False}  # on every session

        await client.call("session/archive", {"sessionId": archived})
        await client.call("session/archive", {"sessionId": archived})  # twice: no error
        # Archiving closed it here, as `session/close` would.
        gone = await client.error("session/prompt", text_prompt(archived, "hi"))
        assert gone["code"] == -32002
        assert list(await _listed(client)) == [kept]
        assert list(await _listed(client, archived="exclude")) == [kept]
        only = await _listed(client, archived="only")
        assert list(only) == [archived] and only[archived]["archived"] is True
        assert set(await _listed(client, archived="include")) == {kept, archived}
        bad = await client.error("session/list", {"archived": "hidden"})
        assert (bad["code"], bad["data"]) == (-32602, {"field": "archived"})

        await client.call("session/unarchive", {"sessionId": archived})
        await client.call("session/unarchive", {"sessionId": archived})
        assert set(await _listed(client)) == {kept, archived}
        for method in ("session/archive", "session/unarchive"):
            unknown = await client.error(method, {"sessionId": "nope"})
            assert (unknown["code"], unknown["data"]) == (-32002, {"sessionId": "nope"})
        await client.call("session/archive", {"sessionId": archived})
        await client.call("session/delete", {"sessionId": archived})
        assert list(await _listed(client, archived="include")) == [kept]
