"""Tool calls over ACP: permission round trips, editor fs and terminals, and the local fallbacks."""

from __future__ import annotations

import json
import re
from typing import Any, cast

import anyio

from tests.acp_server.client import (
    FULL_CAPABILITIES,
    AcpClient,
    AgentEnv,
    Json,
    initialize,
    json_list,
    open_agent,
)
from tests.acp_server.test_sessions import new_session, text_prompt


def write_call(path: str, content: str, call_id: str = "call-write") -> dict[str, Any]:
    return {"name": "write", "id": call_id, "arguments": {"path": path, "content": content}}


def bash_call(command: str, call_id: str = "call-bash", **extra: Any) -> dict[str, Any]:
    return {"name": "bash", "id": call_id, "arguments": {"command": command, **extra}}


def call_updates(client: AcpClient, session_id: str, call_id: str) -> list[dict[str, Any]]:
    return [
        u
        for u in client.updates(session_id)
        if u["sessionUpdate"] in ("tool_call", "tool_call_update") and u["toolCallId"] == call_id
    ]


async def test_permission_round_trip_for_an_edit(agent_env: AgentEnv) -> None:
    target = agent_env.workspace / "hello.py"
    target.write_text("print('old')\n", encoding="utf-8")
    agent_env.script(
        [
            {
                "tool_calls": [
                    {"name": "read", "id": "call-read", "arguments": {"path": str(target)}}
                ]
            },
            {"tool_calls": [write_call(str(target), "print('new')\n")]},
            {"text": "Edited."},
        ]
    )
    async with open_agent(agent_env) as client:
        await initialize(client)
        session_id = (await new_session(client, agent_env))["sessionId"]
        result = await client.call("session/prompt", text_prompt(session_id, "edit it"))
        assert result["stopReason"] == "end_turn"

    [request] = client.requests_named("session/request_permission")
    params = request["params"]
    assert params["toolCall"]["toolCallId"] == "call-write"
    [diff] = [c for c in params["toolCall"]["content"] if c["type"] == "diff"]
    assert diff == {
        "type": "diff",
        "path": str(target),
        "oldText": "print('old')\n",
        "newText": "print('new')\n",
    }
    # One option per kind (clients bind keys by kind): the safer "always", for this session;
    # the project rule is named as the command that adds it.
    kinds = [option["kind"] for option in params["options"]]
    assert kinds == ["allow_once", "reject_once", "allow_always", "reject_always"]
    [always] = [option for option in params["options"] if option["kind"] == "allow_always"]
    rule = always["_meta"]["earshot"]["rule"]
    assert always["_meta"]["earshot"]["scope"] == "session"
    assert rule.startswith("Write(") or rule.startswith("Edit(")
    assert always["name"] == f"Allow `{rule}` for this session"
    assert f"`/permissions allow {rule}`" in json.dumps(params["toolCall"]["content"])
    # The tool call was announced before the permission request named it.
    request_index = client.messages.index(request)
    announced = [
        i
        for i, m in enumerate(client.messages)
        if m.get("method") == "session/update"
        and m["params"]["update"]["sessionUpdate"] == "tool_call"
        and m["params"]["update"]["toolCallId"] == "call-write"
    ]
    assert announced and announced[0] < request_index
    updates = call_updates(client, session_id, "call-write")
    assert updates[-1]["status"] == "completed"
    assert any(u.get("status") == "in_progress" for u in updates)
    assert target.read_text(encoding="utf-8") == "print('new')\n"
    read_updates = call_updates(client, session_id, "call-read")
    assert [u["kind"] for u in read_updates if "kind" in u][-1] == "read"
    assert any(
        loc["path"] == str(target) for u in read_updates for loc in json_list(u.get("locations"))
    )


