"""Crash safety against the real server: `earshot --stdio` killed with SIGKILL at many points of a
turn that runs batches of tool calls (read + two bash, then read + bash).

Each kill point is chosen by waiting on the protocol (after the Nth `session/update` of the turn,
N from a seeded random schedule), never by sleeping. After every kill:
- every call the client was shown as finished is in the transcript, with that outcome;
- the file loads in a fresh process, and its replay shows every call with a final status (a call
  the killed process never finished: failed, "interrupted: the agent stopped ...");
- the next prompt's request goes to a validating model (an OpenAI-compatible loopback server that
  answers 400, as OpenAI does, when an assistant's `tool_calls` lack tool messages) and succeeds.

Set EARSHOT_CRASH_SEED to replay a schedule; a failure names the seed it ran with.
"""

from __future__ import annotations

import dataclasses
import json
import os
import random
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.acp_server.client import AcpClient, AgentEnv, json_list, spawn_agent
from tests.acp_server.test_sessions import text_prompt
from tests.earshot.support import text_reply
from tests.loopback import LoopbackServer, Recorded, Reply, loopback

pytestmark = pytest.mark.skipif(os.name != "posix", reason="SIGKILL is POSIX")

ROUNDS = 3
KILL_POINTS = 10
"""Per round: 30 kill points a run, in three tests that xdist can spread (and that each stay far
from the per-test timeout on a loaded machine)."""
PARALLEL = 2
"""Crashing processes run at once per test (the machine has 2 cores and xdist two workers)."""
SEED = int(os.environ.get("EARSHOT_CRASH_SEED") or secrets.randbits(32))
FINAL = frozenset({"completed", "failed"})
ANSWER = "Carrying on from where we were."

Json = dict[str, Any]


def crash_script(workspace: Path) -> list[Json]:
    notes = str(workspace / "notes.txt")
    return [
        {
            "text": "Looking around first.",
            "chunk_size": 6,
            "tool_calls": [
                {"name": "read", "arguments": {"path": notes}},
                {"name": "bash", "arguments": {"command": "echo one"}},
                {"name": "bash", "arguments": {"command": "echo two"}},
            ],
        },
        {
            "text": "Once more.",
            "tool_calls": [
                {"name": "read", "arguments": {"path": notes}},
                {"name": "bash", "arguments": {"command": "printf three"}},
            ],
        },
        {"text": "All done here.", "chunk_size": 4},
    ]


@dataclass
class Crash:
    """What the client of one killed process saw."""

    kill_after: int
    session_id: str = ""
    updates: list[Json] = field(default_factory=lambda: [])
    answered: bool = False
    answer: Json | None = None
    """The prompt's answer, if it came (said when a check fails)."""
    """The prompt was answered (`end_turn`) before the kill landed."""

    def finished(self) -> dict[str, Json]:
        """Calls shown with a final status: the last such update of each."""
        shown: dict[str, Json] = {}
        for update in self.updates:
            if update["sessionUpdate"] == "tool_call_update" and update.get("status") in FINAL:
                shown[update["toolCallId"]] = update
        return shown


def validate_chat_request(body: Json) -> str | None:
    """OpenAI's own checks on a Chat Completions history; the error it answers, or None."""
    expected: list[str] = []
    for message in body["messages"]:
        role = message.get("role")
        if role == "tool":
            if message.get("tool_call_id") not in expected:
                return (
                    "Invalid parameter: messages with role 'tool' must be a response to a "
                    "preceeding message with 'tool_calls'."
                )
            expected.remove(message["tool_call_id"])
            continue
        if expected:
            return (
                "An assistant message with 'tool_calls' must be followed by tool messages "
                "responding to each 'tool_call_id'. The following tool_call_ids did not have "
                f"response messages: {', '.join(expected)}"
            )
        if role == "assistant":
            expected = [call["id"] for call in json_list(message.get("tool_calls"))]
    if expected:
        return f"tool_call_ids without response messages: {', '.join(expected)}"
    return None


def chat_requests(server: LoopbackServer) -> list[Recorded]:
    """The model calls (the server's model list is asked for too, in the background)."""
    return [request for request in server.requests if request.method == "POST"]


