"""User slash commands and MCP prompts over ACP (issue 17): listed in
`available_commands_update`, the list sent again when a command file appears between turns, and
round trips with arguments."""

from __future__ import annotations

import sys
from typing import Any

from tests.acp_server.client import FULL_CAPABILITIES, AcpClient, AgentEnv, initialize, open_agent
from tests.acp_server.test_sessions import new_session, text_prompt
from tests.earshot.support import DEMO_SERVER


def command_lists(client: AcpClient, session_id: str) -> list[dict[str, Any]]:
    updates = client.updates(session_id)
    return [
        {command["name"]: command for command in update["availableCommands"]}
        for update in updates
        if update["sessionUpdate"] == "available_commands_update"
    ]


async def test_a_user_command_round_trip_and_a_new_file_refreshes_the_menu(
    agent_env: AgentEnv,
) -> None:
    commands = agent_env.config_home / "earshot" / "commands"
    commands.mkdir(parents=True)
    (commands / "explain").write_text("not markdown: ignored", encoding="utf-8")
    (commands / "explain.md").write_text(
        "---\ndescription: Explain code\nargument-hint: SYMBOL\n---\nExplain `$ARGUMENTS`.\n",
        encoding="utf-8",
    )
    agent_env.script([{"text": "It parses."}, {"text": "plain answer"}])
    async with open_agent(agent_env) as client:
        await initialize(client, FULL_CAPABILITIES)
        session_id = (await new_session(client, agent_env))["sessionId"]
        await client.wait_for(lambda: command_lists(client, session_id))
        [listed] = command_lists(client, session_id)
        assert listed["explain"] == {
            "name": "explain",
            "description": "Explain code",
            "input": {"hint": "SYMBOL"},
        }
        assert "permissions" in listed
        result = await client.call("session/prompt", text_prompt(session_id, "/explain parse_rule"))
        assert result["stopReason"] == "end_turn"
        assert "It parses." in client.text(session_id)
        (commands / "tidy.md").write_text("Tidy up.", encoding="utf-8")
        await client.call("session/prompt", text_prompt(session_id, "anything"))
        await client.wait_for(lambda: len(command_lists(client, session_id)) == 2)
        assert "tidy" in command_lists(client, session_id)[-1]
    transcripts = list((agent_env.data_home / "earshot" / "sessions").rglob("*.jsonl"))
    text = "".join(path.read_text(encoding="utf-8") for path in transcripts)
    assert "Explain `parse_rule`." in text


async def test_an_mcp_prompt_round_trip_with_arguments(agent_env: AgentEnv) -> None:
    agent_env.script([{"text": "Looks fine."}])
    demo = {"name": "demo", "command": sys.executable, "args": [str(DEMO_SERVER)], "env": []}
    async with open_agent(agent_env) as client:
        await initialize(client, FULL_CAPABILITIES)
        session_id = (await new_session(client, agent_env, mcpServers=[demo]))["sessionId"]
        # The server starts in the background: the menu is sent again once it has.
        await client.wait_for(
            lambda: any(
                "mcp__demo__review" in listed for listed in command_lists(client, session_id)
            )
        )
        listed = command_lists(client, session_id)[-1]
        assert listed["mcp__demo__review"]["input"] == {"hint": "path [focus]"}
        assert "mcp" in listed
        prompt = text_prompt(session_id, "/mcp__demo__review path=app.py focus=naming")
        result = await client.call("session/prompt", prompt)
        assert result["stopReason"] == "end_turn"
        assert "Looks fine." in client.text(session_id)
        before = len(client.updates(session_id))
        await client.call("session/prompt", text_prompt(session_id, "/mcp"))
        status = [
            u
            for u in client.updates(session_id)[before:]
            if u["sessionUpdate"] == "agent_message_chunk"
        ]
        servers = status[-1]["_meta"]["earshot"]["mcpServers"]
        assert [(s["name"], s["status"], s["prompts"]) for s in servers] == [
            ("demo", "connected", 1)
        ]
    transcripts = list((agent_env.data_home / "earshot" / "sessions").rglob("*.jsonl"))
    text = "".join(path.read_text(encoding="utf-8") for path in transcripts)
    assert "Please review app.py, looking for naming." in text


async def test_a_commands_front_matter_cannot_widen_permissions(agent_env: AgentEnv) -> None:
    """`allowed-tools: Bash` does not let a command run without asking (ask mode), and
    `allowed-tools: Read` keeps a command from running at all, even in yolo."""
    commands = agent_env.config_home / "earshot" / "commands"
    commands.mkdir(parents=True)
    (commands / "wide.md").write_text("---\nallowed-tools: Bash\n---\nTouch it.", "utf-8")
    (commands / "narrow.md").write_text("---\nallowed-tools: Read\n---\nLook.", "utf-8")
    target = agent_env.workspace / "touched"
    touch = {"name": "bash", "id": "t1", "arguments": {"command": f"touch {target}"}}
    again = {**touch, "id": "t2"}
    agent_env.script(
        [{"tool_calls": [touch]}, {"text": "asked"}, {"tool_calls": [again]}, {"text": "no"}]
    )
    async with open_agent(agent_env) as client:
        client.handlers["session/request_permission"] = refuse
        await initialize(client, FULL_CAPABILITIES)
        session_id = (await new_session(client, agent_env))["sessionId"]
        await client.call("session/prompt", text_prompt(session_id, "/wide"))
        [asked] = client.requests_named("session/request_permission")
        assert asked["params"]["toolCall"]["toolCallId"] == "t1"
        await client.call("session/set_mode", {"sessionId": session_id, "modeId": "yolo"})
        await client.call("session/prompt", text_prompt(session_id, "/narrow"))
        assert len(client.requests_named("session/request_permission")) == 1
        final = [
            u
            for u in client.updates(session_id)
            if u.get("toolCallId") == "t2" and u.get("status") is not None
        ]
        assert final[-1]["status"] == "failed"
    assert not target.exists()


async def refuse(client: AcpClient, params: dict[str, Any]) -> dict[str, Any]:
    option = next(o for o in params["options"] if o["kind"] == "reject_once")
    return {"outcome": {"outcome": "selected", "optionId": option["optionId"]}}
