"""ACP's unstable methods on sessions that need not be open: `session/set_title`,
`session/status`, `session/archive`, `session/unarchive` (`schema.unstable.json`; advertised as
`sessionCapabilities.title`, `.status` and `.archive`). `session/list`'s `archived` filter and
field are `AcpServer.session_list`'s.

- A title the client sets is a title entry in the session's transcript, as `/title` writes it
  (`agent.session.labels`): through the open session when this connection has it (its clients
  get the `session_info_update`), else by opening the file, appending, closing. A session
  another process has open is read-only here: -32003, as a prompt gets. Titles are one line of
  at most 200 characters (longer ones are cut); an empty one is -32602.
- `session/status` has no side effect: `open` when a connection of this process has the session
  (opening or open), `saved` when it is only on disk (another process may have it open: that
  process is not this agent's memory).
- Archiving closes the session on this connection first (as `session/close`: its turn is
  cancelled), then marks it (`sessions.archive`); the transcript is untouched.
Each answers -32002 (`data.sessionId`) for a session that does not exist.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

from acp_server.framing import InvalidParams, RawObject
from acp_server.jsonrpc import RequestContext, RequestHandler

if TYPE_CHECKING:
    from acp_server.ports import SessionMaker
    from acp_server.protocol.unstable.sessions import (
        ArchiveSessionResponse,
        SessionStatusResponse,
        SetSessionTitleResponse,
        UnarchiveSessionResponse,
    )
    from acp_server.session_table import SessionTable

_TABLES: weakref.WeakSet[SessionTable] = weakref.WeakSet()
"""The session tables of every connection of this process (`earshot serve` has several)."""


def _session_id(params: RawObject) -> str:
    value = params.get("sessionId")
    if not isinstance(value, str) or not value:
        raise InvalidParams("sessionId", "invalid params: sessionId must be a non-empty string")
    return value


class SessionMethods:
    """The four handlers, over one connection's session maker and session table."""

    def __init__(self, *, sessions: SessionMaker, table: SessionTable) -> None:
        self._sessions = sessions
        self._table = table
        _TABLES.add(table)

    def handlers(self) -> dict[str, RequestHandler]:
        return {
            "session/set_title": self.set_title,
            "session/status": self.status,
            "session/archive": self.archive,
            "session/unarchive": self.unarchive,
        }

    def _known(self, session_id: str) -> None:
        """Raises: UnknownSession when no session (open or saved) has this id."""
        if self._table.get(session_id) is None and not self._sessions.store.exists(session_id):
            from acp_server.errors import UnknownSession

            raise UnknownSession(session_id)

    async def set_title(
        self, params: RawObject, context: RequestContext
    ) -> SetSessionTitleResponse:
        from agent.session.labels import normal_title

        session_id = _session_id(params)
        raw = params.get("title")
        if not isinstance(raw, str):
            raise InvalidParams("title", "invalid params: title must be a string")
        try:
            title = normal_title(raw)
        except ValueError as exc:
            raise InvalidParams("title", f"invalid params: {exc}") from None
        self._known(session_id)
        slot = self._table.get(session_id)
        if slot is not None:
            live = await slot.session()
            await live.agent.labels.set_title(title)
            await live.channel.update({"sessionUpdate": "session_info_update", "title": title})
        else:
            await _retitle_saved(self._sessions, session_id, title)
        return {"title": title}

    async def status(self, params: RawObject, context: RequestContext) -> SessionStatusResponse:
        session_id = _session_id(params)
        if any(table.get(session_id) is not None for table in _TABLES):
            return {"status": "open"}
        self._known(session_id)
        return {"status": "saved"}

    async def archive(self, params: RawObject, context: RequestContext) -> ArchiveSessionResponse:
        session_id = _session_id(params)
        self._known(session_id)
        await self._table.close(session_id)  # its work cancelled, its resources freed
        if not self._sessions.store.archive(session_id):
            from acp_server.errors import UnknownSession

            raise UnknownSession(session_id)
        return {}

    async def unarchive(
        self, params: RawObject, context: RequestContext
    ) -> UnarchiveSessionResponse:
        session_id = _session_id(params)
        if not self._sessions.store.archive(session_id, archived=False):
            from acp_server.errors import UnknownSession

            raise UnknownSession(session_id)
        return {}


async def _retitle_saved(sessions: SessionMaker, session_id: str, title: str) -> None:
    """A title entry appended to a session this connection does not have open.

    Raises:
        sessions.SessionBusy: another process (or connection) has it open.
    """
    import anyio

    from sessions import TitleEntry

    stored = await sessions.store.open(session_id)
    try:
        if not stored.writable:
            await stored.claim()
        await stored.append(TitleEntry(title=title))
    finally:
        with anyio.CancelScope(shield=True):
            await stored.aclose()


__all__ = ["SessionMethods"]
