"""Logging for the server: structlog to stderr (or `EARSHOT_LOG_FILE`), configured on first use.

structlog costs tens of milliseconds to import, so nothing on the `initialize` path logs, and the
agent's and the session store's loggers import it only when they first log (`install`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import Any

_logger: Any = None


def configure() -> None:
    """Send every structlog logger of the process (the agent's too) to stderr or the log file.
    Idempotent; called once the `initialize` reply is out."""
    global _logger
    if _logger is None:
        _logger = _configure()


def install() -> None:
    """Configure structlog (as `configure` does) before the agent or the session store first
    logs, without importing it now."""
    from agent._log import configure_before_first_use as before_agent_logs
    from sessions._log import configure_before_first_use as before_sessions_log

    before_agent_logs(configure)
    before_sessions_log(configure)


def _configure() -> Any:
    import logging

    import structlog

    path = os.environ.get("EARSHOT_LOG_FILE")
    stream = open(path, "a", encoding="utf-8", buffering=1) if path else sys.stderr  # noqa: SIM115
    level = getattr(logging, os.environ.get("EARSHOT_LOG_LEVEL", "INFO").upper(), logging.INFO)
    structlog.configure(
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            structlog.processors.JSONRenderer(default=repr),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(file=stream),
        cache_logger_on_first_use=True,
    )
    return structlog.get_logger("earshot.acp")


def log(event: str, fields: Mapping[str, object]) -> None:
    """Log one event; an `exc` field is logged with its traceback."""
    configure()
    values = dict(fields)
    exc = values.pop("exc", None)
    if isinstance(exc, BaseException):
        _logger.error(event, exc_info=exc, **values)
    else:
        _logger.info(event, **values)
