"""Session lifecycle against the real server: new, prompt, load (fresh process), list, resume,
close, delete, and the missing-credentials answer."""

from __future__ import annotations

import json
from typing import Any

from tests.acp_server.client import AcpClient, AgentEnv, initialize, json_list, open_agent


async def new_session(client: AcpClient, env: AgentEnv, **extra: Any) -> dict[str, Any]:
    return await client.call("session/new", {"cwd": str(env.workspace), "mcpServers": [], **extra})


def text_prompt(session_id: str, text: str) -> dict[str, Any]:
    return {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}


async def test_new_session_then_a_scripted_prompt(agent_env: AgentEnv) -> None:
    agent_env.script(
        [{"text": "Hello there, editor!", "reasoning": "Greet back.", "chunk_size": 5}]
    )
    async with open_agent(agent_env) as client:
        await initialize(client)
        result = await new_session(client, agent_env)
        session_id = result["sessionId"]
        assert result["modes"]["currentModeId"] == "ask"
        assert [m["id"] for m in result["modes"]["availableModes"]] == [
            "plan",
            "ask",
            "accept-edits",
            "auto",
            "yolo",
        ]
        options = {option["id"]: option for option in result["configOptions"]}
        assert options["mode"]["category"] == "mode"
        assert options["model"]["category"] == "model"
        assert options["model"]["currentValue"] == "scripted-test/anything"
        # available_commands_update comes after the response, never before.
        await client.wait_for(lambda: "available_commands_update" in client.kinds(session_id))
        response_index = next(
            i for i, m in enumerate(client.messages) if m.get("result", {}).get("sessionId")
        )
        commands_index = next(
            i
            for i, m in enumerate(client.messages)
            if m.get("method") == "session/update"
            and m["params"]["update"]["sessionUpdate"] == "available_commands_update"
        )
        assert commands_index > response_index
        names = {
            c["name"]
            for u in client.updates(session_id)
            if u["sessionUpdate"] == "available_commands_update"
            for c in u["availableCommands"]
        }
        assert {"compact", "undo", "mode", "model", "clear"} <= names

        result = await client.call("session/prompt", text_prompt(session_id, "hi"))
        assert result == {"stopReason": "end_turn"}
        assert client.text(session_id) == "Hello there, editor!"
        assert client.text(session_id, "agent_thought_chunk") == "Greet back."
        chunks = [
            u for u in client.updates(session_id) if u["sessionUpdate"] == "agent_message_chunk"
        ]
        assert len(chunks) == 4
        assert len({chunk["messageId"] for chunk in chunks}) == 1


async def test_a_model_error_is_reported_as_text_and_end_turn(agent_env: AgentEnv) -> None:
    agent_env.script(
        [{"error": {"kind": "invalid_request", "message": "the model refused the request"}}]
    )
    async with open_agent(agent_env) as client:
        await initialize(client)
        session_id = (await new_session(client, agent_env))["sessionId"]
        result = await client.call("session/prompt", text_prompt(session_id, "hi"))
        assert result["stopReason"] == "end_turn"
        assert "the model refused the request" in client.text(session_id)


async def test_missing_credentials_answer_auth_required(agent_env: AgentEnv) -> None:
    agent_env.write_settings({"model": "anthropic/claude-sonnet-4-5"})
    async with open_agent(agent_env) as client:
        await initialize(client)
        response = await client.response(
            await client.start_request(
                "session/new", {"cwd": str(agent_env.workspace), "mcpServers": []}
            )
        )
        assert response["error"]["code"] == -32000
        assert "ANTHROPIC_API_KEY" in response["error"]["message"]
        assert "`earshot login`" in response["error"]["message"]


