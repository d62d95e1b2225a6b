"""The one way every command turns the id a user typed into a session id: the id itself, or a
unique prefix of one (`audit` and `blame` print the first 13 characters, `01a249d1-e932`).

`sessions show`, `sessions tree`, `sessions replay`, `-p --resume` and `-p --fork` all resolve
through `resolve_session_id`, so an id one command prints, every other takes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sessions import SessionStore

CANDIDATES_SHOWN = 10


class SessionIdProblem(Exception):
    """No session, or several, match what was given; the message says which and what to do."""


def resolve_session_id(given: str, store: SessionStore | None = None) -> str:
    """The session `given` names: an id, or the one id (of any directory) that starts with it.

    Raises:
        SessionIdProblem: nothing given, no session matches, or several do (listed).
    """
    from sessions import SessionStore

    prefix = given.strip()
    if not prefix:
        raise SessionIdProblem("a session id is needed (see `earshot sessions list --all`)")
    matches = (store or SessionStore()).ids_starting_with(prefix)
    if prefix in matches:
        return prefix
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise SessionIdProblem(f"no session {given!r} (see `earshot sessions list --all`)")
    listed = ", ".join(matches[:CANDIDATES_SHOWN])
    more = len(matches) - CANDIDATES_SHOWN
    listed += f" and {more} more" if more > 0 else ""
    raise SessionIdProblem(f"{given!r} matches several sessions: {listed}; give more of the id")


__all__ = ["SessionIdProblem", "resolve_session_id"]
