"""`session/load` replays what happened then, from the transcript: each call once, in its final
state, with the diff it showed at the time (not one recomputed from today's files)."""

from __future__ import annotations

from typing import Any

from tests.acp_server.client import AgentEnv, initialize, json_list, open_agent
from tests.acp_server.test_sessions import new_session, text_prompt

Json = dict[str, Any]


async def _load(env: AgentEnv, session_id: str) -> list[Json]:
    """The updates a fresh process sends while answering `session/load`."""
    async with open_agent(env) as client:
        await initialize(client)
        await client.call(
            "session/load", {"sessionId": session_id, "cwd": str(env.workspace), "mcpServers": []}
        )
        load_index = next(
            i for i, m in enumerate(client.messages) if "result" in m and m["id"] == 2
        )
        return [
            m["params"]["update"]
            for m in client.messages[:load_index]
            if m.get("method") == "session/update"
        ]


async def test_a_created_file_replays_as_created_and_every_call_in_its_final_state(
    agent_env: AgentEnv,
) -> None:
    created = agent_env.workspace / "created.txt"
    edited = agent_env.workspace / "edited.txt"
    edited.write_text("one\ntwo\nthree\n", encoding="utf-8")
    agent_env.script(
        [
            {
                "tool_calls": [
                    {
                        "id": "w",
                        "name": "write",
                        "arguments": {"path": str(created), "content": "new\n"},
                    },
                    {"id": "r", "name": "read", "arguments": {"path": str(edited)}},
                    {
                        "id": "missing",
                        "name": "edit",
                        "arguments": {
                            "path": str(agent_env.workspace / "missing.txt"),
                            "old_string": "a",
                            "new_string": "b",
                        },
                    },
                ]
            },
            {
                "tool_calls": [
                    {
                        "id": "e",
                        "name": "edit",
                        "arguments": {"path": str(edited), "old_string": "two", "new_string": "2"},
                    }
                ]
            },
            {"text": "Done."},
        ],
        mode="yolo",
    )
    async with open_agent(agent_env) as client:
        await initialize(client)
        session_id = (await new_session(client, agent_env))["sessionId"]
        await client.call("session/prompt", text_prompt(session_id, "go"))
    # The files move on after the session: replay must not show today's contents.
    created.write_text("rewritten later\n", encoding="utf-8")
    edited.write_text("something else entirely\n", encoding="utf-8")

    replayed = await _load(agent_env, session_id)
    tool_updates = [u for u in replayed if u["sessionUpdate"].startswith("tool_call")]
    assert all(u["sessionUpdate"] == "tool_call" for u in tool_updates), "one message per call"
    calls = {u["toolCallId"]: u for u in tool_updates}
    assert list(calls) == ["w", "r", "missing", "e"]
    assert {call_id: u["status"] for call_id, u in calls.items()} == {
        "w": "completed",
        "r": "completed",
        "missing": "failed",
        "e": "completed",
    }
    [write_diff] = [c for c in json_list(calls["w"]["content"]) if c["type"] == "diff"]
    assert write_diff == {
        "type": "diff",
        "path": str(created),
        "oldText": None,
        "newText": "new\n",
    }
    [edit_diff] = [c for c in json_list(calls["e"]["content"]) if c["type"] == "diff"]
    assert edit_diff["oldText"] == "one\ntwo\nthree\n"
    assert edit_diff["newText"] == "one\n2\nthree\n"
    assert not [c for c in json_list(calls["missing"]["content"]) if c["type"] == "diff"]
    assert calls["w"]["rawInput"] == {"path": str(created), "content": "new\n"}
    assert "Created" in str(calls["w"]["rawOutput"])
