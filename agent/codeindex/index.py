"""`CodeIndex`: a work tree's code index for a session, on anyio.

Every blocking step (listing the files, reading and parsing a chunk of them, building the graph,
a query) runs in a worker thread (`anyio.to_thread`), so the event loop, and with it the turn
and the editor's requests, is never held up; a refresh of many files parses in worker
processes, one per core (`agent.codeindex.workers`). A refresh works through the changed files in
chunks of `chunk_size`, reports progress after each (`IndexProgress`, for the composition root
to turn into a notice or tool-call progress) and stops between two chunks when its task is
cancelled; what it had done is kept. Queries during a cold refresh answer from what is indexed
so far (`CodeIndex.status` says how far that is).

The cache lives in `<data dir>/codeindex/<dir name>-<hash>.sqlite` (`default_database`), keyed
by the resolved root, so a second session, or a second earshot process, starts from it. Its
sessions take turns to refresh it: one writer at a time (an `flock` on `<database>.lock`,
`agent.files.lock`), and a refresh first loads what another one wrote meanwhile
(`IndexEngine.sync`), so it reads only what is still new.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal

import anyio
import anyio.to_thread

from agent.codeindex.languages import is_indexed
from agent.codeindex.workers import PARALLEL_MIN, max_workers, run_chunks
from agent.files import locked

if TYPE_CHECKING:
    # The engine brings sqlite and the store: loaded when an index is opened, not imported.
    from agent.codeindex.engine import ChunkResult, IndexEngine, MapResult, SearchHit, Visible

CHUNK_SIZE: Final = 200
INITIAL_MAP_BUDGET: Final = 1_024
"""Tokens of the map that goes into a session's first request (setting `repoMap`)."""
WRITER_WAIT: Final = 120.0
"""Seconds a refresh waits for another session's (of this process or another) on the same
database: one writer at a time, and the later refresh finds that one's work done."""
INITIAL_MAP_WAIT: Final = 0.5
"""Seconds the first request waits for the index to load from its cache, at most."""

Phase = Literal["idle", "listing", "indexing", "ranking", "ready", "failed"]


@dataclass(frozen=True, slots=True)
class IndexProgress:
    phase: Phase
    done: int = 0
    """Files read so far in this refresh (indexing), or files indexed (ready)."""
    total: int = 0
    """Files to read in this refresh (indexing), or files indexed (ready)."""
    message: str = ""

    @property
    def fraction(self) -> float:
        return self.done / self.total if self.total else 1.0


