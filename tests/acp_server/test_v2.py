"""What only ACP v2 has, and the version negotiation: earshot's own terminals and their
cancellation, the prompt's answer and the session's state around close and resume, and what a
v1 client keeps seeing exactly as before."""

from __future__ import annotations

import base64
from collections.abc import Callable

from tests.acp_server.client import (
    AcpClient,
    AgentEnv,
    Json,
    initialize,
    initialize_v2,
    open_agent,
)
from tests.acp_server.test_tools import bash_call
from tests.processes import unique_sleep


def prompt(session_id: str, text: str) -> Json:
    return {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}


async def new_session(client: AcpClient, env: AgentEnv) -> str:
    return (await client.call("session/new", {"cwd": str(env.workspace)}))["sessionId"]


def updates_of(client: AcpClient, session_id: str, kind: str) -> list[Json]:
    return [u for u in client.updates(session_id) if u["sessionUpdate"] == kind]


def idle_stop(client: AcpClient, session_id: str) -> str | None:
    """The stop reason of the session's last idle update, once there is one."""
    idles = [u for u in updates_of(client, session_id, "state_update") if u["state"] == "idle"]
    return idles[-1].get("stopReason") if idles else None


def index_of(client: AcpClient, found: Callable[[Json], bool]) -> int:
    return next(i for i, message in enumerate(client.messages) if found(message))