async def test_load_replays_everything_in_a_fresh_process(agent_env: AgentEnv) -> None:
    target = agent_env.workspace / "notes.txt"
    agent_env.script(
        [
            {
                "reasoning": "Write the file first.",
                "text": "Writing it.",
                "tool_calls": [
                    {"name": "write", "arguments": {"path": str(target), "content": "hi\n"}},
                    {
                        "name": "todo",
                        "arguments": {"todos": [{"content": "Write notes", "status": "completed"}]},
                    },
                ],
            },
            {"text": "Done."},
        ],
        mode="yolo",
    )
    async with open_agent(agent_env) as client:
        await initialize(client)
        session_id = (await new_session(client, agent_env))["sessionId"]
        await client.call("session/prompt", text_prompt(session_id, "please write notes"))
    assert target.read_text(encoding="utf-8") == "hi\n"

    async with open_agent(agent_env) as client:
        await initialize(client)
        result = await client.call(
            "session/load",
            {"sessionId": session_id, "cwd": str(agent_env.workspace), "mcpServers": []},
        )
        assert result["modes"]["currentModeId"] == "yolo"
        load_index = next(
            i for i, m in enumerate(client.messages) if "result" in m and m["id"] == 2
        )
        replayed = [
            m["params"]["update"]
            for m in client.messages[:load_index]
            if m.get("method") == "session/update"
        ]
        kinds = [u["sessionUpdate"] for u in replayed]
        assert kinds[0] == "user_message_chunk"
        assert replayed[0]["content"]["text"] == "please write notes"
        assert replayed[0]["messageId"]
        assert "agent_thought_chunk" in kinds
        assert "plan" in kinds
        calls = [u for u in replayed if u["sessionUpdate"] == "tool_call"]
        assert {c["kind"] for c in calls} >= {"edit"}
        finals = [u for u in replayed if u.get("status") == "completed"]
        assert len(finals) == 2
        diff = next(
            c
            for u in replayed
            if u["sessionUpdate"].startswith("tool_call")
            for c in json_list(u.get("content"))
            if c["type"] == "diff"
        )
        assert diff["path"] == str(target)
        assert diff["newText"] == "hi\n"
        agent_text = "".join(
            u["content"]["text"] for u in replayed if u["sessionUpdate"] == "agent_message_chunk"
        )
        assert agent_text == "Writing it.Done."
        # Commands follow the load response.
        await client.wait_for(lambda: "available_commands_update" in client.kinds(session_id))
        assert "available_commands_update" not in kinds


async def test_list_resume_close_delete(agent_env: AgentEnv) -> None:
    agent_env.script([{"text": "one"}])
    async with open_agent(agent_env) as client:
        await initialize(client)
        assert (await client.call("session/list", {}))["sessions"] == []
        first = (await new_session(client, agent_env))["sessionId"]
        second = (await new_session(client, agent_env))["sessionId"]
        await client.call("session/prompt", text_prompt(first, "name this session"))
        listed = await client.call("session/list", {"cwd": str(agent_env.workspace)})
        ids = [item["sessionId"] for item in listed["sessions"]]
        assert set(ids) == {first, second}
        for item in listed["sessions"]:
            assert item["cwd"] == str(agent_env.workspace)
            assert item["updatedAt"]
        other = await client.call("session/list", {"cwd": str(agent_env.root)})
        assert other["sessions"] == []

        assert await client.call("session/close", {"sessionId": first}) == {}
        error = await client.error("session/prompt", text_prompt(first, "again"))
        assert error["code"] == -32002
        before = len(client.messages)
        resume = await client.start_request(
            "session/resume",
            {"sessionId": first, "cwd": str(agent_env.workspace), "mcpServers": []},
        )
        resumed = (await client.response(resume))["result"]
        assert resumed["modes"]["currentModeId"] == "ask"
        # Unlike session/load, resume replays nothing: no update precedes its response.
        answered = next(
            i for i, m in enumerate(client.messages) if m.get("id") == resume and "result" in m
        )
        assert [
            m for m in client.messages[before:answered] if m.get("method") == "session/update"
        ] == []
        assert await client.call("session/delete", {"sessionId": second}) == {}
        assert await client.call("session/delete", {"sessionId": second}) == {}
        listed = await client.call("session/list", {})
        assert [item["sessionId"] for item in listed["sessions"]] == [first]
        error = await client.error(
            "session/load",
            {"sessionId": "no-such-session", "cwd": str(agent_env.workspace), "mcpServers": []},
        )
        assert error["code"] == -32002


async def test_list_pages_with_a_cursor(agent_env: AgentEnv) -> None:
    agent_env.script([])
    agent_env.extra_env["EARSHOT_ACP_LIST_PAGE"] = "2"
    async with open_agent(agent_env) as client:
        await initialize(client)
        created = {(await new_session(client, agent_env))["sessionId"] for _ in range(3)}
        # Built (their first entries written): a session updated while paging moves to the
        # front and is not repeated, which is not what this test is about.
        for session_id in created:
            await client.wait_for(
                lambda sid=session_id: "available_commands_update" in client.kinds(sid)
            )
        seen: list[str] = []
        page = await client.call("session/list", {})
        seen += [item["sessionId"] for item in page["sessions"]]
        while "nextCursor" in page:
            page = await client.call("session/list", {"cursor": page["nextCursor"]})
            seen += [item["sessionId"] for item in page["sessions"]]
        assert set(seen) == created
        assert len(seen) == 3
        error = await client.error("session/list", {"cursor": "garbage!"})
        assert error["code"] == -32602