ProgressCallback = Callable[[IndexProgress], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class RefreshStats:
    listed: int = 0
    parsed: int = 0
    """Files read and parsed (new or changed content)."""
    unchanged: int = 0
    """Files read because their stat changed, whose content had not."""
    removed: int = 0
    seconds: float = 0.0
    error: str | None = None
    """Why the refresh failed (the index keeps what it had)."""


def default_database(root: Path, data_dir: Path | None = None) -> Path:
    """`<data dir>/codeindex/<dir name>-<16 hex digits of SHA-256 of the resolved root>.sqlite`."""
    if data_dir is None:
        from sessions.paths import data_dir as default_data_dir

        data_dir = default_data_dir()
    resolved = str(root.resolve())
    key = hashlib.sha256(resolved.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    name = re.sub(r"[^A-Za-z0-9._-]", "_", Path(resolved).name)[:40].strip(".") or "root"
    return data_dir / "codeindex" / f"{name}-{key}.sqlite"


class CodeIndex:
    """The code index of the work tree at `root` (see the module docstring)."""

    def __init__(
        self,
        root: Path,
        *,
        database: Path | None = None,
        chunk_size: int = CHUNK_SIZE,
        workers: int | None = None,
        parallel_min: int = PARALLEL_MIN,
    ) -> None:
        from agent.codeindex.engine import IndexEngine

        self.root = root.resolve()
        self.engine: IndexEngine = IndexEngine(self.root, database or default_database(self.root))
        self.chunk_size = chunk_size
        self.workers = max_workers() if workers is None else workers
        """Worker processes for a refresh of `parallel_min` files or more (1: none)."""
        self.parallel_min = parallel_min
        self.status = IndexProgress("idle")
        self.refreshed = False
        """A refresh has completed: the index matches the work tree as of then."""
        self._refresh_lock = anyio.Lock()

    async def refresh(self, progress: ProgressCallback | None = None) -> RefreshStats:
        """Bring the index up to date with the work tree; only new and changed files are read.
        Failures (no git nor ripgrep, an unusable cache) end it with `RefreshStats.error` and
        a `failed` progress report rather than an exception."""
        import sqlite3  # loaded by the store by now; not when this module is imported

        from agent.codeindex.files import ListingFailed

        started = time.perf_counter()
        lock = self.engine.database.with_name(f"{self.engine.database.name}.lock")
        lock.parent.mkdir(parents=True, exist_ok=True)
        async with self._refresh_lock, locked(lock, wait=WRITER_WAIT) as writer:
            try:
                if not writer:
                    raise OSError(f"another session has been refreshing it for {WRITER_WAIT:g} s")
                await anyio.to_thread.run_sync(self.engine.sync)
                return await self._refresh(progress, started)
            except (ListingFailed, OSError, sqlite3.Error) as error:
                await self._report(progress, IndexProgress("failed", message=str(error)))
                return RefreshStats(error=str(error), seconds=time.perf_counter() - started)

    async def _refresh(self, progress: ProgressCallback | None, started: float) -> RefreshStats:
        await self._report(progress, IndexProgress("listing", message="listing files"))
        plan = await anyio.to_thread.run_sync(self.engine.plan)
        total = len(plan.changed)
        counts = [0, 0, 0, 0]  # parsed, unchanged, removed, done
        await self._report(progress, IndexProgress("indexing", 0, total, "indexing"))

        async def chunk_done(result: ChunkResult, size: int) -> None:
            counts[0] += result.parsed
            counts[1] += result.unchanged
            counts[2] += result.removed
            counts[3] += size
            await self._report(progress, IndexProgress("indexing", counts[3], total, "indexing"))

        chunks = [
            plan.changed[start : start + self.chunk_size]
            for start in range(0, total, self.chunk_size)
        ]
        workers = self.workers if total >= self.parallel_min else 1
        await run_chunks(self.engine, chunks, workers=workers, done=chunk_done)
        parsed, unchanged, removed = counts[0], counts[1], counts[2]
        if plan.removed:
            await anyio.to_thread.run_sync(self.engine.remove, plan.removed)
            removed += len(plan.removed)
        await self._report(progress, IndexProgress("ranking", total, total, "ranking"))
        await anyio.to_thread.run_sync(self.engine.graph)
        self.refreshed = True
        count = self.engine.file_count
        await self._report(progress, IndexProgress("ready", count, count, "ready"))
        return RefreshStats(
            listed=plan.listed,
            parsed=parsed,
            unchanged=unchanged,
            removed=removed,
            seconds=time.perf_counter() - started,
        )

    async def _report(self, progress: ProgressCallback | None, status: IndexProgress) -> None:
        self.status = status
        if progress is not None:
            await progress(status)

    async def update_files(self, paths: Iterable[Path | str]) -> None:
        """Re-index these files now (after an edit), without listing the work tree, then
        rebuild the graph. Paths outside the root, or of files the index does not cover, are
        ignored. The edit need not wait for it: start it in the session's task group."""
        relative = [
            rel
            for path in paths
            if (rel := self.engine.relative(path)) is not None and is_indexed(rel)
        ]
        if relative:
            await anyio.to_thread.run_sync(self.engine.process, relative)
            await anyio.to_thread.run_sync(self.engine.graph)

    async def repo_map(
        self,
        *,
        budget: int,
        conversation: Sequence[Path | str] = (),
        query: str = "",
        visible: Visible | None = None,
    ) -> MapResult:
        """The map within `budget` tokens (`IndexEngine.repo_map`)."""

        def build() -> MapResult:
            return self.engine.repo_map(
                budget=budget, conversation=conversation, query=query, visible=visible
            )

        return await anyio.to_thread.run_sync(build)

    async def search(
        self,
        query: str,
        *,
        limit: int = 10,
        conversation: Sequence[Path | str] = (),
        visible: Visible | None = None,
    ) -> list[SearchHit]:
        """Files matching `query`, best first (`IndexEngine.search`)."""

        def run() -> list[SearchHit]:
            return self.engine.search(
                query, limit=limit, conversation=conversation, visible=visible
            )

        return await anyio.to_thread.run_sync(run)

    def progress_note(self) -> str | None:
        """A note for a result built while the index is incomplete; None when it is complete."""
        status = self.status
        if self.refreshed and status.phase != "failed":
            return None
        if status.phase == "indexing":
            return (
                f"The code index is still being built ({status.done:,} of {status.total:,} "
                "files read); this result covers what is indexed so far."
            )
        if status.phase == "failed":
            return f"The code index could not be refreshed ({status.message}); it may be stale."
        return "The code index is still being built; this result covers what is indexed so far."

    async def aclose(self) -> None:
        async with self._refresh_lock:
            await anyio.to_thread.run_sync(self.engine.close)


def map_header(result: MapResult) -> str:
    return (
        f"Repository map: {result.definitions:,} of {result.total_definitions:,} definitions "
        f"in {result.files:,} files, ranked by how much the code refers to them; each line is "
        "`line│source`."
    )


async def initial_map(
    index: CodeIndex,
    *,
    conversation: Sequence[Path | str] = (),
    budget: int = INITIAL_MAP_BUDGET,
    wait: float = INITIAL_MAP_WAIT,
    visible: Visible | None = None,
) -> str | None:
    """The compact map for a session's first request (setting `repoMap`), or None when the
    index has nothing yet or cannot answer within `wait` seconds: the first request never
    waits for indexing. `visible` hides paths as in the tools (`Read` deny rules)."""
    result: MapResult | None = None
    with anyio.move_on_after(wait):

        def build() -> MapResult:
            index.engine.open()
            return index.engine.repo_map(budget=budget, conversation=conversation, visible=visible)

        result = await anyio.to_thread.run_sync(build, abandon_on_cancel=True)
    if result is None or not result.text:
        return None
    return f"{map_header(result)}\n\n{result.text}"
