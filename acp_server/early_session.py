"""Answering the first `session/new` before the session behind it exists.

An editor sends `session/new` right after `initialize` and shows nothing until it is answered.
Building the session (the event loop, the session store, the agent, its tools, the editor's MCP
servers) takes a few hundred milliseconds of imports on a cold process; the ANSWER needs only the
session id, the modes and the pickers, which the factory's `plan_new` computes from the settings
files, the environment and the catalog. So the start-up path (`acp_server.early`) answers from
the plan, and the server builds the session under the promised id as soon as the event loop runs
(`acp_server.server`): every request for the session waits for it. The build reads the same
`Composition` the plan did (the factory caches one per directory), so the session is what the
answer said; `tests/acp_server/test_early_session.py` checks the answer against the normal path's.

Only a request the normal path would answer with a session is answered here: bad params,
invalid settings and missing credentials return None, and the transport answers the request with
the same error as always.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from acp_server.config import ConfigState, setup_result
from acp_server.factory import SessionPlan
from acp_server.setup_params import SessionSetup, parse_setup
from acp_server.wire import JsonObject
from sessions.ids import new_id

Planner = Callable[[Path], SessionPlan]
"""`SessionFactory.plan_new`, callable before the event loop exists."""


@dataclass(frozen=True, slots=True, kw_only=True)
class EarlySession:
    """A `session/new` answered at start-up, whose session is still to be built."""

    session_id: str
    setup: SessionSetup
    result: JsonObject
    """The answer the client got."""


def _plan_state(plan: SessionPlan) -> ConfigState:
    """The pickers a session made from `plan` starts with."""
    return ConfigState(
        mode=plan.mode, model=plan.model, effort=None, reasoning=plan.reasoning, models=plan.models
    )


def answer_session_new(params: JsonObject, planner: Planner) -> EarlySession | None:
    """The answer to a `session/new`, or None to leave the request to the normal path. Never
    raises: any failure here is found again, and reported, by the normal path."""
    try:
        setup = parse_setup(params, servers_required=True)
        plan = planner(setup.cwd)
    except Exception:
        return None
    if plan.problem is not None:
        return None
    session_id = new_id()
    return EarlySession(
        session_id=session_id,
        setup=setup,
        result={"sessionId": session_id, **setup_result(_plan_state(plan))},
    )
