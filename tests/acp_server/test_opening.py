"""A session is answered before it is built: `session/new` gives the id (its file already on
disk), the modes and the pickers from the settings, and the server then builds the session on the
event loop; until then it is *opening*, and every request for it waits (`acp_server.session_table`).

Tests that need the build held back use ports whose `open` of a new session waits for the test's
word.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any, TypeVar

import anyio
import pytest

from acp_server.ports import OpenedSession, Opening, Ports
from agent.session import AgentSession
from earshot.acp_main import EarshotProviders, EarshotSessions, EarshotWorkspaces
from providers.wire.sdk_model import SdkModel
from tests.acp_server.client import AcpClient, AgentEnv, initialize, json_list, open_agent
from tests.acp_server.test_sessions import text_prompt
from tests.earshot.support import text_reply
from tests.loopback import loopback

Json = dict[str, Any]


def new_params(env: AgentEnv, **extra: Any) -> Json:
    return {"cwd": str(env.workspace), "mcpServers": [], **extra}


def load_params(env: AgentEnv, session_id: str, **extra: Any) -> Json:
    return {"sessionId": session_id, **new_params(env, **extra)}


def without_id(result: Json) -> Json:
    return {key: value for key, value in result.items() if key != "sessionId"}


class HeldSessions(EarshotSessions):
    """earshot's sessions, whose `open` of a new session waits until the test lets it go."""

    def __init__(self, workspaces: EarshotWorkspaces) -> None:
        super().__init__(workspaces)
        self.building = anyio.Event()
        self.go = anyio.Event()

    async def open(self, opening: Opening) -> OpenedSession:
        if opening.new:
            self.building.set()
            await self.go.wait()
        return await super().open(opening)


SessionsT = TypeVar("SessionsT", bound=EarshotSessions)


def ports_with(
    sessions: Callable[[EarshotWorkspaces], SessionsT],
) -> tuple[list[SessionsT], Callable[[dict[str, str]], Ports]]:
    """earshot's ports with `sessions` made for them; the list gets each one made."""
    made: list[SessionsT] = []

    def make(environ: dict[str, str]) -> Ports:
        workspaces = EarshotWorkspaces(environ)
        made.append(sessions(workspaces))
        return Ports(
            workspaces=workspaces, sessions=made[-1], providers=EarshotProviders(workspaces)
        )

    return made, make


def held() -> tuple[list[HeldSessions], Callable[[dict[str, str]], Ports]]:
    return ports_with(HeldSessions)


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
async def test_the_answer_is_what_the_built_session_is(
    agent_env: AgentEnv, configure: Callable[[AgentEnv], None]
) -> None:
    configure(agent_env)
    extra = editor_params(agent_env)
    async with open_agent(agent_env) as client:
        await initialize(client)
        new = await client.call("session/new", new_params(agent_env, **extra))
        session_id = new["sessionId"]
        await client.wait_for(lambda: "available_commands_update" in client.kinds(session_id))
        # The session, built: a second server loads it with its state as the first built it.
        listed = await client.call("session/list", {"cwd": str(agent_env.workspace)})
    assert session_id in {item["sessionId"] for item in json_list(listed["sessions"])}
    async with open_agent(agent_env) as client:
        await initialize(client)
        loaded = await client.call("session/load", load_params(agent_env, session_id, **extra))
    assert without_id(new) == loaded


async def test_a_request_for_a_session_being_built_waits_for_it(agent_env: AgentEnv) -> None:
    agent_env.script([{"text": "Hello from the new session."}])
    factories, make = held()
    async with open_agent(agent_env, ports=make) as client:
        await initialize(client)
        session_id = (await client.call("session/new", new_params(agent_env)))["sessionId"]
        [factory] = factories
        with anyio.fail_after(30):
            await factory.building.wait()
        prompt = await client.start_request("session/prompt", text_prompt(session_id, "hi"))
        mode = await client.start_request(
            "session/set_mode", {"sessionId": session_id, "modeId": "plan"}
        )
        # Both are read and waiting for the build; nothing has answered them.
        await anyio.wait_all_tasks_blocked()
        assert not [m for m in client.messages if m.get("id") in (prompt, mode)]
        factory.go.set()
        assert (await client.response(prompt))["result"] == {"stopReason": "end_turn"}
        assert (await client.response(mode))["result"] == {}
        assert client.text(session_id) == "Hello from the new session."
        assert client.kinds(session_id).count("available_commands_update") == 1

    async with open_agent(agent_env) as client:
        await initialize(client)
        await client.call("session/load", load_params(agent_env, session_id))
        assert client.text(session_id) == "Hello from the new session."
        assert client.text(session_id, "user_message_chunk") == "hi"


