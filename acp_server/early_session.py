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

The session exists from the answer on, for every process: before the answer is written, its file
(the header line) is reserved under the promised id (`sessions.reserve`, when the plan names the
store's root). A client that hands the id to another process at once (acpx: `sessions new`, then
`prompt` from a new process) finds it there even if this process is still building the session,
or was closed before it could. If the file cannot be written, the request goes to the normal
path, which builds the session (and its file) before answering.
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
    if plan.sessions_root is not None and not _reserve(plan, setup, session_id):
        return None
    return EarlySession(
        session_id=session_id,
        setup=setup,
        result={"sessionId": session_id, **setup_result(_plan_state(plan))},
    )


def _reserve(plan: SessionPlan, setup: SessionSetup, session_id: str) -> bool:
    """Write the new session's file (see the module docstring); False if that failed."""
    from sessions.reserve import reserve

    assert plan.sessions_root is not None
    try:
        # The cwd as `agent.session.create_session` records it (resolved), so the build adopts
        # this file rather than refusing the id.
        reserve(
            plan.sessions_root,
            session_id=session_id,
            cwd=str(setup.cwd.resolve()),
            additional_directories=[str(p.resolve()) for p in setup.additional_directories],
            earshot_version=plan.earshot_version,
        )
    except OSError:
        return False
    return True
