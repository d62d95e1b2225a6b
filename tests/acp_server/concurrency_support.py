"""Many sessions in one project (issue 29), as editors drive them: the same work in every session
at once, and the invariants checked afterwards. Used by `test_concurrency.py` (sessions of one
server, in memory) and `test_concurrency_processes.py` (one server process per session).

Each session plays its own script (a scripted provider per session, chosen with
`session/set_config_option`), in `ask` mode, the editor answering "always" (the one
`allow_always` option: for the session) to every prompt, and each session then adding the rule
for the project as the prompt says to (`/permissions allow RULE`):

1. `write made/s<N>.txt`: an edit (its undo snapshot names the file), and a project rule of its
   own, which must be kept in the remembered file however many sessions write it at once;
2. `bash touch made/c<N>.txt`: a command (a whole-tree snapshot), then `Bash(touch *)` for the
   project from every session (kept once; a session whose command comes after another's rule
   applies it without asking: the rules are read again from the file); in the same batch,
   `search_code`: a refresh of the project's one code index.

Then, again all at once: `/permissions revoke` of its write rule in every other session, a fork
of the others, and `/undo` twice in each.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from agent.codeindex import CodeIndex
from sessions import ExtensionEntry, SessionStore, UndoSnapshotEntry
from tests.acp_server.client import AcpClient, AgentEnv, initialize
from tests.acp_server.test_permissions_command import command
from tests.acp_server.test_sessions import new_session, text_prompt
from tests.acp_server.test_tools import bash_call, write_call
from tests.barrier import Barrier

CALC = "def add_numbers(a, b):\n    return a + b\n"
SEARCH = {"name": "search_code", "id": "s", "arguments": {"query": "add"}}


def prepare(env: AgentEnv, sessions: int) -> None:
    """The project, and settings with one scripted provider per session (`p<N>`)."""
    (env.workspace / "calc.py").write_text(CALC, encoding="utf-8")
    (env.workspace / "helpers.py").write_text("def shout(text):\n    return text.upper()\n")
    (env.workspace / "made").mkdir()
    providers: dict[str, Any] = {}
    for number in range(sessions):
        turns = [
            {"tool_calls": [write_call(f"made/s{number}.txt", "written\n", call_id="w")]},
            {"text": "wrote"},
            {"tool_calls": [bash_call(f"touch made/c{number}.txt", call_id="b"), SEARCH]},
            {"text": "ran and found"},
        ]
        script = env.root / f"script-{number}.json"
        script.write_text(json.dumps({"turns": turns}), encoding="utf-8")
        providers[f"p{number}"] = {"api": "scripted", "script": str(script)}
    models = {f"p{number}/x": {"name": f"Session {number}"} for number in range(sessions)}
    env.write_settings({"providers": providers, "models": models, "model": "p0/x", "mode": "ask"})


async def answer_always(client: AcpClient, params: dict[str, Any]) -> dict[str, Any]:
    option = next(o for o in params["options"] if o["kind"] == "allow_always")
    return {"outcome": {"outcome": "selected", "optionId": option["optionId"]}}


@dataclass
class Outcome:
    """What one session did and was told."""

    number: int
    session_id: str
    write_rule: str = ""
    undone: list[str] = field(default_factory=lambda: [])
    fork: str | None = None


async def open_sessions(client: AcpClient, env: AgentEnv, numbers: range) -> list[Outcome]:
    await initialize(client)
    client.handlers["session/request_permission"] = answer_always
    outcomes: list[Outcome] = []
    for number in numbers:
        session_id = (await new_session(client, env))["sessionId"]
        await client.call(
            "session/set_config_option",
            {"sessionId": session_id, "configId": "model", "value": f"p{number}/x"},
        )
        outcomes.append(Outcome(number, session_id))
    return outcomes


async def work(client: AcpClient, outcome: Outcome, barrier: Barrier) -> None:
    """Phase one: write; run and search (each prompt ends its turn)."""
    await barrier.wait()
    result = await client.call("session/prompt", text_prompt(outcome.session_id, "write"))
    assert result["stopReason"] == "end_turn", result
    outcome.write_rule = _write_rule(client, outcome.session_id)
    await _allow_for_the_project(client, outcome.session_id, outcome.write_rule)
    result = await client.call("session/prompt", text_prompt(outcome.session_id, "run and search"))
    assert result["stopReason"] == "end_turn", result
    await _allow_for_the_project(client, outcome.session_id, "Bash(touch *)")


async def _allow_for_the_project(client: AcpClient, session_id: str, rule: str) -> None:
    text, _ = await command(client, session_id, f"/permissions allow {rule}")
    assert rule in text, text


async def take_back(client: AcpClient, env: AgentEnv, outcome: Outcome, barrier: Barrier) -> None:
    """Phase two: revoke (even sessions) or fork (odd ones), then /undo twice."""
    await barrier.wait()
    if outcome.number % 2 == 0:
        text, _ = await command(
            client, outcome.session_id, f"/permissions revoke {outcome.write_rule}"
        )
        assert "Revoked" in text, text
    else:
        params: dict[str, Any] = {
            "sessionId": outcome.session_id,
            "cwd": str(env.workspace),
            "mcpServers": [],
        }
        outcome.fork = (await client.call("session/fork", params))["sessionId"]
    for _ in range(2):
        text, _ = await command(client, outcome.session_id, "/undo")
        outcome.undone.append(text)


def _write_rule(client: AcpClient, session_id: str) -> str:
    for request in client.requests_named("session/request_permission"):
        params = request["params"]
        if params["sessionId"] == session_id and params["toolCall"]["toolCallId"] == "w":
            option = next(o for o in params["options"] if o["kind"] == "allow_always")
            return option["_meta"]["earshot"]["rule"]
    raise AssertionError(f"session {session_id} was never asked about its write")


async def run_all(clients: list[AcpClient], env: AgentEnv, outcomes: list[list[Outcome]]) -> None:
    """Both phases, every session at once (clients[i] serves outcomes[i])."""
    count = sum(len(group) for group in outcomes)
    for phase in ("work", "take back"):
        barrier = Barrier(count)
        with anyio.fail_after(120):
            async with anyio.create_task_group() as group:
                for client, served in zip(clients, outcomes, strict=True):
                    for outcome in served:
                        if phase == "work":
                            group.start_soon(work, client, outcome, barrier)
                        else:
                            group.start_soon(take_back, client, env, outcome, barrier)


async def check_invariants(env: AgentEnv, outcomes: list[Outcome], logs: str) -> None:
    """Every batch had its snapshot and /undo put back that session's files only; no answer
    was lost; every session (and fork) loads; the code index matches the project."""
    assert "undo snapshot failed" not in logs
    made = env.workspace / "made"
    # /undo: the write (certain of its file) is gone in every session; a command's file is
    # gone, or named as left because another session's command ran at the same time
    assert sorted(path.name for path in made.glob("s*.txt")) == []
    for outcome in outcomes:
        if (made / f"c{outcome.number}.txt").exists():
            assert f"c{outcome.number}.txt" in outcome.undone[0], outcome.undone[0]
        assert "has no undo snapshot" not in "".join(outcome.undone)
    assert (env.workspace / "calc.py").read_text(encoding="utf-8") == CALC

    # no "always" answer lost, and each revoke removed its rule only
    [remembered] = (env.config_home / "earshot" / "projects").glob("*.json")
    allowed = json.loads(remembered.read_text(encoding="utf-8"))["permissions"]["allow"]
    kept = {o.write_rule for o in outcomes if o.number % 2 == 1}
    assert sorted(allowed) == sorted({*kept, "Bash(touch *)"}), allowed

    # every session and fork loads, with a snapshot recorded for each of its two batches
    store = SessionStore(env.data_home / "earshot" / "sessions")
    for outcome in outcomes:
        for session_id in filter(None, (outcome.session_id, outcome.fork)):
            session = await store.open(session_id, claim=False)
            entries = session.entries
            if session_id == outcome.session_id:
                assert sum(isinstance(e, UndoSnapshotEntry) for e in entries) == 2
                assert not any(isinstance(e, ExtensionEntry) and e.name == "undo_missing"
                               for e in entries)  # fmt: skip
            await session.aclose()

    # the index: one database; a session opening it later finds nothing new to read (the
    # undos only removed files), and then every row is a file as it is on disk
    [database] = (env.data_home / "earshot" / "codeindex").glob("*.sqlite")
    later = CodeIndex(env.workspace, database=database, workers=1)
    stats = await later.refresh()
    await later.aclose()
    assert stats.error is None and stats.parsed == 0, stats
    with sqlite3.connect(database) as db:
        rows = {path: (mtime, size) for path, mtime, size in db.execute(
            "SELECT path, mtime_ns, size FROM files")}  # fmt: skip
    assert {"calc.py", "helpers.py"} <= set(rows)
    for path, (mtime, size) in rows.items():
        info = (env.workspace / path).stat()
        assert (info.st_mtime_ns, info.st_size) == (mtime, size), path


def search_found(client: AcpClient, session_id: str) -> bool:
    """The session's `search_code` call found calc.py."""
    return any(
        update.get("toolCallId") == "s"
        and update.get("status") == "completed"
        and "calc.py" in json.dumps(update.get("content"))
        for update in client.updates(session_id)
    )


def read_log(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""
