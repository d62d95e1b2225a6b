"""The session tree over ACP: `session/fork` (unstable), children in `session/list`, and the
conversation sent again after `/rewind`.

`session/fork` copies the source's current branch into a new session (its own id and file, whose
header records the origin) and opens it with `session/resume`: the answer is `session/new`'s
(modes, config options), and `session/load` of the new id replays the copied history. Where the
copy ends is, in `_meta.earshot`:
- nothing: the whole current branch;
- `beforeUserMessage: N`: just before the Nth user message of the branch, found as `/fork N`
  finds it (`agent.history.fork_point`; before a first entry: an empty fork, nothing copied);
- `upToMessageId: ID`: up to and including that message (a `messageId` the editor was shown:
  replayed user messages and assistant chunks carry their entry's id).

`session/list` leaves a subagent's session out unless the request's `_meta.earshot.children` is
`true` (or it names `parentSessionId: ID`, which lists only the children of ID); a child it
lists is marked `_meta.earshot.parent: {sessionId, toolCallId}` (and a fork
`_meta.earshot.forkedFrom`).

After `/rewind` the editor still shows the old conversation, and ACP has no way to clear it. So
the live session sends the rewound branch again, as `session/load` would, between two agent
text lines that say what follows (`rewound_replay`), under fresh ids: a tool call id is unique
in a session, and Toad and Zed update the card an id names (the old one, up in the
conversation) rather than show a new one. Each id is the original with `~rN` appended (N counts
the session's rewinds); `upToMessageId` takes either form.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, cast

from acp_server import params as p
from acp_server.framing import InvalidParams, RawObject, shown
from acp_server.updates import message_chunk

if TYPE_CHECKING:
    from acp_server.client_io import SessionChannel
    from acp_server.jsonrpc import RequestContext
    from acp_server.protocol.common import JsonValue
    from acp_server.protocol.prompt import SessionUpdate
    from acp_server.protocol.sessions import ResumeSessionResponse
    from acp_server.protocol.unstable.sessions import ListSessionsRequest, ResumeSessionRequest
    from agent.history import ForkPoint
    from sessions import SessionStore, SessionSummary

REWIND_START = "\n\n— Rewound. The conversation as it now stands: —\n\n"
REWIND_END = "\n\n— End of the rewound conversation. —\n\n"
Resume = Callable[["ResumeSessionRequest", "RequestContext"], Awaitable["ResumeSessionResponse"]]


async def session_fork(
    store: SessionStore, resume: Resume, params: RawObject, context: RequestContext
) -> dict[str, JsonValue]:
    """`session/fork`: the copy is made on disk, then opened by the server's `session/resume`
    (`resume`: the same params, the fork's id), whose answer it is, with that id. The params
    are checked (as `session/resume`'s) before anything is copied."""
    from agent.history import fork_session

    request = p.resume_session(params)
    source_id = request["sessionId"]
    # The copy is what is on disk: forking a session whose turn is still running copies it as
    # far as it got (calls without results are answered "interrupted" in the copy).
    forked_id = await fork_session(store, source_id, await _fork_point(store, source_id, params))
    answer = await resume({**request, "sessionId": forked_id}, context)
    return {"sessionId": forked_id, **cast("dict[str, JsonValue]", answer)}


async def _fork_point(store: SessionStore, source_id: str, params: RawObject) -> ForkPoint:
    """Where the fork's copy ends, from `_meta.earshot` (`agent.history.fork_point`, as `/fork`
    finds it).

    Raises:
        InvalidParams: the meta names no message of the source's branch.
        sessions.SessionNotFound: no such source.
    """
    from agent.history import ForkPoint, fork_point, user_messages

    meta = _earshot_meta(params)
    number = meta.get("beforeUserMessage")
    message_id = meta.get("upToMessageId")
    if number is None and message_id is None:
        return fork_point(None)
    source = await store.open(source_id, claim=False)
    try:
        entries = source.path_entries()
    finally:
        await source.aclose()
    if number is not None:
        messages = user_messages(entries)
        if not isinstance(number, int) or isinstance(number, bool):
            raise InvalidParams("_meta.earshot.beforeUserMessage", "invalid params: not a number")
        if not 1 <= number <= len(messages):
            raise InvalidParams(
                "_meta.earshot.beforeUserMessage",
                f"invalid params: the branch has {len(messages)} user message(s)",
            )
        return fork_point(messages[number - 1])
    if isinstance(message_id, str):  # as a rewound replay showed it (`renamed`)
        message_id = re.sub(rf"{re.escape(REWOUND_ID_MARK)}\d+$", "", message_id)
    if not isinstance(message_id, str) or all(entry.id != message_id for entry in entries):
        raise InvalidParams(
            "_meta.earshot.upToMessageId",
            f"invalid params: no message {shown(message_id)} on the source's branch",
        )
    return ForkPoint(last=message_id)


def list_filter(request: ListSessionsRequest) -> tuple[bool, str | None]:
    """`(children, parent_id)` for `SessionStore.list` from a `session/list` request."""
    meta = _earshot_meta(cast("RawObject", request))
    parent_id = meta.get("parentSessionId")
    # Children (a subagent's sessions) are left out unless asked for: Zed and acpx list every
    # session as history, and a "Subagent: ..." row there is noise.
    children = meta.get("children", parent_id is not None)
    if not isinstance(children, bool):
        raise InvalidParams("_meta.earshot.children", "invalid params: children is a boolean")
    if parent_id is not None and not isinstance(parent_id, str):
        raise InvalidParams(
            "_meta.earshot.parentSessionId", "invalid params: parentSessionId is a session id"
        )
    return children, parent_id


def list_meta(item: SessionSummary) -> dict[str, JsonValue] | None:
    """The `_meta` of one `session/list` row: where a child or fork came from."""
    earshot: dict[str, JsonValue] = {}
    if item.parent is not None:
        earshot["parent"] = {
            "sessionId": item.parent.session_id,
            "toolCallId": item.parent.call_id,
        }
    if item.forked_from is not None:
        earshot["forkedFrom"] = {
            "sessionId": item.forked_from.session_id,
            "entryId": item.forked_from.entry_id,
        }
    return {"earshot": earshot} if earshot else None


async def rewound_replay(
    channel: SessionChannel, replay: Callable[[Renamer], Awaitable[None]], generation: int
) -> None:
    """After `/rewind`: the current branch again (`replay`: as `session/load` sends it, its
    updates passed through the renamer it is given), between two lines saying what it is,
    with every id made fresh for this rewind (`generation`: the session's Nth)."""
    await channel.update(message_chunk("agent_message_chunk", REWIND_START, None))
    await replay(lambda update: renamed(update, f"{REWOUND_ID_MARK}{generation}"))
    await channel.update(message_chunk("agent_message_chunk", REWIND_END, None))


REWOUND_ID_MARK = "~r"
_RENAMED_KEYS = frozenset({"toolCallId", "parentToolCallId", "messageId"})

Renamer = Callable[["SessionUpdate"], "SessionUpdate"]


def renamed(update: SessionUpdate, suffix: str) -> SessionUpdate:
    """`update` with every tool call and message id (also `_meta.earshot.parentToolCallId`)
    given `suffix`."""
    return cast("SessionUpdate", _renamed(cast("JsonValue", update), suffix))


def _renamed(value: JsonValue, suffix: str) -> JsonValue:
    if isinstance(value, dict):
        return {
            key: f"{item}{suffix}"
            if key in _RENAMED_KEYS and isinstance(item, str)
            else _renamed(item, suffix)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_renamed(item, suffix) for item in value]
    return value


def _earshot_meta(params: RawObject) -> RawObject:
    meta = params.get("_meta")
    if not isinstance(meta, dict):
        return {}
    earshot = cast("RawObject", meta).get("earshot")
    return cast("RawObject", earshot) if isinstance(earshot, dict) else {}
