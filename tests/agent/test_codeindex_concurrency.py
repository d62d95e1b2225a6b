"""One code index, many sessions (issue 29): refreshes started at the same moment by several
sessions have one writer at a time, the later ones find the work done, and the index on disk
matches the work tree."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import anyio

from agent.codeindex import CodeIndex
from tests.agent.test_codeindex import repo as repo  # the fixture
from tests.barrier import Barrier

SESSIONS = 8


async def test_sessions_refreshing_one_index_at_once_have_one_writer(
    repo: Path, tmp_path: Path
) -> None:
    database = tmp_path / "cache" / "index.sqlite"
    indexes = [CodeIndex(repo, database=database, workers=1) for _ in range(SESSIONS)]
    barrier = Barrier(SESSIONS)
    parsed: list[int] = []

    async def session(index: CodeIndex) -> None:
        await barrier.wait()
        stats = await index.refresh()
        assert stats.error is None, stats.error
        parsed.append(stats.parsed)

    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            for index in indexes:
                group.start_soon(session, index)
    files = sorted(
        path.relative_to(repo).as_posix()
        for path in repo.rglob("*")
        if path.is_file() and ".git" not in path.parts
    )
    # one session read every file; the others found them indexed
    assert sorted(parsed) == [0] * (SESSIONS - 1) + [len(files)]
    with sqlite3.connect(database) as db:
        indexed = sorted(row[0] for row in db.execute("SELECT path FROM files"))
    assert indexed == files
    for index in indexes:  # every session's view agrees with the disk
        hits = await index.search("open session store")
        assert hits and hits[0].path == "hub.py"
        await index.aclose()