async def test_a_rejected_permission_fails_the_call_and_the_turn_goes_on(
    agent_env: AgentEnv,
) -> None:
    target = agent_env.workspace / "new.txt"
    agent_env.script([{"tool_calls": [write_call(str(target), "x")]}, {"text": "Understood."}])
    async with open_agent(agent_env) as client:

        async def reject(client: AcpClient, params: dict[str, Any]) -> dict[str, Any]:
            option = next(o for o in params["options"] if o["kind"] == "reject_once")
            return {"outcome": {"outcome": "selected", "optionId": option["optionId"]}}

        client.handlers["session/request_permission"] = reject
        await initialize(client)
        session_id = (await new_session(client, agent_env))["sessionId"]
        result = await client.call("session/prompt", text_prompt(session_id, "write"))
        assert result["stopReason"] == "end_turn"
        assert call_updates(client, session_id, "call-write")[-1]["status"] == "failed"
        assert client.text(session_id) == "Understood."
    assert not target.exists()


async def test_reads_and_writes_go_through_the_editor_when_advertised(
    agent_env: AgentEnv,
) -> None:
    inside = agent_env.workspace / "inside.txt"
    inside.write_text("on disk\n", encoding="utf-8")
    written = agent_env.workspace / "sub" / "out.txt"
    outside = agent_env.root / "outside.txt"
    outside.write_text("outside\n", encoding="utf-8")
    agent_env.script(
        [
            {
                "tool_calls": [
                    {"name": "read", "id": "r1", "arguments": {"path": str(inside)}},
                    {"name": "read", "id": "r2", "arguments": {"path": str(outside)}},
                ]
            },
            {"tool_calls": [write_call(str(written), "via editor\n")]},
            {"text": "ok"},
        ],
        mode="yolo",
    )
    async with open_agent(agent_env) as client:

        async def editor_buffer(client: AcpClient, params: dict[str, Any]) -> dict[str, Any]:
            return {"content": "unsaved buffer\n"}

        client.handlers["fs/read_text_file"] = editor_buffer
        await initialize(client, FULL_CAPABILITIES)
        session_id = (await new_session(client, agent_env))["sessionId"]
        await client.call("session/prompt", text_prompt(session_id, "go"))
        reads = client.requests_named("fs/read_text_file")
        assert [r["params"]["path"] for r in reads] == [str(inside)]
        assert reads[0]["params"]["sessionId"] == session_id
        assert client.files_written == {str(written): "via editor\n"}
        r1 = call_updates(client, session_id, "r1")[-1]
        assert "unsaved buffer" in str(r1["content"])
        r2 = call_updates(client, session_id, "r2")[-1]
        assert "outside" in str(r2["content"])


async def test_without_fs_capability_everything_is_local(agent_env: AgentEnv) -> None:
    written = agent_env.workspace / "local.txt"
    agent_env.script(
        [{"tool_calls": [write_call(str(written), "local\n")]}, {"text": "ok"}], mode="yolo"
    )
    async with open_agent(agent_env) as client:
        await initialize(client, {"fs": {"readTextFile": False, "writeTextFile": False}})
        session_id = (await new_session(client, agent_env))["sessionId"]
        await client.call("session/prompt", text_prompt(session_id, "go"))
        assert client.requests_named("fs/write_text_file") == []
    assert written.read_text(encoding="utf-8") == "local\n"


