"""What a turn shows the editor: usage and cost, the plan, the title, subagents, notices and
compaction updates (only when advertised), and client MCP server definitions."""

from __future__ import annotations

import pytest

from providers.catalog import ASSUMED_CONTEXT_WINDOW
from tests.acp_server.client import AgentEnv, Json, initialize, open_agent
from tests.acp_server.test_sessions import new_session, text_prompt
from tests.acp_server.test_tools import call_updates


async def test_usage_plan_and_title(agent_env: AgentEnv) -> None:
    agent_env.script(
        [
            {
                "tool_calls": [
                    {
                        "name": "todo",
                        "id": "call-todo",
                        "arguments": {
                            "todos": [
                                {"content": "Look around", "status": "completed"},
                                {
                                    "content": "Fix the bug",
                                    "status": "in_progress",
                                    "priority": "high",
                                },
                            ]
                        },
                    }
                ],
                "usage": {"input_tokens": 300, "output_tokens": 20},
            },
            {"text": "Done.", "usage": {"input_tokens": 400, "output_tokens": 10}},
        ],
        models={
            "scripted-test/anything": {
                "contextWindow": 10_000,
                "cost": {"input": 1.0, "output": 2.0},
            }
        },
    )
    async with open_agent(agent_env) as client:
        await initialize(client)
        session_id = (await new_session(client, agent_env))["sessionId"]
        await client.call("session/prompt", text_prompt(session_id, "Fix the login bug please"))
        usage = [u for u in client.updates(session_id) if u["sessionUpdate"] == "usage_update"]
        assert len(usage) == 2
        assert all(u["size"] == 10_000 for u in usage)
        assert 0 < usage[0]["used"] <= usage[1]["used"]
        assert usage[-1]["cost"]["currency"] == "USD"
        assert usage[-1]["cost"]["amount"] > usage[0]["cost"]["amount"] > 0
        [plan] = [u for u in client.updates(session_id) if u["sessionUpdate"] == "plan"]
        assert plan["entries"] == [
            {"content": "Look around", "priority": "medium", "status": "completed"},
            {"content": "Fix the bug", "priority": "high", "status": "in_progress"},
        ]
        titles = [
            u for u in client.updates(session_id) if u["sessionUpdate"] == "session_info_update"
        ]
        assert titles and "login" in titles[0]["title"].lower()
        listed = await client.call("session/list", {})
        assert listed["sessions"][0]["title"] == titles[0]["title"]


async def test_a_reopened_session_shows_its_usage_so_far(agent_env: AgentEnv) -> None:
    agent_env.script(
        [{"text": "Hi.", "usage": {"input_tokens": 300, "output_tokens": 20}}],
        models={"scripted-test/anything": {"contextWindow": 10_000, "cost": {"input": 1.0}}},
    )
    async with open_agent(agent_env) as client:
        await initialize(client)
        session_id = (await new_session(client, agent_env))["sessionId"]
        assert "usage_update" not in client.kinds(session_id)
        await client.call("session/prompt", text_prompt(session_id, "hello"))
        [live] = [u for u in client.updates(session_id) if u["sessionUpdate"] == "usage_update"]

    reopen: Json = {"sessionId": session_id, "cwd": str(agent_env.workspace), "mcpServers": []}
    for method in ("session/load", "session/resume"):
        async with open_agent(agent_env) as client:
            await initialize(client)
            await client.call(method, reopen)
            await client.wait_for(lambda: "usage_update" in client.kinds(session_id))
            [usage] = [
                u for u in client.updates(session_id) if u["sessionUpdate"] == "usage_update"
            ]
            assert usage == live, method
            if method == "session/load":
                # After the replay: the last word of the history.
                kinds = client.kinds(session_id)
                history = ("user_message_chunk", "agent_message_chunk", "tool_call")
                last = max(i for i, kind in enumerate(kinds) if kind in history)
                assert kinds.index("usage_update") > last


async def test_usage_says_how_much_input_came_from_the_cache(agent_env: AgentEnv) -> None:
    usage_reported = {
        "input_tokens": 10_000,
        "cached_input_tokens": 8_000,
        "cache_write_tokens": 1_000,
        "output_tokens": 100,
    }
    prices = {"input": 3.0, "output": 15.0, "cacheRead": 0.3, "cacheWrite": 3.75}
    agent_env.script(
        [{"text": "Hi.", "usage": usage_reported}],
        models={"scripted-test/anything": {"contextWindow": 100_000, "cost": prices}},
    )
    async with open_agent(agent_env) as client:
        await initialize(client)
        session_id = (await new_session(client, agent_env))["sessionId"]
        await client.call("session/prompt", text_prompt(session_id, "hello"))
        [usage] = [u for u in client.updates(session_id) if u["sessionUpdate"] == "usage_update"]
    assert usage["_meta"]["earshot"] == {
        "inputTokens": 10_000,
        "cachedInputTokens": 8_000,
        "cacheWriteTokens": 1_000,
        "outputTokens": 100,
    }
    # Per million: 1,000 fresh at $3, 8,000 read at $0.30, 1,000 written at $3.75, 100 out at $15.
    assert usage["cost"] == {
        "amount": pytest.approx(0.003 + 0.0024 + 0.00375 + 0.0015),
        "currency": "USD",
    }


