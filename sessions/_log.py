"""Warnings about damaged or unfamiliar session files.

structlog is imported on first use: importing `sessions` stays cheap, and a healthy file never
warns. A front end that configures structlog registers that with `configure_before_first_use`, so
the configuration is in place before the first warning.
"""

from __future__ import annotations

from collections.abc import Callable

_configurers: list[Callable[[], None]] = []
_used = False


def configure_before_first_use(configure: Callable[[], None]) -> None:
    """Run `configure` (it should be idempotent) before the first warning is logged; at once when
    one already has been."""
    if _used:
        configure()
    elif configure not in _configurers:
        _configurers.append(configure)


def warn(event: str, **fields: object) -> None:
    """Log a recoverable problem (a skipped line, a torn write) at warning level."""
    global _used
    import structlog

    if not _used:
        _used = True
        for configure in _configurers:
            configure()
        _configurers.clear()
    structlog.get_logger("earshot.sessions").warning(event, **fields)