async def test_commands_run_in_an_editor_terminal(agent_env: AgentEnv) -> None:
    agent_env.script(
        [{"tool_calls": [bash_call("echo from-terminal; exit 3")]}, {"text": "ran"}], mode="yolo"
    )
    async with open_agent(agent_env) as client:
        await initialize(client, FULL_CAPABILITIES)
        session_id = (await new_session(client, agent_env))["sessionId"]
        result = await client.call("session/prompt", text_prompt(session_id, "run"))
        assert result["stopReason"] == "end_turn"
        [create] = client.requests_named("terminal/create")
        # A launcher that runs the sandbox's command line, then what the editor shows: the
        # user's command (test_sandbox.py).
        command_line = [create["params"]["command"], *create["params"]["args"]]
        assert command_line[-1] == "echo from-terminal; exit 3"
        assert create["params"]["cwd"] == str(agent_env.workspace)
        assert create["params"]["outputByteLimit"] > 0
        methods = [
            r["method"] for r in client.agent_requests if r["method"].startswith("terminal/")
        ]
        assert methods == [
            "terminal/create",
            "terminal/wait_for_exit",
            "terminal/output",
            "terminal/release",
        ]
        updates = call_updates(client, session_id, "call-bash")
        embedded = [
            i
            for i, u in enumerate(updates)
            if any(c["type"] == "terminal" for c in json_list(u.get("content")))
        ]
        assert embedded, updates
        assert updates[-1]["status"] == "failed"  # a non-zero exit
        assert updates[-1]["rawOutput"]["exit_code"] == 3
        assert updates[-1]["content"] == [{"type": "terminal", "terminalId": "term-1"}]
        # The terminal was embedded before it was released.
        release_index = client.messages.index(client.requests_named("terminal/release")[0])
        first_embed = next(
            i
            for i, m in enumerate(client.messages)
            if m.get("method") == "session/update"
            and any(
                cast(Json, c).get("type") == "terminal"
                for c in json_list(m["params"]["update"].get("content"))
                if isinstance(c, dict)
            )
        )
        assert first_embed < release_index
        # The final update still names the terminal, so it goes out before the release (Zed
        # fails an update naming a released terminal and drops its rawOutput: `from_acp`).
        final_index = max(
            i
            for i, m in enumerate(client.messages)
            if m.get("method") == "session/update"
            and m["params"]["update"].get("toolCallId") == "call-bash"
        )
        assert final_index < release_index


async def test_without_terminal_capability_output_streams_into_the_call(
    agent_env: AgentEnv,
) -> None:
    agent_env.script(
        [{"tool_calls": [bash_call("echo line-one; echo line-two")]}, {"text": "ran"}], mode="yolo"
    )
    async with open_agent(agent_env) as client:
        await initialize(client, {"fs": {"readTextFile": True, "writeTextFile": True}})
        session_id = (await new_session(client, agent_env))["sessionId"]
        await client.call("session/prompt", text_prompt(session_id, "run"))
        assert client.requests_named("terminal/create") == []
        updates = call_updates(client, session_id, "call-bash")
        final = updates[-1]
        assert final["status"] == "completed"
        assert "line-two" in str(final["content"])


def _project_rule(request: Json) -> str:
    """The rule a prompt names for "always in this project": `/permissions allow RULE`."""
    text = json.dumps(request["params"]["toolCall"]["content"])
    match = re.search(r"`/permissions allow ([^`]+)`", text)
    assert match is not None, text
    return json.loads(f'"{match.group(1)}"')


async def test_always_allow_in_this_project_is_remembered_across_processes(
    agent_env: AgentEnv,
) -> None:
    first = agent_env.workspace / "one.txt"
    second = agent_env.workspace / "two.txt"
    agent_env.script(
        [
            {"tool_calls": [bash_call(f"touch {first}", call_id="b1")]},
            {"tool_calls": [bash_call(f"touch {second}", call_id="b2")]},
            {"text": "ok"},
        ]
    )
    async with open_agent(agent_env) as client:
        await initialize(client)
        session_id = (await new_session(client, agent_env))["sessionId"]
        await client.call("session/prompt", text_prompt(session_id, "touch"))
        request = client.requests_named("session/request_permission")[0]
        assert request["params"]["toolCall"]["toolCallId"] == "b1"
        # What the prompt says to send keeps the rule for the project.
        rule = _project_rule(request)
        await client.call("session/prompt", text_prompt(session_id, f"/permissions allow {rule}"))
    # Remembered in the user's own config, keyed by the project, not in the project
    # (agent.settings.trust).
    [remembered] = (agent_env.config_home / "earshot" / "projects").glob("workspace-*.json")
    assert rule in remembered.read_text(encoding="utf-8")
    assert not (agent_env.workspace / ".earshot").exists()
    assert first.exists()

    async with open_agent(agent_env) as client:
        await initialize(client)
        session_id = (await new_session(client, agent_env))["sessionId"]
        # A fresh process plays the script from the start: the same command, now allowed.
        await client.call("session/prompt", text_prompt(session_id, "touch"))
        asked = [
            r["params"]["toolCall"]["toolCallId"]
            for r in client.requests_named("session/request_permission")
        ]
        assert "b1" not in asked
        assert call_updates(client, session_id, "b1")[-1]["status"] == "completed"


