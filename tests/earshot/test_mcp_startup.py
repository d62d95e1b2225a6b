"""A slow or broken MCP server never holds a turn (issue 30), against real server processes
(`mcp_stub_server.py`: raw JSON-RPC, no SDK to import). Events, not clocks: a server that is
"slow" is held at a named pipe the test opens when it chooses; the timeouts here are short so the
failing servers fail fast, and no assertion depends on how long anything took."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path
from typing import Any, cast

import anyio
import anyio.to_thread
import pytest

from acp_server.ports import McpStdioServer
from agent.commands import parse_slash_command
from agent.events import AgentEvent, CommandOutput, Notice, ToolCallFinished, ToolCallRunning
from agent.session import AgentSession
from providers.types import ModelRequest
from providers.wire.scripted import ScriptedCall, ScriptedModel, ScriptedTurn, TurnSpec
from tests.earshot.support import HERE, Env, earshot, make_env, text_reply, tool_reply
from tests.earshot.test_mcp import offered, results, run_turn, script, session_with
from tests.loopback import Recorded, Reply, loopback

STUB = HERE / "mcp_stub_server.py"
GATE_SECONDS = 30.0
"""A hang detector for the named-pipe handshakes."""


@pytest.fixture
def env(tmp_path: Path) -> Env:
    return make_env(tmp_path)


def stub(name: str, mode: str, *args: str) -> McpStdioServer:
    return McpStdioServer(name=name, command=sys.executable, args=(str(STUB), mode, *args))


def fifo(env: Env, name: str) -> Path:
    path = env.root / name
    os.mkfifo(path)
    return path


def pipe_handshake(path: Path, *, write: bool) -> None:
    """Open the named pipe (waiting for the server to open its end) and close it; in a thread.
    On a hang the pipe is opened from this side too, so the blocked thread ends."""
    done = threading.Event()

    def handshake() -> None:
        open(path, "w" if write else "r", encoding="utf-8").close()
        done.set()

    thread = threading.Thread(target=handshake, daemon=True)
    thread.start()
    if not done.wait(GATE_SECONDS):
        os.close(os.open(path, (os.O_RDONLY if write else os.O_RDWR) | os.O_NONBLOCK))
        raise TimeoutError(f"nobody opened {path.name}")


async def open_gate(path: Path) -> None:
    """Let the gated server answer `initialize`."""
    await anyio.to_thread.run_sync(lambda: pipe_handshake(path, write=True))


async def command(session: AgentSession, text: str) -> CommandOutput:
    extras = [extra.name for extra in session.commands.all(session.skill_names)]
    call = parse_slash_command(text, session.skill_names, extras)
    assert call is not None and call.extra
    with anyio.fail_after(60):
        events = [event async for event in session.run_command(call)]
    [output] = [event for event in events if isinstance(event, CommandOutput)]
    return output


def notices(events: list[AgentEvent]) -> list[Notice]:
    return [event for event in events if isinstance(event, Notice)]


async def test_the_first_request_does_not_wait_for_a_slow_server_whose_tools_join_later(
    env: Env,
) -> None:
    gate = fifo(env, "gate")
    joined = anyio.Event()
    sessions: list[AgentSession] = []

    async def play(request: ModelRequest) -> TurnSpec:
        if len(model.requests) == 1:
            # The model has the prompt while the server is held at its gate: let it start,
            # and go on once its tools have arrived (they join at the next request).
            sessions[0].tool_arrivals.watch(joined.set)
            await open_gate(gate)
            with anyio.fail_after(GATE_SECONDS):
                await joined.wait()
            return ScriptedTurn(tool_calls=[ScriptedCall(name="ls", arguments={}, id="c1")])
        if len(model.requests) == 2:
            call = ScriptedCall(name="mcp__slow__echo", arguments={"text": "hi"}, id="c2")
            return ScriptedTurn(tool_calls=[call])
        return ScriptedTurn(text="done")

    model = ScriptedModel(play)
    async with session_with(env, model, [stub("slow", "gate", str(gate))], mcp_wait=0.05) as s:
        sessions.append(s)
        events = await run_turn(s)
    first, second = offered(model, 0), offered(model, 1)
    assert not [name for name in first if name.startswith("mcp__")]
    assert second == [*first, "mcp__slow__echo"]  # at the end: the earlier prefix unchanged
    assert results(model)["c2"].text == "echo: hi"
    [said] = notices(events)
    assert said.severity == "info" and said.prominent
    assert said.message.startswith("MCP server 'slow' has started: its tool can be used")


async def test_servers_that_fail_are_reported_once_with_why_and_offer_no_tool(env: Env) -> None:
    servers = [stub("silent", "never"), stub("gone", "exit"), stub("mute", "hang-list")]
    model = ScriptedModel([ScriptedTurn(text="one"), ScriptedTurn(text="two")])
    # The first turn waits for all of them (a hang detector); they fail within 0.3 s.
    async with session_with(env, model, servers, mcp_timeout=0.3) as session:
        first = await run_turn(session)
        status = await command(session, "/mcp")
        second = await run_turn(session)
    said = {n.message.split("'")[1]: n.message for n in notices(first)}
    assert set(said) == {"silent", "gone", "mute"}
    assert "did not start within 0.3 s" in said["silent"]
    assert "closed the connection before answering" in said["gone"]
    assert "did not start within 0.3 s" in said["mute"]  # listed no tools: offers none
    assert all("`/mcp restart" in message for message in said.values())
    assert not [name for name in offered(model) if name.startswith("mcp__")]
    assert not notices(second)  # said once
    assert status.data is not None
    shown = cast("list[dict[str, Any]]", status.data["mcpServers"])
    servers_shown = {server["name"]: server for server in shown}
    assert {s["status"] for s in servers_shown.values()} == {"failed"}
    assert "did not start within 0.3 s" in servers_shown["mute"]["error"]
    assert "- gone (stdio, from editor): failed: it closed the connection" in status.text


async def test_restart_retries_a_failed_server_and_its_tools_join_at_the_end(env: Env) -> None:
    marker = env.root / "flaky-started"
    servers = [stub("flaky", "flaky", str(marker)), stub("steady", "serve")]
    model = ScriptedModel(
        [
            ScriptedTurn(text="one"),
            ScriptedTurn(
                tool_calls=[ScriptedCall(name="mcp__flaky__echo", arguments={"text": "x"}, id="e")]
            ),
            ScriptedTurn(text="two"),
        ]
    )
    async with session_with(env, model, servers) as session:
        first = await run_turn(session)
        restarted = await command(session, "/mcp restart flaky")
        second = await run_turn(session)
    assert [n.message.split("'")[1] for n in notices(first)] == ["flaky"]
    assert "Restarted 'flaky': its tool can be used from the next request." in restarted.text
    assert offered(model, 1) == [*offered(model, 0), "mcp__flaky__echo"]
    assert "mcp__steady__echo" in offered(model, 0)
    assert results(model)["e"].text == "echo: x"
    assert not notices(second)  # the command said it


async def test_cancel_ends_a_turn_blocked_in_a_hung_tool_call(env: Env) -> None:
    model = script(("mcp__hung__wait", {}))
    events: list[AgentEvent] = []
    async with session_with(env, model, [stub("hung", "hang-call")]) as session:
        running = anyio.Event()

        async def consume() -> None:
            async for event in session.run_turn("go"):
                events.append(event)
                if isinstance(event, ToolCallRunning):
                    running.set()

        with anyio.fail_after(30):
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(consume)
                await running.wait()
                session.cancel()
        after = await run_turn(session, "again")  # the session goes on
    assert [e.reason for e in events if e.kind == "turn_end"] == ["cancelled"]
    [finished] = [e for e in events if isinstance(e, ToolCallFinished)]
    assert finished.call_id == "call_0" and finished.status != "completed"
    assert [e.reason for e in after if e.kind == "turn_end"] == ["end_turn"]


async def test_a_hung_tool_call_times_out_with_a_clear_error(env: Env) -> None:
    env.write_settings({"mcp": {"toolTimeout": 0.2}})
    model = script(("mcp__hung__wait", {}))
    async with session_with(env, model, [stub("hung", "hang-call")]) as session:
        await run_turn(session)
    result = results(model)["call_0"]
    assert result.is_error
    assert "'hung' did not answer the call to wait within 0.2 s" in result.text
    assert "mcp.toolTimeout" in result.text


async def test_print_mode_does_not_wait_for_a_slow_server_and_reports_a_broken_one(
    env: Env,
) -> None:
    gate, ready = fifo(env, "gate"), fifo(env, "ready")
    seen: list[list[str]] = []

    def respond(request: Recorded) -> Reply:
        tools = [tool["function"]["name"] for tool in request.json().get("tools", [])]
        seen.append(tools)
        if len(seen) == 1:
            # The model has the prompt while the server is held at its gate: let it start.
            pipe_handshake(gate, write=True)
            pipe_handshake(ready, write=False)  # it has listed its tools and prompts
        if "mcp__slow__echo" not in tools:
            # Its tools join at a request boundary: one more cheap call until they have.
            return tool_reply((f"c{len(seen)}", "ls", {}))
        if not any("mcp__slow__echo" in earlier for earlier in seen[:-1]):
            return tool_reply(("echo", "mcp__slow__echo", {"text": "hi"}))
        return text_reply("done")

    with loopback() as server:
        server.responder = respond
        env.local_provider(
            server.url,
            mcp={"startupWait": 0.05},
            mcpServers={
                "slow": {
                    "command": sys.executable,
                    "args": [str(STUB), "gate", str(gate), str(ready)],
                },
                "broken": {"command": sys.executable, "args": [str(STUB), "exit"]},
            },
        )
        run = await earshot(env, "-p", "go")
    assert run.code == 0, run.stderr
    assert run.stdout == "done\n"
    assert not [name for name in seen[0] if name.startswith("mcp__")]
    late = next(tools for tools in seen if "mcp__slow__echo" in tools)
    assert late == [*seen[0], "mcp__slow__echo"]
    assert run.stderr.count("MCP server 'slow' has started") == 1
    assert run.stderr.count("MCP server 'broken' is not available") == 1
