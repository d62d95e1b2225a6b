"""The same features over ACP v1 and v2 (`tests/acp_server/versions.py` says each step in both):
a prompt streamed, a tool call and its permission, cancel, a session reopened with its
conversation and listed, the config options, a slash command, usage. Each message is validated
against its own version's schema."""

from __future__ import annotations

import pytest

from tests.acp_server.client import AgentEnv, open_agent
from tests.acp_server.test_tools import write_call
from tests.acp_server.versions import VERSIONS, Editor

V2_ONLY_UPDATES = {"state_update", "user_message", "tool_call_content_chunk", "terminal_update"}


@pytest.fixture(params=VERSIONS, ids=[f"v{v}" for v in VERSIONS])
def version(request: pytest.FixtureRequest) -> int:
    return request.param


async def test_a_prompt_streams_its_answer_and_usage(agent_env: AgentEnv, version: int) -> None:
    agent_env.script(
        [{"text": "Hello there, editor!", "reasoning": "Greet back.", "chunk_size": 5}]
    )
    async with open_agent(agent_env) as client:
        editor = Editor(client, version)
        await editor.start()
        session_id = (await editor.new_session(agent_env))["sessionId"]
        assert await editor.prompt(session_id, "hi") == "end_turn"
        assert client.text(session_id) == "Hello there, editor!"
        assert client.text(session_id, "agent_thought_chunk") == "Greet back."
        updates = client.updates(session_id)
        chunks = [u for u in updates if u["sessionUpdate"] == "agent_message_chunk"]
        assert len(chunks) == 4 and len({chunk["messageId"] for chunk in chunks}) == 1
        [usage, *_] = [u for u in updates if u["sessionUpdate"] == "usage_update"]
        assert usage["used"] > 0 and usage["size"] > 0
        kinds = [u["sessionUpdate"] for u in updates]
        if version == 1:
            # Nothing of v2 reaches a v1 client; the prompt is not echoed.
            assert not V2_ONLY_UPDATES & set(kinds)
            assert "user_message_chunk" not in kinds
            return
        [answer] = [m for m in client.messages if "messageId" in m.get("result", {})]
        [echo] = [u for u in updates if u["sessionUpdate"] == "user_message"]
        assert echo == {
            "sessionUpdate": "user_message",
            "messageId": answer["result"]["messageId"],
            "content": [{"type": "text", "text": "hi"}],
        }
        states = [u["state"] for u in updates if u["sessionUpdate"] == "state_update"]
        assert states == ["running", "idle"]
        assert kinds.index("state_update") < kinds.index("agent_message_chunk")
        assert kinds[-1] == "state_update"  # the idle update ends the turn
        assert "current_mode_update" not in kinds and "tool_call" not in kinds


async def test_a_tool_call_asks_permission_and_shows_its_diff(
    agent_env: AgentEnv, version: int
) -> None:
    target = agent_env.workspace / "hello.py"
    agent_env.script([{"tool_calls": [write_call(str(target), "print('new')\n")]}, {"text": "Ok"}])
    async with open_agent(agent_env) as client:
        editor = Editor(client, version)
        await editor.start()
        session_id = (await editor.new_session(agent_env))["sessionId"]
        assert await editor.prompt(session_id, "write it") == "end_turn"
        [request] = client.requests_named("session/request_permission")
        asked = editor.permission_call(request)
        assert asked["toolCallId"] == "call-write" and asked["kind"] == "edit"
        assert [path for path, _ in editor.diffs(asked)] == [str(target)]
        call = editor.calls(session_id)["call-write"]
        assert call["status"] == "completed" and call["kind"] == "edit"
        [(path, shown)] = editor.diffs(call)
        assert path == str(target) and "print('new')" in shown
        assert target.read_text(encoding="utf-8") == "print('new')\n"
        if version == 2:
            assert request["params"]["title"] == asked["title"]
            # The turn waited on the user while the prompt was open.
            states = [
                u["state"]
                for u in client.updates(session_id)
                if u["sessionUpdate"] == "state_update"
            ]
            assert states == ["running", "requires_action", "running", "idle"]
            [change] = next(i for i in call["content"] if i["type"] == "diff")["changes"]
            assert change["operation"] == "add"


