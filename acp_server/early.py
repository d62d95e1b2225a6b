"""Answering `initialize` before the event loop exists.

An editor writes `initialize` the moment it spawns us and waits for the reply. Everything that
reply needs (json, the capability table) is cheap; the session machinery (settings, the agent,
the session store) is not. So the first line is read with a plain blocking read and, when it is
a well-formed `initialize`, answered before the event loop runs; the session machinery is loaded
after the reply is on its way (`acp_server.stdio` decides what loads before it). Anything else
(another method, a malformed line, a huge line, EOF) is handed to the regular transport
untouched, which answers it exactly as it would have.

Editors send `session/new` the moment `initialize` is answered. When the composition root
supplies a `Planner`, a `session/new` arriving within `SESSION_NEW_WAIT_SECONDS` of the reply is
answered here too, from the plan alone, and the server builds the session behind the answer
(`acp_server.early_session`). If the plan cannot answer it (bad params, invalid settings, no
credentials), the request goes to the transport untouched, like anything else.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, cast

from acp_server.wire import JsonObject, decode_message, encode_message, request_id_problem

if TYPE_CHECKING:
    from acp_server.early_session import EarlySession, Planner

EARLY_LINE_LIMIT = 1 << 20
"""A first line longer than this is left to the transport (it has the real limits)."""
SESSION_NEW_WAIT_SECONDS = 0.05
"""How long after the `initialize` reply a `session/new` is waited for here before the event
loop loads anyway (editors send it within a millisecond or two)."""


class EarlyInput:
    """What the fast path read. A plain class: `dataclasses` costs milliseconds to import."""

    __slots__ = ("data", "ended", "initialize_params", "session")

    def __init__(
        self,
        *,
        data: bytes = b"",
        ended: bool = False,
        initialize_params: JsonObject | None = None,
        session: EarlySession | None = None,
    ) -> None:
        self.data = data
        """Input read but not consumed (the transport starts from it)."""
        self.ended = ended
        """The input reached EOF while reading."""
        self.initialize_params = initialize_params
        """Set when `initialize` was answered here: its params."""
        self.session = session
        """Set when a `session/new` was answered here: the session to build."""


def _request(line: bytes, method: str) -> tuple[int | str | None, JsonObject] | None:
    """(id, params) when `line` is a well-formed request for `method` with object params."""
    try:
        decoded: object = decode_message(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(decoded, dict):
        return None
    message = cast("JsonObject", decoded)
    request_id: object = message.get("id")
    if request_id_problem(request_id) is not None:
        return None
    if message.get("jsonrpc") != "2.0" or message.get("method") != method:
        return None
    if "id" not in message:
        return None
    raw_params: object = message.get("params")
    if not isinstance(raw_params, dict):
        return None
    return cast("int | str | None", request_id), cast("JsonObject", raw_params)


def _initialize_request(line: bytes) -> tuple[int | str | None, JsonObject] | None:
    request = _request(line, "initialize")
    if request is None:
        return None
    version: object = request[1].get("protocolVersion")
    if type(version) is not int or not 0 <= version <= 65535:
        return None
    return request


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _read_line(read_fd: int, buffer: bytearray, wait: float | None) -> tuple[int, bool]:
    """Read into `buffer` until it holds a newline: (its index, or -1 when the line is too long,
    EOF came first or nothing arrived within `wait` seconds (None: no limit); whether EOF came)."""
    while (newline := buffer.find(b"\n")) < 0:
        if len(buffer) > EARLY_LINE_LIMIT:
            return -1, False
        if wait is not None:
            import select

            if not select.select([read_fd], [], [], wait)[0]:
                return -1, False
        chunk = os.read(read_fd, 65536)
        if not chunk:
            return -1, True
        buffer += chunk
    return newline, False


def answer_initialize_early(
    read_fd: int, write_fd: int, version: str, planner: Planner | None = None
) -> EarlyInput:
    """Read up to the first newline; answer it if it is `initialize`. Then, with a `planner`,
    answer a `session/new` that follows at once (see the module docstring)."""
    buffer = bytearray()
    newline, ended = _read_line(read_fd, buffer, None)
    request = _initialize_request(bytes(buffer[:newline])) if newline >= 0 else None
    if request is None:
        return EarlyInput(data=bytes(buffer), ended=ended)
    request_id, params = request
    from acp_server.advertised import initialize_result

    reply = {"jsonrpc": "2.0", "id": request_id, "result": initialize_result(version)}
    _write_all(write_fd, encode_message(reply))
    del buffer[: newline + 1]
    if planner is None or os.name == "nt":  # select() cannot wait on a pipe on Windows
        return EarlyInput(data=bytes(buffer), initialize_params=params)
    newline, ended = _read_line(read_fd, buffer, SESSION_NEW_WAIT_SECONDS)
    request = _request(bytes(buffer[:newline]), "session/new") if newline >= 0 else None
    if request is None:
        return EarlyInput(data=bytes(buffer), ended=ended, initialize_params=params)
    from acp_server.early_session import answer_session_new

    session = answer_session_new(request[1], planner)
    if session is None:
        return EarlyInput(data=bytes(buffer), initialize_params=params)
    _write_all(
        write_fd, encode_message({"jsonrpc": "2.0", "id": request[0], "result": session.result})
    )
    return EarlyInput(data=bytes(buffer[newline + 1 :]), initialize_params=params, session=session)