async def test_a_window_nobody_knows_is_sent_as_an_assumed_size(agent_env: AgentEnv) -> None:
    agent_env.script([{"text": "hi", "usage": {"input_tokens": 5, "output_tokens": 1}}])
    async with open_agent(agent_env) as client:
        await initialize(client)
        session_id = (await new_session(client, agent_env))["sessionId"]
        await client.call("session/prompt", text_prompt(session_id, "hello"))
        [usage] = [u for u in client.updates(session_id) if u["sessionUpdate"] == "usage_update"]
    assert usage["size"] == ASSUMED_CONTEXT_WINDOW
    assert usage["_meta"]["earshot"]["contextWindowAssumed"] is True


async def test_a_subagent_shows_inside_its_task_call(agent_env: AgentEnv) -> None:
    agent_env.script(
        [
            {
                "tool_calls": [
                    {
                        "name": "task",
                        "id": "call-task",
                        "arguments": {"description": "Look for TODOs", "prompt": "Find TODOs"},
                    }
                ]
            },
            {"text": "Found two TODOs in main.py."},
            {"text": "The subagent found two TODOs."},
        ],
        mode="yolo",
    )
    async with open_agent(agent_env) as client:
        await initialize(client)
        session_id = (await new_session(client, agent_env))["sessionId"]
        result = await client.call("session/prompt", text_prompt(session_id, "delegate"))
        assert result["stopReason"] == "end_turn"
        updates = call_updates(client, session_id, "call-task")
        assert updates[0]["sessionUpdate"] == "tool_call"
        assert updates[-1]["status"] == "completed"
        shown = " ".join(str(u.get("content")) for u in updates)
        assert "Found two TODOs in main.py." in shown
        # The subagent's words are not part of the main answer.
        assert client.text(session_id) == "The subagent found two TODOs."


async def test_compaction_updates_only_when_advertised(agent_env: AgentEnv) -> None:
    # Two turns: the latest one is kept verbatim, so there is something before it to summarise.
    agent_env.script([{"text": "Something."}, {"text": "More."}, {"text": "Summary."}])
    async with open_agent(agent_env) as client:
        await initialize(client, {"session": {"compaction": {}, "notices": {}}})
        session_id = (await new_session(client, agent_env))["sessionId"]
        await client.call("session/prompt", text_prompt(session_id, "hello"))
        await client.call("session/prompt", text_prompt(session_id, "and more"))
        await client.call("session/prompt", text_prompt(session_id, "/compact"))
        compaction = [
            u for u in client.updates(session_id) if u["sessionUpdate"] == "compaction_update"
        ]
        assert [u["status"] for u in compaction] == ["in_progress", "completed"], compaction
        [summary] = compaction[-1]["summary"]
        assert summary["type"] == "text"
        assert "\nSummary.\n" in summary["text"], summary
        assert "error" not in compaction[-1]
        assert len({u["compactionId"] for u in compaction}) == 1
        assert not any(
            u.get("toolCallId", "").startswith("compaction-") for u in client.updates(session_id)
        )


async def test_client_mcp_servers_are_parsed(agent_env: AgentEnv) -> None:
    agent_env.script([])
    async with open_agent(agent_env) as client:
        await initialize(client)
        servers: list[Json] = [
            {
                "name": "files",
                "command": "/usr/bin/true",
                "args": ["--flag"],
                "env": [{"name": "TOKEN", "value": "test-key"}],
            },
            {
                "type": "http",
                "name": "web",
                "url": "http://127.0.0.1:9/mcp",
                "headers": [{"name": "Authorization", "value": "Bearer test-key"}],
            },
            {"type": "sse", "name": "old", "url": "http://127.0.0.1:9/sse", "headers": []},
        ]
        result = await new_session(client, agent_env, mcpServers=servers)
        assert result["sessionId"]
        bad = [{"name": "broken", "env": [{"name": "X", "value": "y"}]}]
        error = await client.error(
            "session/new", {"cwd": str(agent_env.workspace), "mcpServers": bad}
        )
        assert (error["code"], error["data"]["field"]) == (-32602, "mcpServers[0].command")
        bad = [{"type": "http", "name": "h", "url": "http://x", "headers": {"a": "b"}}]
        error = await client.error(
            "session/new", {"cwd": str(agent_env.workspace), "mcpServers": bad}
        )
        assert (error["code"], error["data"]["field"]) == (-32602, "mcpServers[0].headers")
    assert "test-key" not in client.stderr


async def test_an_editor_mcp_server_is_connected_and_its_tool_called(agent_env: AgentEnv) -> None:
    import sys
    from pathlib import Path

    time_server = Path(sys.executable).parent / "mcp-server-time"
    agent_env.script(
        [
            {
                "tool_calls": [
                    {
                        "name": "mcp__time__get_current_time",
                        "id": "call-time",
                        "arguments": {"timezone": "Etc/UTC"},
                    }
                ]
            },
            {"text": "It is now."},
        ],
        mode="yolo",
        # The server is a Python process importing the MCP SDK: on a loaded machine it may take
        # seconds to start, which is not what this test is about (the first request waits).
        extra={"mcp": {"startupWait": 120, "startupTimeout": 120}},
    )
    async with open_agent(agent_env) as client:
        await initialize(client)
        servers: list[Json] = [{"name": "time", "command": str(time_server), "args": [], "env": []}]
        session_id = (await new_session(client, agent_env, mcpServers=servers))["sessionId"]
        result = await client.call("session/prompt", text_prompt(session_id, "what time is it?"))
        assert result["stopReason"] == "end_turn"
        final = call_updates(client, session_id, "call-time")[-1]
        assert final["status"] == "completed"
        assert "Etc/UTC" in str(final["content"])
        assert await client.call("session/close", {"sessionId": session_id}) == {}
