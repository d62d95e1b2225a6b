"""Time-ordered identifiers."""

from __future__ import annotations


def new_id() -> str:
    """A UUIDv7 string; ids made later (in this process) sort after earlier ones."""
    raise NotImplementedError
