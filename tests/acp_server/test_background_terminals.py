"""Background commands over ACP: an editor that has terminals runs the command in one, embedded
in the `bash` call and left open after the turn; `bash_output` reads it, and closing the
session kills and releases it."""

from __future__ import annotations

from typing import Any

import anyio

from tests.acp_server.client import FULL_CAPABILITIES, AgentEnv, initialize, open_agent
from tests.acp_server.test_sessions import new_session, text_prompt
from tests.acp_server.test_tools import bash_call, call_updates

SERVER = "echo listening; sleep 300 & wait"


def output_call(handle: str, call_id: str, **extra: Any) -> dict[str, Any]:
    return {"name": "bash_output", "id": call_id, "arguments": {"handle": handle, **extra}}


async def test_a_background_command_is_an_editor_terminal_until_the_session_closes(
    agent_env: AgentEnv,
) -> None:
    agent_env.script(
        [
            {"tool_calls": [bash_call(SERVER, background=True)]},
            {"tool_calls": [output_call("bg1", "call-poll", wait=30)]},
            {"text": "serving"},
        ],
        mode="yolo",
    )
    async with open_agent(agent_env) as client:
        await initialize(client, FULL_CAPABILITIES)
        session_id = (await new_session(client, agent_env))["sessionId"]
        result = await client.call("session/prompt", text_prompt(session_id, "serve"))
        assert result["stopReason"] == "end_turn"
        [create] = client.requests_named("terminal/create")
        # The sandbox's launcher, then what the editor shows: the user's command.
        assert create["params"]["command"].endswith("/sandbox")
        assert create["params"]["args"] == [SERVER]
        started = call_updates(client, session_id, "call-bash")[-1]
        assert started["status"] == "completed"
        assert started["content"][-1] == {"type": "terminal", "terminalId": "term-1"}
        poll = call_updates(client, session_id, "call-poll")[-1]
        assert "Still running." in str(poll["content"]) and "listening" in str(poll["content"])
        # Started, the launcher has removed itself (nothing else knows when the editor ran it).
        assert list((agent_env.data_home / "earshot" / "launchers").iterdir()) == []
        # The turn is over; the terminal is still there and its command still runs.
        [terminal] = client.terminals.values()
        assert not terminal.released and not terminal.exited.is_set()
        assert client.requests_named("terminal/release") == []

        assert await client.call("session/close", {"sessionId": session_id}) == {}
        with anyio.fail_after(20):
            await terminal.exited.wait()
        assert terminal.released
        methods = [
            r["method"] for r in client.agent_requests if r["method"].startswith("terminal/")
        ]
        assert methods[0] == "terminal/create"
        assert "terminal/kill" in methods and methods[-1] == "terminal/release"
