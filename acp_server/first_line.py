"""`earshot --stdio`'s first line, answered before the event loop exists when it is `initialize`.

Why: an editor starts the agent and waits for the `initialize` reply before anything else. Given
by the event loop, that reply waits for asyncio and anyio to import: counted in instructions
(callgrind, `bench/instructions.py`), `import asyncio` alone is 236M, the whole start-reply-exit
356M, codex-acp's ~57M (`bench/RESULTS.md`). So `serve_stdio` reads the first line itself, with a
blocking `os.read`, and when it is an `initialize` the loop would answer with a result, writes that
answer at once; only then does it import the loop and serve the rest.

One answer, one transport:
- what is answered here is exactly a request the transport would route to its `initialize`
  handler and answer with a result: a JSON object with `"jsonrpc": "2.0"`, an `id` the transport
  echoes, `"method": "initialize"`, and params (an object, or none) that the handler's checker
  accepts, in either version (a v2 `initialize` gets v2's answer here too). The answer is
  computed by the handler's own code (`acp_server.initialization.respond`),
  shaped and encoded by the transport's (`framing.result_response`, `framing.encode_message`),
  so the bytes are the same; the connection then starts with the state it produced
  (`AcpServer.serve(start=...)`: the client's capabilities, `$/cancel_request`);
- anything else is handed to the transport unanswered, with every byte read so far, and is
  answered exactly as it always was, line numbers included: a line that is not JSON, another
  method, a notification, a batch, params the checker refuses, a first line longer than
  `FIRST_LINE_BOUND`, the end of the input before a newline, a stdin that is non-blocking and
  has nothing yet, a read error;
- what came after the first line in the same read (a `session/new` written with it) is the
  transport's first input, read before anything else.

Only this module, `initialization` (with `capabilities` and `advertised`), `framing` (with
`providers.text`) and the standard library they need (`json`, `re`, `typing`) load before the
answer: no asyncio, no anyio, no `dataclasses` (`tests/acp_server/test_stdio.py` checks it).
Signals are as they were before the loop: Ctrl-C ends the process at once with status 130
(`interrupt.exit_on_interrupt`), SIGTERM and SIGHUP do what they do by default; the blocking
read is interrupted by them like any other wait. The collector stays paused (`serve_stdio`).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, cast

from acp_server.framing import (
    RawObject,
    decode_message,
    encode_message,
    request_id_problem,
    result_response,
)
from acp_server.initialization import Initialized, respond

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

FIRST_LINE_BOUND = 64 * 1024
"""The longest first line answered here (an editor's `initialize` is well under 2 KB); a longer
one is the transport's, which takes lines up to its own limit."""
LINE_LIMIT_ENV = "EARSHOT_ACP_LINE_LIMIT"
"""The transport's line limit when a test set one (`acp_server.server.ServerLimits`)."""
_READ_CHUNK = 1 << 16


class ReadAhead:
    """Input read before the event loop ran, for the transport to serve first. (Plain classes
    here: a `NamedTuple` compiles each string annotation, a `dataclass` imports `inspect`.)"""

    __slots__ = ("data", "ended", "lines")

    def __init__(self, data: bytes = b"", *, lines: int = 0, ended: bool = False) -> None:
        self.data = data
        """Bytes read and not answered: the transport reads them before its fd."""
        self.lines = lines
        """Lines of the input answered already (the transport's line numbers go on from
        there)."""
        self.ended = ended
        """The input ended while it was read ahead: the fd has nothing more."""


class FirstLine:
    """How `earshot --stdio` starts serving after its first line."""

    __slots__ = ("ahead", "initialized")

    def __init__(self, ahead: ReadAhead, initialized: Initialized | None = None) -> None:
        self.ahead = ahead
        self.initialized = initialized
        """What answering `initialize` produced, when the first line was one and was answered."""


def first_line_bound(environ: Mapping[str, str]) -> int:
    """`FIRST_LINE_BOUND`, or the transport's line limit when that is smaller (a line the
    transport would refuse is left to it)."""
    limit = environ.get(LINE_LIMIT_ENV)
    return min(FIRST_LINE_BOUND, int(limit)) if limit else FIRST_LINE_BOUND


def answer_first_line(
    read_fd: int,
    write_fd: int,
    *,
    version: str,
    credentials_found: Callable[[], bool],
    bound: int = FIRST_LINE_BOUND,
) -> FirstLine:
    """Read up to the first newline of `read_fd` (blocking); when that line is an `initialize`
    the transport would answer with a result, write the answer to `write_fd`. Returns what the
    transport starts with."""
    data, newline, ended = _read_line(read_fd, bound)
    if newline < 0:
        return FirstLine(ReadAhead(data, ended=ended))
    request = _initialize_request(data[:newline])
    if request is None:
        return FirstLine(ReadAhead(data))
    request_id, params = request
    try:
        initialized = respond(params, version=version, credentials_found=credentials_found)
    except Exception:  # params the handler refuses, or its failure: the transport answers it
        return FirstLine(ReadAhead(data))
    _write_all(write_fd, encode_message(result_response(request_id, initialized.result)))
    return FirstLine(ReadAhead(data[newline + 1 :], lines=1), initialized)


def _read_line(fd: int, bound: int) -> tuple[bytes, int, bool]:
    """What was read up to the first newline (and whatever came with it), the newline's index
    (-1 when there is none within `bound` bytes), and whether the input ended before it."""
    data = b""
    while True:
        try:
            chunk = os.read(fd, _READ_CHUNK)
        except ConnectionResetError:  # as the transport reads it: the end of the input
            return data, -1, True
        except OSError:  # non-blocking and empty, or an error: the transport's to meet
            return data, -1, False
        if not chunk:
            return data, -1, True
        newline = chunk.find(b"\n")
        if newline >= 0:
            newline += len(data)
            data += chunk
            return data, (newline if newline <= bound else -1), False
        data += chunk
        if len(data) > bound:
            return data, -1, False


def _initialize_request(line: bytes) -> tuple[object, RawObject] | None:
    """The id and params of an `initialize` request the transport would route to its handler
    (`Connection._dispatch`'s conditions, in its order), else None. The params are checked by
    the handler's own code (`initialization.respond`), for the version they ask for."""
    try:
        message = decode_message(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(message, dict):
        return None
    fields = cast("RawObject", message)
    request_id = fields.get("id")
    params = fields.get("params")
    if (
        fields.get("jsonrpc") != "2.0"
        or "id" not in fields
        or request_id_problem(request_id) is not None
        or fields.get("method") != "initialize"
        or not (params is None or isinstance(params, dict))
    ):
        return None
    return request_id, cast("RawObject", params) if params else {}


def _write_all(fd: int, data: bytes) -> None:
    """Write `data` whole (fd 1 is blocking unless the editor made it otherwise). A closed
    output is left for the transport to find, as it finds it for any answer."""
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view) :]
        except BlockingIOError:
            import select

            select.select([], [fd], [])
        except (BrokenPipeError, ConnectionResetError):
            return


__all__ = ["FIRST_LINE_BOUND", "FirstLine", "ReadAhead", "answer_first_line", "first_line_bound"]
