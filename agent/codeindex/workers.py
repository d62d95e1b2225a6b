"""Worker processes for a large refresh: parsing on every core, off the event loop's GIL.

tree-sitter holds the GIL while it parses, so a second thread would not use a second core,
and a cold index of 20,000 files parsed in a thread of the agent's own process would also
compete with the event loop for the GIL. Above `PARALLEL_MIN` files, `run_chunks` starts up to
`max_workers()` processes (`python -m agent.codeindex.worker`: our own pipe protocol rather than
`multiprocessing`, whose spawn start method would re-run the parent's `__main__`, and earshot's
`python -m earshot` entry is one that starts a server), hands each a chunk of paths at a time
and stores what comes back in a worker thread. A worker that cannot start, dies or answers
nonsense is dropped and its chunk is parsed in-process instead: the refresh completes either
way. Cancelling the refresh kills the workers.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Final

import anyio
import anyio.to_thread
import orjson
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream

if TYPE_CHECKING:
    from agent.codeindex.engine import ChunkResult, IndexEngine
    from agent.codeindex.extraction import Extracted

PARALLEL_MIN: Final = 1_000
"""Files to read below which a refresh stays in-process (a worker takes ~0.2 s to start)."""
MAX_WORKERS: Final = 4
MAX_ANSWER: Final = 512 * 1024 * 1024

ChunkDone = Callable[["ChunkResult", int], Awaitable[None]]
"""Called after each chunk is stored, with its result and its number of paths."""


def max_workers() -> int:
    """Worker processes for a large refresh: one per core, at most `MAX_WORKERS`."""
    available = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    return max(1, min(MAX_WORKERS, available or os.cpu_count() or 1))


async def run_chunks(
    engine: IndexEngine, chunks: Sequence[list[str]], *, workers: int, done: ChunkDone
) -> None:
    """Process every chunk, `workers` at a time, in worker processes when `workers` > 1."""
    pending = iter(chunks)
    if workers <= 1:
        for chunk in pending:
            await done(await anyio.to_thread.run_sync(engine.process, chunk), len(chunk))
        return
    async with anyio.create_task_group() as group:
        for _ in range(workers):
            group.start_soon(_work, engine, pending, done)


async def _work(engine: IndexEngine, pending: Iterator[list[str]], done: ChunkDone) -> None:
    worker = await _Worker.spawn(engine.root)
    try:
        for chunk in pending:
            extracted = await worker.ask(engine, chunk) if worker is not None else None
            if extracted is None:
                if worker is not None:  # it failed: kill it, carry on in-process
                    await worker.stop()
                    worker = None
                result = await anyio.to_thread.run_sync(engine.process, chunk)
            else:
                result = await anyio.to_thread.run_sync(engine.apply, extracted)
            await done(result, len(chunk))
    finally:
        if worker is not None:
            await worker.stop()


class _Worker:
    """One `agent.codeindex.worker` process."""

    def __init__(self, process: Process) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.process = process
        self._stdin = process.stdin
        self._reader = BufferedByteReceiveStream(process.stdout)

    @classmethod
    async def spawn(cls, root: Path) -> _Worker | None:
        from agent.tool_env import tool_environment

        # The worker imports this package from where this process did.
        package_root = str(Path(__file__).resolve().parent.parent.parent)
        inherited = os.environ.get("PYTHONPATH")
        path = package_root if not inherited else f"{package_root}{os.pathsep}{inherited}"
        try:
            process = await anyio.open_process(
                [sys.executable, "-m", "agent.codeindex.worker", str(root)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env=tool_environment(extra={"PYTHONPATH": path}),
            )
        except OSError:
            return None
        return cls(process)

    async def ask(self, engine: IndexEngine, chunk: list[str]) -> list[Extracted] | None:
        """The worker's extraction of `chunk`; None when the worker failed."""
        from agent.codeindex.extraction import decode

        known = {path: [hashed.hex(), tag] for path, (hashed, tag) in engine.known(chunk).items()}
        try:
            await self._stdin.send(orjson.dumps({"paths": chunk, "known": known}) + b"\n")
            line = await self._reader.receive_until(b"\n", MAX_ANSWER)
            extracted = [decode(row) for row in orjson.loads(line)["results"]]
        except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError,
                anyio.IncompleteRead, anyio.DelimiterNotFound, orjson.JSONDecodeError, OSError,
                KeyError, TypeError, ValueError, IndexError):  # fmt: skip
            return None
        if [item.path for item in extracted] != chunk:
            return None
        return extracted

    async def stop(self) -> None:
        with anyio.CancelScope(shield=True):
            if self.process.returncode is None:
                self.process.kill()
            await self.process.wait()
            await self.process.aclose()
