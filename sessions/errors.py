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


class SessionBusy(RuntimeError):
    """Another process is writing this session (it holds the session's writer lock). The session
    can be read here, but nothing may be appended until that process lets it go."""

    def __init__(self, session_id: str, holder: Holder | None) -> None:
        self.session_id = session_id
        self.holder = holder
        who = "another process" if holder is None else holder.describe()
        super().__init__(
            f"session {session_id} is open in {who}: it is read-only here. Close it there "
            "(or end that process) and try again: this process then takes it over."
        )


class SessionWriteFailed(OSError):
    """Appending to a session file failed (disk full, read-only file system, I/O error). Nothing
    of the failed entry is left in the file; everything appended before it is intact."""

    def __init__(self, path: str, cause: OSError) -> None:
        reason = cause.strerror or type(cause).__name__
        super().__init__(cause.errno, f"the session file could not be written ({reason}): {path}")
        self.path = path
        self.reason = reason


class Holder:
    """Who holds a session's writer lock, as that process recorded it (best effort: the lock
    itself is the truth, this only names it)."""

    __slots__ = ("pid", "process", "since")

    def __init__(self, *, pid: int | None, process: str | None, since: str | None) -> None:
        self.pid = pid
        self.process = process
        self.since = since

    def describe(self) -> str:
        """E.g. "earshot --stdio (pid 4242, since 2025-01-02T03:04:05Z)"."""
        details = [f"pid {self.pid}"] if self.pid is not None else []
        if self.since:
            details.append(f"since {self.since}")
        name = self.process or "another process"
        return f"{name} ({', '.join(details)})" if details else name

    def to_json(self) -> dict[str, str | int | None]:
        return {"pid": self.pid, "process": self.process, "since": self.since}
