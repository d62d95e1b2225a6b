"""A separate process appending to one session (run by the crash and concurrency tests).

Usage: writer.py ROOT SESSION_ID LABEL COUNT SIZE
Prints `ready`, waits for a line on stdin, then appends COUNT user messages (forever when COUNT is
0) of about SIZE characters, printing each acknowledged entry id as soon as `append` returns.
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio

from providers.types import Message, TextPart
from sessions import SessionStore


async def main(root: str, session_id: str, label: str, count: int, size: int) -> None:
    session = await SessionStore(Path(root)).open(session_id)
    print("ready", flush=True)
    sys.stdin.readline()
    index = 0
    while count == 0 or index < count:
        text = f"{label} {index} " + "x" * size
        entry = await session.append_message(Message(role="user", parts=[TextPart(text=text)]))
        print(entry.id, flush=True)
        index += 1
    await session.aclose()


if __name__ == "__main__":
    root, session_id, label, count, size = sys.argv[1:]
    anyio.run(main, root, session_id, label, int(count), int(size))
