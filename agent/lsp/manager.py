"""A session's language servers, and the one call the edit tools make after an edit.

`LspManager` is an async context manager owning a task group: a server (from the `lsp`
settings, by file suffix) starts on the first edit of a file it checks, stays up for the
session, and is shut down when the context exits. `diagnostics_after_edit(path, old_text,
new_text)` sends the old text (unless the server has it already), then the new, and reports the
diagnostics the edit INTRODUCED: those of the new text that the old text did not have, compared
by severity, code, source and message (not position: an edit above a problem moves it). The
file's existing problems are not the edit's, and reporting them would send the model off fixing
what it was not asked to touch.

Everything is bounded. A server that cannot start, answers too slowly or crashes becomes a note
in the result instead of a wait or an exception; a server that failed `MAX_FAILURES` times is
not started again this session (the note says so once).
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Final, Self

import anyio
from anyio.abc import TaskGroup

from agent.lsp.client import (
    LanguageServer,
    ServerConfig,
    ServerProblem,
    diagnostic_key,
    severity_name,
)

if TYPE_CHECKING:
    from lsprotocol import types as lsp

    from agent.backends import Confinement

MAX_FAILURES: Final = 2
MAX_REPORTED: Final = 20
"""Introduced diagnostics listed in a result, at most."""
SEVERITIES: Final = {"error": 1, "warning": 2, "info": 3, "hint": 4}


@dataclass(frozen=True, slots=True)
class EditDiagnostics:
    """What checking one edit found."""

    introduced: tuple[str, ...] = ()
    """`path:line:col: severity[code] message (source)` per new problem, worst first."""
    notes: tuple[str, ...] = ()
    """Why the check could not be done (the server is slow, crashed, could not start)."""
    more: int = 0
    """Introduced problems left out of `introduced` (over `MAX_REPORTED`)."""

    def text(self) -> str | None:
        """What to append to the edit's tool result; None when there is nothing to say."""
        parts: list[str] = []
        if self.introduced:
            lines = list(self.introduced)
            if self.more:
                lines.append(f"… and {self.more} more")
            parts.append(
                "The language server reports problems this edit introduced:\n" + "\n".join(lines)
            )
        parts.extend(f"[LSP: {note}]" for note in self.notes)
        return "\n".join(parts) or None


@dataclass(slots=True)
class _Slot:
    server: LanguageServer | None = None
    failures: int = 0
    gave_up: bool = False
    lock: anyio.Lock = field(default_factory=anyio.Lock)


class LspManager:
    """The language servers of one session (see the module docstring)."""

    def __init__(
        self,
        servers: Sequence[ServerConfig],
        root: Path,
        *,
        confinement: Confinement | None = None,
        environment: Mapping[str, str] | None = None,
        min_severity: str = "warning",
    ) -> None:
        self.root = root
        self._configs = tuple(servers)
        self._confinement = confinement
        self._environment = environment
        self._max_severity = SEVERITIES[min_severity]
        self._slots: dict[str, _Slot] = {config.name: _Slot() for config in self._configs}
        self._group: TaskGroup | None = None
        self._stack = contextlib.AsyncExitStack()
        self._diagnostics: dict[Path, list[lsp.Diagnostic]] = {}
        """Each file's diagnostics as last received (the baseline of its next edit)."""

    async def __aenter__(self) -> Self:
        self._group = await self._stack.enter_async_context(anyio.create_task_group())
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> bool | None:
        with anyio.CancelScope(shield=True):
            for slot in self._slots.values():
                if slot.server is not None:
                    await slot.server.close()
                    slot.server = None
        if self._group is not None:
            self._group.cancel_scope.cancel()  # what is left of the servers' readers
        self._group = None
        return await self._stack.__aexit__(exc_type, exc, traceback)

    def running(self) -> dict[str, LanguageServer]:
        """The servers started and not yet closed, by name."""
        return {name: slot.server for name, slot in self._slots.items() if slot.server is not None}

    def config_for(self, path: Path) -> ServerConfig | None:
        """The first configured server whose extensions include `path`'s suffix."""
        suffix = path.suffix.lower()
        return next((c for c in self._configs if suffix in c.extensions), None)

    async def diagnostics_after_edit(
        self, path: Path, old_text: str, new_text: str
    ) -> EditDiagnostics:
        """The problems an edit of `path` from `old_text` to `new_text` introduced (see the
        module docstring). Never raises for a server's failure; the result's notes say it.
        A relative `path` is taken relative to the workspace root."""
        if not path.is_absolute():
            path = self.root / path
        config = self.config_for(path)
        if config is None:
            return EditDiagnostics()
        slot = self._slots[config.name]
        async with slot.lock:
            server, note = await self._server(config, slot)
            if server is None:
                return EditDiagnostics(notes=(note,) if note else ())
            try:
                if server.sent_text(path) == old_text and path in self._diagnostics:
                    before = self._diagnostics[path]
                else:
                    before = await server.diagnostics(path, old_text)
                after = await server.diagnostics(path, new_text)
            except ServerProblem as problem:
                return EditDiagnostics(notes=(self._failed(slot, str(problem)),))
            self._diagnostics[path] = after
        return self._introduced(path, before, after)

    async def _server(
        self, config: ServerConfig, slot: _Slot
    ) -> tuple[LanguageServer | None, str | None]:
        if slot.server is not None and slot.server.running:
            return slot.server, None
        if slot.server is not None:  # it stopped since the last edit
            await slot.server.close()
            slot.server = None
        if slot.gave_up:
            return None, None
        if self._group is None:
            raise RuntimeError("LspManager is used outside its `async with`")
        server = LanguageServer(
            config, self.root, confinement=self._confinement, environment=self._environment
        )
        try:
            await server.start(self._group)
        except ServerProblem as problem:
            return None, self._failed(slot, str(problem))
        for path in [path for path in self._diagnostics if self.config_for(path) == config]:
            del self._diagnostics[path]  # a new process has none of the old documents
        slot.server = server
        return server, None

    def _failed(self, slot: _Slot, problem: str) -> str:
        slot.failures += 1
        if slot.failures >= MAX_FAILURES:
            slot.gave_up = True
            return f"{problem}; it will not be started again in this session"
        return problem

    def _introduced(
        self, path: Path, before: list[lsp.Diagnostic], after: list[lsp.Diagnostic]
    ) -> EditDiagnostics:
        old = Counter(diagnostic_key(d) for d in before)
        new: list[lsp.Diagnostic] = []
        for diagnostic in after:
            key = diagnostic_key(diagnostic)
            if old[key] > 0:
                old[key] -= 1
            elif key[0] <= self._max_severity:
                new.append(diagnostic)
        new.sort(key=lambda d: (diagnostic_key(d)[0], d.range.start.line, d.range.start.character))
        shown = [_format(self.root, path, d) for d in new[:MAX_REPORTED]]
        return EditDiagnostics(introduced=tuple(shown), more=max(0, len(new) - MAX_REPORTED))


def _format(root: Path, path: Path, diagnostic: lsp.Diagnostic) -> str:
    try:
        shown = path.relative_to(root).as_posix()
    except ValueError:
        shown = str(path)
    start = diagnostic.range.start
    code = f"[{diagnostic.code}]" if diagnostic.code is not None else ""
    source = f" ({diagnostic.source})" if diagnostic.source else ""
    message = " ".join(diagnostic.message.split())[:300]
    return (
        f"{shown}:{start.line + 1}:{start.character + 1}: "
        f"{severity_name(diagnostic)}{code} {message}{source}"
    )
