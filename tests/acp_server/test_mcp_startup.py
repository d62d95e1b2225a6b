"""A slow or broken MCP server never holds a turn, as an editor sees it (issue 30): the first
prompt is answered while an editor-sent server is still starting; once it has started, its prompt
is in the slash-command menu and its tool in the next turn, which says so (as agent text: this
client has no `notices`); a server that fails is said once; `session/cancel` ends a turn blocked
in a call the server never answers."""

from __future__ import annotations

import os
import re
import sys
from typing import Any

from tests.acp_server.client import AgentEnv, initialize, open_agent
from tests.acp_server.test_extra_commands import command_lists
from tests.acp_server.test_sessions import new_session, text_prompt
from tests.acp_server.test_tools import call_updates
from tests.earshot.test_mcp_startup import STUB, open_gate


def stub(name: str, mode: str, *args: str) -> dict[str, Any]:
    return {"name": name, "command": sys.executable, "args": [str(STUB), mode, *args], "env": []}


async def test_a_slow_server_joins_a_later_turn_and_a_broken_one_is_said_once(
    agent_env: AgentEnv,
) -> None:
    gate = agent_env.root / "gate"
    os.mkfifo(gate)
    echo = {"name": "mcp__slow__echo", "id": "e1", "arguments": {"text": "hi"}}
    agent_env.script(
        [{"text": "first answer"}, {"tool_calls": [echo]}, {"text": "second answer"}],
        extra={"mcp": {"startupWait": 0.05}},
    )
    servers = [stub("slow", "gate", str(gate)), stub("broken", "exit")]
    async with open_agent(agent_env) as client:
        await initialize(client)
        session_id = (await new_session(client, agent_env, mcpServers=servers))["sessionId"]
        # Answered while the server is held at its gate: the turn did not wait for it.
        first = await client.call("session/prompt", text_prompt(session_id, "one"))
        assert first["stopReason"] == "end_turn"
        # Its failure is said at the start of the next turn once known, and the broken server's
        # process may start late on a loaded machine: `/mcp` (no turn, no notice) until it shows.
        while not re.search(r"- broken \(.*\): failed", client.text(session_id)):
            await client.call("session/prompt", text_prompt(session_id, "/mcp"))
        await open_gate(gate)
        await client.wait_for(
            lambda: any("mcp__slow__hello" in menu for menu in command_lists(client, session_id))
        )
        second = await client.call("session/prompt", text_prompt(session_id, "two"))
        assert second["stopReason"] == "end_turn"
        final = call_updates(client, session_id, "e1")[-1]
        assert final["status"] == "completed"
        assert "echo: hi" in str(final["content"])
    text = client.text(session_id)
    assert text.count("ℹ MCP server 'slow' has started") == 1
    assert text.count("⚠ MCP server 'broken' is not available") == 1
    assert text.index("first answer") < text.index("'slow' has started") < text.index("second")


async def test_cancel_ends_a_turn_blocked_in_a_hung_mcp_call(agent_env: AgentEnv) -> None:
    wait: dict[str, Any] = {"name": "mcp__hung__wait", "id": "w1", "arguments": {}}
    agent_env.script(
        [{"tool_calls": [wait]}, {"text": "after"}],
        extra={"mcp": {"startupWait": 60}},  # a hang detector: the first request has the tool
    )
    async with open_agent(agent_env) as client:
        await initialize(client)
        servers = [stub("hung", "hang-call")]
        session_id = (await new_session(client, agent_env, mcpServers=servers))["sessionId"]
        prompt_id = await client.start_request("session/prompt", text_prompt(session_id, "go"))
        await client.wait_for(
            lambda: any(
                u.get("status") == "in_progress" for u in call_updates(client, session_id, "w1")
            )
        )
        await client.notify("session/cancel", {"sessionId": session_id})
        response = await client.response(prompt_id)
        assert response["result"] == {"stopReason": "cancelled"}
        assert call_updates(client, session_id, "w1")[-1]["status"] == "failed"
        again = await client.call("session/prompt", text_prompt(session_id, "again"))
        assert again["stopReason"] == "end_turn"
