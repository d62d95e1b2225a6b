"""The server's log lines, through earshot's one logging module (`providers.logs`).

structlog loads at the first line logged, so nothing on the `initialize` path pays for it.
"""

from __future__ import annotations

from collections.abc import Mapping

from providers.logs import configure, get_logger

_log = get_logger("earshot.acp")


def install() -> None:
    """Lines go to stderr (or `EARSHOT_LOG_FILE`) as JSON, from the first one on; structlog is
    not imported now."""
    configure()


def log(event: str, fields: Mapping[str, object]) -> None:
    """Log one event; an `exc` field is logged with its traceback."""
    values = dict(fields)
    exc = values.pop("exc", None)
    if isinstance(exc, BaseException):
        _log.error(event, exc_info=exc, **values)
    else:
        _log.info(event, **values)
