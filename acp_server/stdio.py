"""Running the server on the process's stdin/stdout: the one start-up path.

Before anything else, fd 1 is duplicated for the JSON-RPC writer and then pointed at stderr (as is
`sys.stdout`), so a stray print, a library warning or a child process can never corrupt the
stream. Then the event loop starts and the transport reads `initialize` like any other request:
what loads before that reply is the event loop (asyncio, anyio), the transport and the
capability tables, nothing of the agent, no pydantic, no vendor SDK
(`tests/acp_server/test_stdio.py` checks it).

By hand: started in a terminal, the server says on stderr what it is and how to talk to it;
Ctrl-C ends it quietly at any point (exit status 130; `acp_server.interrupt` says how).
"""

from __future__ import annotations

import gc
import os
import sys
from typing import TYPE_CHECKING

from acp_server.interrupt import INTERRUPTED, exit_on_interrupt, run_interruptible

if TYPE_CHECKING:
    from acp_server.ports import Ports

BANNER = (
    "earshot {version}: a coding agent speaking the Agent Client Protocol (JSON-RPC 2.0, one "
    "message per line) on stdin/stdout, for editors to start; type a request such as "
    '{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":1}}}} '
    "and Ctrl-D to end."
)


def protect_stdout() -> int:
    """Return a private fd for the protocol stream; fd 1 and `sys.stdout` now go to stderr."""
    wire = os.dup(1)  # not inheritable: children never see the protocol stream
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return wire


def serve_stdio(*, ports: Ports, version: str) -> int:
    """Serve until stdin closes and every request read is answered; then exit at once (no slow
    interpreter teardown)."""
    exit_on_interrupt()
    # Until the event loop runs, the process only imports (asyncio, anyio, the transport): none
    # of it garbage, and the ~40 cyclic collections meanwhile only rescan it (2-3 ms of the
    # time to the `initialize` reply). The collector is back before the first line is read.
    gc.disable()
    status = 0
    try:
        output = protect_stdout()
        if os.isatty(0):
            print(BANNER.format(version=version), file=sys.stderr, flush=True)
        from acp_server.log import log
        from acp_server.server import AcpServer

        server = AcpServer(ports=ports, version=version, log=log)

        async def serve() -> None:
            gc.enable()
            await server.serve(read_fd=0, write_fd=output, close_on_signals=True)

        if run_interruptible(serve):
            status = INTERRUPTED
        elif server.signalled is not None:
            status = 128 + server.signalled  # as a shell reports a process the signal ended
    except (BrokenPipeError, ConnectionResetError):
        pass
    try:
        sys.stderr.flush()
    finally:
        os._exit(status)
