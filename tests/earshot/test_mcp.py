"""MCP servers as tools, against real servers: the suite's own (SDK server API) over stdio and
streamable HTTP, and the published `mcp-server-time`, called in real turns."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncGenerator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_server.factory import McpRemoteServer, McpServerSpec, McpStdioServer
from agent.backends import DenyingInteraction
from agent.events import AgentEvent, Notice, ToolCallFinished
from agent.session import AgentSession
from agent.tasks import SessionTasks
from earshot.compose import Composition, open_session
from earshot.mcp_connections import connect_servers
from earshot.mcp_tools import StdioServer, tool_name
from providers.model import Model
from providers.types import ImagePart, TextPart, ToolResultPart
from providers.wire.scripted import ScriptedCall, ScriptedModel, ScriptedTurn
from sessions import SessionStore
from tests.earshot.support import (
    DEMO_SERVER,
    Env,
    earshot,
    make_env,
    text_reply,
    tool_messages,
    tool_reply,
)
from tests.loopback import loopback

PYTHON = sys.executable


@pytest.fixture
def env(tmp_path: Path) -> Env:
    return make_env(tmp_path)


class ScriptedComposition(Composition):
    """The real composition, with the scripted model in place of a provider."""

    def __init__(self, env: Env, model: ScriptedModel) -> None:
        super().__init__(
            env.workspace,
            Composition.load(env.workspace, environ=env.environ()).settings,
            env.environ(),
        )
        self._model = model

    def model_factory(self) -> Callable[[str], Model]:
        return lambda name: self._model


def script(*calls: tuple[str, dict[str, Any]]) -> ScriptedModel:
    return ScriptedModel(
        [
            ScriptedTurn(
                tool_calls=[
                    ScriptedCall(name=name, arguments=arguments, id=f"call_{index}")
                    for index, (name, arguments) in enumerate(calls)
                ]
            ),
            ScriptedTurn(text="done"),
        ]
    )


@asynccontextmanager
async def session_with(
    env: Env,
    model: ScriptedModel,
    client_servers: Sequence[McpServerSpec] = (),
    *,
    mcp_timeout: float = 60,
    mcp_wait: float = 60,
) -> AsyncGenerator[AgentSession]:
    """A session with these servers; the start timeout and the first turn's wait for the
    servers are hang detectors by default (a Python server importing the SDK can take seconds on
    a loaded machine): the first turn has every server that starts."""
    composition = ScriptedComposition(env, model)
    async with SessionTasks() as tasks:  # the session's block: the MCP clients run there
        yield await open_session(
            composition,
            store=SessionStore(env.data_home / "sessions"),
            model_name="scripted/test",
            client_servers=client_servers,
            tasks=tasks,
            interaction=DenyingInteraction(),
            mcp_timeout=mcp_timeout,
            mcp_wait=mcp_wait,
        )


async def started(session: AgentSession) -> None:
    """Wait for the servers as the first turn would: each has started or failed (its tools join
    at the first model request)."""
    with anyio.fail_after(60):
        await session.tool_arrivals.settle()


def offered(model: ScriptedModel, request: int = 0) -> list[str]:
    """The names of the tools the model was offered in a request."""
    return [spec.name for spec in model.requests[request].tools]


async def run_turn(session: AgentSession, prompt: str = "go") -> list[AgentEvent]:
    with anyio.fail_after(30):
        return [event async for event in session.run_turn(prompt)]


def results(model: ScriptedModel) -> dict[str, ToolResultPart]:
    found: dict[str, ToolResultPart] = {}
    for message in model.requests[-1].messages:
        for part in message.parts:
            if isinstance(part, ToolResultPart):
                found[part.tool_call_id] = part
    return found


def demo(name: str = "demo", *args: str) -> McpStdioServer:
    return McpStdioServer(name=name, command=PYTHON, args=(str(DEMO_SERVER), *args))


@asynccontextmanager
async def http_demo() -> AsyncGenerator[str]:
    """The demo server over streamable HTTP on 127.0.0.1; yields its URL."""
    async with await anyio.open_process([PYTHON, str(DEMO_SERVER), "--http"]) as process:
        try:
            assert process.stdout is not None
            with anyio.fail_after(20):
                data = b""
                while not data.endswith(b"\n"):
                    data += await process.stdout.receive()
            yield f"http://127.0.0.1:{int(data.strip())}/mcp"
        finally:
            process.terminate()
            with anyio.CancelScope(shield=True):
                await process.wait()


# ------------------------------------------------------------------------------- tests


def test_tool_names_are_safe_for_vendors_and_rules() -> None:
    assert tool_name("time", "get_current_time") == "mcp__time__get_current_time"
    assert tool_name("my server", "do.it") == "mcp__my_server__do_it"
    assert tool_name("a__b", "t") == "mcp__a__b__t"  # rules match configured names
    assert len(tool_name("s" * 80, "t" * 80)) == 64


async def test_client_servers_stdio_and_http_are_called_in_a_turn(env: Env) -> None:
    model = script(
        ("mcp__demo__add", {"a": 2, "b": 40}),
        ("mcp__web__add", {"a": 1, "b": 1}),
        ("mcp__demo__picture", {}),
        ("mcp__demo__fail", {"reason": "test"}),
    )
    async with http_demo() as url:
        servers = [demo(), McpRemoteServer(name="web", url=url, transport="http")]
        async with session_with(env, model, servers) as session:
            events = await run_turn(session)
    assert {"mcp__demo__add", "mcp__web__shout", "mcp__demo__picture"} <= set(offered(model))
    assert [e.reason for e in events if e.kind == "turn_end"] == ["end_turn"]
    found = results(model)
    assert found["call_0"].text == "42" and not found["call_0"].is_error
    assert found["call_1"].text == "2"
    picture = found["call_2"].content
    assert isinstance(picture[0], TextPart) and picture[0].text == "a tiny picture"
    assert isinstance(picture[1], ImagePart) and picture[1].media_type == "image/png"
    assert isinstance(picture[2], TextPart) and "notes body" in picture[2].text
    assert found["call_3"].is_error and "failed on purpose" in found["call_3"].text
    # The schema the model saw is the server's own.
    spec = next(s for s in model.requests[0].tools if s.name == "mcp__demo__add")
    assert spec.input_schema["required"] == ["a", "b"]


async def test_settings_servers_and_the_published_time_server(env: Env) -> None:
    env.write_settings(
        {"mcpServers": {"time": {"command": PYTHON, "args": ["-m", "mcp_server_time"]}}}
    )
    model = script(("mcp__time__get_current_time", {"timezone": "Etc/UTC"}))
    async with session_with(env, model) as session:
        events = await run_turn(session)
    finished = [e for e in events if isinstance(e, ToolCallFinished)]
    assert [e.status for e in finished] == ["completed"]
    assert "Etc/UTC" in results(model)["call_0"].text


async def test_only_read_only_tools_skip_the_permission_gate(env: Env) -> None:
    model = script(("mcp__demo__add", {"a": 1, "b": 2}), ("mcp__demo__shout", {"text": "hi"}))
    async with session_with(env, model, [demo()]) as session:
        events = await run_turn(session)
    status = {e.call_id: e.status for e in events if isinstance(e, ToolCallFinished)}
    assert status == {"call_0": "completed", "call_1": "denied"}


async def test_an_allow_rule_lets_a_mutating_mcp_tool_run(env: Env) -> None:
    env.write_settings({"permissions": {"allow": ["mcp__demo"]}})
    model = script(("mcp__demo__shout", {"text": "hi"}))
    async with session_with(env, model, [demo()]) as session:
        await run_turn(session)
    assert results(model)["call_0"].text == "HI"


async def test_failing_servers_are_reported_and_do_not_block_the_session(env: Env) -> None:
    model = script(("mcp__demo__add", {"a": 1, "b": 2}))
    servers = [
        demo(),
        McpStdioServer(name="missing", command="/nonexistent/earshot-mcp"),
        demo("crashy", "--crash"),
    ]
    # Failures are known at once: the session does not wait out the (hour-long) timeout.
    with anyio.fail_after(30):
        async with session_with(env, model, servers, mcp_timeout=3600) as session:
            events = await run_turn(session)
            again = await run_turn(session)
    notices = [e.message for e in events if isinstance(e, Notice)]
    assert any("'missing'" in n and "not found" in n for n in notices)
    assert any("'crashy'" in n for n in notices)
    assert not [e for e in again if isinstance(e, Notice)]  # said once
    assert results(model)["call_0"].text == "3"


async def test_a_silent_server_is_given_up_after_the_timeout(env: Env) -> None:
    silent = McpStdioServer(
        name="silent", command=PYTHON, args=("-c", "import time; time.sleep(60)")
    )
    model = ScriptedModel([ScriptedTurn(text="done")])
    # A hang detector well below the server's 60 s: the timeout, not the server, ends the wait.
    with anyio.fail_after(30):
        async with session_with(env, model, [silent], mcp_timeout=0.5) as session:
            assert not [name for name in session.tools if name.startswith("mcp__")]
            events = await run_turn(session)
    notices = [e.message for e in events if isinstance(e, Notice)]
    assert any("'silent'" in n and "did not start within 0.5 s" in n for n in notices)


async def test_connections_close_with_the_session(env: Env) -> None:
    pid_file = env.root / "demo.pid"
    server = McpStdioServer(
        name="demo",
        command=PYTHON,
        args=(str(DEMO_SERVER),),
        env=(("DEMO_PID_FILE", str(pid_file)),),
    )
    async with session_with(env, script(), [server]) as session:
        await started(session)
        pid = int(pid_file.read_text(encoding="utf-8"))
        os.kill(pid, 0)  # alive while the session is open
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


async def test_connect_servers_without_servers_is_immediate() -> None:
    async with anyio.create_task_group() as tasks:
        # Nothing to wait for: an hour-long timeout must not be waited out.
        with anyio.fail_after(30):
            connections = await connect_servers([], spawn=tasks.start_soon, timeout=3600)
        assert connections.tools == [] and connections.failures == []


async def test_a_server_dying_mid_session_fails_its_calls_cleanly(env: Env) -> None:
    pid_file = env.root / "demo.pid"
    server = StdioServer(
        name="demo",
        command=PYTHON,
        args=(str(DEMO_SERVER),),
        env=(("DEMO_PID_FILE", str(pid_file)),),
    )
    async with anyio.create_task_group() as tasks:
        connections = await connect_servers([server], spawn=tasks.start_soon, timeout=60)
        add = next(tool for tool in connections.tools if tool.name == "mcp__demo__add")
        os.kill(int(pid_file.read_text(encoding="utf-8")), 9)
        from agent.tools import ToolError

        with anyio.fail_after(10), pytest.raises(ToolError, match="demo"):
            await add.execute(add.input_model.model_validate({"a": 1, "b": 2}), None)  # pyright: ignore[reportArgumentType]
        await connections.aclose()
        tasks.cancel_scope.cancel()


async def test_print_mode_calls_settings_mcp_tools_and_reports_a_broken_server(env: Env) -> None:
    with loopback(
        tool_reply(
            ("call_1", "mcp__time__get_current_time", {"timezone": "Etc/UTC"}),
            ("call_2", "mcp__demo__add", {"a": 20, "b": 22}),
        ),
        text_reply("It is time."),
    ) as server:
        env.local_provider(
            server.url,
            mcp={"startupWait": 60},  # a hang detector: the first request has every server
            mcpServers={
                "time": {"command": PYTHON, "args": ["-m", "mcp_server_time"]},
                "demo": {"command": PYTHON, "args": [str(DEMO_SERVER)]},
                "broken": {"command": "/nonexistent/earshot-mcp"},
            },
        )
        run = await earshot(env, "-p", "what time is it?")
    assert run.code == 0, run.stderr
    assert run.stdout == "It is time.\n"
    assert "'broken'" in run.stderr
    first = server.requests[0].json()
    names = {tool["function"]["name"] for tool in first["tools"]}
    assert {"mcp__time__get_current_time", "mcp__demo__add"} <= names
    by_id = {m["tool_call_id"]: str(m["content"]) for m in tool_messages(server.requests[1].json())}
    assert "Etc/UTC" in by_id["call_1"]
    assert "42" in by_id["call_2"]


async def test_acp_factory_connects_settings_and_client_servers(env: Env) -> None:
    """Through the ACP session factory: a settings server and an editor-sent server, both called
    in a turn by a scripted provider configured in settings."""
    import json

    from acp_server.factory import SessionIO
    from earshot.acp_main import EarshotFactory

    script_path = env.root / "script.json"
    script_path.write_text(
        json.dumps(
            {
                "turns": [
                    {
                        "tool_calls": [
                            {
                                "name": "mcp__time__get_current_time",
                                "arguments": {"timezone": "Etc/UTC"},
                            },
                            {"name": "mcp__demo__add", "arguments": {"a": 40, "b": 2}},
                        ]
                    },
                    {"text": "done"},
                ]
            }
        ),
        encoding="utf-8",
    )
    env.write_settings(
        {
            "model": "fake/test",
            "providers": {"fake": {"api": "scripted", "script": str(script_path)}},
            "mcpServers": {"time": {"command": PYTHON, "args": ["-m", "mcp_server_time"]}},
            "mcp": {"startupWait": 60},
        }
    )
    status: list[str] = []
    texts: list[str] = []
    async with SessionTasks() as tasks:
        factory = EarshotFactory(environ=env.environ())
        session = await factory.create(
            cwd=env.workspace,
            additional_directories=(),
            mcp_servers=[demo()],
            io=SessionIO(files=None, processes=None, interaction=DenyingInteraction(), tasks=tasks),
        )
        events = await run_turn(session)
        status = [e.status for e in events if isinstance(e, ToolCallFinished)]
        texts = [
            part.text
            for message in session.history()
            for part in message.parts
            if isinstance(part, ToolResultPart)
        ]
    assert status == ["completed", "completed"]
    assert any("Etc/UTC" in text for text in texts)
    assert "42" in texts
