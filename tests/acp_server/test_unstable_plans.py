"""The todo list as plans with ids (`plan_update` / `plan_removed`) for a client that advertises
the unstable `plan` capability, and the whole `plan` update as before for every other client."""

from __future__ import annotations

from typing import Any

from tests.acp_server.client import AcpClient, AgentEnv, Json, initialize, open_agent
from tests.acp_server.test_sessions import new_session, text_prompt


def _todo(*steps: tuple[str, str]) -> Json:
    todos = [{"content": content, "status": status} for content, status in steps]
    return {"tool_calls": [{"name": "todo", "arguments": {"todos": todos}}]}


def _script(env: AgentEnv) -> None:
    env.script(
        [
            _todo(("Read", "in_progress"), ("Fix", "pending")),
            _todo(("Read", "completed"), ("Fix", "in_progress")),
            _todo(),  # the model empties its list: that plan is done with
            {"text": "first task done"},
            _todo(("Test", "in_progress")),
            {"text": "second task under way"},
        ]
    )


def _plans(client: AcpClient, session_id: str) -> list[tuple[str, Any]]:
    """Each plan update as (kind, what it says): the plan id and its entries' contents."""
    found: list[tuple[str, Any]] = []
    for update in client.updates(session_id):
        match update["sessionUpdate"]:
            case "plan_update":
                plan = update["plan"]
                assert plan["type"] == "items"
                found.append(("update", (plan["planId"], [e["content"] for e in plan["entries"]])))
            case "plan_removed":
                found.append(("removed", update["planId"]))
            case "plan":
                found.append(("plan", [e["content"] for e in update["entries"]]))
            case _:
                pass
    return found


async def test_a_plan_keeps_its_id_until_the_model_empties_it(agent_env: AgentEnv) -> None:
    _script(agent_env)
    async with open_agent(agent_env) as client:
        await initialize(client, {"plan": {}})
        session_id = (await new_session(client, agent_env))["sessionId"]
        await client.call("session/prompt", text_prompt(session_id, "first"))
        await client.call("session/prompt", text_prompt(session_id, "second"))
        live = _plans(client, session_id)
    [(_, (first, _)), _, _, (_, (second, _))] = live
    assert live == [
        ("update", (first, ["Read", "Fix"])),
        ("update", (first, ["Read", "Fix"])),
        ("removed", first),
        ("update", (second, ["Test"])),
    ]
    assert first != second
    load: Json = {"sessionId": session_id, "cwd": str(agent_env.workspace), "mcpServers": []}
    async with open_agent(agent_env) as client:
        await initialize(client, {"plan": {}})
        await client.call("session/load", load)
        assert _plans(client, session_id) == live  # the ids come from the transcript
        await client.call("session/prompt", text_prompt(session_id, "/clear"))
        assert _plans(client, session_id)[-1] == ("removed", second)


async def test_a_client_without_the_capability_gets_the_whole_plan(agent_env: AgentEnv) -> None:
    _script(agent_env)
    async with open_agent(agent_env) as client:
        await initialize(client)  # validated against the stable schema: no plan_update there
        session_id = (await new_session(client, agent_env))["sessionId"]
        await client.call("session/prompt", text_prompt(session_id, "first"))
        await client.call("session/prompt", text_prompt(session_id, "second"))
        assert _plans(client, session_id) == [
            ("plan", ["Read", "Fix"]),
            ("plan", ["Read", "Fix"]),
            ("plan", []),
            ("plan", ["Test"]),
        ]
