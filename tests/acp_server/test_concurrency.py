"""Twenty sessions of one server in one project, all at once (issue 29): see
`concurrency_support` for what each does and what is checked."""

from __future__ import annotations

from tests.acp_server.client import AgentEnv, open_agent
from tests.acp_server.concurrency_support import (
    check_invariants,
    open_sessions,
    prepare,
    run_all,
    search_found,
)

SESSIONS = 20


async def test_twenty_sessions_at_once_keep_every_batch_undoable_and_every_answer(
    agent_env: AgentEnv,
) -> None:
    prepare(agent_env, SESSIONS)
    async with open_agent(agent_env) as client:
        outcomes = await open_sessions(client, agent_env, range(SESSIONS))
        await run_all([client], agent_env, [outcomes])
        listed = await client.call("session/list", {"cwd": str(agent_env.workspace)})
        for outcome in outcomes:
            assert search_found(client, outcome.session_id)
    ids = {item["sessionId"] for item in listed["sessions"]}
    assert ids >= {o.session_id for o in outcomes} | {o.fork for o in outcomes if o.fork}
    await check_invariants(agent_env, outcomes, client.stderr)
