"""Timestamps as session files write them: ISO 8601 UTC, millisecond precision, `Z` suffix."""

from __future__ import annotations

from datetime import UTC, datetime


def utc_now() -> str:
    """Now, e.g. `2025-01-31T12:00:00.000Z`."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def utc_from_ns(timestamp_ns: int) -> str:
    """A POSIX timestamp in nanoseconds (a file mtime) in the same format."""
    moment = datetime.fromtimestamp(timestamp_ns / 1e9, UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
