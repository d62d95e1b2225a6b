"""The model picker offers what an OpenAI-compatible server serves, asked in the background and
cached, and the context meter uses the window the server reports (a loopback vLLM-like server)."""

from __future__ import annotations

import functools
from typing import Any

import anyio

from providers.catalog import ASSUMED_CONTEXT_WINDOW
from tests.acp_server.client import AcpClient, AgentEnv, initialize, open_agent
from tests.acp_server.test_sessions import new_session, text_prompt
from tests.earshot.support import text_reply
from tests.loopback import LoopbackServer, Reply, loopback

Json = dict[str, Any]
WINDOW = 12_345


def serve_models(server: LoopbackServer, *entries: Json) -> None:
    server.routes["GET /v1/models"] = Reply.json({"object": "list", "data": list(entries)})


def local_settings(env: AgentEnv, server: LoopbackServer) -> None:
    env.write_settings(
        {
            "model": "local/fake-model-mini",
            "providers": {
                "local": {"api": "openai-chat", "baseUrl": f"{server.url}/v1", "apiKey": "k"}
            },
        }
    )


def model_values(options: list[Json]) -> list[str]:
    [model] = [option for option in options if option["id"] == "model"]
    return [choice["value"] for group in model["options"] for choice in group["options"]]


def picker_updates(client: AcpClient, session_id: str) -> list[list[str]]:
    return [
        model_values(u["configOptions"])
        for u in client.updates(session_id)
        if u["sessionUpdate"] == "config_option_update"
    ]


def list_requests(server: LoopbackServer) -> int:
    return sum(1 for r in server.requests if (r.method, r.path) == ("GET", "/v1/models"))


async def test_the_picker_lists_the_servers_models_and_the_meter_its_window(
    agent_env: AgentEnv,
) -> None:
    served = ["local/fake-model-mini", "local/fake-model-max"]
    with loopback(text_reply("Hello from the box.")) as server:
        serve_models(
            server,
            {"id": "fake-model-mini", "object": "model", "max_model_len": WINDOW},
            {"id": "fake-model-max", "object": "model"},
        )
        local_settings(agent_env, server)
        async with open_agent(agent_env) as client:
            await initialize(client)
            created = await new_session(client, agent_env)
            session_id = created["sessionId"]
            # Nothing cached yet: the answer offers the configured model, the list follows.
            assert model_values(created["configOptions"]) == ["local/fake-model-mini"]
            await client.wait_for(lambda: picker_updates(client, session_id))
            assert picker_updates(client, session_id)[-1] == served

            switched = await client.call(
                "session/set_config_option",
                {"sessionId": session_id, "configId": "model", "value": "local/fake-model-max"},
            )
            [model] = [o for o in switched["configOptions"] if o["id"] == "model"]
            assert model["currentValue"] == "local/fake-model-max"
            await client.call(
                "session/set_config_option",
                {"sessionId": session_id, "configId": "model", "value": "local/fake-model-mini"},
            )
            assert await client.call("session/prompt", text_prompt(session_id, "hi")) == {
                "stopReason": "end_turn"
            }
            [usage] = [
                u for u in client.updates(session_id) if u["sessionUpdate"] == "usage_update"
            ]
            assert usage["size"] == WINDOW
            assert "contextWindowAssumed" not in usage["_meta"]["earshot"]

        # A second process offers the cached list at once and does not ask again (fresh).
        async with open_agent(agent_env) as client:
            await initialize(client)
            again = await new_session(client, agent_env)
            assert model_values(again["configOptions"]) == served
        assert list_requests(server) == 1


async def test_a_server_that_says_no_window_gets_the_assumed_one(agent_env: AgentEnv) -> None:
    """Issue 31.8: Zed ignores `_meta.earshot.contextWindowAssumed` and draws the assumed window
    as the model's; its picker entry and a notice's title, which Zed shows, say it instead."""
    with loopback(text_reply("Hi."), text_reply("Again.")) as server:
        serve_models(server, {"id": "fake-model-mini"})
        local_settings(agent_env, server)
        async with open_agent(agent_env) as client:
            await initialize(client, {"session": {"notices": {}}})
            session_id = (await new_session(client, agent_env))["sessionId"]
            await client.wait_for(lambda: picker_updates(client, session_id))
            await client.call("session/prompt", text_prompt(session_id, "hi"))
            await client.call("session/prompt", text_prompt(session_id, "again"))
            updates = client.updates(session_id)
    usage = [u for u in updates if u["sessionUpdate"] == "usage_update"]
    assert [u["size"] for u in usage] == [ASSUMED_CONTEXT_WINDOW] * 2
    assert usage[0]["_meta"]["earshot"]["contextWindowAssumed"] is True
    [notice] = [u for u in updates if u["sessionUpdate"] == "notice"]  # once
    assert notice["title"] == "The model's context window is unknown: 32,768 tokens assumed"
    assert updates.index(notice) < updates.index(usage[0])
    pickers = [u for u in updates if u["sessionUpdate"] == "config_option_update"]
    [model] = [o for o in pickers[-1]["configOptions"] if o["id"] == "model"]
    [entry] = [c for g in model["options"] for c in g["options"]]
    assert entry["name"] == "fake-model-mini (32k window assumed)"
    assert "models.local/fake-model-mini.contextWindow" in entry["description"]


async def test_a_server_that_cannot_list_its_models_changes_nothing(agent_env: AgentEnv) -> None:
    with loopback(text_reply("Still here.")) as server:
        # No route: the list request gets a 404.
        local_settings(agent_env, server)
        async with open_agent(agent_env) as client:
            await initialize(client)
            session_id = (await new_session(client, agent_env))["sessionId"]
            asked = functools.partial(server.wait_until, lambda _: list_requests(server) == 1, 10)
            assert await anyio.to_thread.run_sync(asked)
            assert await client.call("session/prompt", text_prompt(session_id, "hi")) == {
                "stopReason": "end_turn"
            }
            assert client.text(session_id) == "Still here."
            assert picker_updates(client, session_id) == []
