"""Warnings about damaged or unfamiliar session files.

structlog is imported on first use: importing `sessions` stays cheap, and a healthy file never
warns.
"""

from __future__ import annotations


def warn(event: str, **fields: object) -> None:
    """Log a recoverable problem (a skipped line, a torn write) at warning level."""
    import structlog

    structlog.get_logger("earshot.sessions").warning(event, **fields)
