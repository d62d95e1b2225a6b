"""The one table turning domain exceptions into JSON-RPC errors (used by `jsonrpc.Connection`).

Handlers raise what they naturally raise; this table decides the wire code. It imports the domain
modules only when an error actually happens, so the `initialize` path never loads them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from functools import cache

from acp_server.framing import (
    AUTH_REQUIRED,
    INVALID_PARAMS,
    RESOURCE_NOT_FOUND,
    RpcError,
)

_Entry = tuple[tuple[type[Exception], ...], Callable[[Exception], RpcError]]

INVALID_SETTINGS = -32001
"""Server-defined: a settings file is unreadable or invalid (`data`: `file`, `key`). Not
-32602 (the request is fine) nor -32603 (kept for bugs in earshot)."""
SESSION_BUSY = -32003
"""Server-defined: another process has the session open, so it is read-only here (`data`:
`sessionId`, `holder` {pid, process, since} or null)."""
SESSION_NOT_SAVED = -32004
"""Server-defined: the session file cannot be written (disk full, read-only data dir)."""
_SETTINGS_KEY = re.compile(r"[A-Za-z_$][\w$-]*(?:\.[\w$-]+)*")


LOGIN_HINT = " (Or run `earshot login` in a terminal to save a key.)"
"""Said with every -32000: the key can be set without restarting the editor."""


class AuthRequired(RpcError):
    """-32000: the chosen model's provider has no credentials."""

    def __init__(self, message: str) -> None:
        super().__init__(AUTH_REQUIRED, message.rstrip() + LOGIN_HINT)


class UnknownSession(RpcError):
    """-32002: no live or stored session with that id."""

    def __init__(self, session_id: str) -> None:
        super().__init__(
            RESOURCE_NOT_FOUND, f"session not found: {session_id}", {"sessionId": session_id}
        )


def settings_error(exc: Exception) -> RpcError:
    """`agent.settings.scopes.SettingsError` as -32001: "Invalid settings: <file>: <key>:
    <problem>", with `data.file` and `data.key` (null when the file, or no key in it, is at fault).
    The message never holds a value from the file (`SettingsError` guarantees it)."""
    text = str(exc)
    file: str | None = None
    head, separator, rest = text.partition(": ")
    if separator and os.path.isabs(head) and head.endswith(".json"):
        file, text = head, rest
    text = text.removeprefix("invalid settings: ")
    candidate, separator, _ = text.partition(": ")
    key = candidate if separator and _SETTINGS_KEY.fullmatch(candidate) else None
    shown = f"{file}: {text}" if file is not None else text
    return RpcError(INVALID_SETTINGS, f"Invalid settings: {shown}", {"file": file, "key": key})


def _session_busy(exc: Exception) -> RpcError:
    from sessions import SessionBusy

    assert isinstance(exc, SessionBusy)
    holder = None if exc.holder is None else exc.holder.to_json()
    return RpcError(SESSION_BUSY, str(exc), {"sessionId": exc.session_id, "holder": holder})


@cache
def _table() -> tuple[_Entry, ...]:
    from agent.session import ModelUnavailable, UnsupportedPrompt
    from agent.settings import SettingsError
    from providers.registry import MissingCredentials, UnknownProvider
    from sessions import SessionBusy, SessionNotFound, SessionWriteFailed

    return (
        ((SessionBusy,), _session_busy),
        ((SessionWriteFailed,), lambda exc: RpcError(SESSION_NOT_SAVED, str(exc))),
        ((SettingsError,), settings_error),
        (
            (SessionNotFound,),
            lambda exc: RpcError(RESOURCE_NOT_FOUND, f"session not found: {exc}"),
        ),
        (
            (UnsupportedPrompt,),
            lambda exc: RpcError(INVALID_PARAMS, f"unsupported prompt: {exc}", {"field": "prompt"}),
        ),
        ((MissingCredentials, ModelUnavailable), lambda exc: AuthRequired(str(exc))),
        (
            (UnknownProvider,),
            lambda exc: RpcError(INVALID_PARAMS, str(exc), {"field": "value"}),
        ),
    )


def map_exception(exc: Exception) -> RpcError | None:
    """The wire error for a domain exception, or None (an internal error)."""
    for types, build in _table():
        if isinstance(exc, types):
            return build(exc)
    return None
