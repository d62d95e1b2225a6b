"""Logging for the server: structlog to stderr (or `EARSHOT_LOG_FILE`), configured on first use.

On a terminal the lines are for a person (`2026-01-01T10:00:00Z [info] ignored notification
method=...`); anywhere else (an editor's log pane, a pipe, the log file) they are JSON, one
object per line. JSON on a terminal would look like protocol messages to someone typing them.

structlog costs tens of milliseconds to import, so nothing on the `initialize` path logs, and the
agent's and the session store's loggers import it only when they first log (`install`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import Any, TextIO

_logger: Any = None
_installed = False


def configure() -> None:
    """Send every structlog logger of the process (the agent's too) to stderr or the log file,
    unless `log_to` chose a stream already. Idempotent."""
    if _logger is None:
        log_to(_stream())


def log_to(stream: TextIO) -> None:
    """Send every structlog logger of the process to `stream` from now on (a server run in a
    test process logs to a buffer of its own): plain lines on a terminal, JSON elsewhere."""
    global _logger
    _logger = _configure(stream)


def install() -> None:
    """Configure structlog (as `configure` does) before the agent or the session store first
    logs, without importing it now."""
    global _installed
    if _installed:
        return
    _installed = True
    from agent._log import configure_before_first_use as before_agent_logs
    from sessions._log import configure_before_first_use as before_sessions_log

    before_agent_logs(configure)
    before_sessions_log(configure)


def _stream() -> TextIO:
    path = os.environ.get("EARSHOT_LOG_FILE")
    return open(path, "a", encoding="utf-8", buffering=1) if path else sys.stderr


def for_a_person(stream: TextIO) -> bool:
    """Whether log lines go to a terminal (then they are plain text, not JSON)."""
    try:
        return stream.isatty()
    except (AttributeError, ValueError, OSError):
        return False


def _configure(stream: TextIO) -> Any:
    import logging

    import structlog

    level = getattr(logging, _level(), logging.INFO)
    renderer: Any = (
        structlog.dev.ConsoleRenderer(
            colors=False, exception_formatter=structlog.dev.plain_traceback
        )
        if for_a_person(stream)
        else structlog.processors.JSONRenderer(default=repr)
    )
    processors: list[Any] = [
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    if not for_a_person(stream):
        processors.append(structlog.processors.format_exc_info)
    structlog.configure(
        processors=[*processors, renderer],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(file=stream),
        # Not cached: `log_to` may point every logger elsewhere (logging is rare).
        cache_logger_on_first_use=False,
    )
    return structlog.get_logger("earshot.acp")


def _level() -> str:
    return os.environ.get("EARSHOT_LOG_LEVEL", "INFO").upper()


def log(event: str, fields: Mapping[str, object], *, debug: bool = False) -> None:
    """Log one event; an `exc` field is logged with its traceback. A `debug` event costs nothing
    unless `EARSHOT_LOG_LEVEL` is `DEBUG` (structlog is not even imported for it)."""
    if debug and _level() != "DEBUG":
        return
    install()
    configure()
    values = dict(fields)
    exc = values.pop("exc", None)
    if isinstance(exc, BaseException):
        _logger.error(event, exc_info=exc, **values)
    elif debug:
        _logger.debug(event, **values)
    else:
        _logger.info(event, **values)
