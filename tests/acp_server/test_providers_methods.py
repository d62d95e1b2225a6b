"""ACP's unstable provider methods as an editor drives them (issue 17): listed without secrets,
`providers/set` of a loopback OpenAI-compatible server makes its models appear in the model
picker without a restart, headers (a key) only go to a settings file nobody else can read, and
`providers/disable` takes a provider out of the picker. Every message is validated against the
(unstable) schema by the test client."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import pytest

from earshot.provider_admin import ProviderEditError, set_provider
from tests.acp_server.client import AcpClient, AgentEnv, initialize, open_agent
from tests.acp_server.test_model_lists import model_values, picker_updates, serve_models
from tests.acp_server.test_sessions import new_session
from tests.loopback import loopback

SECRET = "sk-never-echo-this-0123456789"


def everything_sent(client: AcpClient) -> str:
    return json.dumps(client.messages)


def provider(listed: dict[str, Any], provider_id: str) -> dict[str, Any]:
    return next(p for p in listed["providers"] if p["providerId"] == provider_id)


async def test_providers_are_listed_without_secrets(agent_env: AgentEnv) -> None:
    agent_env.script([{"text": "unused"}])
    agent_env.extra_env["OPENAI_API_KEY"] = SECRET
    async with open_agent(agent_env) as client:
        started = await initialize(client)
        assert started["agentCapabilities"]["providers"] == {}
        listed = await client.call("providers/list", {})
    openai = provider(listed, "openai")
    assert openai["current"] == {"apiType": "openai", "baseUrl": "https://api.openai.com/v1"}
    assert openai["required"] is False
    assert openai["_meta"]["earshot"]["credentials"] is True
    assert provider(listed, "anthropic")["_meta"]["earshot"]["credentials"] is False
    scripted = provider(listed, "scripted-test")
    assert scripted["_meta"]["earshot"]["wireApi"] == "scripted"
    assert SECRET not in everything_sent(client)


async def test_set_makes_a_servers_models_appear_and_headers_need_a_private_file(
    agent_env: AgentEnv,
) -> None:
    agent_env.script([{"text": "unused"}])
    settings = agent_env.settings_path
    settings.chmod(0o644)
    with loopback() as server:
        serve_models(server, {"id": "box-model", "object": "model"})
        request = {
            "providerId": "box",
            "apiType": "openai",
            "baseUrl": f"{server.url}/v1",
            "headers": {"Authorization": f"Bearer {SECRET}"},
        }
        async with open_agent(agent_env) as client:
            await initialize(client)
            session_id = (await new_session(client, agent_env))["sessionId"]
            refused = await client.error("providers/set", request)
            assert refused["code"] == -32602 and refused["data"] == {"field": "headers"}
            assert "chmod 600" in refused["message"]
            assert "box" not in settings.read_text(encoding="utf-8")

            settings.chmod(0o600)
            assert await client.call("providers/set", request) == {}
            await client.wait_for(
                lambda: any("box/box-model" in p for p in picker_updates(client, session_id))
            )
            listed = provider(await client.call("providers/list", {}), "box")
            assert listed["current"] == {"apiType": "openai", "baseUrl": f"{server.url}/v1"}
            assert listed["_meta"]["earshot"]["headers"] == ["Authorization"]
            switched = await client.call(
                "session/set_config_option",
                {"sessionId": session_id, "configId": "model", "value": "box/box-model"},
            )
            assert "box/box-model" in model_values(switched["configOptions"])
            await client.call(  # back: the picker always offers the session's own model
                "session/set_config_option",
                {"sessionId": session_id, "configId": "model", "value": "scripted-test/anything"},
            )

            before = len(picker_updates(client, session_id))
            assert await client.call("providers/disable", {"providerId": "box"}) == {}
            await client.wait_for(lambda: len(picker_updates(client, session_id)) > before)
            assert "box/box-model" not in picker_updates(client, session_id)[-1]
            assert provider(await client.call("providers/list", {}), "box")["current"] is None
            unknown = await client.error("providers/disable", {"providerId": "nowhere"})
            assert unknown["data"] == {"field": "providerId"}
        assert any(r.headers.get("authorization") == f"Bearer {SECRET}" for r in server.requests)
    saved = json.loads(settings.read_text(encoding="utf-8"))
    assert saved["providers"]["box"]["headers"] == {"Authorization": f"Bearer {SECRET}"}
    assert saved["providers"]["box"]["enabled"] is False
    assert saved["providers"]["scripted-test"]["api"] == "scripted"  # the rest is kept
    assert stat.S_IMODE(settings.stat().st_mode) == 0o600
    assert SECRET not in everything_sent(client)
    assert SECRET not in client.stderr


async def test_a_new_settings_file_for_headers_is_created_private(agent_env: AgentEnv) -> None:
    agent_env.script([{"text": "unused"}])
    settings = agent_env.settings_path
    script_settings = settings.read_text(encoding="utf-8")
    settings.unlink()
    async with open_agent(agent_env) as client:
        await initialize(client)
        request = {
            "providerId": "box",
            "apiType": "openai",
            "baseUrl": "http://127.0.0.1:9/v1",
            "headers": {"x-api-key": SECRET},
        }
        assert await client.call("providers/set", request) == {}
        bad = await client.error("providers/set", {**request, "apiType": "bedrock"})
        assert bad["data"] == {"field": "apiType"}
    assert stat.S_IMODE(settings.stat().st_mode) == 0o600
    assert "box" in settings.read_text(encoding="utf-8") and script_settings
    assert SECRET not in everything_sent(client)


def test_setting_a_built_in_provider_keeps_its_wire_api(tmp_path: Path) -> None:
    user_file = tmp_path / "settings.json"
    set_provider(user_file, "openai", "openai", "https://proxy.example/v1", {})
    set_provider(user_file, "groq", "_openai-responses", "https://api.groq.com/openai/v1", {})
    saved = json.loads(user_file.read_text(encoding="utf-8"))["providers"]
    assert saved["openai"] == {"api": "openai-responses", "baseUrl": "https://proxy.example/v1"}
    assert saved["groq"]["api"] == "openai-responses"
    with pytest.raises(ProviderEditError) as refused:
        set_provider(user_file, "x", "openai", "ftp://example/", {"Authorization": SECRET})
    assert refused.value.field == "baseUrl" and SECRET not in str(refused.value)
