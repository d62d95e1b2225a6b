"""earshot's one logging module: structlog loggers that import structlog at their first line.

Every package logs through here (`get_logger(__name__)`), whatever its layer: this module sits in
the lowest one (`providers`) and imports nothing of ours, so sessions, the agent, the ACP server
and the CLI all can. structlog costs about 100 ms to import (`structlog.dev` pulls in rich), and
a healthy session rarely logs, so nothing imports it until a line is logged: `get_logger` returns
a stand-in, and the first line logged anywhere imports structlog and applies the configuration
(`configure`, which the front end calls at start-up without paying for the import).

Lines go to stderr (or are appended to `EARSHOT_LOG_FILE`), at `EARSHOT_LOG_LEVEL` and above
(default INFO), tracebacks as plain text: never on stdout, which carries JSON-RPC (ACP) or the
answer (print mode). On a terminal they are for a person (`2026-01-01T10:00:00Z [info] ignored
notification method=...`); anywhere else (an editor's log pane, a pipe, the log file) they are
JSON, one object per line: JSON on a terminal would look like protocol messages to someone typing
them into `earshot --stdio`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import Any, TextIO

LOG_FILE_ENV = "EARSHOT_LOG_FILE"
LOG_LEVEL_ENV = "EARSHOT_LOG_LEVEL"

_configured = False
"""structlog is imported and configured (the first line was logged)."""


class _Wanted:
    """The configuration `configure` asked for."""

    __slots__ = ("file", "level", "stream")

    def __init__(self, file: str | None, level: str, stream: TextIO | None) -> None:
        self.file = file
        self.level = level
        self.stream = stream


_wanted: _Wanted | None = None
"""Applied at the first line; None: structlog's defaults (nothing configured it)."""


def configure(*, environ: Mapping[str, str] | None = None, stream: TextIO | None = None) -> None:
    """Send every line of the process to `stream` (default: stderr, or the file named by
    `EARSHOT_LOG_FILE`) at `EARSHOT_LOG_LEVEL` and above: plain lines on a terminal, JSON
    elsewhere. Applied at the first line logged; at once when structlog is already in use (every
    logger follows: none is cached). Idempotent."""
    global _wanted
    environ = os.environ if environ is None else environ
    _wanted = _Wanted(
        environ.get(LOG_FILE_ENV) or None, environ.get(LOG_LEVEL_ENV, "INFO").upper(), stream
    )
    if _configured:
        _apply(_wanted)


def _apply(wanted: _Wanted) -> None:
    import logging

    import structlog

    stream = wanted.stream or sys.stderr
    if wanted.file is not None:
        stream = open(wanted.file, "a", encoding="utf-8", buffering=1)  # noqa: SIM115 (kept open)
    level = getattr(logging, wanted.level, logging.INFO)
    processors: list[Any] = [
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    if for_a_person(stream):
        processors.append(
            structlog.dev.ConsoleRenderer(
                colors=False, exception_formatter=structlog.dev.plain_traceback
            )
        )
    else:
        processors.append(structlog.processors.format_exc_info)
        processors.append(structlog.processors.JSONRenderer(default=repr))
    structlog.configure(
        processors=processors,
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(file=stream),
        # Not cached: `configure` may point every logger elsewhere (logging is rare).
        cache_logger_on_first_use=False,
    )


def for_a_person(stream: TextIO) -> bool:
    """Whether lines written to `stream` are read on a terminal (then plain text, not JSON)."""
    try:
        return stream.isatty()
    except (AttributeError, ValueError, OSError):
        return False


def _structlog_logger(name: str) -> Any:
    global _configured
    import structlog

    if not _configured:
        _configured = True
        if _wanted is not None:
            _apply(_wanted)
    return structlog.get_logger(name)


class Logger:
    """A structlog logger for one name, made at its first line (`log.warning("event", key=1)`;
    `exc_info=True` adds the traceback)."""

    __slots__ = ("_logger", "_name")

    def __init__(self, name: str) -> None:
        self._name = name
        self._logger: Any = None

    def _bound(self) -> Any:
        if self._logger is None:
            self._logger = _structlog_logger(self._name)
        return self._logger

    def debug(self, event: str, **fields: Any) -> None:
        self._bound().debug(event, **fields)

    def info(self, event: str, **fields: Any) -> None:
        self._bound().info(event, **fields)

    def warning(self, event: str, **fields: Any) -> None:
        self._bound().warning(event, **fields)

    def error(self, event: str, **fields: Any) -> None:
        self._bound().error(event, **fields)


def get_logger(name: str) -> Logger:
    """The logger for `name` (a module's `__name__`); structlog loads at its first line."""
    return Logger(name)
