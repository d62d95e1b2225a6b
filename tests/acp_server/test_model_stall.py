"""A model stream that goes silent mid-answer is retried after the configured idle time, and the
turn completes: through the real server, with a real HTTP model on 127.0.0.1."""

from __future__ import annotations

import json

from tests.acp_server.client import AgentEnv, initialize, open_agent
from tests.acp_server.test_sessions import new_session, text_prompt
from tests.earshot.support import text_reply
from tests.loopback import Reply, loopback


def stalled_reply(text: str) -> Reply:
    """A Chat Completions stream that sends `text` and then nothing, never finishing."""
    chunk = {
        "id": "c1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "test-model",
        "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}],
    }
    return Reply(chunks=[f"data: {json.dumps(chunk)}\n\n".encode()], stall=True)


async def test_a_stalled_stream_is_retried_after_the_idle_time_and_the_turn_completes(
    agent_env: AgentEnv,
) -> None:
    with loopback(stalled_reply("partial "), text_reply("complete answer")) as model:
        agent_env.write_settings(
            {
                "model": "local/test-model",
                "providers": {
                    "local": {
                        "api": "openai-chat",
                        "baseUrl": f"{model.url}/v1",
                        "apiKey": "test-key",
                    }
                },
                # Small, so the test is quick (yet far above any pause of a loaded machine):
                # the stall itself is certain, the server stops sending.
                "streamTimeouts": {"idle": 1},
            }
        )
        async with open_agent(agent_env) as client:
            await initialize(client)
            session_id = (await new_session(client, agent_env))["sessionId"]
            result = await client.call("session/prompt", text_prompt(session_id, "go"))
            text = client.text(session_id)
    assert result == {"stopReason": "end_turn"}
    assert len(model.model_calls) == 2
    # The stalled attempt's words were shown as they came; the retry's answer follows them.
    assert text.endswith("complete answer")
    assert "Could not reach" not in text
