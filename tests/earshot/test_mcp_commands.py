"""MCP prompts as slash commands and `/mcp` (issue 17), against the suite's real MCP server."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest

from acp_server.ports import McpStdioServer
from agent.commands import parse_slash_command
from agent.events import AgentEvent, CommandOutput
from agent.session import AgentSession
from providers.types import TextPart
from providers.wire.scripted import ScriptedModel, ScriptedTurn
from tests.earshot.support import DEMO_SERVER, Env, make_env
from tests.earshot.test_mcp import PYTHON, demo, results, script, session_with, started


@pytest.fixture
def env(tmp_path: Path) -> Env:
    return make_env(tmp_path)


async def command(session: AgentSession, text: str) -> list[AgentEvent]:
    extras = [extra.name for extra in session.commands.all(session.skill_names)]
    call = parse_slash_command(text, session.skill_names, extras)
    assert call is not None and call.extra, f"{text} is not an extra command"
    with anyio.fail_after(60):
        return [event async for event in session.run_command(call)]


def said(events: list[AgentEvent]) -> CommandOutput:
    [output] = [event for event in events if isinstance(event, CommandOutput)]
    return output


def prompt_text(model: ScriptedModel) -> str:
    message = model.requests[-1].messages[-1]
    return "".join(part.text for part in message.parts if isinstance(part, TextPart))


async def test_an_mcp_prompt_is_a_command_whose_messages_are_the_turns_input(env: Env) -> None:
    model = ScriptedModel([ScriptedTurn(text="reviewed"), ScriptedTurn(text="again")])
    async with session_with(env, model, [demo()]) as session:
        await started(session)
        [review] = [c for c in session.commands.all() if c.name == "mcp__demo__review"]
        assert review.hint == "path [focus]"
        assert "Review a file" in review.description
        await command(session, "/mcp__demo__review src/app.py")
        assert prompt_text(model) == "Please review src/app.py, looking for bugs."
        await command(session, "/mcp__demo__review path=a.py focus=style")
        assert prompt_text(model) == "Please review a.py, looking for style."
        missing = said(await command(session, "/mcp__demo__review"))
        assert "missing path" in missing.text
    assert len(model.requests) == 2  # the refused one called no model


async def test_mcp_lists_servers_with_their_status_and_restarts_one(env: Env) -> None:
    pid_file = env.root / "demo.pid"
    server = McpStdioServer(
        name="demo",
        command=PYTHON,
        args=(str(DEMO_SERVER),),
        env=(("DEMO_PID_FILE", str(pid_file)),),
    )
    broken = McpStdioServer(name="missing", command="/nonexistent/earshot-mcp")
    model = script(("mcp__demo__add", {"a": 40, "b": 2}))
    async with session_with(env, model, [server, broken], mcp_timeout=3600) as session:
        await started(session)
        status = said(await command(session, "/mcp"))
        assert status.data is not None
        servers = {s["name"]: s for s in status.data["mcpServers"]}  # type: ignore[union-attr]
        assert servers["demo"]["status"] == "connected"
        assert servers["demo"]["prompts"] == 1 and servers["demo"]["tools"] >= 4
        assert servers["missing"]["status"] == "failed"
        assert "not found" in servers["missing"]["error"]
        assert "- demo (stdio, from editor): connected" in status.text
        first = int(pid_file.read_text(encoding="utf-8"))

        restarted = said(await command(session, "/mcp restart demo"))
        assert "Restarted 'demo'." in restarted.text
        assert int(pid_file.read_text(encoding="utf-8")) != first
        with pytest.raises(ProcessLookupError):
            os.kill(first, 0)
        # The session's tool for that server calls the new connection.
        with anyio.fail_after(30):
            [event async for event in session.run_turn("add")]
        assert results(model)["call_0"].text == "42"
        unknown = said(await command(session, "/mcp restart nobody"))
        assert "No MCP server named 'nobody'" in unknown.text
