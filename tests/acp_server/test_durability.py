"""One writer per session, and a data dir that fills up or turns read-only, against real
processes: two `earshot --stdio` on one session, `earshot -p --resume` on a session an editor has
open, and a small tmpfs as the data dir."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.acp_server.client import AcpClient, AgentEnv, initialize, spawn_agent
from tests.acp_server.test_sessions import new_session, text_prompt

SESSION_BUSY = -32003
SESSION_NOT_SAVED = -32004

Json = dict[str, Any]


def session_file(env: AgentEnv, session_id: str) -> Path:
    (path,) = (env.data_home / "earshot" / "sessions").glob(f"*/{session_id}.jsonl")
    return path


def agent_text(client: AcpClient, session_id: str, since: int) -> str:
    return "".join(
        m["params"]["update"]["content"].get("text", "")
        for m in client.messages[since:]
        if m.get("method") == "session/update"
        and m["params"]["sessionId"] == session_id
        and m["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
    )


def entries(path: Path) -> list[Json]:
    """Every line after the header, each of which must be whole JSON."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()[1:]]


def user_texts(path: Path) -> list[str]:
    return [
        entry["message"]["parts"][0]["text"]
        for entry in entries(path)
        if entry.get("kind") == "message" and entry["message"]["role"] == "user"
    ]


async def test_a_second_process_gets_the_replay_but_never_appends(agent_env: AgentEnv) -> None:
    agent_env.script([{"text": "first"}, {"text": "second"}], mode="yolo")
    async with spawn_agent(agent_env) as holder:
        await initialize(holder)
        session_id = (await new_session(holder, agent_env))["sessionId"]
        await holder.call("session/prompt", text_prompt(session_id, "one"))
        path = session_file(agent_env, session_id)

        async with spawn_agent(agent_env) as other:
            await initialize(other)
            load: Json = {
                "sessionId": session_id,
                "cwd": str(agent_env.workspace),
                "mcpServers": [],
            }
            await other.call("session/load", load)
            assert agent_text(other, session_id, 0) == "first"  # the replay
            before = path.read_bytes()

            refused = await other.error("session/prompt", text_prompt(session_id, "intruder"))
            assert refused["code"] == SESSION_BUSY
            assert refused["data"]["holder"]["pid"] == holder.process.pid
            assert refused["data"]["holder"]["process"] == "earshot --stdio"
            assert f"earshot --stdio (pid {holder.process.pid}" in refused["message"]
            mode = {"sessionId": session_id, "modeId": "plan"}
            assert (await other.error("session/set_mode", mode))["code"] == SESSION_BUSY

            # `earshot -p --resume` (or `--continue`) in a terminal is refused the same way,
            # before it runs.
            for how in (["--resume", session_id], ["--continue"]):
                with anyio.fail_after(30):
                    run = await anyio.run_process(
                        [sys.executable, "-m", "earshot", "-p", "hi", *how],
                        cwd=agent_env.workspace,
                        env=agent_env.environ(),
                        check=False,
                    )
                assert run.returncode == 2
                assert f"earshot --stdio (pid {holder.process.pid}" in run.stderr.decode()
            assert path.read_bytes() == before

            # The holder's session stays usable.
            since = len(holder.messages)
            result = await holder.call("session/prompt", text_prompt(session_id, "two"))
            assert result == {"stopReason": "end_turn"}
            assert agent_text(holder, session_id, since) == "second"
            assert user_texts(path) == ["one", "two"]

            # Once the holder closes it, the other process takes it over, history and all.
            await holder.call("session/close", {"sessionId": session_id})
            result = await other.call("session/prompt", text_prompt(session_id, "three"))
            assert result == {"stopReason": "end_turn"}
            assert user_texts(path) == ["one", "two", "three"]
            lines = entries(path)
            for previous, line in zip(lines, lines[1:], strict=False):
                assert line["parent_id"] == previous["id"]  # one chain: no interleaving


# ------------------------------------------------------------------------ a small tmpfs


def mount_tmpfs(where: Path, size: str) -> None:
    if sys.platform != "linux" or os.geteuid() != 0:
        pytest.skip("a full disk is a small tmpfs, which only root can mount (not root here)")
    where.mkdir(parents=True, exist_ok=True)
    result = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(where)],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {result.stderr.strip() or result.returncode}")


def remount(where: Path, mode: str) -> None:
    subprocess.run(["mount", "-o", f"remount,{mode}", str(where)], check=True)


