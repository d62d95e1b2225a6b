"""Real processes: a writer killed with SIGKILL mid-stream, and two writers on one session."""

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
    remaining, _ = writer.communicate()
    acknowledged += remaining.split()
    assert writer.returncode == -signal.SIGKILL

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


async def test_two_processes_append_to_one_session(store: SessionStore, project: Path) -> None:
    session = await store.create(project)
    await session.aclose()
    count = 150
    writers = [start_writer(store, session.id, label, count, 2_000) for label in ("a", "b")]
    for writer in writers:
        go(writer)
    outputs = [writer.communicate()[0].split() for writer in writers]
    assert [writer.returncode for writer in writers] == [0, 0]
    assert [len(output) for output in outputs] == [count, count]

    # No interleaved bytes: every line is one whole JSON object.
    lines = session.path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1 + 2 * count
    parsed = [json.loads(line) for line in lines[1:]]

    # The writers really overlapped (in practice they alternate almost every line)...
    labels = [line["message"]["parts"][0]["text"][0] for line in parsed]
    assert sum(a != b for a, b in zip(labels, labels[1:], strict=False)) > 0
    # ...and each append read what the other wrote before choosing its parent: one chain.
    assert parsed[0]["parent_id"] is None
    for previous, line in zip(parsed, parsed[1:], strict=False):
        assert line["parent_id"] == previous["id"]

    reopened = await store.open(session.id)
    entries = [entry for entry in reopened.entries if isinstance(entry, MessageEntry)]
    assert len(entries) == 2 * count
    for label, output in zip(("a", "b"), outputs, strict=True):
        mine = [entry for entry in entries if entry.message.text.startswith(f"{label} ")]
        assert [entry.id for entry in mine] == output
        assert [entry.message.text.split()[1] for entry in mine] == [str(i) for i in range(count)]
    assert len(reopened.history()) == 2 * count
    await reopened.aclose()
