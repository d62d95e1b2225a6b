"""Nothing outlives earshot: a background command's detached processes (`setsid`, a double fork),
with the sandbox off, end when the session closes, when earshot's input ends and when it gets
SIGTERM; an editor terminal earshot created is killed and released before earshot exits. Real
processes (`earshot --stdio` where the process's own end is the point), awaited on pidfds."""

from __future__ import annotations

import signal
import sys
from typing import Any

import anyio
import pytest

from tests.acp_server.client import (
    FULL_CAPABILITIES,
    AcpClient,
    AgentEnv,
    initialize,
    open_agent,
    spawn_agent,
)
from tests.acp_server.test_sessions import new_session, text_prompt
from tests.acp_server.test_tools import bash_call
from tests.agent.test_background_lifetime import detaching, running_with
from tests.processes import Fifo, until_gone

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="subreapers: Linux")


async def start_lingering(
    client: AcpClient, env: AgentEnv, capabilities: dict[str, Any] | None
) -> tuple[str, list[int]]:
    """A session whose first turn leaves a background command with three lingering processes;
    their pids once all three run."""
    fifo = Fifo(env.workspace / "ready")
    try:
        command, marker = detaching(fifo.path)
        env.script(
            [{"tool_calls": [bash_call(command, background=True)]}, {"text": "started"}],
            mode="yolo",
            extra={"sandbox": {"enabled": False}},
        )
        await initialize(client, capabilities)
        session_id = (await new_session(client, env))["sessionId"]
        result = await client.call("session/prompt", text_prompt(session_id, "start"))
        assert result["stopReason"] == "end_turn"
        for _ in range(3):
            await fifo.wait()
    finally:
        fifo.close()
    pids = [pid for pid in running_with(marker) if not _is_reaper(pid)]
    assert len(pids) >= 3
    return session_id, pids


def _is_reaper(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return b"reaper.py" in handle.read()
    except OSError:
        return True


async def test_an_editor_terminals_processes_end_when_the_session_closes(
    agent_env: AgentEnv,
) -> None:
    # The editor kills a terminal with SIGKILL (as this test editor does): earshot first ends
    # the command through its reaper, which takes the detached processes with it.
    async with open_agent(agent_env) as client:
        session_id, pids = await start_lingering(client, agent_env, FULL_CAPABILITIES)
        assert len(client.requests_named("terminal/create")) == 1
        assert await client.call("session/close", {"sessionId": session_id}) == {}
        await until_gone(pids)
        [terminal] = client.terminals.values()
        assert terminal.released


async def test_sigterm_kills_and_releases_editor_terminals_before_earshot_exits(
    agent_env: AgentEnv,
) -> None:
    async with spawn_agent(agent_env) as client:
        _, pids = await start_lingering(client, agent_env, FULL_CAPABILITIES)
        assert client.process is not None
        client.process.send_signal(signal.SIGTERM)
        with anyio.fail_after(30):
            await client.process.wait()
        assert client.process.returncode == 128 + signal.SIGTERM
        kills = [r["params"]["terminalId"] for r in client.requests_named("terminal/kill")]
        releases = [r["params"]["terminalId"] for r in client.requests_named("terminal/release")]
        assert kills == ["term-1"] and releases == ["term-1"]
        await until_gone(pids)


async def test_background_processes_end_when_earshots_input_ends(agent_env: AgentEnv) -> None:
    async with spawn_agent(agent_env) as client:
        _, pids = await start_lingering(client, agent_env, None)
        assert client.process is not None
        await client.close_stdin()
        with anyio.fail_after(30):
            await client.process.wait()
        await until_gone(pids)
