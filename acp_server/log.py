"""The server's log lines, through earshot's one logging module (`providers.logs`): plain lines
on a terminal, JSON lines anywhere else.

structlog loads at the first line logged, so nothing on the `initialize` path pays for it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TextIO

from providers.logs import LOG_LEVEL_ENV, configure, get_logger

_log = get_logger("earshot.acp")
_installed = False


def install() -> None:
    """Lines go to stderr (or `EARSHOT_LOG_FILE`), from the first one on, unless `log_to` chose
    a stream already; structlog is not imported now. Idempotent."""
    global _installed
    if not _installed:
        _installed = True
        configure()


def log_to(stream: TextIO) -> None:
    """Send every line of the process to `stream` from now on (a server run in a test process
    logs to a buffer of its own)."""
    global _installed
    _installed = True
    configure(stream=stream)


def log(event: str, fields: Mapping[str, object], *, debug: bool = False) -> None:
    """Log one event; an `exc` field is logged with its traceback. A `debug` event costs nothing
    unless `EARSHOT_LOG_LEVEL` is `DEBUG` (structlog is not even imported for it)."""
    if debug and os.environ.get(LOG_LEVEL_ENV, "INFO").upper() != "DEBUG":
        return
    install()
    values = dict(fields)
    exc = values.pop("exc", None)
    if isinstance(exc, BaseException):
        _log.error(event, exc_info=exc, **values)
    elif debug:
        _log.debug(event, **values)
    else:
        _log.info(event, **values)
