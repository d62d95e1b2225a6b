"""`earshot` commands for the CLI tests as real processes that skip the imports.

A `python -m earshot -p ...` spends most of its time importing (the agent, print mode, the
OpenAI SDK: ~0.6 s of CPU each, seconds on a loaded machine), and the CLI tests start about 75 of
them. So each test worker starts one parent process (`warm_parent.py`) that imports all that once
and forks a child per command. The child is a process of its own, with its own descriptors (stdin
an open, empty pipe; stdout and stderr files), working directory, environment, signals and exit
code; what it does not do is import earshot after its environment was set, which no test here
is about (what start-up imports is checked in fresh interpreters, in the tests of each package,
and start-up time in bench/). One more thing differs: `/proc/PID/environ` shows the environment
a process was started with, which for a child is the parent's (started with almost none); a test
that reads it runs cold (`cold=True`). `EARSHOT_TESTS_COLD=1` runs every command as `python -m
earshot` instead, and so does a worker whose parent could not start.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio

PARENT = Path(__file__).resolve().parent / "warm_parent.py"
START_SECONDS = 120.0


class WarmParent:
    """The per-worker parent process and the socket it is asked through."""

    def __init__(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        # Started with next to no environment: nothing of the test worker's leaks into the
        # children's `/proc/self/environ`.
        keep = ("PATH", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT")
        self.process = subprocess.Popen(
            [sys.executable, str(PARENT), str(theirs.fileno())],
            pass_fds=[theirs.fileno()],
            stdin=subprocess.DEVNULL,
            env={name: os.environ[name] for name in keep if name in os.environ},
        )
        theirs.close()
        ours.settimeout(START_SECONDS)
        self.channel = ours
        self._lock = threading.Lock()
        answer = self._receive()
        ours.settimeout(None)
        if "ready" not in answer:
            raise RuntimeError(f"the warm parent refused: {answer}")

    def _receive(self) -> dict[str, Any]:
        message = self.channel.recv(1 << 16)
        if not message:
            raise RuntimeError("the warm parent exited")
        return json.loads(message)

    def run(
        self,
        argv: Sequence[str],
        cwd: Path,
        env: Mapping[str, str],
        started: list[int],
        reader_gone: bool = False,
    ) -> tuple[int, bytes, bytes]:
        """(exit code, stdout, stderr) of one command; blocking, one command at a time. The
        child's pid goes into `started` as soon as it is known. With `reader_gone` its stdout is
        a pipe nobody reads any more (`earshot models | head -1` once head has exited)."""
        read_end, write_end = os.pipe()
        gone_read, gone_write = os.pipe() if reader_gone else (-1, -1)
        if reader_gone:
            os.close(gone_read)
        with (
            self._lock,
            tempfile.TemporaryFile() as out,
            tempfile.TemporaryFile() as err,
        ):
            try:
                request = {"argv": list(argv), "cwd": str(cwd), "env": dict(env)}
                fds = [read_end, gone_write if reader_gone else out.fileno(), err.fileno()]
                socket.send_fds(self.channel, [json.dumps(request).encode()], fds)
                os.close(read_end)
                read_end = -1
                started.append(int(self._receive()["pid"]))
                code = int(self._receive()["exit"])
            finally:
                if read_end != -1:
                    os.close(read_end)
                if gone_write != -1:
                    os.close(gone_write)
                os.close(write_end)  # stdin stayed open and empty while the command ran
            out.seek(0)
            err.seek(0)
            return code, out.read(), err.read()

    def close(self) -> None:
        self.channel.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


_parent: WarmParent | None = None
_unavailable: str | None = "cold runs asked for" if os.environ.get("EARSHOT_TESTS_COLD") else None
_starting = threading.Lock()


def _warm_parent() -> WarmParent | None:
    global _parent, _unavailable
    with _starting:
        if _parent is None and _unavailable is None:
            try:
                _parent = WarmParent()
                atexit.register(_parent.close)
            except (OSError, RuntimeError) as error:
                _unavailable = str(error)
        return _parent


async def run_earshot(
    argv: Sequence[str],
    cwd: Path,
    env: Mapping[str, str],
    *,
    seconds: float,
    cold: bool = False,
    reader_gone: bool = False,
) -> tuple[int, bytes, bytes]:
    """(exit code, stdout, stderr) of `earshot ARGV`, run warm unless `cold` (see above).
    `seconds` is a hang detector: the command is killed and the test fails after it. With
    `reader_gone`, stdout is a pipe whose reader has closed it (and stdout comes back empty)."""
    parent = None if cold else await anyio.to_thread.run_sync(_warm_parent)
    if parent is None and reader_gone:
        return await _run_cold_reader_gone(argv, cwd, env, seconds)
    if parent is None:
        with anyio.fail_after(seconds):
            result = await anyio.run_process(
                [sys.executable, "-m", "earshot", *argv], cwd=cwd, env=env, check=False
            )
        return result.returncode, result.stdout, result.stderr
    started: list[int] = []
    try:
        with anyio.fail_after(seconds):
            return await anyio.to_thread.run_sync(
                parent.run, argv, cwd, env, started, reader_gone, abandon_on_cancel=True
            )
    except BaseException:
        for pid in started:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        raise


async def _run_cold_reader_gone(
    argv: Sequence[str], cwd: Path, env: Mapping[str, str], seconds: float
) -> tuple[int, bytes, bytes]:
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        with anyio.fail_after(seconds):
            result = await anyio.run_process(
                [sys.executable, "-m", "earshot", *argv],
                cwd=cwd,
                env=env,
                check=False,
                stdout=write_end,
            )
    finally:
        os.close(write_end)
    return result.returncode, b"", result.stderr
