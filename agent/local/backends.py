"""The local file and process backends: what a session uses when no editor provides its own.

Commands run as `bash -c` in a new session (so in their own process group), with stdin at
/dev/null and stdout and stderr merged. Timeout and cancellation kill the whole group, and so does
the command finishing: a background child (`server &`) would otherwise outlive the call, holding
our pipe open and running unseen.
"""

from __future__ import annotations

import codecs
import os
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence
from contextlib import AbstractAsyncContextManager, nullcontext
from functools import partial
from pathlib import Path

import anyio
import anyio.abc
import anyio.to_thread

from agent.backends import Confinement, OutputSink, ProcessResult, TerminalSink
from agent.files import Expected, read_exact, replace_exact
from agent.tool_env import tool_environment

KILL_GRACE_SECONDS = 2.0
"""How long a group gets between SIGTERM and SIGKILL."""
DRAIN_SECONDS = 0.2
"""After bash exits, how long output from lingering children is still collected."""
_POLL_SECONDS = 0.02
_READ_CHUNK = 65536


class LocalFiles:
    """UTF-8 text files on the local disk, opened exactly where they were decided
    (`agent.files.safe_paths`). Line endings are kept exactly as they are."""

    async def read_text(self, path: Path, *, expected: Expected = "any") -> str:
        """Raises: FileNotFoundError, IsADirectoryError, PermissionError, UnicodeDecodeError,
        `NotARegularFile` (a FIFO or a device: never opened for a blocking read),
        `PathChanged`."""
        data, _, _ = await anyio.to_thread.run_sync(
            partial(read_exact, path, expected=expected), abandon_on_cancel=True
        )
        return data.decode("utf-8")

    async def write_text(self, path: Path, content: str) -> None:
        """Create or replace the file at `path`, creating its parent directories: written to a
        temporary file in the verified directory, renamed into place."""
        await anyio.to_thread.run_sync(replace_exact, path, content.encode("utf-8"))


class _TailBuffer:
    """Keeps the last `limit` bytes of a stream and counts what it dropped."""

    def __init__(self, limit: int) -> None:
        self.limit = max(limit, 0)
        self.data = bytearray()
        self.dropped = 0

    def add(self, chunk: bytes) -> None:
        self.data += chunk
        # Trim lazily (at twice the limit) so a chatty command is not O(n^2) in copies.
        if len(self.data) > 2 * self.limit:
            self._trim()

    def _trim(self) -> None:
        excess = len(self.data) - self.limit
        if excess > 0:
            del self.data[:excess]
            self.dropped += excess

    def text(self) -> str:
        self._trim()
        data = bytes(self.data)
        if self.dropped:
            # The cut may have split a multi-byte character: skip its continuation bytes.
            start = 0
            while start < len(data) and start < 4 and (data[start] & 0xC0) == 0x80:
                start += 1
            data = data[start:]
        return data.decode("utf-8", errors="replace")