class ValidatingModel:
    """Answers a valid request with `ANSWER`; an invalid one with OpenAI's 400."""

    def __init__(self) -> None:
        self.rejected: list[str] = []

    def __call__(self, request: Recorded) -> Reply:
        if request.method != "POST":
            return Reply.json({"error": {"message": "not a model call"}}, status=404)
        problem = validate_chat_request(request.json())
        if problem is None:
            return text_reply(ANSWER)
        self.rejected.append(problem)
        error = {"message": problem, "type": "invalid_request_error", "code": None}
        return Reply.json({"error": error}, status=400)


INITIALIZE: Json = {"protocolVersion": 1, "clientCapabilities": {}}
PATIENCE = 90.0
"""Seconds any one step may take: deadlines, not sleeps, generous because a loaded machine runs
a few dozen processes slowly."""


async def rpc(client: AcpClient, method: str, params: Json) -> Json:
    """`client.call` with `PATIENCE`."""
    request_id = await client.start_request(method, params)
    response = await client.wait_for(
        lambda: next((m for m in client.messages if m.get("id") == request_id), None), PATIENCE
    )
    assert "result" in response, f"{method} failed: {response}"
    return response["result"]


async def crash_once(env: AgentEnv, crash: Crash) -> None:
    async with spawn_agent(env, check=False) as client:
        await rpc(client, "initialize", INITIALIZE)
        new: Json = {"cwd": str(env.workspace), "mcpServers": []}
        crash.session_id = (await rpc(client, "session/new", new))["sessionId"]
        start = len(client.messages)
        prompt = await client.start_request(
            "session/prompt", text_prompt(crash.session_id, "look at the notes")
        )

        def turn_updates() -> list[Json]:
            return [
                m["params"]["update"]
                for m in client.messages[start:]
                if m.get("method") == "session/update"
            ]

        def reached() -> bool:
            answered = any(m.get("id") == prompt and "result" in m for m in client.messages)
            return answered or len(turn_updates()) >= crash.kill_after

        await client.wait_for(reached, PATIENCE)
        client.process.kill()
        await client.process.wait()
        # Whatever was already in the pipe is what the client saw too.
        with anyio.fail_after(PATIENCE):
            while not client.closed:
                await client.wait_for(lambda: client.closed, PATIENCE)
        crash.updates = turn_updates()
        crash.answered = any(m.get("id") == prompt and "result" in m for m in client.messages)
        crash.answer = next((m for m in client.messages if m.get("id") == prompt), None)
    # The only damage a kill may do to the output is its last, unfinished line.
    assert [v for v in client.violations if not v.startswith("unterminated output")] == []


def replayed(client: AcpClient, start: int, end: int, session_id: str) -> list[Json]:
    return [
        m["params"]["update"]
        for m in client.messages[start:end]
        if m.get("method") == "session/update" and m["params"]["sessionId"] == session_id
    ]


def final_statuses(updates: Sequence[Json]) -> dict[str, Json]:
    calls: dict[str, Json] = {}
    for update in updates:
        if update["sessionUpdate"] in ("tool_call", "tool_call_update"):
            calls.setdefault(update["toolCallId"], {}).update(update)
    return calls


def content_text(update: Json) -> str:
    return "".join(
        item["content"].get("text", "")
        for item in json_list(update.get("content"))
        if item.get("type") == "content"
    )


def transcript_lines(path: Path) -> tuple[list[Json], int]:
    """The entries of a session file, and how many lines were not JSON (a line torn by the
    kill, closed by the next append)."""
    entries: list[Json] = []
    damaged = 0
    for line in path.read_bytes().split(b"\n")[1:]:
        if line.strip():
            try:
                entries.append(json.loads(line))
            except ValueError:
                damaged += 1
    return entries, damaged


def stored_results(entries: Sequence[Json]) -> dict[str, Json]:
    results: dict[str, Json] = {}
    for entry in entries:
        message: Json = entry.get("message") or {}
        if message.get("role") == "tool":
            for part in json_list(message["parts"]):
                results.setdefault(part["tool_call_id"], part)
    return results


