"""A `session/new` sent right after `initialize` is answered before its session is built
(`acp_server.early_session`); the server builds the session behind the answer, and requests for
it wait. These tests send `initialize` and `session/new` in one write, so the start-up path
always sees the request (as it does with an editor that sends it as soon as it can), and compare
with a process where the request arrives later and takes the normal path.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest

from tests.acp_server.client import (
    AcpClient,
    AgentEnv,
    initialize,
    json_list,
    spawn_agent,
)
from tests.acp_server.test_sessions import text_prompt

Json = dict[str, Any]
BUILT = "built a session answered in advance"


def new_params(env: AgentEnv, **extra: Any) -> Json:
    return {"cwd": str(env.workspace), "mcpServers": [], **extra}


async def pipelined_new(client: AcpClient, env: AgentEnv, **extra: Any) -> Json:
    """`initialize` and `session/new` written together; the `session/new` response."""
    init, new = await client.start_together(
        ("initialize", {"protocolVersion": 1, "clientCapabilities": {}}),
        ("session/new", new_params(env, **extra)),
    )
    assert "result" in await client.response(init)
    return await client.response(new)


async def normal_new(client: AcpClient, env: AgentEnv, **extra: Any) -> Json:
    """`session/new` after another request: the start-up path has handed over by then."""
    await initialize(client)
    await client.call("session/list", {})
    return await client.response(
        await client.start_request("session/new", new_params(env, **extra))
    )


def without_id(response: Json) -> Json:
    result = dict(response["result"])
    del result["sessionId"]
    return result


def scripted(env: AgentEnv) -> None:
    env.script([{"text": "hello"}])


def credentialed_default(env: AgentEnv) -> None:
    # No model named anywhere: the default of the provider with a key, and its whole catalog.
    env.write_settings({})
    env.extra_env["ANTHROPIC_API_KEY"] = "test-key-not-real"
    env.extra_env["OPENAI_API_KEY"] = "test-key-not-real"


def untrusted_project(env: AgentEnv) -> None:
    # A project file may lower the mode and add model facts, not grant: its allow rule and
    # hook are left out (and said at the first turn).
    env.script([{"text": "hello"}], models={"scripted-test/anything": {"reasoning": True}})
    project = env.workspace / ".earshot"
    project.mkdir()
    (project / "settings.json").write_text(
        json.dumps(
            {
                "mode": "plan",
                "models": {"scripted-test/other": {"name": "Other", "toolCall": True}},
                "permissions": {"allow": ["Bash"]},
                "hooks": {"stop": [{"command": "true"}]},
            }
        ),
        encoding="utf-8",
    )


def editor_servers(env: AgentEnv) -> None:
    env.script([{"text": "hello"}], mode="accept-edits")
    (env.root / "extra").mkdir()


def editor_params(env: AgentEnv) -> Json:
    if not (env.root / "extra").exists():
        return {}
    return {
        "additionalDirectories": [str(env.root / "extra")],
        "mcpServers": [
            {"name": "gone", "command": str(env.root / "no-such-server"), "args": [], "env": []}
        ],
    }


@pytest.mark.parametrize(
    "configure", [scripted, credentialed_default, untrusted_project, editor_servers]
)
async def test_the_early_answer_is_the_normal_answer(
    agent_env: AgentEnv, configure: Callable[[AgentEnv], None]
) -> None:
    configure(agent_env)
    extra = editor_params(agent_env)
    async with spawn_agent(agent_env) as client:
        early = await pipelined_new(client, agent_env, **extra)
        early_id = early["result"]["sessionId"]
        await client.wait_for(lambda: "available_commands_update" in client.kinds(early_id))
    assert BUILT in client.stderr and early_id in client.stderr

    async with spawn_agent(agent_env) as client:
        normal = await normal_new(client, agent_env, **extra)
        # The promised session was built under its id: it is listed like any other.
        listed = await client.call("session/list", {"cwd": str(agent_env.workspace)})
    assert BUILT not in client.stderr
    assert without_id(early) == without_id(normal)
    assert early_id in {item["sessionId"] for item in json_list(listed["sessions"])}


async def test_a_prompt_right_behind_the_answer_waits_for_the_session(
    agent_env: AgentEnv,
) -> None:
    agent_env.script([{"text": "Hello from the promised session."}])
    async with spawn_agent(agent_env) as client:
        session_id = (await pipelined_new(client, agent_env))["result"]["sessionId"]
        result = await client.call("session/prompt", text_prompt(session_id, "hi"))
        assert result == {"stopReason": "end_turn"}
        assert client.text(session_id) == "Hello from the promised session."
        kinds = client.kinds(session_id)
        assert kinds.count("available_commands_update") == 1

    async with spawn_agent(agent_env) as client:
        await initialize(client)
        await client.call(
            "session/load",
            {"sessionId": session_id, "cwd": str(agent_env.workspace), "mcpServers": []},
        )
        assert client.text(session_id) == "Hello from the promised session."
        assert client.text(session_id, "user_message_chunk") == "hi"


async def test_sessions_asked_for_while_the_machinery_loads_are_all_answered_at_once(
    agent_env: AgentEnv,
) -> None:
    # The second `session/new` reaches the event loop before the warm-up has finished: it is
    # answered from the plan too, and both sessions are built behind their answers.
    agent_env.script([{"text": "one"}, {"text": "two"}])
    async with spawn_agent(agent_env) as client:
        _, first, second = await client.start_together(
            ("initialize", {"protocolVersion": 1, "clientCapabilities": {}}),
            ("session/new", new_params(agent_env)),
            ("session/new", new_params(agent_env)),
        )
        ids = [
            (await client.response(request))["result"]["sessionId"] for request in (first, second)
        ]
        assert ids[0] != ids[1]
        for session_id in ids:
            await client.call("session/prompt", text_prompt(session_id, "hi"))
        # Each session plays the script from its start.
        assert [client.text(session_id) for session_id in ids] == ["one", "one"]
    assert client.stderr.count(BUILT) == 2


async def test_session_cancel_while_the_session_is_built_cancels_the_prompt(
    agent_env: AgentEnv,
) -> None:
    # `hang`: if the build wins the race, the turn is in flight and the cancel ends it instead.
    agent_env.script([{"text": "never finished", "hang": True}])
    async with spawn_agent(agent_env) as client:
        session_id = (await pipelined_new(client, agent_env))["result"]["sessionId"]
        prompt = await client.start_request("session/prompt", text_prompt(session_id, "hi"))
        await client.notify("session/cancel", {"sessionId": session_id})
        assert (await client.response(prompt))["result"] == {"stopReason": "cancelled"}
        # The session exists and answers afterwards.
        mode = {"sessionId": session_id, "modeId": "plan"}
        assert await client.call("session/set_mode", mode) == {}


async def test_cancel_request_while_the_session_is_built_cancels_the_prompt(
    agent_env: AgentEnv,
) -> None:
    agent_env.script([{"text": "never finished", "hang": True}])
    async with spawn_agent(agent_env) as client:
        session_id = (await pipelined_new(client, agent_env))["result"]["sessionId"]
        prompt = await client.start_request("session/prompt", text_prompt(session_id, "hi"))
        await client.notify("$/cancel_request", {"requestId": prompt})
        response = await client.response(prompt)
        assert response.get("result") == {"stopReason": "cancelled"}, response


async def test_a_session_that_cannot_be_built_reports_why_on_every_request(
    agent_env: AgentEnv,
) -> None:
    # Answering reads the settings and credentials; building the model reads the script,
    # which is gone.
    agent_env.script([{"text": "unreachable"}]).unlink()
    async with spawn_agent(agent_env) as client:
        early = await pipelined_new(client, agent_env)
        session_id = early["result"]["sessionId"]
        failure = await client.error("session/prompt", text_prompt(session_id, "hi"))
        again = await client.error("session/set_mode", {"sessionId": session_id, "modeId": "plan"})
        assert again == failure
        # The normal path fails the same way, and the server keeps serving.
        normal = await client.response(
            await client.start_request("session/new", new_params(agent_env))
        )
        assert normal["error"]["code"] == failure["code"]
        assert await client.call("session/close", {"sessionId": session_id}) == {}
        gone = await client.error("session/prompt", text_prompt(session_id, "hi"))
        assert gone["code"] == -32002
    assert "building a session answered in advance failed" in client.stderr


async def test_a_session_file_that_cannot_be_written_gets_the_normal_error(
    agent_env: AgentEnv,
) -> None:
    agent_env.script([{"text": "unreachable"}])
    # The answer reserves the session's file first: with no store directory to write to, the
    # request takes the normal path, which reports the failure, and the server keeps serving.
    (agent_env.data_home / "earshot").mkdir(parents=True)
    (agent_env.data_home / "earshot" / "sessions").write_text("not a directory", encoding="utf-8")
    async with spawn_agent(agent_env) as client:
        early = await pipelined_new(client, agent_env)
        assert "error" in early
        normal = await client.response(
            await client.start_request("session/new", new_params(agent_env))
        )
        assert normal["error"]["code"] == early["error"]["code"]
    assert BUILT not in client.stderr


async def test_input_closed_right_after_the_answer_exits_cleanly(agent_env: AgentEnv) -> None:
    # Nothing was said in the session: building it is abandoned rather than delaying the exit,
    # but its file was reserved before the answer, so another process can load it.
    agent_env.script([{"text": "hello"}])
    async with spawn_agent(agent_env) as client:
        session_id = (await pipelined_new(client, agent_env))["result"]["sessionId"]
        await client.close_stdin()
        assert await client.process.wait() == 0
    assert "failed" not in client.stderr
    async with spawn_agent(agent_env) as client:
        await initialize(client)
        listed = await client.call("session/list", {})
        assert [s["sessionId"] for s in listed["sessions"]] == [session_id]
        loaded = await client.call(
            "session/load",
            {"sessionId": session_id, "cwd": str(agent_env.workspace), "mcpServers": []},
        )
        assert loaded["modes"]["currentModeId"] == "ask"
        assert await client.call("session/prompt", text_prompt(session_id, "hi")) == {
            "stopReason": "end_turn"
        }
        assert client.text(session_id) == "hello"


@pytest.mark.parametrize(
    ("params", "code"),
    [({"cwd": "relative/dir", "mcpServers": []}, -32602), ({"cwd": "/"}, -32602)],
)
async def test_requests_the_start_up_path_cannot_answer_get_the_normal_error(
    agent_env: AgentEnv, params: Json, code: int
) -> None:
    agent_env.script([{"text": "hello"}])
    async with spawn_agent(agent_env) as client:
        _, bad = await client.start_together(
            ("initialize", {"protocolVersion": 1, "clientCapabilities": {}}),
            ("session/new", params),
        )
        assert (await client.response(bad))["error"]["code"] == code
        result = await client.call("session/new", new_params(agent_env))
        assert result["sessionId"]
    assert BUILT not in client.stderr


def test_the_start_up_path_loads_no_session_machinery(agent_env: AgentEnv) -> None:
    agent_env.script([{"text": "hello"}])
    code = f"""
import json, sys
from acp_server.early_session import answer_session_new
from earshot.acp_main import EarshotFactory
session = answer_session_new({json.dumps(new_params(agent_env))}, EarshotFactory().plan_new)
assert session is not None
heavy = ("asyncio", "anyio", "pydantic", "structlog", "orjson", "sessions.store",
         "providers.types", "agent.session", "agent.backends", "acp_server.jsonrpc")
print(json.dumps(sorted(name for name in heavy if name in sys.modules)))
"""
    result = subprocess.run(
        [sys.executable, "-c", code],
        env=agent_env.environ(),
        cwd=agent_env.workspace,
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(result.stdout) == []
