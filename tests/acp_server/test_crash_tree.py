"""Crash safety of the session tree: `earshot --stdio` killed with SIGKILL in the middle of a
subagent's child session, of a `session/fork` or of a `/rewind` leaves every session file of the
project loadable by a fresh process, every call in it with a final status.

Kill points are chosen by waiting on the protocol (after the Nth message the server wrote), never
by sleeping; N comes from a seeded schedule (EARSHOT_CRASH_SEED replays one).
"""

from __future__ import annotations

import os
import random
import secrets
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.acp_server.client import AcpClient, AgentEnv, spawn_agent
from tests.acp_server.test_crash import (
    FINAL,
    INITIALIZE,
    PATIENCE,
    final_statuses,
    replayed,
    rpc,
    transcript_lines,
)
from tests.acp_server.test_sessions import text_prompt

pytestmark = pytest.mark.skipif(os.name != "posix", reason="SIGKILL is POSIX")

SEED = int(os.environ.get("EARSHOT_CRASH_SEED") or secrets.randbits(32))
KILL_POINTS = 6
PARALLEL = 2
Json = dict[str, Any]


def _task_script(workspace: Path) -> list[Json]:
    task = {
        "id": "task_1",
        "name": "task",
        "arguments": {"description": "Survey", "prompt": "List and read the notes"},
    }
    notes = str(workspace / "notes.txt")
    return [
        {"text": "Handing it over.", "chunk_size": 4, "tool_calls": [task]},
        {
            "text": "Looking at the files now.",
            "chunk_size": 3,
            "tool_calls": [
                {"id": "c_ls", "name": "ls", "arguments": {"path": "."}},
                {"id": "c_read", "name": "read", "arguments": {"path": notes}},
            ],
        },
        {"text": "The notes say hello, nothing more to it.", "chunk_size": 3},
        {"text": "The subagent read the notes.", "chunk_size": 5},
    ]


def _sessions_dir(env: AgentEnv) -> Path:
    return env.data_home / "earshot" / "sessions"


async def _kill_after(client: AcpClient, start: int, count: int, requests: Sequence[int]) -> None:
    """Kill the server once `count` messages have come since `start`, or once every one of
    `requests` is answered (a run may send fewer messages than the one that set the range:
    the command menu's and the title's updates come when they are ready)."""

    def reached() -> bool:
        answered = {m.get("id") for m in client.messages[start:] if "method" not in m}
        return (
            client.closed
            or len(client.messages) - start >= count
            or all(request in answered for request in requests)
        )

    await client.wait_for(reached, PATIENCE)
    client.process.kill()
    await client.process.wait()
    with anyio.fail_after(PATIENCE):
        while not client.closed:
            await client.wait_for(lambda: client.closed, PATIENCE)


async def _every_file_loads(env: AgentEnv, where: str) -> int:
    """Load every session file of the project in a fresh process; how many there were."""
    paths = sorted(_sessions_dir(env).glob("*/*.jsonl"))
    for path in paths:
        _, damaged = transcript_lines(path)
        assert damaged <= 1, f"{path.name} {where}"
    async with spawn_agent(env) as client:
        await rpc(client, "initialize", INITIALIZE)
        for path in paths:
            session_id = path.stem
            start = len(client.messages)
            await rpc(
                client,
                "session/load",
                {"sessionId": session_id, "cwd": str(env.workspace), "mcpServers": []},
            )
            calls = final_statuses(replayed(client, start, len(client.messages), session_id))
            for call_id, call in calls.items():
                assert call.get("status") in FINAL, f"{session_id} {call_id} {where}"
    return len(paths)


@pytest.mark.timeout(240)
async def test_sigkill_during_a_child_session_leaves_every_file_loadable(
    agent_env: AgentEnv,
) -> None:
    where = f"(seed {SEED}; rerun with EARSHOT_CRASH_SEED={SEED})"
    (agent_env.workspace / "notes.txt").write_text("hello\n", encoding="utf-8")
    agent_env.script(_task_script(agent_env.workspace))

    async def run(kill_after: int | None) -> int:
        async with spawn_agent(agent_env, check=False) as client:
            await rpc(client, "initialize", INITIALIZE)
            new: Json = {"cwd": str(agent_env.workspace), "mcpServers": []}
            session_id = (await rpc(client, "session/new", new))["sessionId"]
            start = len(client.messages)
            prompt = await client.start_request("session/prompt", text_prompt(session_id, "go"))
            if kill_after is None:
                await client.wait_for(
                    lambda: any(m.get("id") == prompt for m in client.messages), PATIENCE
                )
                return len(client.messages) - start
            await _kill_after(client, start, kill_after, [prompt])
        return 0

    whole = await run(None)
    assert whole > 10
    rng = random.Random(SEED)
    limiter = anyio.CapacityLimiter(PARALLEL)

    async def crash(point: int) -> None:
        async with limiter:
            await run(point)

    async with anyio.create_task_group() as group:
        for _ in range(KILL_POINTS):
            group.start_soon(crash, rng.randint(1, whole))
    # Parents and the children they got to start.
    assert await _every_file_loads(agent_env, where) > KILL_POINTS


def _edits_script(workspace: Path) -> list[Json]:
    notes = str(workspace / "notes.txt")

    def write(content: str) -> list[Json]:
        return [
            {"name": "read", "arguments": {"path": notes}},
            {"name": "write", "arguments": {"path": notes, "content": content}},
        ]

    return [
        {"tool_calls": write("v2\n")},
        {"text": "wrote v2"},
        {"tool_calls": write("v3\n")},
        {"text": "wrote v3"},
    ]


@pytest.mark.timeout(240)
async def test_sigkill_during_fork_and_rewind_leaves_every_file_loadable(
    agent_env: AgentEnv,
) -> None:
    where = f"(seed {SEED}; rerun with EARSHOT_CRASH_SEED={SEED})"
    notes = agent_env.workspace / "notes.txt"
    agent_env.script(_edits_script(agent_env.workspace), mode="yolo")
    rng = random.Random(SEED + 1)

    async def run(kill_after: int) -> None:
        notes.write_bytes(b"v1\n")
        async with spawn_agent(agent_env, check=False) as client:
            await rpc(client, "initialize", INITIALIZE)
            new: Json = {"cwd": str(agent_env.workspace), "mcpServers": []}
            session_id = (await rpc(client, "session/new", new))["sessionId"]
            await rpc(client, "session/prompt", text_prompt(session_id, "first"))
            await rpc(client, "session/prompt", text_prompt(session_id, "second"))
            start = len(client.messages)
            fork: Json = {**new, "sessionId": session_id}
            requests = await client.start_together(
                ("session/fork", fork),
                ("session/prompt", text_prompt(session_id, "/rewind 2 files")),
                ("session/fork", {**fork, "_meta": {"earshot": {"beforeUserMessage": 2}}}),
            )
            await _kill_after(client, start, kill_after, requests)

    for _ in range(KILL_POINTS // 2):
        # 0: killed as the requests arrive; later points land inside the fork's copy, the
        # rewind's file restore and leaf move, or the replay that follows it.
        await run(rng.randint(0, 12))
    assert await _every_file_loads(agent_env, where) >= KILL_POINTS // 2