class LocalProcesses:
    """Runs commands with the local bash."""

    def __init__(self, *, shell: str = "bash") -> None:
        self.shell = shell

    async def run(
        self,
        command: str,
        *,
        cwd: Path,
        timeout: float,
        output_limit: int,
        env: Mapping[str, str] | None = None,
        on_output: OutputSink | None = None,
        on_terminal: TerminalSink | None = None,
        confine: Confinement | None = None,
    ) -> ProcessResult:
        """Run `command` with `bash -c` in its own process group (inside `confine`'s sandbox
        when given).

        `env` is added to the inherited environment, from which the provider credentials are
        removed (`agent.tool_env`). Output is streamed to `on_output` as it
        arrives and kept to the last `output_limit` bytes (`truncated` says when bytes were
        dropped). On timeout or cancellation the whole group gets SIGTERM, then SIGKILL after a
        short grace; children still running when bash exits are ended the same way.

        Raises:
            FileNotFoundError: bash is not installed (or `cwd` does not exist).
            agent.sandbox.command_sandbox.SandboxRefused: `confine` cannot enforce its policy for
                this command.
        """
        del on_terminal  # local runs have no editor terminal to announce
        argv = [self.shell, "-c", command]
        launch: AbstractAsyncContextManager[Sequence[str]] = (
            nullcontext(argv) if confine is None else confine.launch(argv, cwd=cwd, scrub_env=False)
        )
        async with launch as command_line:
            return await self._run(
                command_line,
                cwd=cwd,
                timeout=timeout,
                output_limit=output_limit,
                env=env,
                on_output=on_output,
            )

    async def _run(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        timeout: float,
        output_limit: int,
        env: Mapping[str, str] | None,
        on_output: OutputSink | None,
    ) -> ProcessResult:
        full_env = tool_environment(extra=env)
        process = await anyio.open_process(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            cwd=cwd,
            env=full_env,
            start_new_session=True,
        )
        pgid = process.pid  # a session leader's group id is its pid
        buffer = _TailBuffer(output_limit)
        eof = anyio.Event()
        timed_out = False
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(_pump, process, buffer, on_output, eof)
                with anyio.move_on_after(timeout) as deadline:
                    await process.wait()
                    with anyio.move_on_after(DRAIN_SECONDS):
                        await eof.wait()
                timed_out = deadline.cancelled_caught
                # Ends anything left in the group; the pump then reaches end of file, unless a
                # child escaped the group (setsid) still holding the pipe: stop reading then.
                await _kill_group(pgid, process)
                with anyio.move_on_after(DRAIN_SECONDS):
                    await eof.wait()
                group.cancel_scope.cancel()
        finally:
            with anyio.CancelScope(shield=True):
                await _kill_group(pgid, process)
                await process.aclose()
        return _result(process.returncode, buffer, timed_out=timed_out)


async def _pump(
    process: anyio.abc.Process,
    buffer: _TailBuffer,
    on_output: OutputSink | None,
    eof: anyio.Event,
) -> None:
    assert process.stdout is not None
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    try:
        async for chunk in process.stdout:
            buffer.add(chunk)
            if on_output is not None:
                text = decoder.decode(chunk)
                if text:
                    await on_output(text)
    except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
        pass
    finally:
        eof.set()
    if on_output is not None:
        tail = decoder.decode(b"", final=True)
        if tail:
            await on_output(tail)


def _result(returncode: int | None, buffer: _TailBuffer, *, timed_out: bool) -> ProcessResult:
    exit_code: int | None = None
    signal_name: str | None = None
    if returncode is not None and returncode < 0:
        signal_name = _signal_name(-returncode)
    elif not timed_out:
        exit_code = returncode
    return ProcessResult(
        exit_code=exit_code,
        output=buffer.text(),
        truncated=buffer.dropped > 0,
        timed_out=timed_out,
        signal=signal_name,
    )


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


async def _kill_group(pgid: int, process: anyio.abc.Process) -> None:
    """SIGTERM the group, wait for it to empty (up to the grace), then SIGKILL what is left."""
    if not _signal_group(pgid, signal.SIGTERM):
        await _reap(process)
        return
    with anyio.move_on_after(KILL_GRACE_SECONDS):
        # The event loop's child watcher reaps bash itself; poll until the group is empty.
        while _group_alive(pgid):
            await anyio.sleep(_POLL_SECONDS)
        await _reap(process)
        return
    _signal_group(pgid, signal.SIGKILL)
    await _reap(process)


async def _reap(process: anyio.abc.Process) -> None:
    if process.returncode is None:
        await process.wait()


def _signal_group(pgid: int, sig: signal.Signals) -> bool:
    """False when the group no longer exists."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:
        # Only zombies we cannot signal are left (e.g. on macOS); nothing is running.
        return False
    return True


def _group_alive(pgid: int) -> bool:
    """Whether a live (non-zombie) process is still in the group."""
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    if not sys.platform.startswith("linux"):
        return True
    # Orphans reparented to an init that does not reap stay zombies in the group forever: they
    # are not running, so they do not count.
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", encoding="utf-8") as handle:
                stat = handle.read()
        except OSError:
            continue
        # Format: pid (comm) state ppid pgrp ...; comm may contain spaces and parentheses.
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) >= 3 and int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            return True
    return False