async def test_always_allow_in_this_project_reaches_the_next_session_of_the_same_process(
    agent_env: AgentEnv,
) -> None:
    target = agent_env.workspace / "one.txt"
    agent_env.script([{"tool_calls": [bash_call(f"touch {target}", call_id="b1")]}, {"text": "ok"}])
    async with open_agent(agent_env) as client:
        await initialize(client)
        first = (await new_session(client, agent_env))["sessionId"]
        await client.call("session/prompt", text_prompt(first, "touch"))
        [request] = client.requests_named("session/request_permission")
        assert call_updates(client, first, "b1")[-1]["status"] == "completed"
        await client.call(
            "session/prompt", text_prompt(first, f"/permissions allow {_project_rule(request)}")
        )

        # Each session's model plays the script afresh: the same command again, in session 2.
        second = (await new_session(client, agent_env))["sessionId"]
        await client.call("session/prompt", text_prompt(second, "touch"))
        assert len(client.requests_named("session/request_permission")) == 1
        assert call_updates(client, second, "b1")[-1]["status"] == "completed"


async def test_settings_edited_between_sessions_apply_to_the_next_one(
    agent_env: AgentEnv,
) -> None:
    agent_env.script([{"text": "ok"}], mode="plan")
    async with open_agent(agent_env) as client:
        await initialize(client)
        assert (await new_session(client, agent_env))["modes"]["currentModeId"] == "plan"
        agent_env.script([{"text": "ok"}], mode="yolo")
        assert (await new_session(client, agent_env))["modes"]["currentModeId"] == "yolo"


async def test_an_editor_terminal_that_times_out_is_killed_read_and_released(
    agent_env: AgentEnv,
) -> None:
    agent_env.script(
        [
            {"tool_calls": [bash_call("echo started; sleep 30; echo never", timeout=0.5)]},
            {"text": "it timed out"},
        ],
        mode="yolo",
    )
    async with open_agent(agent_env) as client:
        await initialize(client, FULL_CAPABILITIES)
        session_id = (await new_session(client, agent_env))["sessionId"]
        result = await client.call("session/prompt", text_prompt(session_id, "run"))
        assert result["stopReason"] == "end_turn"
        methods = [
            r["method"] for r in client.agent_requests if r["method"].startswith("terminal/")
        ]
        assert methods == [
            "terminal/create",
            "terminal/wait_for_exit",
            "terminal/kill",
            "terminal/output",
            "terminal/release",
        ]
        [terminal] = client.terminals.values()
        with anyio.fail_after(5):
            await terminal.exited.wait()
        assert terminal.signal == "SIGKILL"
        assert terminal.released
        final = call_updates(client, session_id, "call-bash")[-1]
        assert final["status"] == "failed"
        assert final["rawOutput"]["timed_out"] is True
        # The terminal shows the output; the update says why the command stopped.
        assert final["content"] == [
            {"type": "terminal", "terminalId": "term-1"},
            {
                "type": "content",
                "content": {"type": "text", "text": "Command timed out after 0.5s and was killed."},
            },
        ]
        assert client.text(session_id) == "it timed out"
