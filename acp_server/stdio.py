"""Running the server on the process's stdin/stdout: the one start-up path.

Before anything else, fd 1 is duplicated for the JSON-RPC writer and then pointed at stderr (as is
`sys.stdout`), so a stray print, a library warning or a child process can never corrupt the
stream. Then the first line is read and, when it is `initialize`, answered before the event loop
is even imported (`acp_server.first_line` says why and what exactly); then the event loop starts
and the transport serves the rest, starting with what that answer produced and whatever was read
after the first line (anything but an answerable `initialize` is the transport's, unanswered).
What loads before that reply is the handshake's own modules, `json` and a few of the standard
library: no asyncio, anyio, agent, pydantic or vendor SDK (`tests/acp_server/test_stdio.py`
checks it).

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
    from acp_server.factory import SessionFactory

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


def serve_stdio(*, factory: SessionFactory, version: str) -> int:
    """Serve until stdin closes and every request read is answered; then exit at once (no slow
    interpreter teardown)."""
    exit_on_interrupt()
    # Until the event loop runs, the process only imports (the handshake, then asyncio, anyio,
    # the transport): none of it garbage, and the ~40 cyclic collections meanwhile would only
    # rescan it. The collector is back once the loop runs.
    gc.disable()
    status = 0
    try:
        output = protect_stdout()
        if os.isatty(0):
            print(BANNER.format(version=version), file=sys.stderr, flush=True)
        from acp_server.first_line import answer_first_line, first_line_bound

        start = answer_first_line(
            0,
            output,
            version=version,
            credentials_found=factory.credentials_found,
            bound=first_line_bound(os.environ),
        )
        from acp_server.log import log
        from acp_server.server import AcpServer

        server = AcpServer(factory=factory, version=version, log=log)

        async def serve() -> None:
            gc.enable()
            await server.serve(read_fd=0, write_fd=output, close_on_signals=True, start=start)

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
