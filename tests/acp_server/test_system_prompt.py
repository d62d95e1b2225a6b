"""A client's `systemPrompt` (unstable): added after earshot's rules (`append`) or in their
place (`override`, keeping the safety rules), the same bytes in every request of the session
(the provider's prompt cache), and kept with the session for a load that sends none."""

from __future__ import annotations

from typing import Any

from agent.context.system_prompt import SAFETY_RULES
from tests.acp_server.client import AgentEnv, Json, initialize, open_agent
from tests.acp_server.test_sessions import text_prompt
from tests.earshot.support import text_reply
from tests.loopback import LoopbackServer, loopback


def _settings(env: AgentEnv, server: LoopbackServer) -> None:
    env.write_settings(
        {
            "model": "local/fake-model",
            "providers": {
                "local": {"api": "openai-chat", "baseUrl": f"{server.url}/v1", "apiKey": "k"}
            },
        }
    )


def _systems(server: LoopbackServer) -> list[str]:
    """The system message of each model request."""
    found: list[str] = []
    for request in server.model_calls:
        [system] = [m["content"] for m in request.json()["messages"] if m["role"] == "system"]
        found.append(system if isinstance(system, str) else system[0]["text"])
    return found


def _prompt(mode: str, *texts: str) -> Json:
    return {"mode": mode, "content": [{"type": "text", "text": text} for text in texts]}


async def test_an_appended_prompt_is_kept_byte_for_byte_and_remembered(
    agent_env: AgentEnv,
) -> None:
    with loopback(text_reply("one"), text_reply("two"), text_reply("three")) as server:
        _settings(agent_env, server)
        cwd = str(agent_env.workspace)
        async with open_agent(agent_env) as client:
            await initialize(client, unstable=True)
            new: Json = {
                "cwd": cwd,
                "mcpServers": [],
                "systemPrompt": _prompt("append", "Answer in French.", "Cite files."),
            }
            session_id = (await client.call("session/new", new))["sessionId"]
            await client.call("session/prompt", text_prompt(session_id, "hello"))
            await client.call("session/prompt", text_prompt(session_id, "again"))
        async with open_agent(agent_env) as client:  # another process; no systemPrompt sent
            await initialize(client, unstable=True)
            load: Json = {"sessionId": session_id, "cwd": cwd, "mcpServers": []}
            await client.call("session/load", load)
            await client.call("session/prompt", text_prompt(session_id, "and once more"))
        first, second, reloaded = _systems(server)
    assert first == second == reloaded  # the cached prefix survives every request
    assert first.startswith("You are earshot")
    assert "Instructions from the editor:\nAnswer in French.\n\nCite files.\n" in first
    assert SAFETY_RULES in first


async def test_an_override_replaces_the_rules_but_keeps_the_safety_rules(
    agent_env: AgentEnv,
) -> None:
    with loopback(text_reply("ok")) as server:
        _settings(agent_env, server)
        async with open_agent(agent_env) as client:
            init = await initialize(client, unstable=True)
            capability = init["agentCapabilities"]["sessionCapabilities"]["systemPrompt"]
            assert capability == {"mode": {"override": {}}}
            new: Json = {
                "cwd": str(agent_env.workspace),
                "mcpServers": [],
                "systemPrompt": _prompt("override", "You are a careful reviewer."),
            }
            session_id = (await client.call("session/new", new))["sessionId"]
            await client.call("session/prompt", text_prompt(session_id, "review"))
        [system] = _systems(server)
    assert system.startswith("You are a careful reviewer.\n")
    assert "You are earshot" not in system
    assert SAFETY_RULES in system
    assert f"Working directory: {agent_env.workspace}" in system


async def test_a_prompt_earshot_cannot_apply_is_refused_and_no_session_made(
    agent_env: AgentEnv,
) -> None:
    agent_env.script([])
    bad: list[tuple[Any, str]] = [
        (_prompt("replace", "x"), "systemPrompt.mode"),
        ({"mode": "append", "content": []}, "systemPrompt.content"),
        (
            {"mode": "append", "content": [{"type": "image", "mimeType": "image/png", "data": ""}]},
            "systemPrompt.content[0]",
        ),
        ("be nice", "systemPrompt"),
    ]
    async with open_agent(agent_env) as client:
        await initialize(client, unstable=True)
        for system_prompt, field in bad:
            new: Json = {
                "cwd": str(agent_env.workspace),
                "mcpServers": [],
                "systemPrompt": system_prompt,
            }
            error = await client.error("session/new", new)
            assert (error["code"], error["data"]) == (-32602, {"field": field})
        assert (await client.call("session/list", {}))["sessions"] == []
