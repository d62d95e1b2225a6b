"""Answering `initialize` before the event loop exists.

An editor writes `initialize` the moment it spawns us and waits for the reply. Everything that
reply needs (json, the capability table) is cheap; the session machinery (settings, the agent,
the session store) is not. So the first line is read with a plain blocking read and, when it is
a well-formed `initialize`, answered before the event loop runs; the session machinery is loaded
after the reply is on its way (`acp_server.stdio` decides what loads before it). Anything else
(another method, a malformed line, a huge line, EOF) is handed to the regular transport
untouched, which answers it exactly as it would have.
"""

from __future__ import annotations

import json
import os
from typing import cast

from acp_server.wire import JsonObject, encode_message

EARLY_LINE_LIMIT = 1 << 20
"""A first line longer than this is left to the transport (it has the real limits)."""


class EarlyInput:
    """What the fast path read. A plain class: `dataclasses` costs milliseconds to import."""

    __slots__ = ("data", "ended", "initialize_params")

    def __init__(
        self,
        *,
        data: bytes = b"",
        ended: bool = False,
        initialize_params: JsonObject | None = None,
    ) -> None:
        self.data = data
        """Input read but not consumed (the transport starts from it)."""
        self.ended = ended
        """The input reached EOF while reading."""
        self.initialize_params = initialize_params
        """Set when `initialize` was answered here: its params."""


def _initialize_request(line: bytes) -> tuple[int | str | None, JsonObject] | None:
    try:
        decoded: object = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(decoded, dict):
        return None
    message = cast("JsonObject", decoded)
    request_id: object = message.get("id")
    if not (request_id is None or isinstance(request_id, str) or type(request_id) is int):
        return None
    if message.get("jsonrpc") != "2.0" or message.get("method") != "initialize":
        return None
    if "id" not in message:
        return None
    raw_params: object = message.get("params")
    if not isinstance(raw_params, dict):
        return None
    params = cast("JsonObject", raw_params)
    version: object = params.get("protocolVersion")
    if type(version) is not int or not 0 <= version <= 65535:
        return None
    return request_id, params


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def answer_initialize_early(read_fd: int, write_fd: int, version: str) -> EarlyInput:
    """Read up to the first newline; answer it if it is `initialize`."""
    buffer = bytearray()
    while (newline := buffer.find(b"\n")) < 0:
        if len(buffer) > EARLY_LINE_LIMIT:
            return EarlyInput(data=bytes(buffer))
        chunk = os.read(read_fd, 65536)
        if not chunk:
            return EarlyInput(data=bytes(buffer), ended=True)
        buffer += chunk
    request = _initialize_request(bytes(buffer[:newline]))
    if request is None:
        return EarlyInput(data=bytes(buffer))
    request_id, params = request
    from acp_server.advertised import initialize_result

    reply = {"jsonrpc": "2.0", "id": request_id, "result": initialize_result(version)}
    _write_all(write_fd, encode_message(reply))
    return EarlyInput(data=bytes(buffer[newline + 1 :]), initialize_params=params)
