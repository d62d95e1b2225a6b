"""Running the server on the process's stdin/stdout.

Before anything else, fd 1 is duplicated for the JSON-RPC writer and then pointed at stderr (as is
`sys.stdout`), so a stray print, a library warning or a child process can never corrupt the
stream.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from acp_server.early_session import Planner
    from acp_server.server import FactoryProvider


def protect_stdout() -> int:
    """Return a private fd for the protocol stream; fd 1 and `sys.stdout` now go to stderr."""
    wire = os.dup(1)  # not inheritable: children never see the protocol stream
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return wire


def serve_stdio(
    *, factory_provider: FactoryProvider, version: str, planner: Planner | None = None
) -> int:
    """Serve until stdin closes; then exit at once (no slow interpreter teardown). `planner`
    lets the server answer a `session/new` that arrives before the session machinery has
    loaded, building the session afterwards (`acp_server.early_session`)."""
    wire = protect_stdout()
    # Nothing heavy loads before the reply. Loading the event loop first (asyncio + anyio) was
    # measured: it takes ~30 ms off the first `session/new` but adds ~30-50 ms to the reply
    # (~80 ms median on a loaded 2-CPU machine, some runs over 100 ms), while spawn -> session
    # ready stays the same.
    from acp_server.early import answer_initialize_early

    try:
        early = answer_initialize_early(0, wire, version, planner)
    except (BrokenPipeError, ConnectionResetError):
        os._exit(0)
    import anyio

    from acp_server.server import AcpServer

    def lazy_log(event: str, fields: object) -> None:
        from acp_server.log import log

        log(event, fields)  # pyright: ignore[reportArgumentType]

    server = AcpServer(
        factory_provider=factory_provider, version=version, log=lazy_log, planner=planner
    )

    async def main() -> None:
        await server.serve(read_fd=0, write_fd=wire, early=early)

    with contextlib.suppress(KeyboardInterrupt):
        anyio.run(main)
    sys.stderr.flush()
    os._exit(0)
