"""Background commands: `bash` with `background: true`, read with `bash_output`, stopped with
`bash_kill`, all ended when the session closes.

`BackgroundJobs` belongs to a session (`ctx.services[BACKGROUND]`). A command starts in the
session's sandbox like any other (the sandbox's launch context is held until the command
ends) and returns at once with a handle (`bg1`, `bg2`, ...). Where it runs:

- Locally (`LocalBackground`): `bash -c` in its own process group, its output appended to a
  private temporary file that `read` takes up from where the last read stopped. No task reads
  a pipe, so nothing needs a task group that outlives the turn (a session has none): the
  process runs between turns, and its output waits in the file.
- In an editor terminal, when the session's process backend can start one (ACP
  `terminal/create` without the wait: `acp_server.background_terminals`). The terminal is
  embedded in the `bash` call and stays visible until the session closes it.

Closing the session (`aclose`) kills every command still running and releases the terminals.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Final, Protocol, cast

import anyio
import anyio.abc

from agent.backends import Confinement, ProcessBackend
from agent.tool_env import tool_environment

MAX_JOBS: Final = 8
"""Background commands running at once in a session, at most."""
READ_LIMIT: Final = 30_000
"""Characters one `read` returns at most (the newest are kept)."""
KILL_GRACE: Final = 2.0
_POLL: Final = 0.05


@dataclass(frozen=True, slots=True)
class JobOutput:
    text: str
    """New output since the last read (its tail when there was more than `READ_LIMIT`)."""
    running: bool
    exit_code: int | None = None
    signal: str | None = None
    dropped: int = 0
    """Characters of new output left out (more than `READ_LIMIT`)."""


class RunningCommand(Protocol):
    """One started command, wherever it runs."""

    @property
    def terminal_id(self) -> str | None: ...

    @property
    def pid(self) -> int | None: ...

    async def read(self) -> JobOutput:
        """Output since the previous read, and whether the command still runs."""
        ...

    async def kill(self) -> None:
        """Stop the command (its whole process group); returns when it is gone."""
        ...

    async def release(self) -> None:
        """Free what it holds (an editor terminal); it must not be running any more."""
        ...


class BackgroundLauncher(Protocol):
    """A process backend that can start a command and leave it running (ACP terminals)."""

    async def start_background(
        self, argv: Sequence[str], *, cwd: Path, output_limit: int
    ) -> RunningCommand | None:
        """The started command, or None when this backend cannot (no terminal): run locally."""
        ...


class LocalBackground:
    """A command run locally, its output collected in a temporary file."""

    def __init__(self, process: anyio.abc.Process, log: IO[bytes]) -> None:
        self._process = process
        self._log = log
        self._offset = 0
        self._decoder_tail = b""

    @property
    def terminal_id(self) -> str | None:
        return None

    @property
    def pid(self) -> int | None:
        return self._process.pid

    @classmethod
    async def start(cls, argv: Sequence[str], *, cwd: Path) -> LocalBackground:
        import tempfile  # only when a command goes to the background

        log = tempfile.TemporaryFile(prefix="earshot-bg-")  # noqa: SIM115 (kept open by the job)
        try:
            process = await anyio.open_process(
                list(argv),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=cwd,
                env=tool_environment(),
                start_new_session=True,
            )
        except BaseException:
            log.close()
            raise
        return cls(process, log)

    async def read(self) -> JobOutput:
        returncode = self._process.returncode
        self._log.seek(self._offset)
        data = self._decoder_tail + self._log.read()
        self._offset = self._log.tell()
        # Keep an incomplete UTF-8 sequence at the end for the next read.
        cut = len(data)
        for back in range(1, min(4, len(data)) + 1):
            byte = data[-back]
            if byte & 0xC0 == 0xC0:  # a lead byte: is its sequence complete?
                needed = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
                if back < needed:
                    cut = len(data) - back
                break
            if byte < 0x80:
                break
        if returncode is not None:
            cut = len(data)
        self._decoder_tail = data[cut:]
        text = data[:cut].decode("utf-8", "replace")
        return _output(text, returncode)

    async def kill(self) -> None:
        pgid = self._process.pid
        if self._process.returncode is None or _group_alive(pgid):
            _signal(pgid, signal.SIGTERM)
            with anyio.move_on_after(KILL_GRACE):
                while _group_alive(pgid):
                    await anyio.sleep(_POLL)
            _signal(pgid, signal.SIGKILL)
        with anyio.CancelScope(shield=True):
            await self._process.wait()

    async def release(self) -> None:
        with contextlib.suppress(OSError):
            await self._process.aclose()
        self._log.close()


def _output(text: str, returncode: int | None) -> JobOutput:
    dropped = max(0, len(text) - READ_LIMIT)
    if dropped:
        text = text[dropped:]
    if returncode is None:
        return JobOutput(text=text, running=True, dropped=dropped)
    if returncode < 0:
        name = signal.Signals(-returncode).name if -returncode in signal.valid_signals() else None
        return JobOutput(text=text, running=False, signal=name or str(-returncode), dropped=dropped)
    return JobOutput(text=text, running=False, exit_code=returncode, dropped=dropped)


def _signal(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return False
    return True


@dataclass(slots=True)
class Job:
    handle: str
    command: str
    running: RunningCommand
    stack: contextlib.AsyncExitStack
    """Holds the sandbox's launch context while the command runs."""
    confine: Confinement | None = None
    """The sandbox it runs in (None: unconfined)."""
    finished: bool = False


