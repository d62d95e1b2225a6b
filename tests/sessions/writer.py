"""A separate process appending to one session (run by the crash and concurrency tests).

Usage: writer.py ROOT SESSION_ID LABEL COUNT SIZE
Opens the session (taking its writer lock when it is free), prints `ready`, waits for a line on
stdin, then appends COUNT user messages (forever when COUNT is 0) of about SIZE characters,
printing each acknowledged entry id as soon as `append` returns. An append refused because another
process holds the session prints `busy <holder pid>` and is tried again after the next line on
stdin. After the last append it prints `done` and closes the session after one more line.
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio

from providers.types import Message, TextPart
from sessions import SessionBusy, SessionStore


async def main(root: str, session_id: str, label: str, count: int, size: int) -> None:
    session = await SessionStore(Path(root)).open(session_id)
    print("ready", flush=True)
    sys.stdin.readline()
    index = 0
    while count == 0 or index < count:
        text = f"{label} {index} " + "x" * size
        try:
            entry = await session.append_message(Message(role="user", parts=[TextPart(text=text)]))
        except SessionBusy as exc:
            print(f"busy {exc.holder.pid if exc.holder else None}", flush=True)
            sys.stdin.readline()
            continue
        print(entry.id, flush=True)
        index += 1
    print("done", flush=True)
    sys.stdin.readline()
    await session.aclose()


if __name__ == "__main__":
    root, session_id, label, count, size = sys.argv[1:]
    anyio.run(main, root, session_id, label, int(count), int(size))
