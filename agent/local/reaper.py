"""The reaper of a background command (Linux): a script, run by `agent.local.background` as

    python -I -S reaper.py --watch EARSHOT_PID [--pidfile PATH] -- COMMAND...

Why: a background command's processes must end when its session closes or earshot exits, and a
process group does not hold them: `setsid server &` leaves the group, a double fork leaves its
parent. So the command runs under this reaper, which marks itself the subreaper of everything it
starts (`PR_SET_CHILD_SUBREAPER`): an orphan anywhere below it, `setsid` or double-forked, is
re-parented to it instead of to init, so the reaper's descendants are always every process the
command started. (Not a pid namespace, which needs a user namespace: a command the user runs
outside the sandbox keeps the real one, `sudo` included; not a cgroup, which needs a delegated
hierarchy that a plain login or a container does not give.)

It ends them all (SIGTERM, then SIGKILL after `GRACE_SECONDS`, found by walking
`/proc/PID/task/TID/children` from itself) when:

- it gets SIGTERM, SIGHUP or SIGINT (earshot's `bash_kill`, the session closing);
- earshot's process ends, however it ends, SIGKILL included (a pidfd on `--watch`);

and exits once no descendant is left, with the command's own status (a signal is passed on as
that signal). With `--pidfile`, it writes its pid there first: an editor terminal runs it, and
earshot finds it there to end it before the terminal goes (`acp_server.background_terminals`).

Standard library only, nothing of earshot: it runs with `-I -S`.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import select
import signal
import sys
import time

PR_SET_CHILD_SUBREAPER = 36
GRACE_SECONDS = 2.0
_STOP = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)


def descendants(root: int) -> list[int]:
    """Every live descendant of `root`, parents before children."""
    found: list[int] = []
    pending = [root]
    while pending:
        pid = pending.pop()
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                with open(f"/proc/{pid}/task/{task}/children", encoding="ascii") as handle:
                    children = [int(child) for child in handle.read().split()]
            except (OSError, ValueError):
                continue
            found.extend(children)
            pending.extend(children)
    return found


def signal_all(sig: signal.Signals) -> None:
    for pid in descendants(os.getpid()):
        with contextlib.suppress(OSError):
            os.kill(pid, sig)


def _arguments(argv: list[str]) -> tuple[int, str | None, list[str]]:
    split = argv.index("--")
    options, command = argv[1:split], argv[split + 1 :]
    watch = int(options[options.index("--watch") + 1])
    pidfile = options[options.index("--pidfile") + 1] if "--pidfile" in options else None
    if not command:
        raise SystemExit("reaper: no command")
    return watch, pidfile, command


def _noted(number: int, frame: object) -> None:
    """A handler that does nothing: the wake-up fd carries the signal to the loop."""


def _write_pid(path: str) -> None:
    partial = f"{path}.{os.getpid()}.partial"
    with open(partial, "w", encoding="ascii") as handle:
        handle.write(f"{os.getpid()}\n")
    os.replace(partial, path)


def main(argv: list[str]) -> int:
    watch, pidfile, command = _arguments(argv)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        print("reaper: cannot become a subreaper", file=sys.stderr)
        return 126
    try:
        earshot = os.pidfd_open(watch)
    except OSError:
        return 125  # earshot is gone already: start nothing
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    for number in (*_STOP, signal.SIGCHLD):
        signal.signal(number, _noted)
    if pidfile is not None:
        _write_pid(pidfile)
    child = os.posix_spawnp(command[0], command, os.environ)
    status: int | None = None
    deadline: float | None = None
    while True:
        while True:  # reap whatever ended: the command, and orphans re-parented to us
            try:
                pid, code = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return _exit(status)
            if pid == 0:
                break
            if pid == child:
                status = code
        timeout = None if deadline is None else max(0.1, deadline - time.monotonic())
        readable, _, _ = select.select([wake_read, earshot], [], [], timeout)
        stop = earshot in readable
        if wake_read in readable:
            received = os.read(wake_read, 512)
            stop = stop or any(number in received for number in _STOP)
        if stop and deadline is None:
            deadline = time.monotonic() + GRACE_SECONDS
        if deadline is not None:
            # Again at every wake-up: a process forked meanwhile gets it too.
            signal_all(signal.SIGKILL if time.monotonic() >= deadline else signal.SIGTERM)


def _exit(status: int | None) -> int:
    if status is None:
        return 1
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        signal.signal(number, signal.SIG_DFL)
        signal.set_wakeup_fd(-1)
        os.kill(os.getpid(), number)
        return 128 + number
    return os.WEXITSTATUS(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