async def test_sessions_asked_for_together_are_each_answered_and_built(
    agent_env: AgentEnv,
) -> None:
    agent_env.script([{"text": "one"}, {"text": "two"}])
    async with open_agent(agent_env) as client:
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


async def prompt_while_building(
    client: AcpClient, env: AgentEnv, factory: HeldSessions
) -> tuple[str, int]:
    await initialize(client)
    session_id = (await client.call("session/new", new_params(env)))["sessionId"]
    with anyio.fail_after(30):
        await factory.building.wait()
    prompt = await client.start_request("session/prompt", text_prompt(session_id, "hi"))
    await anyio.wait_all_tasks_blocked()
    return session_id, prompt


async def test_session_cancel_ends_a_prompt_waiting_for_the_build(agent_env: AgentEnv) -> None:
    agent_env.script([{"text": "never said"}])
    factories, make = held()
    async with open_agent(agent_env, ports=make) as client:
        session_id, prompt = await prompt_while_building(client, agent_env, factories[0])
        await client.notify("session/cancel", {"sessionId": session_id})
        assert (await client.response(prompt))["result"] == {"stopReason": "cancelled"}
        factories[0].go.set()
        # The session is built and answers afterwards; the cancelled prompt never ran.
        mode = {"sessionId": session_id, "modeId": "plan"}
        assert await client.call("session/set_mode", mode) == {}
        assert "never said" not in client.text(session_id)


async def test_cancel_request_ends_a_prompt_waiting_for_the_build(agent_env: AgentEnv) -> None:
    agent_env.script([{"text": "never said"}])
    factories, make = held()
    async with open_agent(agent_env, ports=make) as client:
        _, prompt = await prompt_while_building(client, agent_env, factories[0])
        await client.notify("$/cancel_request", {"requestId": prompt})
        assert (await client.response(prompt)).get("result") == {"stopReason": "cancelled"}
        factories[0].go.set()


async def test_a_session_that_cannot_be_built_says_why_on_every_request(
    agent_env: AgentEnv,
) -> None:
    # Answering reads the settings and credentials; building the model reads the script,
    # which is gone.
    agent_env.script([{"text": "unreachable"}]).unlink()
    async with open_agent(agent_env) as client:
        await initialize(client)
        session_id = (await client.call("session/new", new_params(agent_env)))["sessionId"]
        failure = await client.error("session/prompt", text_prompt(session_id, "hi"))
        again = await client.error("session/set_mode", {"sessionId": session_id, "modeId": "plan"})
        assert again == failure
        assert failure["code"] != -32002 and "script" in failure["message"]
        # The server keeps serving; once closed, the session is unknown.
        assert await client.call("session/close", {"sessionId": session_id}) == {}
        gone = await client.error("session/prompt", text_prompt(session_id, "hi"))
        assert gone["code"] == -32002
        assert await client.call("logout", {}) == {}
    assert "opening a session failed" in client.stderr


async def test_a_session_file_that_cannot_be_written_is_refused(agent_env: AgentEnv) -> None:
    agent_env.script([{"text": "unreachable"}])
    # The answer needs the session's file on disk: with no store directory to write to, the
    # request is refused (-32004) and the server keeps serving.
    (agent_env.data_home / "earshot").mkdir(parents=True)
    (agent_env.data_home / "earshot" / "sessions").write_text("not a directory", encoding="utf-8")
    async with open_agent(agent_env) as client:
        await initialize(client)
        error = await client.error("session/new", new_params(agent_env))
        assert error["code"] == -32004
        assert "could not be written" in error["message"]
        assert await client.call("logout", {}) == {}


async def test_input_closed_right_after_the_answer_leaves_a_loadable_session(
    agent_env: AgentEnv,
) -> None:
    # Nothing was said in the session: its build is abandoned at the end of input, but its file
    # was on disk before the answer, and its writer lock is let go.
    agent_env.script([{"text": "hello"}])
    async with open_agent(agent_env) as client:
        await initialize(client)
        session_id = (await client.call("session/new", new_params(agent_env)))["sessionId"]
        await client.close_stdin()
        await client.stopped()
    assert "failed" not in client.stderr
    async with open_agent(agent_env) as client:
        await initialize(client)
        listed = await client.call("session/list", {})
        assert [s["sessionId"] for s in listed["sessions"]] == [session_id]
        loaded = await client.call("session/load", load_params(agent_env, session_id))
        assert loaded["modes"]["currentModeId"] == "ask"
        assert await client.call("session/prompt", text_prompt(session_id, "hi")) == {
            "stopReason": "end_turn"
        }
        assert client.text(session_id) == "hello"


