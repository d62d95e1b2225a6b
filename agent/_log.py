"""The agent's structlog loggers, imported on first use.

structlog (which pulls in rich) costs tens of milliseconds to import, and the agent's modules are
on the path of an editor's first `session/new`, while a healthy session rarely logs. So
`get_logger(name)` returns a stand-in that imports structlog when it is first used. A front end
that configures structlog registers that with `configure_before_first_use`, so the configuration
is in place before the first event is logged, as if it had been done at start-up.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_configurers: list[Callable[[], None]] = []
_used = False


def configure_before_first_use(configure: Callable[[], None]) -> None:
    """Run `configure` (it should be idempotent) before the first agent logger is used; at once
    when one already has been."""
    if _used:
        configure()
    elif configure not in _configurers:
        _configurers.append(configure)


def _structlog_logger(name: str) -> Any:
    global _used
    import structlog

    if not _used:
        _used = True
        for configure in _configurers:
            configure()
        _configurers.clear()
    return structlog.get_logger(name)


class _LazyLogger:
    """Delegates to `structlog.get_logger(name)`, made on first use."""

    __slots__ = ("_logger", "_name")

    def __init__(self, name: str) -> None:
        self._name = name
        self._logger: Any = None

    def __getattr__(self, attribute: str) -> Any:
        if self._logger is None:
            self._logger = _structlog_logger(self._name)
        return getattr(self._logger, attribute)


def get_logger(name: str) -> Any:
    """A structlog logger for `name` (`_log.warning("event", key=value)`), imported lazily."""
    return _LazyLogger(name)
