"""Toad and CodeCompanion, as recorded in `tests/data/clients/` (neither runs here: Toad 0.6.20
needs Python 3.14, CodeCompanion is a Neovim plugin): every tool call and permission prompt of
a session, live and replayed, passes Toad's type checks, and each client's keys answer the
option they name."""

from __future__ import annotations

import copy
import shlex
from typing import Any

from tests.acp_server.client import (
    FULL_CAPABILITIES,
    AcpClient,
    AgentEnv,
    Json,
    initialize,
    open_agent,
)
from tests.acp_server.clients import (
    assert_keys_do_what_they_say,
    codecompanion_enter,
    toad_errors,
    toad_key,
)
from tests.acp_server.test_sessions import new_session, text_prompt
from tests.acp_server.test_tools import bash_call, write_call

TOAD_CAPABILITIES: Json = {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": True}


def toad_answers(*kinds: str) -> Any:
    """Press Toad's key for each kind in turn (`toad_key`: the first option of the kind)."""
    remaining = list(kinds)

    async def answer(client: AcpClient, params: Json) -> Json:
        option = toad_key(params["options"], remaining.pop(0))
        assert option is not None
        return {"outcome": {"outcome": "selected", "optionId": option["optionId"]}}

    return answer


async def test_toad_takes_every_tool_call_live_and_replayed_and_its_keys_answer_one_option(
    agent_env: AgentEnv,
) -> None:
    made = agent_env.workspace / "made.txt"
    command = f"echo made > {made} && ls"
    agent_env.script(
        [
            {"tool_calls": [bash_call(command, description="List files", call_id="b")]},
            {"tool_calls": [write_call(str(agent_env.workspace / "kept.txt"), "kept\n", "w")]},
            {"tool_calls": [write_call(str(agent_env.workspace / "refused.txt"), "no\n", "x")]},
            {"text": "done"},
        ]
    )
    async with open_agent(agent_env) as client:
        client.handlers["session/request_permission"] = toad_answers(
            "allow_once", "allow_once", "reject_once"
        )
        await initialize(client, TOAD_CAPABILITIES)
        session_id = (await new_session(client, agent_env))["sessionId"]
        await client.call("session/prompt", text_prompt(session_id, "go"))
        live = list(client.messages)
        prompts = client.requests_named("session/request_permission")
        [create] = client.requests_named("terminal/create")
    async with open_agent(agent_env) as client:
        await initialize(client, TOAD_CAPABILITIES)
        await client.call(
            "session/load",
            {"sessionId": session_id, "cwd": str(agent_env.workspace), "mcpServers": []},
        )
        replayed = list(client.messages)

    for message in live + replayed:
        assert toad_errors(message) == [], message
    finals = [
        m["params"]["update"]
        for m in live
        if m.get("method") == "session/update" and m["params"]["update"].get("status") == "failed"
    ]
    assert [u["toolCallId"] for u in finals] == ["x"]  # the refused one, with its ✔/✗ shown
    # Toad's terminal title (`shlex.join([command, *args])`) ends with the user's command.
    title = shlex.join([create["params"]["command"], *create["params"]["args"]])
    assert title.endswith(shlex.quote(command))
    assert made.exists()
    # The checks can fail: a string rawOutput (what earshot sent before) is refused.
    stale = copy.deepcopy(next(m for m in live if m.get("method") == "session/update"))
    stale["params"]["update"] = {**finals[0], "rawOutput": "Rejected"}
    assert toad_errors(stale) == ["update.rawOutput: str is not object"]

    bash_prompt = prompts[0]["params"]
    # CodeCompanion reads "<Kind>: <title> ?": the title starts with the exact command.
    assert bash_prompt["toolCall"]["title"] == f"{command}  # List files"
    for prompt in prompts:
        options = prompt["params"]["options"]
        assert_keys_do_what_they_say(options)
        enter = codecompanion_enter(options)
        assert enter is not None and not enter["kind"].startswith("allow")


async def test_codecompanion_opens_its_diff_view_for_an_edit_prompt(agent_env: AgentEnv) -> None:
    """`requires_diff` looks at the first content block only: an edit's diff comes first."""
    agent_env.script(
        [{"tool_calls": [write_call(str(agent_env.workspace / "a.txt"), "a\n")]}, {"text": "ok"}]
    )
    async with open_agent(agent_env) as client:
        await initialize(client, FULL_CAPABILITIES)
        session_id = (await new_session(client, agent_env))["sessionId"]
        await client.call("session/prompt", text_prompt(session_id, "write"))
        [asked] = client.requests_named("session/request_permission")
    assert asked["params"]["toolCall"]["content"][0]["type"] == "diff"
