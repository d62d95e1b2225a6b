"""Four earshot processes in one project, all at once (issue 29): the undo store, the remembered
answers, the session store and the code index shared across processes, each process serving one
session that does what `concurrency_support` says, with its invariants checked afterwards."""

from __future__ import annotations

from contextlib import AsyncExitStack

from tests.acp_server.client import AcpClient, AgentEnv, spawn_agent
from tests.acp_server.concurrency_support import (
    Outcome,
    check_invariants,
    open_sessions,
    prepare,
    run_all,
    search_found,
)

PROCESSES = 4


async def test_four_processes_at_once_keep_every_batch_undoable_and_every_answer(
    agent_env: AgentEnv,
) -> None:
    prepare(agent_env, PROCESSES)
    clients: list[AcpClient] = []
    outcomes: list[list[Outcome]] = []
    async with AsyncExitStack() as stack:
        for number in range(PROCESSES):
            client = await stack.enter_async_context(spawn_agent(agent_env))
            clients.append(client)
            outcomes.append(await open_sessions(client, agent_env, range(number, number + 1)))
        await run_all(clients, agent_env, outcomes)
        for client, [outcome] in zip(clients, outcomes, strict=True):
            assert search_found(client, outcome.session_id)
    logs = "".join(client.stderr for client in clients)
    await check_invariants(agent_env, [o for served in outcomes for o in served], logs)
