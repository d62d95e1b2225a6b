"""What the editor answers to our requests, checked at the boundary into the protocol's typed
shapes (`acp_server.protocol.client`, `.elicitation`): `Connection.request` returns a
`ReadTextFileResponse` for `fs/read_text_file`, never a raw value to pick apart.

An answer that does not have its method's shape takes one path: `InvalidAnswer`, a `ClientError`
(the editor failed the request), which every caller already handles as such. Hand-written, as the
incoming params are (`acp_server.params`): only the members earshot reads are checked, extension
members (`_meta`, a field a newer schema adds) pass through, and a result that says nothing
(`fs/write_text_file`, `terminal/kill`, `terminal/release`) may be `null`, which the official
Python SDK's clients send for it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal, Protocol, cast, overload

from acp_server.framing import INTERNAL_ERROR, Message, shown
from acp_server.outgoing import ClientError

if TYPE_CHECKING:
    from acp_server.protocol.client import (
        CreateTerminalResponse,
        KillTerminalResponse,
        ReadTextFileResponse,
        ReleaseTerminalResponse,
        RequestPermissionResponse,
        TerminalOutputResponse,
        WaitForTerminalExitResponse,
        WriteTextFileResponse,
    )
    from acp_server.protocol.elicitation import CreateElicitationResponse


class InvalidAnswer(ClientError):
    """The editor's answer to one of our requests does not have its method's shape."""

    def __init__(self, method: str, where: str, problem: str) -> None:
        super().__init__(method, INTERNAL_ERROR, f"the answer does not validate: {where} {problem}")
        self.where = where


class ClientRequest(Protocol):
    """Sends a request the editor answers; the result has the method's shape (checked)."""

    @overload
    def __call__(
        self, method: Literal["fs/read_text_file"], params: Message, /
    ) -> Awaitable[ReadTextFileResponse]: ...
    @overload
    def __call__(
        self, method: Literal["fs/write_text_file"], params: Message, /
    ) -> Awaitable[WriteTextFileResponse]: ...
    @overload
    def __call__(
        self, method: Literal["session/request_permission"], params: Message, /
    ) -> Awaitable[RequestPermissionResponse]: ...
    @overload
    def __call__(
        self, method: Literal["elicitation/create"], params: Message, /
    ) -> Awaitable[CreateElicitationResponse]: ...
    @overload
    def __call__(
        self, method: Literal["terminal/create"], params: Message, /
    ) -> Awaitable[CreateTerminalResponse]: ...
    @overload
    def __call__(
        self, method: Literal["terminal/output"], params: Message, /
    ) -> Awaitable[TerminalOutputResponse]: ...
    @overload
    def __call__(
        self, method: Literal["terminal/wait_for_exit"], params: Message, /
    ) -> Awaitable[WaitForTerminalExitResponse]: ...
    @overload
    def __call__(
        self, method: Literal["terminal/kill"], params: Message, /
    ) -> Awaitable[KillTerminalResponse]: ...
    @overload
    def __call__(
        self, method: Literal["terminal/release"], params: Message, /
    ) -> Awaitable[ReleaseTerminalResponse]: ...


# --------------------------------------------------------------------------------- checks


class _Check:
    """Checks one answer of `method`, naming where it is wrong."""

    def __init__(self, method: str) -> None:
        self.method = method

    def fail(self, where: str, problem: str) -> InvalidAnswer:
        return InvalidAnswer(self.method, where, problem)

    def object(self, value: object, where: str, *, empty: bool = False) -> Message:
        """`value` as an object (`empty`: `null` reads as `{}`)."""
        if value is None and empty:
            return {}
        if not isinstance(value, dict):
            raise self.fail(where, f"is not an object ({shown(value)})")
        return cast("Message", value)

    def string(self, fields: Mapping[str, object], key: str, where: str) -> str:
        value = fields.get(key)
        if not isinstance(value, str):
            raise self.fail(f"{where}.{key}", f"is not a string ({shown(value)})")
        return value

    def maybe(self, fields: Mapping[str, object], key: str, where: str, kind: type) -> None:
        """`key` is absent, null or of `kind` (an `int` is never a bool)."""
        value = fields.get(key)
        if value is None:
            return
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise self.fail(f"{where}.{key}", f"is not a {kind.__name__} ({shown(value)})")


def _empty(check: _Check, result: object) -> Message:
    return check.object(result, "result", empty=True)


def _read_text_file(check: _Check, result: object) -> Message:
    fields = check.object(result, "result")
    check.string(fields, "content", "result")
    return fields


def _request_permission(check: _Check, result: object) -> Message:
    fields = check.object(result, "result")
    outcome = check.object(fields.get("outcome"), "result.outcome")
    match outcome.get("outcome"):
        case "cancelled":
            pass
        case "selected":
            check.string(outcome, "optionId", "result.outcome")
        case other:
            raise check.fail("result.outcome.outcome", f"is not an outcome ({shown(other)})")
    return fields


def _create_elicitation(check: _Check, result: object) -> Message:
    fields = check.object(result, "result")
    action = check.string(fields, "action", "result")
    content = fields.get("content")
    if action == "accept" and content is not None:
        for name, value in check.object(content, "result.content").items():
            if not _content_value(value):
                raise check.fail(f"result.content.{name}", f"is not a value ({shown(value)})")
    return fields


def _content_value(value: object) -> bool:
    """A form field's value: text, a number, a boolean or a list of texts."""
    if isinstance(value, list):
        return all(isinstance(item, str) for item in cast("list[object]", value))
    return isinstance(value, str | int | float | bool)


def _create_terminal(check: _Check, result: object) -> Message:
    fields = check.object(result, "result")
    check.string(fields, "terminalId", "result")
    return fields


def _exit_status(check: _Check, fields: Mapping[str, object], where: str) -> None:
    check.maybe(fields, "exitCode", where, int)
    check.maybe(fields, "signal", where, str)


def _terminal_output(check: _Check, result: object) -> Message:
    fields = check.object(result, "result")
    check.string(fields, "output", "result")
    if not isinstance(fields.get("truncated"), bool):
        raise check.fail("result.truncated", f"is not a boolean ({shown(fields.get('truncated'))})")
    status = fields.get("exitStatus")
    if status is not None:
        _exit_status(check, check.object(status, "result.exitStatus"), "result.exitStatus")
    return fields


def _wait_for_exit(check: _Check, result: object) -> Message:
    fields = check.object(result, "result")
    _exit_status(check, fields, "result")
    return fields


_CHECKS: dict[str, Callable[[_Check, object], Message]] = {
    "fs/read_text_file": _read_text_file,
    "fs/write_text_file": _empty,
    "session/request_permission": _request_permission,
    "elicitation/create": _create_elicitation,
    "terminal/create": _create_terminal,
    "terminal/output": _terminal_output,
    "terminal/wait_for_exit": _wait_for_exit,
    "terminal/kill": _empty,
    "terminal/release": _empty,
}

CHECKED_METHODS = frozenset(_CHECKS)
"""Every request the client answers (`acp_server.protocol.methods.CLIENT_REQUESTS`: a test)."""


def checked(method: str, result: object) -> Any:
    """The editor's `result` for our request `method`, in the method's shape (a method this
    module does not know is returned as it came).

    Raises:
        InvalidAnswer: the result does not have the method's shape.
    """
    check = _CHECKS.get(method)
    return result if check is None else check(_Check(method), result)
