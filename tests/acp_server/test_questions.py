"""The question tool over ACP: elicitation forms, the permission fallback, and no hangs."""

from __future__ import annotations

from typing import Any

import anyio

from tests.acp_server.client import AcpClient, AgentEnv, Json, initialize, open_agent
from tests.acp_server.editor import ClientError
from tests.acp_server.env import TAKES_CANCEL_REQUEST
from tests.acp_server.test_sessions import new_session, text_prompt
from tests.acp_server.test_tools import call_updates

ELICITATION: Json = {"elicitation": {"form": {}}}


def question(text: str, choices: list[str] | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "name": "question",
        "id": "call-q",
        "arguments": {"question": text, "choices": choices or [], **extra},
    }


def answer_of(client: AcpClient, session_id: str) -> str:
    final = call_updates(client, session_id, "call-q")[-1]
    assert final["status"] == "completed"
    return str(final["content"])


async def test_a_choice_question_becomes_an_elicitation_form(agent_env: AgentEnv) -> None:
    agent_env.script([{"tool_calls": [question("Which one?", ["red", "blue"])]}, {"text": "ok"}])
    async with open_agent(agent_env) as client:

        async def pick_blue(client: AcpClient, params: dict[str, Any]) -> dict[str, Any]:
            return {"action": "accept", "content": {"answer": "blue"}}

        client.handlers["elicitation/create"] = pick_blue
        await initialize(client, ELICITATION)
        session_id = (await new_session(client, agent_env))["sessionId"]
        result = await client.call("session/prompt", text_prompt(session_id, "ask me"))
        assert result["stopReason"] == "end_turn"
        [request] = client.requests_named("elicitation/create")
        params = request["params"]
        assert params["mode"] == "form"
        assert params["sessionId"] == session_id
        assert params["toolCallId"] == "call-q"
        assert params["message"] == "Which one?"
        assert params["requestedSchema"]["properties"]["answer"]["enum"] == ["red", "blue"]
        assert "The user answered: blue" in answer_of(client, session_id)


async def test_a_multiple_choice_question_is_an_array_of_strings(agent_env: AgentEnv) -> None:
    """The schema requires the items' type (the client validates the request: a bare `enum`
    was rejected)."""
    agent_env.script(
        [{"tool_calls": [question("Which?", ["red", "blue"], multiple=True)]}, {"text": "ok"}]
    )
    async with open_agent(agent_env) as client:

        async def pick_both(client: AcpClient, params: dict[str, Any]) -> dict[str, Any]:
            return {"action": "accept", "content": {"answer": ["red", "blue"]}}

        client.handlers["elicitation/create"] = pick_both
        await initialize(client, ELICITATION)
        session_id = (await new_session(client, agent_env))["sessionId"]
        await client.call("session/prompt", text_prompt(session_id, "ask me"))
        [request] = client.requests_named("elicitation/create")
        answer = request["params"]["requestedSchema"]["properties"]["answer"]
        assert answer["items"] == {"type": "string", "enum": ["red", "blue"]}
        assert "red" in answer_of(client, session_id)


async def test_a_free_text_question_and_a_declined_one(agent_env: AgentEnv) -> None:
    agent_env.script(
        [
            {"tool_calls": [question("Your name?")]},
            {"tool_calls": [{**question("Again?"), "id": "call-q2"}]},
            {"text": "ok"},
        ]
    )
    async with open_agent(agent_env) as client:
        answers = iter([{"action": "accept", "content": {"answer": "Ada"}}, {"action": "decline"}])

        async def reply(client: AcpClient, params: dict[str, Any]) -> dict[str, Any]:
            return next(answers)

        client.handlers["elicitation/create"] = reply
        await initialize(client, ELICITATION)
        session_id = (await new_session(client, agent_env))["sessionId"]
        await client.call("session/prompt", text_prompt(session_id, "ask me"))
        first = client.requests_named("elicitation/create")[0]["params"]["requestedSchema"]
        assert first["properties"]["answer"] == {"type": "string", "title": "Answer"}
        assert "The user answered: Ada" in answer_of(client, session_id)
        second = call_updates(client, session_id, "call-q2")[-1]
        assert "declined" in str(second["content"])