def fill(directory: Path, leave: int) -> None:
    """Fill the file system, then free `leave` bytes."""
    filler = directory / "filler"
    with filler.open("wb", buffering=0) as handle:
        for chunk in (1 << 16, 1 << 12):
            try:
                while True:
                    handle.write(b"\0" * chunk)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC
    os.truncate(filler, filler.stat().st_size - leave)


async def test_a_full_or_read_only_data_dir_is_an_error_of_the_turn(
    agent_env: AgentEnv,
) -> None:
    big = agent_env.workspace / "big.txt"
    big.write_text("".join(f"{n:05d} {'x' * 50}\n" for n in range(400)), encoding="utf-8")
    agent_env.script(
        [
            {"text": "first answer"},
            {"tool_calls": [{"name": "read", "arguments": {"path": str(big)}}]},
            {"text": "back again"},
        ],
        mode="yolo",
    )
    mount_tmpfs(agent_env.data_home, "1m")
    try:
        async with spawn_agent(agent_env) as client:
            session_id = await check_disk_full(client, agent_env)
        # Read-only (a remount needs no file open for writing: the process has exited).
        remount(agent_env.data_home, "ro")
        agent_env.script([{"text": "after the remount"}], mode="yolo")
        async with spawn_agent(agent_env) as client:
            await check_read_only(client, agent_env, session_id)
    finally:
        if subprocess.run(["umount", str(agent_env.data_home)], check=False).returncode:
            subprocess.run(["umount", "-l", str(agent_env.data_home)], check=False)


async def check_disk_full(client: AcpClient, env: AgentEnv) -> str:
    await initialize(client)
    session_id = (await new_session(client, env))["sessionId"]
    await client.call("session/prompt", text_prompt(session_id, "one"))
    path = session_file(env, session_id)
    saved = path.read_bytes()

    # The read's 24 KB result does not fit: the turn stops and says the session is not saved.
    fill(env.data_home, leave=8192)
    since = len(client.messages)
    result = await client.call("session/prompt", text_prompt(session_id, "read big.txt"))
    assert result == {"stopReason": "end_turn"}
    said = agent_text(client, session_id, since)
    assert "could not be written (No space left on device)" in said
    assert "not saved" in said
    updates = [
        m["params"]["update"]
        for m in client.messages[since:]
        if m.get("method") == "session/update"
        and m["params"]["update"]["sessionUpdate"] == "tool_call_update"
        and m["params"]["update"].get("status") in ("completed", "failed")
    ]
    assert [u["status"] for u in updates] == ["failed"]  # never shown completed
    # Nothing written before was damaged, no partial line was left, and the call is answered.
    assert path.read_bytes().startswith(saved)
    lines = entries(path)
    assert lines[-2]["message"]["parts"][0]["kind"] == "tool_call"  # no model call after it
    last = lines[-1]["message"]
    assert last["role"] == "tool"
    assert last["parts"][0]["content"][0]["text"].startswith("interrupted: the agent stopped")

    # The process keeps serving: with space again, the session continues.
    (env.data_home / "filler").unlink()
    since = len(client.messages)
    await client.call("session/prompt", text_prompt(session_id, "three"))
    assert agent_text(client, session_id, since) == "back again"
    assert user_texts(path) == ["one", "read big.txt", "three"]
    return session_id


async def check_read_only(client: AcpClient, env: AgentEnv, session_id: str) -> None:
    await initialize(client)
    load: Json = {"sessionId": session_id, "cwd": str(env.workspace), "mcpServers": []}
    await client.call("session/load", load)
    assert "back again" in agent_text(client, session_id, 0)  # it can still be read
    refused = await client.error("session/prompt", text_prompt(session_id, "four"))
    assert refused["code"] == SESSION_NOT_SAVED
    assert "could not be written (Read-only file system)" in refused["message"]
    refused = await client.error("session/new", {"cwd": str(env.workspace), "mcpServers": []})
    assert refused["code"] == SESSION_NOT_SAVED
    # Writable again: the same process continues the session.
    remount(env.data_home, "rw")
    since = len(client.messages)
    await client.call("session/prompt", text_prompt(session_id, "five"))
    assert agent_text(client, session_id, since) == "after the remount"
    path = session_file(env, session_id)
    assert user_texts(path) == ["one", "read big.txt", "three", "five"]
