"""The requests WE send (the agent asks the editor to read a file, run a terminal, ask the
user): ids, and the slots their responses are matched to."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import cast

import anyio

from acp_server.framing import INTERNAL_ERROR, Message, bounded


class ClientError(Exception):
    """The other side answered one of our requests with an error."""

    def __init__(self, method: str, code: int, message: str, data: object = None) -> None:
        super().__init__(f"{method}: {message} ({code})")
        self.method = method
        self.code = code
        self.message = message
        self.data = data


class ConnectionClosed(Exception):
    """The stream ended (or broke) before our request was answered."""


@dataclass(slots=True)
class _Slot:
    method: str
    done: anyio.Event = field(default_factory=anyio.Event)
    result: object = None
    error: Exception | None = None


class OutgoingRequests:
    """Request id -> the response it waits for. Ids are integers we count; a response with any
    other id is not ours."""

    def __init__(self) -> None:
        self._slots: dict[int, _Slot] = {}
        self._next_id = 0
        self.closed = False

    def open(self, method: str) -> int:
        """A new request id, whose response `wait` returns.

        Raises:
            ConnectionClosed: the input already ended: no response could ever come.
        """
        if self.closed:
            raise ConnectionClosed("the client closed the connection")
        self._next_id += 1
        self._slots[self._next_id] = _Slot(method=method)
        return self._next_id

    async def wait(self, request_id: int) -> object:
        """The result of request `request_id` (forgotten afterwards, or when cancelled).

        Raises:
            ClientError: the peer answered with an error.
            ConnectionClosed: the input ended first.
        """
        slot = self._slots[request_id]
        try:
            await slot.done.wait()
        finally:
            self._slots.pop(request_id, None)
        if slot.error is not None:
            raise slot.error
        return slot.result

    def forget(self, request_id: int) -> None:
        self._slots.pop(request_id, None)

    def resolve(self, message: Message) -> str | None:
        """Hand a response to the request it answers; returns why it was dropped instead (no
        request of ours has its id), or None."""
        raw_id = message.get("id")
        slot = self._slots.get(raw_id) if type(raw_id) is int else None
        if slot is None:
            shown = bounded(raw_id) if isinstance(raw_id, str) else raw_id
            return f"response to an unknown request, dropped (id {shown!r})"
        error: object = message.get("error")
        if error is not None:
            fields: dict[str, object] = (
                cast("dict[str, object]", error) if isinstance(error, dict) else {}
            )
            code = fields.get("code")
            text = fields.get("message", "no message")
            slot.error = ClientError(
                slot.method,
                code if type(code) is int else INTERNAL_ERROR,
                str(text),
                fields.get("data"),
            )
        else:
            slot.result = message.get("result")
        slot.done.set()
        return None

    def close(self) -> None:
        """The input ended: every request still waiting fails with `ConnectionClosed`."""
        self.closed = True
        for slot in self._slots.values():
            slot.error = ConnectionClosed("the client closed the connection")
            slot.done.set()
