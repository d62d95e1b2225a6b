"""A session's code index (`agent.codeindex`): opened lazily, refreshed in the background, never
in a turn's way.

Nothing of the index (sqlite, tree-sitter) is loaded until a turn needs it: the first turn when
the setting `repoMap` is on (for the map in the first request), otherwise the first `repo_map`
or `search_code` call. A refresh is a task in the turn's task group (`turn()`): it runs while
the model thinks and the tools run, reports its progress as notices when it has many files to
read, and is cancelled between two chunks when the turn ends; the cache keeps what it had
read, and the next turn's refresh goes on from there. A session has no task group outliving
its turns, so between turns nothing is indexed (the README's limits say so).

The tools ask `ready()`: it starts a refresh if none ran this turn and waits for it a bounded
time (`TOOL_WAIT`); past that they answer from what is indexed so far, with a note saying so.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncGenerator, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Final

import anyio
from anyio.abc import TaskGroup

from agent.events import AgentEvent, Notice
from providers.logs import get_logger

if TYPE_CHECKING:
    from agent.codeindex.index import CodeIndex, IndexProgress

_log = get_logger(__name__)

TOOL_WAIT: Final = 10.0
"""Seconds a `repo_map` or `search_code` call waits for a running refresh, at most."""
NOTICE_FROM: Final = 500
"""Files to read from which a refresh announces itself (a small one is over at once)."""
_PATHLIKE = re.compile(r"/?[\w.@+-]+(?:/[\w.@+-]+)*\.\w+|[\w.@+-]+(?:/[\w.@+-]+)+")


class CodeIndexHost:
    """The session's `CodeIndex` (see the module docstring)."""

    def __init__(self, root: Path, *, data_dir: Path | None, repo_map: bool) -> None:
        self.root = root
        self.repo_map = repo_map
        """The setting `repoMap`: refresh at each turn's start, and a map in the first request."""
        self.map_sent = False
        """The initial map went into the system prompt (once per session)."""
        self._data_dir = data_dir
        self._index: CodeIndex | None = None
        self._group: TaskGroup | None = None
        self._emit: Callable[[AgentEvent], None] | None = None
        self._done = anyio.Event()
        """Set when the latest refresh ended."""
        self._running = False

    @property
    def index(self) -> CodeIndex:
        if self._index is None:
            from agent.codeindex.index import CodeIndex, default_database

            database = default_database(self.root, self._data_dir)
            self._index = CodeIndex(self.root, database=database)
        return self._index

    @contextlib.asynccontextmanager
    async def turn(self, emit: Callable[[AgentEvent], None]) -> AsyncGenerator[None]:
        """The turn's lifetime for refreshes: started here (with `repoMap`) or by a tool,
        cancelled when the turn ends."""
        async with anyio.create_task_group() as group:
            self._group, self._emit = group, emit
            try:
                if self.repo_map:
                    self.start_refresh()
                yield
            finally:
                self._group = self._emit = None
                group.cancel_scope.cancel()

    def start_refresh(self) -> None:
        """Start a background refresh in the turn, unless one is running (an incremental one
        reads only what changed: the edits since the last)."""
        if self._group is None or self._running:
            return
        self._running = True
        self._done = anyio.Event()
        self._group.start_soon(self._refresh, self._done)

    async def _refresh(self, done: anyio.Event) -> None:
        announced = False

        async def progress(status: IndexProgress) -> None:
            nonlocal announced
            if status.phase == "indexing" and status.done == 0 and status.total >= NOTICE_FROM:
                announced = True
                self._notice(f"Indexing {status.total:,} files for the code map in the background.")
            elif status.phase == "ready" and announced:
                self._notice(f"The code index is ready ({status.total:,} files).")
            elif status.phase == "failed":
                self._notice(f"The code index could not be refreshed: {status.message}")

        try:
            await self.index.refresh(progress)
        except Exception:
            _log.warning("code index refresh failed", exc_info=True)
        finally:
            self._running = False
            done.set()

    def _notice(self, message: str) -> None:
        if self._emit is not None:
            self._emit(Notice(severity="info", message=message))

    async def ready(self) -> CodeIndex:
        """The index for a tool call: brought up to date first, as far as `TOOL_WAIT` allows
        (outside a turn, as it is)."""
        self.start_refresh()
        if self._group is not None:
            with anyio.move_on_after(TOOL_WAIT):
                await self._done.wait()
        return self.index

    async def system_prompt_map(
        self, prompt_text: str, conversation: Sequence[Path], denied: Callable[[Path], bool]
    ) -> str | None:
        """With `repoMap`, once per session: the compact map for the system prompt, centred on
        the files the prompt names and `conversation`; None when it is not wanted, already
        sent, or the index cannot answer at once (a cold cache: tried again next turn)."""
        if not self.repo_map or self.map_sent:
            return None
        from agent.codeindex.index import initial_map

        files = [*self.mentioned_files(prompt_text), *conversation]
        try:
            text = await initial_map(
                self.index,
                conversation=files,
                visible=lambda relative: not denied(self.root / relative),
            )
        except Exception:
            _log.warning("initial repository map failed", exc_info=True)
            return None
        if text is None:
            return None
        self.map_sent = True
        return f"<repository_map>\n{text}\n</repository_map>"

    def mentioned_files(self, text: str) -> list[Path]:
        """The files under the root that `text` names by relative or absolute path."""
        found: list[Path] = []
        for match in _PATHLIKE.finditer(text):
            candidate = Path(match.group(0))
            path = candidate if candidate.is_absolute() else self.root / candidate
            try:
                if path.is_file() and path not in found:
                    found.append(path)
            except OSError:
                continue
        return found

    async def aclose(self) -> None:
        if self._index is not None:
            with anyio.CancelScope(shield=True):
                await self._index.aclose()
            self._index = None