class UnknownJob(LookupError):
    """No background command has this handle in the session."""


@dataclass(slots=True)
class BackgroundJobs:
    """A session's background commands (see the module docstring)."""

    cwd: Path
    processes: ProcessBackend | None = None
    jobs: dict[str, Job] = field(default_factory=lambda: {})
    _count: int = 0

    async def start(
        self, command: str, *, confine: Confinement | None, output_limit: int = 1_000_000
    ) -> Job:
        """Start `command` (`bash -c`), confined when `confine` is given.

        Raises:
            RuntimeError: `MAX_JOBS` commands are running already.
            OSError, agent.sandbox.SandboxRefused: it could not start.
        """
        if sum(not job.finished for job in self.jobs.values()) >= MAX_JOBS:
            raise RuntimeError(
                f"{MAX_JOBS} background commands are running already; stop one with bash_kill"
            )
        launcher = (
            cast("BackgroundLauncher", self.processes) if _can_launch(self.processes) else None
        )
        argv: Sequence[str] = ["bash", "-c", command]
        stack = contextlib.AsyncExitStack()
        try:
            if confine is not None:
                # An editor terminal inherits the editor's environment: the sandbox's command
                # line removes the provider keys itself then.
                scrub = launcher is not None
                argv = await stack.enter_async_context(
                    confine.launch(argv, cwd=self.cwd, scrub_env=scrub)
                )
            running: RunningCommand | None = None
            if launcher is not None:
                running = await launcher.start_background(
                    argv, cwd=self.cwd, output_limit=output_limit
                )
            if running is None:
                running = await LocalBackground.start(argv, cwd=self.cwd)
        except BaseException:
            with anyio.CancelScope(shield=True):
                await stack.aclose()
            raise
        self._count += 1
        job = Job(
            handle=f"bg{self._count}",
            command=command,
            running=running,
            stack=stack,
            confine=confine,
        )
        self.jobs[job.handle] = job
        return job

    def get(self, handle: str) -> Job:
        job = self.jobs.get(handle.strip())
        if job is None:
            known = ", ".join(self.jobs) or "none"
            raise UnknownJob(f"No background command `{handle}` (known: {known}).")
        return job

    async def read(self, handle: str, *, wait: float = 0.0, until_exit: bool = False) -> JobOutput:
        """New output of a command; with `wait`, up to that many seconds for some to arrive
        (or, `until_exit`, for the command to end), the output gathered meanwhile included."""
        job = self.get(handle)
        output = await job.running.read()
        parts, dropped = [output.text], output.dropped

        def waiting() -> bool:
            return output.running and (until_exit or not any(parts))

        if wait > 0 and waiting():
            with anyio.move_on_after(wait):
                while waiting():
                    await anyio.sleep(_POLL * 2)
                    output = await job.running.read()
                    parts.append(output.text)
                    dropped += output.dropped
        text = "".join(parts)
        if len(text) > READ_LIMIT:
            dropped += len(text) - READ_LIMIT
            text = text[-READ_LIMIT:]
        output = dataclasses.replace(output, text=text, dropped=dropped)
        if not output.running:
            await self._finish(job)
        return output

    async def kill(self, handle: str) -> JobOutput:
        """Stop a command; what it printed since the last read."""
        job = self.get(handle)
        await job.running.kill()
        output = await job.running.read()
        await self._finish(job)
        return output

    async def _finish(self, job: Job) -> None:
        if job.finished:
            return
        job.finished = True
        with anyio.CancelScope(shield=True):
            await job.stack.aclose()

    async def aclose(self) -> None:
        """Kill every command still running and free what they hold (the session closes)."""
        with anyio.CancelScope(shield=True):
            for job in list(self.jobs.values()):
                with contextlib.suppress(Exception):
                    if not job.finished:
                        await job.running.kill()
                    await self._finish(job)
                with contextlib.suppress(Exception):
                    await job.running.release()
            self.jobs.clear()


def _can_launch(processes: object) -> bool:
    return callable(getattr(processes, "start_background", None))


__all__ = [
    "MAX_JOBS",
    "READ_LIMIT",
    "BackgroundJobs",
    "BackgroundLauncher",
    "Job",
    "JobOutput",
    "LocalBackground",
    "RunningCommand",
    "UnknownJob",
]
