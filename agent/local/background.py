"""Background commands: `bash` with `background: true`, read with `bash_output`, stopped with
`bash_kill`, all ended when the session closes.

`BackgroundJobs` belongs to a session (`ctx.services.background`). A command starts in the
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

On Linux every background command runs under a reaper (`agent.local.reaper`, run as
`python -I -S reaper.py --watch EARSHOT_PID -- COMMAND`): the subreaper of everything the command
starts, so that `setsid` and double-forked processes, which leave its process group, still end
with it, when the session closes, and when earshot exits however it exits (the reaper watches
earshot's pid). In an editor terminal the editor starts the reaper, which writes its pid to a
file of earshot's (`Reaped`): earshot ends it there before it asks the editor to kill the
terminal, since an editor's kill (SIGKILL, often) would leave the reaper no time to end the rest.
macOS has no subreaper: there a background command's detached processes are not tracked, and
the command's start says so (`TRACKS_DETACHED`). Under the reaper a command is running for as
long as any process it started is (`cmd &` that returns at once leaves a running job, with its
output still collected), and it reports the exit status of the command itself.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import signal
import subprocess
import sys
import tempfile
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
REAPER: Final = Path(__file__).with_name("reaper.py")
TRACKS_DETACHED: Final = sys.platform.startswith("linux")
"""Whether a background command's processes that leave its process group (`setsid`, a double
fork) still end with it: Linux has subreapers (`agent.local.reaper`), macOS does not."""
PIDFILE_WAIT: Final = 5.0
"""How long `Reaped.kill` waits for a reaper an editor has just started to say its pid."""
UNTRACKED_NOTE: Final = (
    "On this system processes the command detaches from its group (setsid, a double fork) are "
    "not tracked: they may outlive the session."
)


def reaped(argv: Sequence[str], *, pidfile: Path | None = None) -> list[str]:
    """`argv` under the reaper (Linux; elsewhere `argv` as it is)."""
    if not TRACKS_DETACHED:
        return list(argv)
    prefix = [sys.executable or "python3", "-I", "-S", str(REAPER), "--watch", str(os.getpid())]
    if pidfile is not None:
        prefix += ["--pidfile", str(pidfile)]
    return [*prefix, "--", *argv]


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
            with anyio.move_on_after(KILL_GRACE + 1):
                # The reaper (the group's leader) exits once every process below it has.
                await self._process.wait()
                while _group_alive(pgid):
                    await anyio.sleep(_POLL)
            _signal(pgid, signal.SIGKILL)
        with anyio.CancelScope(shield=True):
            await self._process.wait()

    async def release(self) -> None:
        with contextlib.suppress(OSError):
            await self._process.aclose()
        self._log.close()


class Reaped:
    """A command an editor runs under the reaper: ended through the reaper first (its pid in
    `pidfile`, which only earshot can write), then through the editor."""

    def __init__(self, inner: RunningCommand, pidfile: Path) -> None:
        self._inner = inner
        self._pidfile = pidfile

    @property
    def terminal_id(self) -> str | None:
        return self._inner.terminal_id

    @property
    def pid(self) -> int | None:
        return self._inner.pid

    async def read(self) -> JobOutput:
        return await self._inner.read()

    async def kill(self) -> None:
        with anyio.CancelScope(shield=True):
            await self._end_reaper()
            await self._inner.kill()

    async def release(self) -> None:
        await self._inner.release()
        with contextlib.suppress(OSError):
            self._pidfile.unlink()

    async def _end_reaper(self) -> None:
        with anyio.move_on_after(PIDFILE_WAIT):
            while (pid := self._reaper_pid()) is None:
                if not self._pidfile.parent.exists():
                    return
                await anyio.sleep(_POLL)
            try:
                descriptor = os.pidfd_open(pid)
            except OSError:
                return  # gone already
            try:
                if self._reaper_pid() != pid:
                    return  # the pid was reused in between: not ours to signal
                os.kill(pid, signal.SIGTERM)
                with anyio.move_on_after(KILL_GRACE + 1):
                    await anyio.wait_readable(descriptor)  # it exits when all below it have
            finally:
                os.close(descriptor)

    def _reaper_pid(self) -> int | None:
        """The pid in the file, if that process is the reaper started with this file."""
        try:
            pid = int(self._pidfile.read_text(encoding="ascii"))
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                argv = handle.read().split(b"\0")
        except (OSError, ValueError):
            return None
        wanted = [os.fsencode(REAPER), os.fsencode(self._pidfile)]
        return pid if all(part in argv for part in wanted) else None


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
    _pid_dir: Path | None = None

    async def start(
        self, command: str, *, confine: Confinement | None, output_limit: int = 1_000_000
    ) -> Job:
        """Start `command` (`bash -c`), confined when `confine` is given.

        Raises:
            RuntimeError: `MAX_JOBS` commands are running already.
            OSError, agent.sandbox.command_sandbox.SandboxRefused: it could not start.
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
                pidfile = self._pidfile()
                running = await launcher.start_background(
                    reaped(argv, pidfile=pidfile), cwd=self.cwd, output_limit=output_limit
                )
                if running is not None and TRACKS_DETACHED:
                    running = Reaped(running, pidfile)
            if running is None:
                running = await LocalBackground.start(reaped(argv), cwd=self.cwd)
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

    def _pidfile(self) -> Path:
        """A path for a reaper's pid, in a directory of earshot's own (mode 0700, outside the
        sandbox's sight: a command must not be able to name another pid for earshot to
        signal)."""
        if self._pid_dir is None:
            self._pid_dir = Path(tempfile.mkdtemp(prefix="earshot-jobs-"))
        return self._pid_dir / f"bg{self._count + 1}-{os.urandom(4).hex()}.pid"

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
            if self._pid_dir is not None:
                shutil.rmtree(self._pid_dir, ignore_errors=True)
                self._pid_dir = None


def _can_launch(processes: object) -> bool:
    return callable(getattr(processes, "start_background", None))


__all__ = [
    "MAX_JOBS",
    "READ_LIMIT",
    "TRACKS_DETACHED",
    "UNTRACKED_NOTE",
    "BackgroundJobs",
    "BackgroundLauncher",
    "Job",
    "JobOutput",
    "LocalBackground",
    "Reaped",
    "RunningCommand",
    "UnknownJob",
]