async def test_cancel_while_the_model_streams(agent_env: AgentEnv, version: int) -> None:
    agent_env.script([{"text": "partial answer", "hang": True}, {"text": "again"}])
    async with open_agent(agent_env) as client:
        editor = Editor(client, version)
        await editor.start()
        session_id = (await editor.new_session(agent_env))["sessionId"]
        prompt_id = await editor.start_prompt(session_id, "go")
        await client.wait_for(lambda: "partial answer" in client.text(session_id))
        await client.notify("session/cancel", {"sessionId": session_id})
        assert await editor.stop_of(session_id, prompt_id) == "cancelled"
        assert await editor.prompt(session_id, "and now") == "end_turn"  # usable afterwards


async def test_a_session_reopens_with_its_conversation_and_is_listed(
    agent_env: AgentEnv, version: int
) -> None:
    target = agent_env.workspace / "notes.txt"
    agent_env.script([{"tool_calls": [write_call(str(target), "a note\n")]}, {"text": "Noted."}])
    async with open_agent(agent_env) as client:
        editor = Editor(client, version)
        await editor.start()
        session_id = (await editor.new_session(agent_env))["sessionId"]
        assert await editor.prompt(session_id, "take a note") == "end_turn"
    async with open_agent(agent_env) as client:  # another server: from the transcript alone
        editor = Editor(client, version)
        await editor.start()
        listed = await client.call("session/list", {"cwd": str(agent_env.workspace)})
        assert [s["sessionId"] for s in listed["sessions"]] == [session_id]
        answer = await editor.reopen(session_id, agent_env)
        assert editor.options(answer)["mode"]["currentValue"] == "ask"
        assert editor.user_text(session_id) == "take a note"
        assert client.text(session_id) == "Noted."
        call = editor.calls(session_id)["call-write"]
        assert call["status"] == "completed"
        assert [path for path, _ in editor.diffs(call)] == [str(target)]
        if version == 2:  # the state, after the replay and before the answer
            kinds = [
                m["params"]["update"]["sessionUpdate"] if "method" in m else "answer"
                for m in client.messages
                if m.get("method") == "session/update" or m.get("result") is answer
            ]
            assert kinds[kinds.index("answer") - 1] == "state_update"
            assert editor.idles(session_id)[-1] == {
                "sessionUpdate": "state_update",
                "state": "idle",
            }


async def test_config_options_change_the_mode_and_commands_run(
    agent_env: AgentEnv, version: int
) -> None:
    agent_env.script([{"text": "unused"}])
    async with open_agent(agent_env) as client:
        editor = Editor(client, version)
        await editor.start()
        created = await editor.new_session(agent_env)
        session_id = created["sessionId"]
        options = editor.options(created)
        assert options["mode"]["currentValue"] == "ask" and options["mode"]["category"] == "mode"
        assert options["model"]["currentValue"] == "scripted-test/anything"
        assert ("modes" in created) == (version == 1)  # v2 has no modes: the option says it
        answer = await editor.set_option(session_id, "mode", "plan")
        assert editor.options(answer)["mode"]["currentValue"] == "plan"
        assert await editor.prompt(session_id, "/mode accept-edits") == "end_turn"
        assert "Mode: accept-edits." in client.text(session_id)
        latest = [
            u["configOptions"]
            for u in client.updates(session_id)
            if u["sessionUpdate"] == "config_option_update"
        ][-1]
        assert editor.options({"configOptions": latest})["mode"]["currentValue"] == "accept-edits"
        if version == 2:
            assert editor.user_text(session_id) == "/mode accept-edits"  # echoed, with its id


async def test_a_model_error_is_said_and_ends_the_turn(agent_env: AgentEnv, version: int) -> None:
    agent_env.script(
        [{"error": {"kind": "invalid_request", "message": "the model refused the request"}}]
    )
    async with open_agent(agent_env) as client:
        editor = Editor(client, version)
        await editor.start()
        session_id = (await editor.new_session(agent_env))["sessionId"]
        stop = await editor.prompt(session_id, "hi")
        assert "the model refused the request" in client.text(session_id)
        if version == 1:
            assert stop == "end_turn"  # v1 has no error stop reason
            return
        assert stop == "error"  # v2 says so, with the error
        [idle] = editor.idles(session_id)
        assert "the model refused the request" in idle["error"]["message"]
        assert idle["error"]["data"] == {"kind": "invalid_request"}
