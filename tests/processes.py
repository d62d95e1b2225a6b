"""Finding a test's processes by what they run, not by a pid they report: a command in the
sandbox has its own pid namespace, so `$!` and `$$` inside it are not pids out here."""

from __future__ import annotations

import os
import uuid


def unique_sleep(seconds: int) -> str:
    """`sleep <seconds>.<unique digits>`: the same wait, with an argument no other process has."""
    return f"sleep {seconds}.{uuid.uuid4().int % 10**12:012d}"


def running_with_argv(command: str) -> list[int]:
    """Pids (as seen here) of live, non-zombie processes whose argv is `command` split on spaces.
    Linux only (reads /proc)."""
    wanted = command.split(" ")
    found: list[int] = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as handle:
                argv = handle.read().split(b"\0")[:-1]
            with open(f"/proc/{name}/stat", encoding="utf-8") as handle:
                stat = handle.read()
        except OSError:
            continue
        state = stat[stat.rfind(")") + 2 :].split()[:1]
        if [part.decode(errors="replace") for part in argv] == wanted and state not in (
            ["Z"],
            ["X"],
        ):
            found.append(int(name))
    return found
