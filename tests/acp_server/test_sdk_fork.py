"""`session/fork` and `/rewind` through the official Python client SDK (PyPI
`agent-client-protocol`), which has a typed `fork_session`."""

from __future__ import annotations

import sys
from typing import Any

import anyio

from tests.acp_server.client import AgentEnv


async def test_python_sdk_forks_and_rewinds(agent_env: AgentEnv) -> None:
    import acp
    from acp.schema import ClientCapabilities

    agent_env.script(
        [{"text": "first answer"}, {"text": "second answer"}, {"text": "answer in the fork"}]
    )
    updates: list[tuple[str, Any]] = []

    class Client:
        async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
            updates.append((session_id, update))

        def on_connect(self, conn: Any) -> None:
            return None

    def user_text(session_id: str) -> str:
        return "".join(
            u.content.text
            for s, u in updates
            if s == session_id and u.session_update == "user_message_chunk"
        )

    with anyio.fail_after(30):
        async with acp.spawn_agent_process(
            Client(),  # pyright: ignore[reportArgumentType]
            sys.executable,
            "-m",
            "earshot",
            "--stdio",
            env=agent_env.environ(),
            cwd=str(agent_env.workspace),
        ) as (connection, _process):
            init = await connection.initialize(
                protocol_version=1, client_capabilities=ClientCapabilities()
            )
            capabilities = init.agent_capabilities
            assert capabilities is not None and capabilities.session_capabilities is not None
            assert capabilities.session_capabilities.fork is not None
            cwd = str(agent_env.workspace)
            session = await connection.new_session(cwd=cwd, mcp_servers=[])
            source = session.session_id
            for text in ("one", "two"):
                done = await connection.prompt(session_id=source, prompt=[acp.text_block(text)])
                assert done.stop_reason == "end_turn"
            forked = await connection.fork_session(session_id=source, cwd=cwd, mcp_servers=[])
            assert forked.session_id != source
            assert forked.modes is not None and forked.modes.current_mode_id == "ask"
            done = await connection.prompt(
                session_id=forked.session_id, prompt=[acp.text_block("three")]
            )
            assert done.stop_reason == "end_turn"
            rewound = await connection.prompt(
                session_id=source, prompt=[acp.text_block("/rewind 2")]
            )
            assert rewound.stop_reason == "end_turn"
            # The rewound branch was sent again (prompts are not echoed live: only the replay).
            assert user_text(source) == "one"
            await connection.load_session(session_id=forked.session_id, cwd=cwd, mcp_servers=[])
            assert user_text(forked.session_id) == "onetwothree"
