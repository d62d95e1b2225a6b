"""Modes, config options (mode, model, thought level) and slash commands."""

from __future__ import annotations

from typing import Any

from tests.acp_server.client import AcpClient, AgentEnv, initialize, open_agent
from tests.acp_server.test_sessions import new_session, text_prompt

MODELS = {
    "scripted-test/anything": {"name": "Scripted", "reasoning": True, "contextWindow": 1000},
    "scripted-test/other": {"name": "Other scripted"},
    "anthropic/claude-sonnet-4-5": {"name": "Needs a key"},
}


def options_by_id(options: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {option["id"]: option for option in options}


def model_values(option: dict[str, Any]) -> list[str]:
    return [item["value"] for group in option["options"] for item in group["options"]]


def last_update(client: AcpClient, session_id: str, kind: str) -> dict[str, Any]:
    return [u for u in client.updates(session_id) if u["sessionUpdate"] == kind][-1]


async def test_modes_and_the_mode_option_stay_in_sync(agent_env: AgentEnv) -> None:
    agent_env.script([])
    async with open_agent(agent_env) as client:
        await initialize(client)
        session_id = (await new_session(client, agent_env))["sessionId"]
        assert (
            await client.call("session/set_mode", {"sessionId": session_id, "modeId": "plan"}) == {}
        )
        await client.wait_for(lambda: "config_option_update" in client.kinds(session_id))
        assert last_update(client, session_id, "current_mode_update")["currentModeId"] == "plan"
        update = last_update(client, session_id, "config_option_update")
        assert options_by_id(update["configOptions"])["mode"]["currentValue"] == "plan"

        result = await client.call(
            "session/set_config_option",
            {"sessionId": session_id, "configId": "mode", "value": "auto"},
        )
        options = options_by_id(result["configOptions"])
        assert set(options) >= {"mode", "model"}
        assert options["mode"]["currentValue"] == "auto"
        assert last_update(client, session_id, "current_mode_update")["currentModeId"] == "auto"

        error = await client.error("session/set_mode", {"sessionId": session_id, "modeId": "turbo"})
        assert (error["code"], error["data"]["field"]) == (-32602, "modeId")
        error = await client.error(
            "session/set_config_option",
            {"sessionId": session_id, "configId": "colour", "value": "red"},
        )
        assert (error["code"], error["data"]["field"]) == (-32602, "configId")


async def test_model_and_thought_level_options(agent_env: AgentEnv) -> None:
    agent_env.script([], models=MODELS)
    async with open_agent(agent_env) as client:
        await initialize(client)
        result = await new_session(client, agent_env)
        session_id = result["sessionId"]
        options = options_by_id(result["configOptions"])
        model = options["model"]
        assert {"scripted-test/anything", "scripted-test/other"} <= set(model_values(model))
        groups = {group["group"] for group in model["options"]}
        assert "scripted-test" in groups
        assert options["thought_level"]["category"] == "thought_level"
        assert options["thought_level"]["currentValue"] == "default"

        result = await client.call(
            "session/set_config_option",
            {"sessionId": session_id, "configId": "thought_level", "value": "high"},
        )
        assert options_by_id(result["configOptions"])["thought_level"]["currentValue"] == "high"

        result = await client.call(
            "session/set_config_option",
            {"sessionId": session_id, "configId": "model", "value": "scripted-test/other"},
        )
        options = options_by_id(result["configOptions"])
        assert options["model"]["currentValue"] == "scripted-test/other"
        assert "thought_level" not in options  # this model does not reason

        error = await client.error(
            "session/set_config_option",
            {"sessionId": session_id, "configId": "model", "value": "anthropic/claude-sonnet-4-5"},
        )
        assert error["code"] == -32000
        assert "ANTHROPIC_API_KEY" in error["message"]
        error = await client.error(
            "session/set_config_option",
            {"sessionId": session_id, "configId": "model", "value": "nobody/nothing"},
        )
        assert (error["code"], error["data"]["field"]) == (-32602, "value")


async def test_slash_commands(agent_env: AgentEnv) -> None:
    # A user skill: the project's load only in a trusted workspace (tests/agent/test_trust.py).
    skill = agent_env.config_home / "earshot" / "skills" / "release-notes" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text(
        "---\nname: release-notes\ndescription: Write release notes\n---\nSteps...\n",
        encoding="utf-8",
    )
    agent_env.script([{"text": "First answer."}, {"text": "Using the skill."}], models=MODELS)
    async with open_agent(agent_env) as client:
        await initialize(client)
        session_id = (await new_session(client, agent_env))["sessionId"]
        commands = await client.wait_for(
            lambda: [
                u
                for u in client.updates(session_id)
                if u["sessionUpdate"] == "available_commands_update"
            ]
        )
        names = [command["name"] for command in commands[0]["availableCommands"]]
        assert "release-notes" in names

        async def run(text: str) -> str:
            before = len(client.text(session_id))
            result = await client.call("session/prompt", text_prompt(session_id, text))
            assert result["stopReason"] == "end_turn"
            return client.text(session_id)[before:]

        assert "Mode: plan." in await run("/mode plan")
        assert last_update(client, session_id, "current_mode_update")["currentModeId"] == "plan"
        assert "Unknown mode" in await run("/mode warp")
        assert "ANTHROPIC_API_KEY" in await run("/model anthropic/claude-sonnet-4-5")
        assert "Model: scripted-test/anything." in await run("/model")
        assert "First answer." in await run("plain prompt")
        assert (await run("/undo")).strip()
        assert "Cleared" in await run("/clear")
        assert last_update(client, session_id, "plan")["entries"] == []
        assert "Using the skill." in await run("/release-notes for 1.2")

        # /clear started a new branch: a reload shows only what came after it.
        await client.call(
            "session/load",
            {"sessionId": session_id, "cwd": str(agent_env.workspace), "mcpServers": []},
        )
        replayed_users = [
            u["content"]["text"]
            for u in client.updates(session_id)
            if u["sessionUpdate"] == "user_message_chunk"
        ]
        assert len(replayed_users) == 1
        assert "release-notes" in replayed_users[0]
        assert "for 1.2" in replayed_users[0]


async def test_compact_command_shows_a_compaction(agent_env: AgentEnv) -> None:
    # Two turns: the latest one is kept verbatim, so there is something before it to summarise.
    agent_env.script(
        [
            {"text": "An answer worth summarising."},
            {"text": "Another one."},
            {"text": "Summary: we said hello."},
        ]
    )
    async with open_agent(agent_env) as client:
        await initialize(client)
        session_id = (await new_session(client, agent_env))["sessionId"]
        await client.call("session/prompt", text_prompt(session_id, "hello"))
        await client.call("session/prompt", text_prompt(session_id, "hello again"))
        result = await client.call(
            "session/prompt", text_prompt(session_id, "/compact keep it short")
        )
        assert result["stopReason"] == "end_turn"
        calls = [
            u
            for u in client.updates(session_id)
            if u["sessionUpdate"] in ("tool_call", "tool_call_update")
            and u["toolCallId"].startswith("compaction-")
        ]
        assert calls[0]["sessionUpdate"] == "tool_call"
        assert calls[0]["kind"] == "think"
        assert len({u["toolCallId"] for u in calls}) == 1
        assert calls[-1]["status"] == "completed", calls[-1]
        [shown] = calls[-1]["content"]
        assert "\nSummary: we said hello.\n" in shown["content"]["text"], shown
        assert " tokens" in shown["content"]["text"]  # "<before> → <after> tokens"
