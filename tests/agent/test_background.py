"""Background commands in a session, with the scripted model and the real sandbox when there is
one: a server is started, polled, killed, and another is gone when the session closes."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

import anyio
import pytest

from agent.events import AgentEvent, ToolCallFinished
from agent.session import AgentSession, SessionOptions, create_session
from agent.settings import Settings
from providers.types import JsonValue
from providers.wire.scripted import ScriptedCall, ScriptedModel, ScriptedTurn
from sessions import SessionStore
from tests.agent.loop_support import of
from tests.agent.sandbox_lab import LAB_PARENT, needs_linux

# A "server": says it is ready, then serves until stopped (its child too: the process group).
SERVER = "echo listening; sleep 300 & wait"


def call(name: str, arguments: dict[str, JsonValue], call_id: str) -> ScriptedTurn:
    return ScriptedTurn(tool_calls=[ScriptedCall(name=name, arguments=arguments, id=call_id)])


async def session(project: Path, turns: Sequence[ScriptedTurn]) -> AgentSession:
    model = ScriptedModel([*turns, ScriptedTurn(text="done")])
    return await create_session(
        store=SessionStore(project.parent / "data" / "sessions"),
        cwd=project,
        options=SessionOptions(model_name="scripted/test", mode="yolo"),
        model_factory=lambda name: model,
        settings=Settings(),
        data_dir=project.parent / "data",
    )


async def run(agent: AgentSession) -> dict[str, ToolCallFinished]:
    with anyio.fail_after(60):
        events: list[AgentEvent] = [event async for event in agent.run_turn("go")]
    return {event.call_id: event for event in of(ToolCallFinished, events)}


def alive(pid: int) -> bool:
    try:
        os.killpg(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root


def pid_of(finished: ToolCallFinished) -> int:
    raw = finished.raw_output
    assert isinstance(raw, dict)
    pid = raw["pid"]
    assert isinstance(pid, int)
    return pid


async def test_a_background_server_is_started_polled_and_killed(project: Path) -> None:
    turns = [
        call("bash", {"command": SERVER, "background": True}, "start"),
        call("bash_output", {"handle": "bg1", "wait": 30}, "poll"),
        call("bash_kill", {"handle": "bg1"}, "kill"),
        call("bash_output", {"handle": "bg1"}, "after"),
    ]
    agent = await session(project, turns)
    try:
        results = await run(agent)
        started = results["start"]
        assert started.status == "completed"
        assert "Started in the background" in started.result.text
        assert "`bg1`" in started.result.text
        poll = results["poll"].result.text
        assert poll.startswith("Still running.")
        assert "listening" in poll
        assert results["kill"].result.text.startswith("Stopped.")
        assert not alive(pid_of(started))
        assert "Exited" in results["after"].result.text
    finally:
        await agent.aclose()


async def test_background_commands_end_when_the_session_closes(project: Path) -> None:
    turns = [
        call("bash", {"command": SERVER, "background": True}, "start"),
        call("bash_output", {"handle": "bg1", "wait": 30}, "poll"),
    ]
    agent = await session(project, turns)
    try:
        results = await run(agent)
        pid = pid_of(results["start"])
        assert "listening" in results["poll"].result.text
        # The turn is over: the server still runs between turns.
        assert alive(pid)
    finally:
        await agent.aclose()
    assert not alive(pid)


async def test_an_unknown_handle_is_an_error_the_model_reads(project: Path) -> None:
    agent = await session(project, [call("bash_output", {"handle": "bg7"}, "poll")])
    try:
        results = await run(agent)
    finally:
        await agent.aclose()
    assert results["poll"].status == "failed"
    assert "No background command `bg7`" in results["poll"].result.text


@needs_linux
async def test_a_background_command_the_sandbox_stops_says_so(project: Path) -> None:
    with tempfile.TemporaryDirectory(dir=LAB_PARENT) as directory:
        await _stopped_by_the_sandbox(project, Path(directory))


async def _stopped_by_the_sandbox(project: Path, outside: Path) -> None:
    turns = [
        call("bash", {"command": f"echo x > {outside}/f", "background": True}, "start"),
        call("bash_output", {"handle": "bg1", "wait": 30, "until_exit": True}, "poll"),
    ]
    agent = await session(project, turns)
    try:
        results = await run(agent)
    finally:
        await agent.aclose()
    text = results["poll"].result.text
    assert text.startswith("Exited with code 1.")
    assert "The sandbox stopped this command" in text
    assert not (outside / "f").exists()
