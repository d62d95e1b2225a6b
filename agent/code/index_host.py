"""A session's code index (`agent.codeindex`): opened lazily, refreshed in the background, never
in a turn's way.

Nothing of the index (sqlite, tree-sitter) is loaded until a turn needs it: the first turn when
the setting `repoMap` is on (for the map in the first request), otherwise the first `repo_map`
or `search_code` call. A refresh runs in the session's block (`agent.tasks.SessionTasks`), so it
goes on while the model thinks, while tools run and between turns; a turn that starts while a
large one runs says so in a notice, and the tools' results say when the index is incomplete.
Closing the session cancels a refresh between two chunks; the cache keeps what it read.

The tools ask `ready()`: it starts an incremental refresh (only what changed is read: the
session's edits) and waits for it a bounded time (`TOOL_WAIT`); past that they answer from
what is indexed so far, with a note saying so.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Final

import anyio
import anyio.to_thread

from agent.events import AgentEvent, Notice
from agent.tasks import SessionTasks
from providers.logs import get_logger

if TYPE_CHECKING:
    from agent.codeindex import CodeIndex

_log = get_logger(__name__)

TOOL_WAIT: Final = 10.0
"""Seconds a `repo_map` or `search_code` call waits for a running refresh, at most."""
NOTICE_FROM: Final = 500
"""Files to read from which a running refresh is announced at a turn's start."""
_PATHLIKE = re.compile(r"/?[\w.@+-]+(?:/[\w.@+-]+)*\.\w+|/?[\w.@+-]+(?:/[\w.@+-]+)+")


class CodeIndexHost:
    """The session's `CodeIndex` (see the module docstring)."""

    def __init__(
        self, root: Path, *, data_dir: Path | None, repo_map: bool, tasks: SessionTasks
    ) -> None:
        self.root = root
        self.repo_map = repo_map
        """The setting `repoMap`: refresh at each turn's start, and a map in the first request."""
        self.map_sent = False
        """The initial map went into the system prompt (once per session)."""
        self._data_dir = data_dir
        self._tasks = tasks
        self._index: CodeIndex | None = None
        self._opening = anyio.Lock()
        self._done = anyio.Event()
        """Set when the latest refresh ended."""
        self._running = False
        self._scope: anyio.CancelScope | None = None
        self._announced = False
        self._mentioned: list[Path] = []
        """Files the prompts named, until the map is sent."""

    async def index(self) -> CodeIndex:
        """The index, opened at the first call (in a worker thread: opening imports the parser
        and opens the database)."""
        if self._index is not None:
            return self._index
        async with self._opening:
            if self._index is None:
                from agent.codeindex import CodeIndex, default_database

                database = default_database(self.root, self._data_dir)

                def build() -> CodeIndex:
                    return CodeIndex(self.root, database=database)

                self._index = await anyio.to_thread.run_sync(build)
        assert self._index is not None
        return self._index

    async def turn_started(self) -> None:
        """At a turn's start, with `repoMap`: bring the index up to date in the background."""
        if self.repo_map:
            await self.start_refresh()

    def announce(self, emit: Callable[[AgentEvent], None]) -> None:
        """Say once that a large refresh is under way (the map and search cover part of the
        repository until it ends)."""
        index = self._index
        if index is None or self._announced:
            return
        status = index.status  # "indexing" only while a refresh reads files
        if status.phase == "indexing" and status.total >= NOTICE_FROM:
            self._announced = True
            emit(
                Notice(
                    severity="info",
                    message=f"Indexing {status.total:,} files for the code map in the background "
                    f"({status.done:,} done); the map and code search cover what is indexed.",
                )
            )

    async def start_refresh(self) -> None:
        """Start a refresh in the session's block, unless one is running."""
        index = await self.index()
        if self._running:
            return
        scope, done = anyio.CancelScope(), anyio.Event()
        self._tasks.start_soon(self._refresh, index, scope, done)
        self._running, self._scope, self._done = True, scope, done

    async def _refresh(self, index: CodeIndex, scope: anyio.CancelScope, done: anyio.Event) -> None:
        try:
            with scope:  # `aclose` stops it between two chunks
                stats = await index.refresh()
                if stats.error is not None:
                    _log.warning("code index refresh failed", error=stats.error)
        except Exception:
            _log.warning("code index refresh failed", exc_info=True)
        finally:
            self._scope = None
            self._running = False
            done.set()

    async def ready(self) -> CodeIndex:
        """The index for a tool call: brought up to date first, as far as `TOOL_WAIT` allows."""
        await self.start_refresh()
        with anyio.move_on_after(TOOL_WAIT):
            await self._done.wait()
        return await self.index()

    async def system_prompt_map(
        self, prompt_text: str, conversation: Sequence[Path], denied: Callable[[Path], bool]
    ) -> str | None:
        """With `repoMap`, once per session: the compact map for the system prompt, centred on
        the files the prompts so far named and `conversation`; None when it is not wanted, already
        sent, or the index cannot answer at once (a cold cache: tried again next turn)."""
        if not self.repo_map or self.map_sent:
            return None
        from agent.codeindex import initial_map

        # The prompts so far: a map that comes at a later turn (a cold cache) is centred on
        # what the whole conversation named.
        for path in self.mentioned_files(prompt_text):
            if path not in self._mentioned:
                self._mentioned.append(path)
        files = [*self._mentioned, *conversation]
        try:
            text = await initial_map(
                await self.index(),
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
        """Stop a running refresh (between two chunks) and close the index."""
        index = self._index
        if index is None:
            return
        with anyio.CancelScope(shield=True):
            if self._scope is not None:
                self._scope.cancel()
            await index.aclose()  # once the refresh has let go of the index
        self._index = None
