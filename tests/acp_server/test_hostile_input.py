"""Hostile input through the real server: text that is not valid Unicode, links to files that
never end or never open, URIs that name no file, huge values that must not be echoed, and
responses to requests the agent never sent."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import anyio

from tests.acp_server.client import (
    FULL_CAPABILITIES,
    AcpClient,
    AgentEnv,
    initialize,
    open_agent,
)
from tests.acp_server.test_content import prompt, replayed_user_text
from tests.acp_server.test_sessions import new_session, text_prompt
from tests.earshot.support import text_reply
from tests.loopback import LoopbackServer, loopback

ANSWER_LIMIT = 2000
"""Bytes an error answer may take, whatever the request held."""


def use_loopback_model(env: AgentEnv, model: LoopbackServer) -> None:
    env.write_settings(
        {
            "model": "local/test-model",
            "providers": {
                "local": {"api": "openai-chat", "baseUrl": f"{model.url}/v1", "apiKey": "test-key"}
            },
        }
    )


def answer_line(client: AcpClient, request_id: Any) -> str:
    """The raw line the server wrote to answer `request_id`."""
    [line] = [
        line
        for line in client.raw_lines
        if json.loads(line).get("id") == request_id and "method" not in json.loads(line)
    ]
    return line


def session_file(env: AgentEnv, session_id: str) -> Path:
    [path] = (env.data_home / "earshot" / "sessions").glob(f"*/{session_id}.jsonl")
    return path


# ------------------------------------------------------------------------ valid Unicode


async def test_a_lone_surrogate_in_a_prompt_is_replaced_and_the_session_stays_usable(
    agent_env: AgentEnv,
) -> None:
    with loopback(text_reply("first"), text_reply("second")) as model:
        use_loopback_model(agent_env, model)
        async with open_agent(agent_env) as client:
            await initialize(client)
            session_id = (await new_session(client, agent_env))["sessionId"]
            # json.dumps writes the lone surrogate as the escape "\ud800": valid JSON.
            first = await client.call("session/prompt", text_prompt(session_id, "bad \ud800 text"))
            second = await client.call("session/prompt", text_prompt(session_id, "and again"))
            replayed = await replayed_user_text(client, agent_env, session_id)
    assert first == second == {"stopReason": "end_turn"}
    assert len(model.model_calls) == 2
    for request in model.model_calls:
        body = request.body.decode("utf-8")  # strict: valid UTF-8
        assert "bad \ufffd text" in json.dumps(json.loads(body), ensure_ascii=False)
    assert "bad \ufffd text" in replayed
    stored = session_file(agent_env, session_id).read_text(encoding="utf-8")
    assert "\\ud800" not in stored.lower()


async def test_a_transcript_written_with_a_lone_surrogate_loads_and_works(
    agent_env: AgentEnv,
) -> None:
    with loopback(text_reply("one"), text_reply("two")) as model:
        use_loopback_model(agent_env, model)
        async with open_agent(agent_env) as client:
            await initialize(client)
            session_id = (await new_session(client, agent_env))["sessionId"]
            await client.call("session/prompt", text_prompt(session_id, "MARKER text"))
        # As an earlier version stored it: the escape of a lone surrogate in the JSON line.
        path = session_file(agent_env, session_id)
        path.write_text(
            path.read_text(encoding="utf-8").replace("MARKER", "MAR\\udc80KER"), encoding="utf-8"
        )
        async with open_agent(agent_env) as client:
            await initialize(client)
            await client.call(
                "session/load",
                {"sessionId": session_id, "cwd": str(agent_env.workspace), "mcpServers": []},
            )
            result = await client.call("session/prompt", text_prompt(session_id, "next"))
    assert result == {"stopReason": "end_turn"}
    body = model.model_calls[-1].body.decode("utf-8")
    assert "MAR\ufffdKER text" in json.dumps(json.loads(body), ensure_ascii=False)


async def test_surrogates_in_a_session_new_cwd_are_invalid_params(agent_env: AgentEnv) -> None:
    agent_env.script([{"text": "unused"}])
    async with open_agent(agent_env) as client:
        await initialize(client)
        cwd = str(agent_env.workspace / "dir\ud800")
        error = await client.error("session/new", {"cwd": cwd, "mcpServers": []})
    assert (error["code"], error["data"]["field"]) == (-32602, "cwd")


# ------------------------------------------------------------------------ linked files


async def prompt_with_link(
    client: AcpClient, env: AgentEnv, target: str, **extra: Any
) -> tuple[str, dict[str, Any]]:
    session_id = (await new_session(client, env))["sessionId"]
    result = await client.call(
        "session/prompt",
        prompt(
            session_id,
            {"type": "text", "text": "look:"},
            {"type": "resource_link", "uri": target, "name": "it", **extra},
        ),
    )
    return session_id, result


async def test_a_link_to_dev_zero_is_refused_without_reading_it(agent_env: AgentEnv) -> None:
    agent_env.script([{"text": "I see."}])
    async with open_agent(agent_env) as client:
        await initialize(client, FULL_CAPABILITIES)
        session_id, result = await prompt_with_link(client, agent_env, "file:///dev/zero")
        assert result == {"stopReason": "end_turn"}
        # The user is told, and so is the model.
        assert "/dev/zero could not be read" in client.text(session_id)
        replayed = await replayed_user_text(client, agent_env, session_id)
    assert "/dev/zero could not be read: not a regular file: it is a character device" in replayed
    assert not client.requests_named("fs/read_text_file")


async def test_a_link_to_a_fifo_does_not_wait_for_a_writer(agent_env: AgentEnv) -> None:
    fifo = agent_env.workspace / "pipe"
    os.mkfifo(fifo)
    agent_env.script([{"text": "I see."}])
    async with open_agent(agent_env) as client:
        await initialize(client, FULL_CAPABILITIES)
        session_id, result = await prompt_with_link(client, agent_env, fifo.as_uri())
        assert result == {"stopReason": "end_turn"}
        replayed = await replayed_user_text(client, agent_env, session_id)
    assert "could not be read: not a regular file: it is a named pipe (FIFO)" in replayed


async def test_links_to_a_directory_and_a_socket_are_refused(agent_env: AgentEnv) -> None:
    import socket

    socket_path = agent_env.root / "s.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(socket_path))
    agent_env.script([{"text": "I see."}, {"text": "Again."}])
    try:
        async with open_agent(agent_env) as client:
            await initialize(client)
            session_id, _ = await prompt_with_link(client, agent_env, agent_env.workspace.as_uri())
            other_id, _ = await prompt_with_link(client, agent_env, socket_path.as_uri())
            directory = await replayed_user_text(client, agent_env, session_id)
            sock = await replayed_user_text(client, agent_env, other_id)
    finally:
        server.close()
    assert "could not be read: Is a directory" in directory
    assert "could not be read: not a regular file: it is a socket" in sock


async def test_a_large_linked_file_is_read_only_up_to_the_cap(agent_env: AgentEnv) -> None:
    from acp_server.content import TEXT_READ_LIMIT

    big = agent_env.workspace / "big.log"
    big.write_bytes(b"line\n" * (TEXT_READ_LIMIT // 5 + 100_000))
    agent_env.script([{"text": "Long."}])
    async with open_agent(agent_env) as client:
        await initialize(client, FULL_CAPABILITIES)
        session_id, result = await prompt_with_link(client, agent_env, big.as_uri())
        assert result == {"stopReason": "end_turn"}
        replayed = await replayed_user_text(client, agent_env, session_id)
    assert "[... truncated" in replayed
    assert len(replayed) < TEXT_READ_LIMIT
    # Too large for the editor's buffer to matter: read from disk, not requested.
    assert not client.requests_named("fs/read_text_file")


async def test_cancel_ends_a_prompt_whose_attachment_read_hangs(agent_env: AgentEnv) -> None:
    linked = agent_env.workspace / "notes.md"
    linked.write_text("notes\n", encoding="utf-8")
    agent_env.script([{"text": "never"}])
    async with open_agent(agent_env) as client:
        asked = anyio.Event()

        async def never_answer(client: AcpClient, params: dict[str, Any]) -> dict[str, Any]:
            asked.set()
            await anyio.sleep_forever()
            raise AssertionError

        client.handlers["fs/read_text_file"] = never_answer
        await initialize(client, FULL_CAPABILITIES)
        session_id = (await new_session(client, agent_env))["sessionId"]
        prompt_id = await client.start_request(
            "session/prompt",
            prompt(session_id, {"type": "resource_link", "uri": linked.as_uri(), "name": "n"}),
        )
        with anyio.fail_after(10):
            await asked.wait()
        await client.notify("session/cancel", {"sessionId": session_id})
        response = await client.response(prompt_id)
        assert response["result"] == {"stopReason": "cancelled"}
        # The editor's read was withdrawn, and the model was never called.
        [read] = client.requests_named("fs/read_text_file")
        await client.wait_for(lambda: read["id"] in client.cancel_requests)
        assert "never" not in client.text(session_id)
        assert (await client.call("session/list", {}))["sessions"]


async def test_uris_that_name_no_file_are_invalid_params(agent_env: AgentEnv) -> None:
    agent_env.script([{"text": "unused"}])
    async with open_agent(agent_env) as client:
        await initialize(client)
        session_id = (await new_session(client, agent_env))["sessionId"]
        for uri in ("file:///etc/pass%00wd", "file:///tmp/%zz", "file:///tmp/50%"):
            error = await client.error(
                "session/prompt",
                prompt(
                    session_id,
                    {"type": "text", "text": "see"},
                    {"type": "resource_link", "uri": uri, "name": "x"},
                ),
            )
            assert (error["code"], error["data"]["field"]) == (-32602, "prompt[1].uri"), uri
        # Nothing was said in the session (what an opened session sends of itself aside: its
        # slash commands arrive once it is built, which may be after these answers).
        said = [
            update
            for update in client.updates(session_id)
            if update["sessionUpdate"] not in ("available_commands_update", "config_option_update")
        ]
        assert not said


# ------------------------------------------------------------------------ bounded errors


async def test_a_huge_method_name_is_not_echoed(agent_env: AgentEnv) -> None:
    async with open_agent(agent_env) as client:
        await initialize(client)
        request_id = await client.start_request("m" * 20_000_000, {})
        error = (await client.response(request_id))["error"]
        assert error["code"] == -32601
        assert len(answer_line(client, request_id)) < ANSWER_LIMIT
        assert error["message"].endswith("\u2026")


async def test_a_huge_session_id_is_not_echoed(agent_env: AgentEnv) -> None:
    agent_env.script([{"text": "unused"}])
    huge = "s" * 20_000_000
    async with open_agent(agent_env) as client:
        await initialize(client)
        prompt_id = await client.start_request("session/prompt", text_prompt(huge, "hi"))
        load_id = await client.start_request(
            "session/load", {"sessionId": huge, "cwd": str(agent_env.workspace), "mcpServers": []}
        )
        for request_id in (prompt_id, load_id):
            error = (await client.response(request_id))["error"]
            assert error["code"] == -32002
            assert len(answer_line(client, request_id)) < ANSWER_LIMIT


async def test_a_huge_request_id_is_refused_not_echoed(agent_env: AgentEnv) -> None:
    async with open_agent(agent_env) as client:
        await initialize(client)
        huge_id = "i" * 1_000_000
        await client.send({"jsonrpc": "2.0", "id": huge_id, "method": "logout", "params": {}})
        answer = await client.wait_for(
            lambda: next((m for m in client.messages if "error" in m), None)
        )
        assert (answer["id"], answer["error"]["code"]) == (None, -32600)
        assert max(len(line) for line in client.raw_lines) < ANSWER_LIMIT


async def test_a_cwd_too_long_for_the_os_is_invalid_params(agent_env: AgentEnv) -> None:
    agent_env.script([{"text": "unused"}])
    long_cwd = "/" + "/".join(["d" * 250] * 400)  # 100,400 characters
    async with open_agent(agent_env) as client:
        await initialize(client)
        new_id = await client.start_request("session/new", {"cwd": long_cwd, "mcpServers": []})
        session_id = (await new_session(client, agent_env))["sessionId"]
        load_id = await client.start_request(
            "session/load", {"sessionId": session_id, "cwd": long_cwd, "mcpServers": []}
        )
        for request_id in (new_id, load_id):
            error = (await client.response(request_id))["error"]
            assert (error["code"], error["data"]["field"]) == (-32602, "cwd"), error
            assert len(answer_line(client, request_id)) < ANSWER_LIMIT
        not_a_directory = str(agent_env.workspace / "file.txt" / "below")
        (agent_env.workspace / "file.txt").write_text("x", encoding="utf-8")
        error = await client.error("session/new", {"cwd": not_a_directory, "mcpServers": []})
        assert (error["code"], error["data"]["field"]) == (-32602, "cwd")


# ------------------------------------------------------------------------ stray responses


STRAY: tuple[dict[str, Any], ...] = (
    {"jsonrpc": "2.0", "id": 999, "result": {}},
    {"jsonrpc": "2.0", "id": "never-sent", "error": {"code": -32000, "message": "no"}},
    {"id": 998, "result": None},  # no `jsonrpc`
    {"id": 997, "error": {"code": 1, "message": "x"}},
    {"jsonrpc": "2.0", "result": 1},  # no id at all
)


async def test_responses_to_nothing_are_dropped_not_answered(agent_env: AgentEnv) -> None:
    async with open_agent(agent_env) as client:
        # The first line goes through the start-up reader, the rest through the transport.
        for message in STRAY:
            await client.send(message)
        await initialize(client)
        for message in STRAY:
            await client.send(message)
        assert await client.call("logout", {}) == {}
    # Only the two answers to our own requests were written.
    assert [message.get("id") for message in client.messages] == [1, 2]
    assert all("result" in message for message in client.messages)
