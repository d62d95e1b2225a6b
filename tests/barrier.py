"""A barrier for the concurrency tests: tasks start together because they all arrived, not
because a sleep gave them time to."""

from __future__ import annotations

import anyio


class Barrier:
    """`parties` tasks wait until all have arrived, then go on together."""

    def __init__(self, parties: int) -> None:
        self._left = parties
        self._all_here = anyio.Event()

    async def wait(self) -> None:
        self._left -= 1
        if self._left == 0:
            self._all_here.set()
        await self._all_here.wait()