async def test_versions_are_negotiated_and_each_has_only_its_methods(agent_env: AgentEnv) -> None:
    agent_env.script([{"text": "unused"}])
    async with open_agent(agent_env) as client:
        # A version we do not know gets the highest we speak.
        client.protocol = 2
        answer = await client.call(
            "initialize", {"protocolVersion": 7, "info": {"name": "future", "version": "9"}}
        )
        assert answer["protocolVersion"] == 2
        assert answer["info"]["name"] == "earshot"
        assert "authMethods" not in answer  # nothing to sign in with: no auth/login either
        for method in ("session/load", "session/set_mode", "authenticate", "logout"):
            error = await client.error(method, {"sessionId": "s", "cwd": str(agent_env.workspace)})
            assert error["code"] == -32601, method
        assert await client.call("auth/logout", {}) == {}
        error = await client.error("auth/login", {"methodId": "earshot-login"})
        assert error["code"] == -32602
        error = await client.error("session/prompt", prompt("no-such-session", "hi"))
        assert error["code"] == -32002 and error["data"] == {"sessionId": "no-such-session"}
        # A repeated initialize asks for v2 again: the connection never goes back to v1.
        error = await client.error("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        assert error["code"] == -32600


async def test_a_v1_client_sees_exactly_what_it_saw_before_v2(agent_env: AgentEnv) -> None:
    """Asked for none of v2, a v1 client gets v1's answer, and v2's methods do not exist."""
    agent_env.script([{"text": "unused"}])
    async with open_agent(agent_env) as client:
        answer = await initialize(client)
        assert answer["protocolVersion"] == 1
        capabilities = answer["agentCapabilities"]
        assert capabilities == {
            "loadSession": True,
            "promptCapabilities": {"image": True, "audio": False, "embeddedContext": True},
            # `acp`, `auth.status` and the sessions' `title` to `systemPrompt`: unstable v1
            # (README, "ACP surface"), advertised to every v1 client as before v2 existed.
            "mcpCapabilities": {"http": True, "sse": True, "acp": True},
            "sessionCapabilities": {
                "list": {},
                "resume": {},
                "close": {},
                "delete": {},
                "additionalDirectories": {},
                "fork": {},
                "title": {},
                "status": {},
                "archive": {},
                "systemPrompt": {"mode": {"override": {}}},
            },
            "auth": {"logout": {}, "status": {}},
            "providers": {},
        }
        assert answer["authMethods"] == [] and answer["agentInfo"]["name"] == "earshot"
        for method in ("tool_call/cancel", "terminal/cancel", "auth/login", "frob/it"):
            error = await client.error(method, {"sessionId": "s", "toolCallId": "c"})
            assert error == {
                "code": -32601,
                "message": f"method not found: {method}",
                "data": {"method": method},
            }
    async with open_agent(agent_env) as client:
        assert (await initialize(client))["protocolVersion"] == 1
        client.protocol = 1
        zero = await client.call("initialize", {"protocolVersion": 0, "clientCapabilities": {}})
        assert zero["protocolVersion"] == 1


async def test_commands_run_in_earshots_own_terminals_which_the_client_can_stop(
    agent_env: AgentEnv,
) -> None:
    """A command's output streams into a terminal the call shows; `tool_call/cancel` and
    `terminal/cancel` stop one, and the turn goes on."""
    first = f"echo started; {unique_sleep(30)}"
    second = f"echo again; {unique_sleep(30)}"
    agent_env.script(
        [
            {"tool_calls": [bash_call(first, "call-one")]},
            {"tool_calls": [bash_call(second, "call-two")]},
            {"text": "Both stopped."},
        ],
        mode="yolo",
        extra={"sandbox": {"enabled": False}},  # the sandbox is local commands' own (tested there)
    )
    async with open_agent(agent_env) as client:
        await initialize_v2(client)
        session_id = await new_session(client, agent_env)
        await client.call("session/prompt", prompt(session_id, "run them"))

        def terminal_of(call_id: str) -> str | None:
            for update in updates_of(client, session_id, "tool_call_update"):
                capabilities: Json = update.get("capabilities") or {}
                if update["toolCallId"] == call_id and "cancel" in capabilities:
                    [terminal] = [c for c in update["content"] if c["type"] == "terminal"]
                    return terminal["terminalId"]
            return None

        def output(terminal_id: str) -> str:
            return "".join(
                base64.b64decode(u["data"]).decode()
                for u in updates_of(client, session_id, "terminal_output_chunk")
                if u["terminalId"] == terminal_id
            )

        one = await client.wait_for(lambda: terminal_of("call-one"))
        await client.wait_for(lambda: "started" in output(one))
        error = await client.error(
            "tool_call/cancel", {"sessionId": session_id, "toolCallId": "call-nope"}
        )
        assert error["code"] == -32602
        cancelled = {"sessionId": session_id, "toolCallId": "call-one"}
        assert await client.call("tool_call/cancel", cancelled) == {}

        two = await client.wait_for(lambda: terminal_of("call-two"))
        await client.wait_for(lambda: "again" in output(two))
        await client.call("terminal/cancel", {"sessionId": session_id, "terminalId": two})
        assert await client.wait_for(lambda: idle_stop(client, session_id)) == "end_turn"
        error = await client.error("terminal/cancel", {"sessionId": session_id, "terminalId": two})
        assert error["code"] == -32602  # it has exited

    assert "Both stopped." in client.text(session_id)
    finals = {
        u["toolCallId"]: u
        for u in updates_of(client, session_id, "tool_call_update")
        if u.get("status") in ("completed", "failed", "cancelled")
    }
    assert finals["call-one"]["status"] == "cancelled"  # the client cancelled the call
    assert finals["call-two"]["status"] == "failed"  # its terminal was stopped: killed
    assert finals["call-one"]["capabilities"] is None and finals["call-two"]["capabilities"] is None
    terminals = updates_of(client, session_id, "terminal_update")
    created = {u["terminalId"]: u for u in terminals if "command" in u}
    assert created[one]["command"] == first and created[one]["cwd"] == str(agent_env.workspace)
    exits = {u["terminalId"]: u["exitStatus"] for u in terminals if "exitStatus" in u}
    assert exits == {one: {"signal": "SIGTERM"}, two: {"signal": "SIGTERM"}}


async def test_close_answers_after_the_idle_update_of_the_work_it_cancelled(
    agent_env: AgentEnv,
) -> None:
    agent_env.script([{"text": "partial", "hang": True}])
    async with open_agent(agent_env) as client:
        await initialize_v2(client)
        session_id = await new_session(client, agent_env)
        inserted = await client.call("session/prompt", prompt(session_id, "go"))
        await client.wait_for(lambda: "partial" in client.text(session_id))
        closed = await client.start_request("session/close", {"sessionId": session_id})
        assert (await client.response(closed))["result"] == {}
        [idle] = [u for u in updates_of(client, session_id, "state_update") if u["state"] == "idle"]
        assert idle["stopReason"] == "cancelled"
        assert index_of(client, lambda m: m.get("params", {}).get("update") is idle) < index_of(
            client, lambda m: m.get("id") == closed
        )
        assert isinstance(inserted["messageId"], str)


async def test_resume_without_replay_sends_only_the_state(agent_env: AgentEnv) -> None:
    agent_env.script([{"text": "First answer."}])
    async with open_agent(agent_env) as client:
        await initialize_v2(client)
        session_id = await new_session(client, agent_env)
        await client.call("session/prompt", prompt(session_id, "hi"))
        await client.wait_for(lambda: idle_stop(client, session_id))
    async with open_agent(agent_env) as client:
        await initialize_v2(client)
        params = {"sessionId": session_id, "cwd": str(agent_env.workspace)}
        error = await client.error("session/resume", {**params, "replayFrom": {"type": "end"}})
        assert error["code"] == -32602 and error["data"]["field"] == "replayFrom"
        answer = await client.call("session/resume", params)
        assert answer["configOptions"]
        before_answer = [
            m["params"]["update"]["sessionUpdate"]
            for m in client.messages[: index_of(client, lambda m: m.get("result") is answer)]
            if m.get("method") == "session/update"
        ]
        assert before_answer == ["state_update"]
