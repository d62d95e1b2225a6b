"""The parent of the warm `earshot` processes of the CLI tests (`tests/earshot/warm.py` starts it
and says why). Run as `python warm_parent.py FD`, FD being its end of a SOCK_SEQPACKET socket.

It imports what an `earshot` command imports, then serves one request at a time: a JSON message
(argv, cwd, environment) carrying three descriptors (stdin, stdout, stderr). It forks; the child
takes those descriptors, that directory and that environment, runs `earshot.cli.main` as
`python -m earshot` would and exits with its code; the parent answers `{"pid": ...}` at once and
`{"exit": ...}` when the child has ended (the code `subprocess` would report: negative for a
signal)."""

from __future__ import annotations

import atexit
import importlib
import io
import json
import os
import signal
import socket
import sys
import threading
import traceback

WARM = (
    "anyio",
    "earshot.cli",
    "earshot.commands",
    "earshot.compose",
    "earshot.doctor",
    "earshot.print_mode",
    "openai",
    "openai.types.chat",
)
"""What the tests' commands import (print mode talks to an OpenAI-compatible loopback server)."""


def main() -> int:
    channel = socket.socket(fileno=int(sys.argv[1]))
    # This folder is not on an installed `earshot`'s path: a run must not import the tests'.
    sys.path.pop(0)
    for name in WARM:
        importlib.import_module(name)
    # Forking with a second thread alive could copy a lock that thread holds; no import may
    # start one. The client falls back to cold processes when this is not said.
    if threading.active_count() != 1:
        channel.send(json.dumps({"refused": "a thread is running"}).encode())
        return 1
    channel.send(json.dumps({"ready": os.getpid()}).encode())
    while True:
        try:
            message, fds, _, _ = socket.recv_fds(channel, 1 << 20, 3)
        except OSError:
            return 0
        if not message:
            return 0
        request = json.loads(message)
        pid = os.fork()
        if pid == 0:
            _run(request, fds, channel)
        for fd in fds:
            os.close(fd)
        channel.send(json.dumps({"pid": pid}).encode())
        _, status = os.waitpid(pid, 0)
        channel.send(json.dumps({"exit": os.waitstatus_to_exitcode(status)}).encode())


def _run(request: dict[str, object], fds: list[int], channel: socket.socket) -> None:
    """The child: become the requested `python -m earshot ARGS`, run, and never return."""
    code = 1
    try:
        channel.close()
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(str(request["cwd"]))
        environ = request["env"]
        assert isinstance(environ, dict)
        os.environ.clear()
        os.environ.update({str(k): str(v) for k, v in environ.items()})  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
        argv = request["argv"]
        assert isinstance(argv, list)
        sys.argv = ["earshot", *(str(arg) for arg in argv)]  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
        signal.signal(signal.SIGINT, signal.default_int_handler)
        _fresh_standard_streams()
        code = importlib.import_module("earshot.cli").main()
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else 0 if exit_.code is None else 1
    except BaseException:
        traceback.print_exc()
    finally:
        try:
            atexit._run_exitfuncs()  # pyright: ignore[reportPrivateUsage]
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _fresh_standard_streams() -> None:
    """What a new interpreter builds on descriptors 0-2: stdout line-buffered on a terminal,
    stderr always, both written through with PYTHONUNBUFFERED."""
    unbuffered = bool(os.environ.get("PYTHONUNBUFFERED"))
    stdin = open(0, "rb", closefd=False)  # noqa: SIM115
    sys.stdin = sys.__stdin__ = io.TextIOWrapper(stdin, encoding="utf-8")
    sys.stdout = sys.__stdout__ = _writer(1, "strict", os.isatty(1), unbuffered)
    sys.stderr = sys.__stderr__ = _writer(2, "backslashreplace", True, unbuffered)


def _writer(fd: int, errors: str, line_buffering: bool, unbuffered: bool) -> io.TextIOWrapper:
    binary = open(fd, "wb", buffering=0 if unbuffered else -1, closefd=False)  # noqa: SIM115
    return io.TextIOWrapper(
        binary,
        encoding="utf-8",
        errors=errors,
        line_buffering=line_buffering,
        write_through=unbuffered,
    )


if __name__ == "__main__":
    sys.exit(main())