@pytest.mark.parametrize(
    ("params", "field"),
    [({"cwd": "relative/dir", "mcpServers": []}, "cwd"), ({"cwd": "/"}, "mcpServers")],
)
async def test_bad_session_new_params_name_the_field(
    agent_env: AgentEnv, params: Json, field: str
) -> None:
    agent_env.script([{"text": "hello"}])
    async with open_agent(agent_env) as client:
        await initialize(client)
        error = await client.error("session/new", params)
        assert (error["code"], error["data"]["field"]) == (-32602, field)
        assert (await client.call("session/new", new_params(agent_env)))["sessionId"]


class WatchedWarmUp(EarshotSessions):
    """earshot's sessions, noting each session whose warm-up they make and when it has run."""

    def __init__(self, workspaces: EarshotWorkspaces) -> None:
        super().__init__(workspaces)
        self.sessions: list[AgentSession] = []
        self.warmed = anyio.Event()

    def warm_up(self, session: AgentSession) -> Callable[[], None]:
        self.sessions.append(session)
        warm_up = super().warm_up(session)

        def run() -> None:
            warm_up()
            anyio.from_thread.run_sync(self.warmed.set)

        return run


async def test_once_open_the_models_client_is_built_off_the_loop_and_the_first_prompt_uses_it(
    agent_env: AgentEnv,
) -> None:
    with loopback(text_reply("warm")) as model:
        agent_env.write_settings(
            {
                "model": "local/test-model",
                "providers": {
                    "local": {"api": "openai-chat", "baseUrl": f"{model.url}/v1", "apiKey": "k"}
                },
            }
        )
        made, make = ports_with(WatchedWarmUp)

        async with open_agent(agent_env, ports=make) as client:
            await initialize(client)
            session_id = (await client.call("session/new", new_params(agent_env)))["sessionId"]
            [factory] = made
            with anyio.fail_after(30):
                await factory.warmed.wait()
            [session] = factory.sessions
            sdk_model = session.turn_config.model
            assert isinstance(sdk_model, SdkModel)
            warmed_client: object = sdk_model._client  # pyright: ignore[reportPrivateUsage, reportUnknownMemberType, reportUnknownVariableType]
            assert warmed_client is not None  # built before any prompt
            result = await client.call("session/prompt", text_prompt(session_id, "hi"))
            assert result["stopReason"] == "end_turn"
            assert client.text(session_id) == "warm"
            assert sdk_model._client is warmed_client  # pyright: ignore[reportPrivateUsage, reportUnknownMemberType]


class HeldWarmUp(EarshotSessions):
    """earshot's sessions, whose warm-up (in its worker thread) waits for the test's word."""

    def __init__(self, workspaces: EarshotWorkspaces) -> None:
        super().__init__(workspaces)
        self.entered = threading.Event()
        self.let_go = threading.Event()

    def warm_up(self, session: AgentSession) -> Callable[[], None]:
        warm_up = super().warm_up(session)

        def run() -> None:
            self.entered.set()
            assert self.let_go.wait(30)
            warm_up()

        return run


async def test_a_prompt_sent_with_the_new_session_waits_for_its_warm_up(
    agent_env: AgentEnv,
) -> None:
    # The prompt is read while the session is being built; once built, it must not start its
    # turn beside the warm-up's thread (both would load the tool modules and process their
    # record classes at once: a turn ended with pydantic's "schema-for-unknown-type").
    agent_env.script([{"text": "Hello after the warm-up."}])
    made, make = ports_with(HeldWarmUp)
    async with open_agent(agent_env, ports=make) as client:
        await initialize(client)
        session_id = (await client.call("session/new", new_params(agent_env)))["sessionId"]
        prompt = await client.start_request("session/prompt", text_prompt(session_id, "hi"))
        [sessions] = made
        with anyio.fail_after(30):
            assert await anyio.to_thread.run_sync(sessions.entered.wait, 30)
        await anyio.wait_all_tasks_blocked()
        assert not [m for m in client.messages if m.get("id") == prompt]
        assert client.text(session_id) == ""  # the model was not called
        sessions.let_go.set()
        assert (await client.response(prompt))["result"] == {"stopReason": "end_turn"}
        assert client.text(session_id) == "Hello after the warm-up."
