"""Subagents as ACP child sessions (unstable `subagents` client capability): announced with
`subagent_update`, their prompt a `session_message`, their work their own updates, their
permission prompts on their own session, cancellable alone. A client without the capability
still sees the subagent inside its task call (`test_updates.py`)."""

from __future__ import annotations

from collections.abc import Callable

import anyio

from tests.acp_server.client import AcpClient, AgentEnv, Json, initialize, open_agent
from tests.acp_server.test_sessions import new_session, text_prompt
from tests.acp_server.test_tools import bash_call, call_updates

TASK: Json = {
    "name": "task",
    "id": "call-task",
    "arguments": {
        "description": "Look for TODOs",
        "prompt": "Find the TODOs",
        "tools": ["read", "bash"],
    },
}
SUBAGENTS: Json = {"subagents": {}}


def _script(env: AgentEnv, *child: Json, after: str = "The subagent found two TODOs.") -> None:
    env.script([{"tool_calls": [TASK]}, *child, {"text": after}])


def _subagent_updates(client: AcpClient, session_id: str) -> list[Json]:
    return [u for u in client.updates(session_id) if u["sessionUpdate"] == "subagent_update"]


def _first_index(client: AcpClient, predicate: Callable[[Json], bool]) -> int:
    return next(i for i, m in enumerate(client.messages) if predicate(m))


def _update(message: Json) -> Json:
    return message.get("params", {}).get("update", {})


def _on(session_id: str) -> Callable[[Json], bool]:
    return lambda m: m.get("params", {}).get("sessionId") == session_id


async def test_a_subagent_is_a_child_session_with_its_own_updates(agent_env: AgentEnv) -> None:
    _script(agent_env, {"tool_calls": [bash_call("echo hi", "child-1")]}, {"text": "Two TODOs."})
    async with open_agent(agent_env) as client:
        await initialize(client, SUBAGENTS)
        parent = (await new_session(client, agent_env))["sessionId"]
        done = await client.call("session/prompt", text_prompt(parent, "delegate"))
        assert done["stopReason"] == "end_turn"

        task = call_updates(client, parent, "call-task")
        child = next(u["_meta"]["earshot"]["childSessionId"] for u in task if "_meta" in u)
        announced, *states = _subagent_updates(client, parent)
        assert announced == {
            "sessionUpdate": "subagent_update",
            "sessionId": child,
            "state": {"state": "running"},
            "title": "Look for TODOs",
            "capabilities": {"cancel": {}},
            "_meta": {"earshot": {"parentToolCallId": "call-task"}},
        }
        # Announced before anything of the child is sent.
        announce = _first_index(client, lambda m: _update(m) == announced)
        assert announce < _first_index(client, _on(child))
        # The prompt: a message from the parent to the child, in both transcripts.
        for session, view in ((parent, "recipientMessageId"), (child, "senderMessageId")):
            [message] = [
                u for u in client.updates(session) if u["sessionUpdate"] == "session_message"
            ]
            assert (message["senderSessionId"], message["recipientSessionId"]) == (parent, child)
            assert message[view] == message["messageId"]
            assert client.text(session, "session_message_chunk") == "Find the TODOs"
        # The child's work is its own: its call, the user asked on its session, its answer.
        assert call_updates(client, child, "child-1")[-1]["status"] == "completed"
        [asked] = client.requests_named("session/request_permission")
        assert asked["params"]["sessionId"] == child
        assert asked["params"]["toolCall"]["toolCallId"] == "child-1"
        assert client.text(child) == "Two TODOs."
        assert [s["state"] for s in states] == [
            {"state": "requires_action"},
            {"state": "running"},
            {"state": "idle", "stopReason": "end_turn"},
        ]
        # Idle before the task call's final update; no work list inside the task's card.
        idle = _first_index(client, lambda m: _update(m).get("state", {}).get("state") == "idle")
        final = _first_index(
            client,
            lambda m: (
                _update(m).get("toolCallId") == "call-task"
                and _update(m).get("status") == "completed"
            ),
        )
        assert idle < final
        assert "echo hi" not in str(task)
        assert task[-1]["status"] == "completed" and "Two TODOs." in str(task[-1]["content"])
        assert client.text(parent) == "The subagent found two TODOs."

    load: Json = {"sessionId": parent, "cwd": str(agent_env.workspace), "mcpServers": []}
    async with open_agent(agent_env) as client:  # the replay shows the same tree
        await initialize(client, SUBAGENTS)
        await client.call("session/load", load)
        assert [u["sessionId"] for u in _subagent_updates(client, parent)] == [child, child]
        assert _subagent_updates(client, parent)[-1]["state"]["stopReason"] == "end_turn"
        [replayed] = call_updates(client, child, "child-1")
        assert replayed["status"] == "completed"
        assert client.text(child, "session_message_chunk") == "Find the TODOs"


async def test_the_client_cancels_a_childs_work_and_the_parent_goes_on(
    agent_env: AgentEnv,
) -> None:
    _script(agent_env, {"tool_calls": [bash_call("touch never.txt", "child-1")]}, after="Stopped.")
    asked = anyio.Event()

    async def cancel_the_child(client: AcpClient, params: Json) -> Json:
        await client.notify("session/cancel", {"sessionId": params["sessionId"]})
        asked.set()
        await anyio.sleep_forever()
        raise AssertionError  # never answered: the cancel withdraws it

    async with open_agent(agent_env) as client:
        client.handlers["session/request_permission"] = cancel_the_child
        await initialize(client, SUBAGENTS)
        parent = (await new_session(client, agent_env))["sessionId"]
        done = await client.call("session/prompt", text_prompt(parent, "delegate"))
        assert asked.is_set()
        assert done["stopReason"] == "end_turn"  # the parent's turn went on
        assert _subagent_updates(client, parent)[-1]["state"] == {
            "state": "idle",
            "stopReason": "cancelled",
        }
        task = call_updates(client, parent, "call-task")[-1]
        assert task["status"] == "failed"
        assert "cancelled the subagent" in str(task["content"])
        assert client.text(parent) == "Stopped."
    assert not (agent_env.workspace / "never.txt").exists()