@pytest.mark.timeout(240)  # ~12 s on two idle cores; a dozen processes crawl on a loaded machine
@pytest.mark.parametrize("round_number", range(ROUNDS))
async def test_sigkill_at_any_point_of_a_turn_loses_nothing_the_client_saw(
    agent_env: AgentEnv, round_number: int
) -> None:
    where = f"(seed {SEED}, round {round_number}; rerun with EARSHOT_CRASH_SEED={SEED})"
    (agent_env.workspace / "notes.txt").write_text("the notes\n", encoding="utf-8")
    agent_env.script(crash_script(agent_env.workspace), mode="yolo")

    # One whole turn first: how many updates a turn sends bounds the schedule.
    whole = Crash(kill_after=1_000_000)
    await crash_once(agent_env, whole)
    assert whole.answered and len(whole.finished()) == 5, where
    rng = random.Random(SEED * ROUNDS + round_number)
    crashes = [Crash(kill_after=rng.randint(1, len(whole.updates))) for _ in range(KILL_POINTS)]
    limiter = anyio.CapacityLimiter(PARALLEL)

    async def run(crash: Crash) -> None:
        async with limiter:
            await crash_once(agent_env, crash)

    async with anyio.create_task_group() as group:
        for crash in crashes:
            group.start_soon(run, crash)

    sessions = agent_env.data_home / "earshot" / "sessions"
    # What the client was shown as done is on disk, before anything else opens the session.
    for crash in crashes:
        (path,) = sessions.glob(f"*/{crash.session_id}.jsonl")
        entries, damaged = transcript_lines(path)
        assert damaged <= 1, where
        results = stored_results(entries)
        for call_id, update in crash.finished().items():
            assert call_id in results, f"{call_id} shown {update['status']} but not saved {where}"
            assert results[call_id].get("is_error", False) == (update["status"] == "failed")
        if crash.answered:
            # (Which entries ended the file, if not the final message: seen once under load.)
            last = [sorted(entry) for entry in entries[-3:]]
            assert "message" in entries[-1], (where, crash.answer, len(entries), last)
            assert entries[-1]["message"]["parts"][-1]["text"] == "All done here.", where

    # A fresh process, whose settings point the same provider at a validating model.
    validating = ValidatingModel()
    with loopback() as server:
        server.responder = validating
        verify_env = dataclasses.replace(agent_env, config_home=agent_env.root / "verify-config")
        verify_env.write_settings(
            {
                "providers": {
                    "scripted-test": {
                        "api": "openai-chat",
                        "baseUrl": f"{server.url}/v1",
                        "apiKey": "test-key",
                    }
                },
                "model": "scripted-test/anything",
                "mode": "yolo",
            }
        )
        async with spawn_agent(verify_env) as client:
            await rpc(client, "initialize", INITIALIZE)
            for crash in [whole, *crashes]:
                await verify(client, verify_env, crash, server, where)
    assert validating.rejected == [], where
    assert len(chat_requests(server)) == 1 + KILL_POINTS


async def verify(
    client: AcpClient, env: AgentEnv, crash: Crash, server: LoopbackServer, where: str
) -> None:
    start = len(client.messages)
    await rpc(
        client,
        "session/load",
        {"sessionId": crash.session_id, "cwd": str(env.workspace), "mcpServers": []},
    )
    calls = final_statuses(replayed(client, start, len(client.messages), crash.session_id))
    # Replay is consistent: every call ends, and as the client of the killed process saw it.
    for call_id, call in calls.items():
        assert call.get("status") in FINAL, f"{call_id} replayed {call.get('status')} {where}"
        if call["status"] == "failed":
            assert content_text(call).startswith("interrupted: the agent stopped"), where
    for call_id, update in crash.finished().items():
        assert calls[call_id]["status"] == update["status"], where
        assert content_text(calls[call_id]) == content_text(update), where
    # The next prompt goes to the model as a valid request, and is answered.
    requests = len(chat_requests(server))
    result = await rpc(client, "session/prompt", text_prompt(crash.session_id, "go on"))
    assert result == {"stopReason": "end_turn"}, where
    assert len(chat_requests(server)) == requests + 1, where
    sent = chat_requests(server)[-1].json()["messages"]
    assert sent[-1] == {"role": "user", "content": "go on"}, where
    updates = replayed(client, start, len(client.messages), crash.session_id)
    assert ANSWER in "".join(
        u["content"].get("text", "") for u in updates if u["sessionUpdate"] == "agent_message_chunk"
    ), where
    await rpc(client, "session/close", {"sessionId": crash.session_id})
