"""A fork appears whole or not at all: a process killed with SIGKILL while it copies a branch
leaves no session file holding part of it (nor an empty one), and nothing half-made is listed."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from providers.types import Message, TextPart
from sessions import SessionStore

FORKER = Path(__file__).with_name("forker.py")

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")


async def test_sigkill_mid_fork_leaves_no_partial_session(
    store: SessionStore, project: Path
) -> None:
    source = await store.create(project)
    for index in range(30):
        text = f"message {index} " + "x" * 100_000
        await source.append_message(Message(role="user", parts=[TextPart(text=text)]))
    expected = len(source.path_entries())
    await source.aclose()

    with subprocess.Popen(
        [sys.executable, str(FORKER), str(store.root), source.id],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as process:
        assert process.stdin is not None and process.stdout is not None
        assert process.stdout.readline() == "ready\n"
        process.stdin.write("go\n")
        process.stdin.flush()
        assert process.wait() == -signal.SIGKILL
        assert process.stdout.read() == ""  # it died inside the fork

    # Only the source: no half copy, listed or not.
    files = sorted(source.path.parent.glob("*.jsonl"))
    assert [path.stem for path in files] == [source.id]
    assert [item.id for item in store.list(project).items] == [source.id]
    opened = await store.open(source.id, claim=False)
    assert len(opened.path_entries()) == expected
    await opened.aclose()
    [leftover] = source.path.parent.glob(".*.partial")
    # A live process's temporary file (another fork, copying now) is not a leftover.
    with subprocess.Popen([sys.executable, "-c", "input()"], stdin=subprocess.PIPE) as live:
        copying = source.path.parent / f".other.{live.pid}.partial"
        copying.write_bytes(b"")
        # The next fork works and removes the dead process's leftover.
        forked = await store.fork(source.id)
        assert len(forked.path_entries()) == expected
        await forked.aclose()
        assert not leftover.exists()
        assert copying.exists()
        live.communicate(b"\n")
