"""What the session store raises."""

from __future__ import annotations


class SessionNotFound(LookupError):
    """No session with that id exists."""


class SessionUnreadable(SessionNotFound):
    """A file with that id exists but its first line is not a session header (a crash while it
    was being created, or not a session file at all)."""


class EntryNotFound(LookupError):
    """The session has no entry with that id (or it is a leaf move, which no path contains)."""


class InvalidCursor(ValueError):
    """A listing cursor that this store did not hand out."""
