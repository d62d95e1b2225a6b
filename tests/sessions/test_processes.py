"""Real processes: a writer killed with SIGKILL mid-stream, and two processes on one session
(one writer at a time)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from providers.types import Message, TextPart
from sessions import MessageEntry, SessionStore

WRITER = Path(__file__).with_name("writer.py")

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL and flock are POSIX")


def start_writer(
    store: SessionStore, session_id: str, label: str, count: int, size: int
) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [sys.executable, str(WRITER), str(store.root), session_id, label, str(count), str(size)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    assert process.stdout.readline() == "ready\n"
    return process


def go(process: subprocess.Popen[str]) -> None:
    assert process.stdin is not None
    process.stdin.write("go\n")
    process.stdin.flush()


async def test_sigkill_mid_stream_loses_no_acknowledged_entry(
    store: SessionStore, project: Path
) -> None:
    session = await store.create(project)
    await session.aclose()
    # Large entries make it likely the kill lands inside a write; the hand-made torn line test
    # covers that case deterministically.
    writer = start_writer(store, session.id, "w", 0, 300_000)
    go(writer)
    assert writer.stdout is not None
    acknowledged: list[str] = []
    while len(acknowledged) < 25:
        acknowledged.append(writer.stdout.readline().strip())
    writer.send_signal(signal.SIGKILL)
    assert writer.wait() == -signal.SIGKILL
    assert writer.stdin is not None
    writer.stdin.close()
    # Read through the same buffered stream as the lines above: `readline` may have buffered
    # acknowledgements past the 25th already, which `communicate` (reading the fd) never sees.
    acknowledged += writer.stdout.read().split()
    writer.stdout.close()

    with capture_logs() as logs:
        reopened = await store.open(session.id)
    ids = [entry.id for entry in reopened.entries]
    assert ids[: len(acknowledged)] == acknowledged
    assert len(ids) - len(acknowledged) <= 1  # at most the write in flight, if it completed
    assert all(log["event"].startswith("torn last line") for log in logs)

    # The file stays appendable and the next append chains onto the last entry.
    last = ids[-1]
    appended = await reopened.append_message(Message(role="user", parts=[TextPart(text="after")]))
    assert appended.parent_id == last
    await reopened.aclose()
    again = await store.open(session.id)
    assert [entry.id for entry in again.entries] == [*ids, appended.id]
    assert again.history()[-1].text == "after"
    await again.aclose()


def read_line(process: subprocess.Popen[str]) -> str:
    assert process.stdout is not None
    return process.stdout.readline().strip()


async def test_one_writer_per_session_and_a_takeover_once_it_is_free(
    store: SessionStore, project: Path
) -> None:
    session = await store.create(project)
    await session.aclose()
    first = start_writer(store, session.id, "a", 3, 100)
    go(first)
    first_ids = [read_line(first) for _ in range(3)]
    assert read_line(first) == "done"  # holding the session open

    second = start_writer(store, session.id, "b", 3, 100)
    before = session.path.read_bytes()
    go(second)
    # The second process is told who holds it, and writes nothing.
    assert read_line(second) == f"busy {first.pid}"
    assert session.path.read_bytes() == before
    go(second)
    assert read_line(second) == f"busy {first.pid}"
    assert session.path.read_bytes() == before

    go(first)  # the holder closes the session and exits
    first.communicate(timeout=10)
    assert first.returncode == 0
    go(second)  # now it takes the session over
    second_ids = [read_line(second) for _ in range(3)]
    assert read_line(second) == "done"
    go(second)
    second.communicate(timeout=10)
    assert second.returncode == 0

    # One chain, no interleaving: the first writer's entries, then the second's.
    lines = session.path.read_text(encoding="utf-8").splitlines()
    parsed = [json.loads(line) for line in lines[1:]]
    assert [line["id"] for line in parsed] == [*first_ids, *second_ids]
    assert parsed[0]["parent_id"] is None
    for previous, line in zip(parsed, parsed[1:], strict=False):
        assert line["parent_id"] == previous["id"]
    reopened = await store.open(session.id)
    entries = [entry for entry in reopened.entries if isinstance(entry, MessageEntry)]
    assert [entry.message.text.split()[:2] for entry in entries] == [
        ["a", "0"], ["a", "1"], ["a", "2"], ["b", "0"], ["b", "1"], ["b", "2"],
    ]  # fmt: skip
    await reopened.aclose()


async def test_a_writer_killed_with_sigkill_lets_the_session_go(
    store: SessionStore, project: Path
) -> None:
    session = await store.create(project)
    await session.aclose()
    writer = start_writer(store, session.id, "w", 1, 10)
    go(writer)
    read_line(writer)
    assert read_line(writer) == "done"
    held = await store.open(session.id)
    assert not held.writable
    holder = held.holder()
    assert holder is not None and holder.pid == writer.pid
    writer.send_signal(signal.SIGKILL)
    writer.communicate(timeout=10)
    # The kernel released the lock with the process: the next append takes the session over.
    appended = await held.append_message(Message(role="user", parts=[TextPart(text="mine")]))
    assert held.writable
    assert held.history()[-1].text == "mine"
    assert appended.parent_id is not None
    await held.aclose()