async def test_invalid_settings_answer_a_settings_error_naming_file_and_key(
    agent_env: AgentEnv,
) -> None:
    agent_env.write_settings({"model": "anthropic/claude-sonnet-4-5", "colour": "sk-secret-x"})
    project = agent_env.workspace / ".earshot" / "settings.json"
    async with open_agent(agent_env) as client:
        await initialize(client)
        error = await client.error(
            "session/new", {"cwd": str(agent_env.workspace), "mcpServers": []}
        )
        assert error["code"] == -32001
        path = str(agent_env.settings_path)
        assert error["message"] == f"Invalid settings: {path}: colour: unknown key"
        assert error["data"] == {"file": path, "key": "colour"}
        assert "sk-secret-x" not in str(error)

        # Fixed while the server runs; then a project file that is not JSON at all.
        agent_env.script([])
        project.parent.mkdir()
        project.write_text("{not json", encoding="utf-8")
        error = await client.error(
            "session/new", {"cwd": str(agent_env.workspace), "mcpServers": []}
        )
        assert error["code"] == -32001
        assert error["message"].startswith(f"Invalid settings: {project}: not valid JSON")
        assert error["data"] == {"file": str(project), "key": None}

        project.write_text("{}", encoding="utf-8")
        session_id = (await new_session(client, agent_env))["sessionId"]
        await client.call("session/close", {"sessionId": session_id})
        project.write_text('{"permissions": {"allow": ["not a rule("]}}', encoding="utf-8")
        for method in ("session/load", "session/resume"):
            error = await client.error(
                method,
                {"sessionId": session_id, "cwd": str(agent_env.workspace), "mcpServers": []},
            )
            assert error["code"] == -32001, method
            assert error["data"] == {"file": str(project), "key": "permissions.allow.0"}


async def test_a_missing_or_relative_cwd_is_invalid_params(agent_env: AgentEnv) -> None:
    agent_env.script([])
    missing = str(agent_env.root / "no-such-dir")
    a_file = agent_env.root / "a-file"
    a_file.write_text("", encoding="utf-8")
    async with open_agent(agent_env) as client:
        await initialize(client)
        session_id = (await new_session(client, agent_env))["sessionId"]
        await client.call("session/close", {"sessionId": session_id})
        for method in ("session/new", "session/load", "session/resume"):
            for cwd in (missing, str(a_file), "relative/dir"):
                error = await client.error(
                    method, {"sessionId": session_id, "cwd": cwd, "mcpServers": []}
                )
                assert error["code"] == -32602, (method, cwd, error)
                assert error["data"] == {"field": "cwd"}, (method, cwd)
                assert "cwd" in error["message"]


async def test_an_automatically_picked_model_is_announced_once(agent_env: AgentEnv) -> None:
    # No "model" anywhere: earshot picks the credentialed provider's default.
    agent_env.script([{"text": "one"}, {"text": "two"}])
    settings = json.loads(agent_env.settings_path.read_text(encoding="utf-8"))
    del settings["model"]
    settings["models"] = {"scripted-test/anything": {"toolCall": True}}
    agent_env.write_settings(settings)
    async with open_agent(agent_env) as client:
        await initialize(client, {"session": {"notices": {}}})
        result = await new_session(client, agent_env)
        session_id = result["sessionId"]
        options = {option["id"]: option for option in result["configOptions"]}
        assert options["model"]["currentValue"] == "scripted-test/anything"
        await client.call("session/prompt", text_prompt(session_id, "hi"))
        await client.call("session/prompt", text_prompt(session_id, "again"))
        notices = [
            u
            for u in client.updates(session_id)
            if u["sessionUpdate"] == "notice" and "window" not in u["title"]  # not the meter's
        ]
        assert len(notices) == 1, notices
        assert "scripted-test/anything" in notices[0]["title"]
        assert "no model is configured" in notices[0]["title"].lower()
        assert client.text(session_id) == "onetwo"

    # Without the notices capability it is said as agent text, before the answer.
    async with open_agent(agent_env) as client:
        await initialize(client)
        session_id = (await new_session(client, agent_env))["sessionId"]
        await client.call("session/prompt", text_prompt(session_id, "hi"))
        text = client.text(session_id)
        assert "scripted-test/anything" in text
        assert text.endswith("one")
