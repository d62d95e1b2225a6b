"""`auth/status` and `auth/status_update` (unstable): what earshot says of the credentials it
found, and the update a client that asked hears when they change (a settings file edited, a
provider turned off from the editor); a client that never asked hears nothing new."""

from __future__ import annotations

import json

from tests.acp_server.client import AcpClient, AgentEnv, Json, initialize, open_agent
from tests.acp_server.test_sessions import new_session

KEY = "sk-ant-test-not-a-real-key"


def _updates(client: AcpClient) -> list[Json]:
    return [
        message["params"]
        for message in client.messages
        if message.get("method") == "auth/status_update"
    ]


async def test_status_follows_the_credentials_and_is_pushed_when_they_change(
    agent_env: AgentEnv,
) -> None:
    async with open_agent(agent_env) as client:
        init = await initialize(client, unstable=True)
        assert init["agentCapabilities"]["auth"]["status"] == {}
        assert await client.call("auth/status", {}) == {"state": "unauthenticated", "accounts": []}

        agent_env.write_settings({"providers": {"anthropic": {"apiKey": KEY}}})
        await new_session(client, agent_env)  # the settings are read again: the key is found
        [update] = await client.wait_for(lambda: _updates(client))
        assert update["state"] == "authenticated"
        [account] = update["accounts"]
        assert (account["label"], account["active"]) == ("Anthropic", True)
        assert account["_meta"]["earshot"]["source"] == "providers.anthropic in settings"

        await client.call("authenticate", {"methodId": "earshot-login"})  # nothing changed
        await client.call("providers/disable", {"providerId": "anthropic"})
        updates = await client.wait_for(lambda: _updates(client)[1:] and _updates(client))
        assert updates[-1] == {"state": "unauthenticated", "accounts": []}
        assert len(updates) == 2  # only changes are said
        assert await client.call("auth/status", {}) == updates[-1]
    assert KEY not in "\n".join(client.raw_lines)


async def test_a_client_that_never_asked_hears_nothing(agent_env: AgentEnv) -> None:
    async with open_agent(agent_env) as client:
        await initialize(client)  # validated against the stable schema: no auth/status_update
        agent_env.write_settings({"providers": {"anthropic": {"apiKey": KEY}}})
        await new_session(client, agent_env)
        await client.call("providers/disable", {"providerId": "anthropic"})
        assert _updates(client) == []


async def test_a_keyless_model_needs_no_sign_in(agent_env: AgentEnv) -> None:
    agent_env.script([])
    async with open_agent(agent_env) as client:
        await initialize(client, unstable=True)
        status = await client.call("auth/status", {})
    assert status["state"] == "not_required"
    assert json.dumps(status).count('"active": true') == 1
