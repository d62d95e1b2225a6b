"""ACP's unstable `auth/status` and `auth/status_update` (`schema.unstable.json`; advertised as
`agentCapabilities.auth.status`): whether a session can start without the user signing in, and
the credentials earshot found (what that means is the composition root's, behind
`AuthStatusSource`: `earshot.auth_status`). Never a key: accounts are labels.

`auth/status` reads the settings again first, so it answers for the files as they are. ACP v1
has no client capability for the update, so `auth/status_update` goes only to a client that has
asked `auth/status` (it knows the method; any other client sees what it always saw), and only
when what it would say differs from what the client last heard. It is reconsidered when
credentials can have changed: after `providers/set` and `providers/disable`, `authenticate` and
`logout`, and each `session/new`, `session/load` and `session/resume` (which read the settings
again).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from acp_server.framing import Message, RawObject
from acp_server.jsonrpc import RequestContext

if TYPE_CHECKING:
    from pathlib import Path

    from acp_server.ports import Workspaces
    from acp_server.session_table import SessionSlot

JsonObject = dict[str, Any]


class AuthStatus:
    """The `auth/status` handler and the updates that follow it, for one connection."""

    def __init__(
        self,
        *,
        workspaces: Workspaces,
        slots: Callable[[], Sequence[SessionSlot]],
        notify: Callable[[str, Message], Awaitable[None]],
    ) -> None:
        self._workspaces = workspaces
        self._slots = slots
        self._notify = notify
        self._heard: JsonObject | None = None
        """What the client last heard; None until it asked (it gets no update before)."""

    async def status(self, params: RawObject, context: RequestContext) -> JsonObject:
        self._heard = self._read()
        return self._heard

    async def changed(self) -> None:
        """Credentials may have changed: a client that asked hears the new status, if it is."""
        if self._heard is None:
            return
        status = self._read()
        if status != self._heard:
            self._heard = status
            await self._notify("auth/status_update", status)

    def _read(self) -> JsonObject:
        try:  # the directory's settings read again: a key set meanwhile counts
            return self._workspaces.open(self._cwd()).auth_status()
        except Exception:  # unreadable settings: never an error, which a client reads as auth
            return {"state": "unknown"}

    def _cwd(self) -> Path:
        """Whose settings: the first session's directory, else the process's."""
        for slot in self._slots():
            return slot.setup.cwd
        from pathlib import Path

        return Path.cwd()


__all__ = ["AuthStatus"]