async def test_without_elicitation_choices_fall_back_to_permission_options(
    agent_env: AgentEnv,
) -> None:
    agent_env.script(
        [
            {"tool_calls": [question("Which one?", ["red", "blue"])]},
            {"tool_calls": [{**question("Free text?"), "id": "call-free"}]},
            {"text": "ok"},
        ]
    )
    async with open_agent(agent_env) as client:

        async def second_choice(client: AcpClient, params: dict[str, Any]) -> dict[str, Any]:
            choices = [o for o in params["options"] if o["kind"] == "allow_once"]
            return {"outcome": {"outcome": "selected", "optionId": choices[1]["optionId"]}}

        client.handlers["session/request_permission"] = second_choice
        await initialize(client)
        session_id = (await new_session(client, agent_env))["sessionId"]
        await client.call("session/prompt", text_prompt(session_id, "ask me"))
        [request] = client.requests_named("session/request_permission")
        names = [option["name"] for option in request["params"]["options"]]
        assert names[:2] == ["red", "blue"]
        assert request["params"]["options"][-1]["kind"] == "reject_once"
        assert "The user answered: blue" in answer_of(client, session_id)
        # A free-text question cannot be asked this way: declined at once, no request.
        free = call_updates(client, session_id, "call-free")[-1]
        assert "declined" in str(free["content"])
        assert client.requests_named("elicitation/create") == []


async def test_cancel_while_a_question_is_open(agent_env: AgentEnv) -> None:
    agent_env.script([{"tool_calls": [question("Which one?", ["a", "b"])]}, {"text": "unused"}])
    async with open_agent(agent_env) as client:
        asked = anyio.Event()

        async def never(client: AcpClient, params: dict[str, Any]) -> dict[str, Any]:
            asked.set()
            await anyio.sleep_forever()
            raise AssertionError

        client.handlers["elicitation/create"] = never
        await initialize(client, {**ELICITATION, **TAKES_CANCEL_REQUEST})
        session_id = (await new_session(client, agent_env))["sessionId"]
        prompt_id = await client.start_request("session/prompt", text_prompt(session_id, "ask"))
        with anyio.fail_after(10):
            await asked.wait()
        await client.notify("session/cancel", {"sessionId": session_id})
        assert (await client.response(prompt_id))["result"] == {"stopReason": "cancelled"}
        request = client.requests_named("elicitation/create")[0]
        await client.wait_for(lambda: request["id"] in client.cancel_requests)


async def test_an_elicitation_answered_with_an_error_falls_back_to_choices_for_good(
    agent_env: AgentEnv,
) -> None:
    """Zed advertises `elicitation` always, but a build without its ACP beta flag answers
    `elicitation/create` with an error (`ElicitationStore::validate_request`): the question
    was counted as declined. It is asked as permission options instead, and so is every later
    question on the connection, without trying the form again."""
    agent_env.script(
        [
            {"tool_calls": [question("Which one?", ["red", "blue"])]},
            {"tool_calls": [{**question("And now?", ["up", "down"]), "id": "call-q2"}]},
            {"text": "ok"},
        ]
    )
    async with open_agent(agent_env) as client:

        async def refuse(client: AcpClient, params: dict[str, Any]) -> dict[str, Any]:
            raise ClientError(-32603, "elicitation is not enabled")

        async def first_choice(client: AcpClient, params: dict[str, Any]) -> dict[str, Any]:
            return {"outcome": {"outcome": "selected", "optionId": "choice-0"}}

        client.handlers["elicitation/create"] = refuse
        client.handlers["session/request_permission"] = first_choice
        await initialize(client, ELICITATION)
        session_id = (await new_session(client, agent_env))["sessionId"]
        await client.call("session/prompt", text_prompt(session_id, "ask me"))
    assert len(client.requests_named("elicitation/create")) == 1  # tried once
    asked = client.requests_named("session/request_permission")
    assert [a["params"]["toolCall"]["title"] for a in asked] == ["Which one?", "And now?"]
    assert "The user answered: red" in answer_of(client, session_id)
    second = call_updates(client, session_id, "call-q2")[-1]
    assert "The user answered: up" in str(second["content"])
