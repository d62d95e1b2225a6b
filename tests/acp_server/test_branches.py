"""The session tree driven as an editor drives it: `session/fork` (unstable, validated against
`schema.unstable.json`), `/rewind` with and without the files, subagents as child sessions in
`session/list` and `session/load`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from providers.types import Message, TextPart
from tests.acp_server.client import AcpClient, AgentEnv, initialize, json_list, open_agent
from tests.acp_server.test_sessions import new_session, text_prompt
from tests.earshot.support import text_reply
from tests.loopback import LoopbackServer, Recorded, Reply, loopback

Json = dict[str, Any]


def _chat_env(env: AgentEnv, server: LoopbackServer) -> AgentEnv:
    env.write_settings(
        {
            "providers": {
                "loop": {"api": "openai-chat", "baseUrl": f"{server.url}/v1", "apiKey": "k"}
            },
            "model": "loop/anything",
        }
    )
    return env


def _echo(request: Recorded) -> Reply:
    if request.method != "POST":
        return Reply.json({"error": {"message": "not a model call"}}, status=404)
    users = [m for m in request.json()["messages"] if m["role"] == "user"]
    return text_reply(f"answer to {users[-1]['content']}")


def _user_texts(request: Recorded) -> list[str]:
    return [m["content"] for m in request.json()["messages"] if m["role"] == "user"]


def _posts(server: LoopbackServer) -> list[Recorded]:
    return [r for r in server.requests if r.method == "POST"]


async def _prompt(client: AcpClient, session_id: str, text: str) -> None:
    assert await client.call("session/prompt", text_prompt(session_id, text)) == {
        "stopReason": "end_turn"
    }


async def test_fork_at_the_leaf_and_before_a_message_each_continue_with_their_own_history(
    agent_env: AgentEnv,
) -> None:
    with loopback() as server:
        server.responder = _echo
        env = _chat_env(agent_env, server)
        async with open_agent(env) as client:
            init = await initialize(client)
            assert init["agentCapabilities"]["sessionCapabilities"]["fork"] == {}
            source = (await new_session(client, env))["sessionId"]
            await _prompt(client, source, "one")
            await _prompt(client, source, "two")

            params: Json = {"sessionId": source, "cwd": str(env.workspace), "mcpServers": []}
            whole = await client.call("session/fork", params)
            assert whole["sessionId"] != source
            assert whole["modes"]["currentModeId"] == "ask"
            assert {o["id"] for o in whole["configOptions"]} >= {"mode", "model"}
            early = await client.call(
                "session/fork", {**params, "_meta": {"earshot": {"beforeUserMessage": 2}}}
            )

            await _prompt(client, whole["sessionId"], "three")
            assert _user_texts(_posts(server)[-1]) == ["one", "two", "three"]
            await _prompt(client, early["sessionId"], "again")
            assert _user_texts(_posts(server)[-1]) == ["one", "again"]
            await _prompt(client, source, "four")
            assert _user_texts(_posts(server)[-1]) == ["one", "two", "four"]

            bad = await client.error(
                "session/fork", {**params, "_meta": {"earshot": {"beforeUserMessage": 9}}}
            )
            assert bad["code"] == -32602
            missing = await client.error("session/fork", {**params, "sessionId": "nope"})
            assert missing["code"] == -32002

            listed = await client.call("session/list", {"cwd": str(env.workspace)})
            rows = {row["sessionId"]: row for row in listed["sessions"]}
            assert rows[early["sessionId"]]["_meta"]["earshot"]["forkedFrom"]["sessionId"] == (
                source
            )
            # A fork has a title of its own (issue 31.11: Zed's history showed two alike).
            assert rows[source]["title"] and rows[whole["sessionId"]]["title"] == (
                f"{rows[source]['title']} (fork)"
            )

        # A fresh process loads the fork: its own branch, nothing of the source's later turns.
        async with open_agent(env) as client:
            await initialize(client)
            await client.call(
                "session/load",
                {"sessionId": early["sessionId"], "cwd": str(env.workspace), "mcpServers": []},
            )
            said = client.text(early["sessionId"], "user_message_chunk")
            assert said == "oneagain"


async def test_fork_before_a_first_entry_is_an_empty_fork_by_either_way(
    agent_env: AgentEnv,
) -> None:
    """`session/fork` before message N and `/fork N` are one fork point. They disagreed where
    message N is the branch's first entry (a transcript that starts with the user's message, as
    an older earshot's or another writer's does): the method refused it ("nothing comes before
    it"), the command made an empty session recording its origin. Now both do the latter."""
    from sessions import MessageEntry, SessionStore

    store = SessionStore(agent_env.data_home / "earshot" / "sessions")
    stored = await store.create(agent_env.workspace)
    await stored.append(MessageEntry(message=Message(role="user", parts=[TextPart(text="one")])))
    await stored.append(
        MessageEntry(message=Message(role="assistant", parts=[TextPart(text="answer to one")]))
    )
    source = stored.id
    await stored.aclose()
    with loopback() as server:
        server.responder = _echo
        env = _chat_env(agent_env, server)
        async with open_agent(env) as client:
            await initialize(client)
            params: Json = {"sessionId": source, "cwd": str(env.workspace), "mcpServers": []}
            by_method = await client.call(
                "session/fork", {**params, "_meta": {"earshot": {"beforeUserMessage": 1}}}
            )
            await client.call("session/load", params)
            await _prompt(client, source, "/fork 1")
            said = client.text(source).rsplit("Forked before message 1 into session ", 1)[1]
            by_command = said.split(".")[0]
            listed = await client.call("session/list", {"cwd": str(env.workspace)})
            rows = {row["sessionId"]: row for row in listed["sessions"]}
            for fork_id in (by_method["sessionId"], by_command):
                assert fork_id != source
                assert rows[fork_id]["_meta"]["earshot"]["forkedFrom"] == {
                    "sessionId": source,
                    "entryId": None,
                }
                await client.call("session/load", {**params, "sessionId": fork_id})
                assert client.text(fork_id, "user_message_chunk") == ""
            await _prompt(client, by_method["sessionId"], "fresh")
            assert _user_texts(_posts(server)[-1]) == ["fresh"]


def _rewind_script(env: AgentEnv) -> None:
    notes = str(env.workspace / "notes.txt")

    def write(content: str) -> Json:
        return {"name": "write", "arguments": {"path": notes, "content": content}}

    plan = {"todos": [{"content": "Write notes", "status": "in_progress"}]}
    env.script(
        [
            {
                "tool_calls": [
                    {"name": "read", "arguments": {"path": notes}},
                    write("v2\n"),
                    {"name": "todo", "arguments": plan},
                ]
            },
            {"text": "wrote v2"},
            {"tool_calls": [{"name": "read", "arguments": {"path": notes}}, write("v3\n")]},
            {"text": "wrote v3"},
            {"text": "fresh start"},
        ],
        mode="yolo",
    )


async def _rewind(env: AgentEnv, choice: str) -> tuple[list[Json], list[Json], str, list[Json]]:
    """Two turns that write notes.txt, then `/rewind 2` answered with `choice`; the rewind's
    updates, the permission requests, the session id, and the updates before the rewind."""
    (env.workspace / "notes.txt").write_bytes(b"v1\n")
    _rewind_script(env)
    async with open_agent(env) as client:
        await initialize(client)

        async def answer(client: AcpClient, params: Json) -> Json:
            return {"outcome": {"outcome": "selected", "optionId": choice}}

        client.handlers["session/request_permission"] = answer
        session_id = (await new_session(client, env))["sessionId"]
        await client.wait_for(lambda: "available_commands_update" in client.kinds(session_id))
        commands = {
            c["name"]: c
            for u in client.updates(session_id)
            if u["sessionUpdate"] == "available_commands_update"
            for c in u["availableCommands"]
        }
        assert commands["rewind"]["input"]["hint"] and commands["fork"]["input"]["hint"]
        await _prompt(client, session_id, "first")
        await _prompt(client, session_id, "second")
        listed_before = len(client.updates(session_id))
        await _prompt(client, session_id, "/rewind")
        assert "1. first\n2. second" in client.text(session_id)
        start = len(client.updates(session_id))
        assert start > listed_before
        # Listing the messages changes nothing: no plan sent again (issue 26.6).
        listing = client.updates(session_id)[listed_before:start]
        assert [u["sessionUpdate"] for u in listing] == ["agent_message_chunk"]
        before = client.updates(session_id)[:start]
        await _prompt(client, session_id, "/rewind 2")
        updates = client.updates(session_id)[start:]
        asked = [m["params"] for m in client.requests_named("session/request_permission")]
        await _prompt(client, session_id, "after")
    return updates, asked, session_id, before


async def test_rewind_with_files_restores_them_and_the_editor_is_shown_the_rewound_branch(
    agent_env: AgentEnv,
) -> None:
    updates, asked, session_id, before = await _rewind(agent_env, "rewind-files")
    # Neither rewind is a rejection, and the lighter one has the plain "allow" key.
    assert [(o["optionId"], o["kind"]) for o in asked[0]["options"]] == [
        ("rewind-conversation", "allow_once"),
        ("rewind-none", "reject_once"),
        ("rewind-files", "allow_always"),
    ]
    # The prompt names a call the editor was shown first.
    call_id = asked[0]["toolCall"]["toolCallId"]
    announced = [u for u in updates if u.get("toolCallId") == call_id]
    assert announced[0]["sessionUpdate"] == "tool_call"
    assert (agent_env.workspace / "notes.txt").read_bytes() == b"v2\n"
    text = "".join(
        u["content"]["text"] for u in updates if u["sessionUpdate"] == "agent_message_chunk"
    )
    assert "Rewound to before message 2" in text
    assert "Rewound. The conversation as it now stands" in text
    replayed_users = [
        u["content"]["text"] for u in updates if u["sessionUpdate"] == "user_message_chunk"
    ]
    assert replayed_users == ["first"]
    assert text.rstrip().endswith("End of the rewound conversation. —")
    # The question says which files a "yes" puts back.
    assert "notes.txt" in asked[0]["toolCall"]["title"]
    [files] = [o for o in asked[0]["options"] if o["optionId"] == "rewind-files"]
    assert files["name"] == "Rewind the conversation and restore notes.txt"
    # The re-rendered calls and messages have ids of their own (issue 26.6: Toad and Zed
    # updated the old cards): none was shown before, and each is the old id marked `~r1`.
    old_calls = {u["toolCallId"] for u in before if "toolCallId" in u}
    old_messages = {u["messageId"] for u in before if "messageId" in u}
    rerendered = [u for u in updates if u.get("toolCallId", "").endswith("~r1")]
    assert {u["toolCallId"].removesuffix("~r1") for u in rerendered} <= old_calls
    assert len(rerendered) == 3  # the first turn's read, write and todo
    for update in updates:
        if update.get("toolCallId") != call_id:
            assert update.get("toolCallId") not in old_calls
        assert update.get("messageId") not in old_messages

    # A load in a fresh process shows the rewound branch, with the prompt after it.
    async with open_agent(agent_env) as client:
        await initialize(client)
        await client.call(
            "session/load",
            {"sessionId": session_id, "cwd": str(agent_env.workspace), "mcpServers": []},
        )
        assert client.text(session_id, "user_message_chunk") == "firstafter"
        assert "wrote v3" not in client.text(session_id)


async def test_rewind_of_the_conversation_only_leaves_the_files(agent_env: AgentEnv) -> None:
    updates, asked, _, _ = await _rewind(agent_env, "rewind-conversation")
    assert len(asked) == 1
    assert (agent_env.workspace / "notes.txt").read_bytes() == b"v3\n"
    assert any(u["sessionUpdate"] == "user_message_chunk" for u in updates)


def _task_text(updates: list[Json], call_id: str = "task_1") -> str:
    """The text of a call's content as its last update left it."""
    last = [u for u in updates if u.get("toolCallId") == call_id and "content" in u][-1]
    return "\n".join(
        c["content"].get("text", "") for c in json_list(last["content"]) if c["type"] == "content"
    )


async def test_a_task_runs_in_a_child_session_linked_listed_and_loadable(
    agent_env: AgentEnv,
) -> None:
    """Issues 26.7 and 31.9: the subagent's calls are listed inside the task call (not as the
    main agent's cards), live and on reload alike; its answer is shown once; no `earshot://`
    link (Zed hands it to the OS); its session is left out of the default `session/list`."""
    (agent_env.workspace / "a.txt").write_text("alpha\n", encoding="utf-8")
    task = {
        "id": "task_1",
        "name": "task",
        "arguments": {"description": "Survey", "prompt": "List the project"},
    }
    agent_env.script(
        [
            {"tool_calls": [task], "usage": {"input_tokens": 10, "output_tokens": 1}},
            {
                "tool_calls": [{"id": "c1", "name": "ls", "arguments": {"path": "."}}],
                "usage": {"input_tokens": 100, "output_tokens": 10},
            },
            {"text": "Only a.txt.", "usage": {"input_tokens": 200, "output_tokens": 20}},
            {
                "text": "The subagent found a.txt.",
                "usage": {"input_tokens": 30, "output_tokens": 3},
            },
        ]
    )
    async with open_agent(agent_env) as client:
        await initialize(client)
        parent = (await new_session(client, agent_env))["sessionId"]
        await _prompt(client, parent, "survey")
        updates = client.updates(parent)
        task_updates = [u for u in updates if u.get("toolCallId") == "task_1"]
        linked = [
            u for u in task_updates if "childSessionId" in u.get("_meta", {}).get("earshot", {})
        ]
        assert linked, task_updates
        child = linked[0]["_meta"]["earshot"]["childSessionId"]
        # The child's call is a line of the task's card, not a card of its own.
        assert not [u for u in updates if u.get("toolCallId") == "c1"]
        assert "earshot://" not in json.dumps(updates)
        live = task_updates[-1]
        text = _task_text(updates)
        assert "The subagent's work:\n\n- ✓ `List .`" in text, text
        assert f"Its session: `{child}`" in text
        assert text.count("Only a.txt.") == 1, text  # the answer, once
        # Usage rolled up: the parent's meter counts the child's calls.
        usage = [u for u in updates if u["sessionUpdate"] == "usage_update"]
        assert usage

        listed = await client.call("session/list", {"cwd": str(agent_env.workspace)})
        assert [row["sessionId"] for row in listed["sessions"]] == [parent]
        everything = await client.call(
            "session/list",
            {"cwd": str(agent_env.workspace), "_meta": {"earshot": {"children": True}}},
        )
        rows = {row["sessionId"]: row for row in everything["sessions"]}
        assert rows[child]["_meta"]["earshot"]["parent"] == {
            "sessionId": parent,
            "toolCallId": "task_1",
        }
        only = await client.call(
            "session/list",
            {"cwd": str(agent_env.workspace), "_meta": {"earshot": {"parentSessionId": parent}}},
        )
        assert [row["sessionId"] for row in only["sessions"]] == [child]

    async with open_agent(agent_env) as client:
        await initialize(client)
        await client.call(
            "session/load", {"sessionId": child, "cwd": str(agent_env.workspace), "mcpServers": []}
        )
        assert client.text(child, "user_message_chunk") == "List the project"
        assert client.text(child) == "Only a.txt."
        calls = [u for u in client.updates(child) if u["sessionUpdate"] == "tool_call"]
        assert [c["toolCallId"] for c in calls] == ["c1"]
        # The parent's replay shows the task as it was shown live.
        await client.call(
            "session/load", {"sessionId": parent, "cwd": str(agent_env.workspace), "mcpServers": []}
        )
        replayed = [u for u in client.updates(parent) if u.get("toolCallId") == "task_1"]
        assert [u["sessionUpdate"] for u in replayed] == ["tool_call"]
        assert replayed[0]["content"] == live["content"]
        assert replayed[0]["status"] == live["status"] == "completed"
        assert replayed[0]["_meta"]["earshot"]["childSessionId"] == child
        assert not [u for u in client.updates(parent) if u.get("toolCallId") == "c1"]


async def test_a_subagents_call_the_user_is_asked_about_gets_a_card_of_its_own(
    agent_env: AgentEnv,
) -> None:
    """A prompt names a card: the subagent's command is announced (marked as the subagent's)
    before the permission request, which says whose it is, and is finished after."""
    task = {
        "id": "task_1",
        "name": "task",
        "arguments": {"description": "Clean", "prompt": "Remove x", "tools": ["bash"]},
    }
    agent_env.script(
        [
            {"tool_calls": [task]},
            {"tool_calls": [{"id": "c1", "name": "bash", "arguments": {"command": "true"}}]},
            {"text": "Done."},
            {"text": "The subagent is done."},
        ]
    )
    async with open_agent(agent_env) as client:
        client.handlers["session/request_permission"] = _choose("allow_once")
        await initialize(client)
        parent = (await new_session(client, agent_env))["sessionId"]
        await _prompt(client, parent, "clean")
    updates = client.updates(parent)
    [asked] = client.requests_named("session/request_permission")
    own = [u for u in updates if u.get("toolCallId") == "c1"]
    assert own[0]["sessionUpdate"] == "tool_call"
    assert own[0]["_meta"]["earshot"]["parentToolCallId"] == "task_1"
    assert own[-1]["status"] == "completed"
    said = [c["content"]["text"] for c in asked["params"]["toolCall"]["content"] if "content" in c]
    assert "Asked by the subagent of “Task: Clean”." in said
    assert "- ✓ `true`" in _task_text(updates)


def _choose(option_id: str) -> Any:
    async def answer(client: AcpClient, params: Json) -> Json:
        return {"outcome": {"outcome": "selected", "optionId": option_id}}

    return answer


async def test_cancelling_the_parent_cancels_its_child_which_stays_loadable(
    agent_env: AgentEnv,
) -> None:
    task = {
        "id": "task_1",
        "name": "task",
        "arguments": {"description": "Survey", "prompt": "List the project"},
    }
    agent_env.script(
        [
            {"tool_calls": [task], "usage": {"input_tokens": 10, "output_tokens": 1}},
            {
                "tool_calls": [{"id": "c1", "name": "ls", "arguments": {"path": "."}}],
                "usage": {"input_tokens": 100, "output_tokens": 10},
            },
            {"text": "still looking", "hang": True},
        ]
    )
    async with open_agent(agent_env) as client:
        await initialize(client)
        parent = (await new_session(client, agent_env))["sessionId"]
        prompt = await client.start_request("session/prompt", text_prompt(parent, "survey"))

        def child_call_done() -> bool:
            tasks = [u for u in client.updates(parent) if u.get("toolCallId") == "task_1"]
            return bool(tasks) and "- ✓ `List .`" in _task_text(tasks)

        # The child's call is done; its next model call streams, then hangs.
        await client.wait_for(child_call_done)
        await client.notify("session/cancel", {"sessionId": parent})
        answer = await client.response(prompt)
        assert answer["result"] == {"stopReason": "cancelled"}
        linked = [
            u["_meta"]["earshot"]["childSessionId"]
            for u in client.updates(parent)
            if u.get("toolCallId") == "task_1" and "_meta" in u
        ]
        child = linked[0]

    # The child's file: its finished call, then nothing half-written; usage kept on it and
    # counted in the parent's.
    sessions = agent_env.data_home / "earshot" / "sessions"
    (child_file,) = sessions.glob(f"*/{child}.jsonl")
    (parent_file,) = sessions.glob(f"*/{parent}.jsonl")

    def usage_totals(path: Path) -> list[int]:
        lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()[1:]]
        return [
            line["data"]["input_tokens"]
            for line in lines
            if line["kind"] == "extension" and line["name"] == "usage"
        ]

    assert usage_totals(child_file)[-1] == 100
    assert usage_totals(parent_file)[-1] == 110
    async with open_agent(agent_env) as client:
        await initialize(client)
        await client.call(
            "session/load", {"sessionId": child, "cwd": str(agent_env.workspace), "mcpServers": []}
        )
        calls = [u for u in client.updates(child) if u["sessionUpdate"] == "tool_call"]
        assert [(c["toolCallId"], c["status"]) for c in calls] == [("c1", "completed")]
