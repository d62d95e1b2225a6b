"""Prompt content: images (and the no-vision refusal), resource links and embedded resources."""

from __future__ import annotations

import base64
from typing import Any

from tests.acp_server.client import FULL_CAPABILITIES, AcpClient, AgentEnv, initialize, open_agent
from tests.acp_server.test_sessions import new_session

PNG = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
    )
).decode()


def prompt(session_id: str, *blocks: dict[str, Any]) -> dict[str, Any]:
    return {"sessionId": session_id, "prompt": list(blocks)}


async def replayed_user_text(client: AcpClient, env: AgentEnv, session_id: str) -> str:
    before = len(client.updates(session_id))
    await client.call(
        "session/load", {"sessionId": session_id, "cwd": str(env.workspace), "mcpServers": []}
    )
    return "".join(
        u["content"]["text"]
        for u in client.updates(session_id)[before:]
        if u["sessionUpdate"] == "user_message_chunk"
    )


async def test_an_image_goes_to_a_vision_model(agent_env: AgentEnv) -> None:
    agent_env.script(
        [{"text": "A single pixel."}], models={"scripted-test/anything": {"vision": True}}
    )
    async with open_agent(agent_env) as client:
        await initialize(client)
        session_id = (await new_session(client, agent_env))["sessionId"]
        result = await client.call(
            "session/prompt",
            prompt(
                session_id,
                {"type": "text", "text": "What is this?"},
                {"type": "image", "mimeType": "image/png", "data": PNG},
            ),
        )
        assert result["stopReason"] == "end_turn"
        assert client.text(session_id) == "A single pixel."


async def test_an_image_for_a_model_without_vision_is_refused(agent_env: AgentEnv) -> None:
    agent_env.script(
        [{"text": "Text is fine."}], models={"scripted-test/anything": {"vision": False}}
    )
    async with open_agent(agent_env) as client:
        await initialize(client)
        session_id = (await new_session(client, agent_env))["sessionId"]
        error = await client.error(
            "session/prompt",
            prompt(session_id, {"type": "image", "mimeType": "image/png", "data": PNG}),
        )
        assert error["code"] == -32602
        assert "image" in error["message"].lower() or "vision" in error["message"].lower()
        result = await client.call(
            "session/prompt", prompt(session_id, {"type": "text", "text": "ok then"})
        )
        assert result["stopReason"] == "end_turn"
        assert await replayed_user_text(client, agent_env, session_id) == "ok then"


async def test_bad_blocks_are_invalid_params(agent_env: AgentEnv) -> None:
    agent_env.script([])
    async with open_agent(agent_env) as client:
        await initialize(client)
        session_id = (await new_session(client, agent_env))["sessionId"]
        # Any: the blocks are deliberately malformed, one is not even an object.
        cases: list[tuple[Any, str]] = [
            ({"type": "image", "mimeType": "image/png", "data": "%%%"}, "prompt[0].data"),
            ({"type": "audio", "mimeType": "audio/wav", "data": "AAAA"}, "prompt[0].type"),
            ({"type": "hologram"}, "prompt[0].type"),
            ({"type": "text"}, "prompt[0].text"),
            ("just a string", "prompt[0]"),
        ]
        for block, field in cases:
            error = await client.error("session/prompt", prompt(session_id, block))
            assert (error["code"], error["data"]["field"]) == (-32602, field), block
        error = await client.error("session/prompt", {"sessionId": session_id})
        assert (error["code"], error["data"]["field"]) == (-32602, "prompt")


async def test_linked_and_embedded_files_become_context(agent_env: AgentEnv) -> None:
    linked = agent_env.workspace / "linked.py"
    linked.write_text("def linked(): ...\n", encoding="utf-8")
    agent_env.script([{"text": "Read them."}])
    async with open_agent(agent_env) as client:

        async def editor_copy(client: AcpClient, params: dict[str, Any]) -> dict[str, Any]:
            return {"content": "def linked_unsaved(): ...\n"}

        client.handlers["fs/read_text_file"] = editor_copy
        await initialize(client, FULL_CAPABILITIES)
        session_id = (await new_session(client, agent_env))["sessionId"]
        result = await client.call(
            "session/prompt",
            prompt(
                session_id,
                {"type": "text", "text": "Look at these:"},
                {"type": "resource_link", "uri": linked.as_uri(), "name": "linked.py"},
                {
                    "type": "resource",
                    "resource": {
                        "uri": "file:///elsewhere/embedded.md",
                        "text": "# Embedded notes",
                        "mimeType": "text/markdown",
                    },
                },
                {"type": "resource_link", "uri": "https://example.com/spec", "name": "spec"},
                {
                    "type": "resource",
                    "resource": {
                        "uri": "file:///x.bin",
                        "blob": "AAEC",
                        "mimeType": "application/zip",
                    },
                },
            ),
        )
        assert result["stopReason"] == "end_turn"
        [read] = client.requests_named("fs/read_text_file")
        assert read["params"]["path"] == str(linked)
        text = await replayed_user_text(client, agent_env, session_id)
    assert "Look at these:" in text
    assert "def linked_unsaved(): ..." in text
    assert "# Embedded notes" in text
    assert "https://example.com/spec" in text
    assert "file:///x.bin" in text
