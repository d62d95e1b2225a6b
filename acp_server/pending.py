"""Sessions answered in advance (`acp_server.early_session`) and still being built.

Requests for such a session wait here. A prompt's wait can be cancelled like the prompt itself
(`session/cancel` for the session, `$/cancel_request` for the request), so a cancel sent while
the session is still being built answers the prompt `cancelled` rather than being lost.
"""

from __future__ import annotations

import anyio


class _Waiter:
    __slots__ = ("cancelled", "wake")

    def __init__(self) -> None:
        self.wake = anyio.Event()
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True
        self.wake.set()


class _Build:
    __slots__ = ("done", "failure", "waiters")

    def __init__(self) -> None:
        self.done = anyio.Event()
        self.failure: Exception | None = None
        self.waiters: set[_Waiter] = set()


class BuildWait:
    """A prompt's wait for a session (`PendingSessions.prompt_wait`)."""

    __slots__ = ("_build", "_waiter")

    def __init__(self, build: _Build) -> None:
        self._build = build
        self._waiter = _Waiter()

    def cancel(self) -> None:
        """Stop waiting: `wait` returns False."""
        self._waiter.cancel()

    async def wait(self) -> bool:
        """True once the session is built; False when this wait was cancelled first.

        Raises:
            Exception: why the session could not be built.
        """
        build, waiter = self._build, self._waiter
        if not build.done.is_set():
            build.waiters.add(waiter)
            try:
                await waiter.wake.wait()
            finally:
                build.waiters.discard(waiter)
        if waiter.cancelled:
            return False
        if build.failure is not None:
            raise build.failure
        return True


class PendingSessions:
    """Session id -> the build of a session promised to the client."""

    def __init__(self) -> None:
        self._builds: dict[str, _Build] = {}

    def promise(self, session_id: str) -> None:
        self._builds[session_id] = _Build()

    def built(self, session_id: str) -> None:
        """The session exists (it is in the server's table): forget the promise."""
        build = self._builds.pop(session_id)
        self._finish(build)

    def failed(self, session_id: str, failure: Exception) -> None:
        """Building failed: every request for the session gets `failure` from now on."""
        build = self._builds[session_id]
        build.failure = failure
        self._finish(build)

    def forget(self, session_id: str) -> None:
        """The client closed or deleted the session: stop reporting a failed build."""
        build = self._builds.get(session_id)
        if build is not None and build.done.is_set():
            del self._builds[session_id]

    def prompt_wait(self, session_id: str) -> BuildWait | None:
        """A prompt's wait for `session_id`, which `cancel_prompts` ends; None when it is not a
        promised session."""
        build = self._builds.get(session_id)
        return BuildWait(build) if build is not None else None

    async def wait(self, session_id: str) -> None:
        """Until `session_id` is built, when it is a promised session.

        Raises:
            Exception: why the session could not be built.
        """
        build = self._builds.get(session_id)
        if build is not None:
            await build.done.wait()
            if build.failure is not None:
                raise build.failure

    async def wait_all(self) -> None:
        """Until every promised session is built or has failed."""
        for build in list(self._builds.values()):
            await build.done.wait()

    def cancel_prompts(self, session_id: str | None = None) -> None:
        """Cancel the prompts waiting for one session (`session/cancel`), or for all (the input
        closed)."""
        for key, build in self._builds.items():
            if session_id is None or key == session_id:
                for waiter in list(build.waiters):
                    waiter.cancel()

    @staticmethod
    def _finish(build: _Build) -> None:
        build.done.set()
        for waiter in list(build.waiters):
            waiter.wake.set()
