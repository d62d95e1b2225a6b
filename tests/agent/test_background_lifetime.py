"""Nothing a background command starts outlives it: a `setsid` daemon and a double-forked orphan
(both out of the command's process group) end when the session closes and when `bash_kill`
stops the command, with the sandbox and without it. Processes are real; their end is awaited on
pidfds (`tests.processes.until_gone`)."""

from __future__ import annotations

import os
import shlex
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.local import BackgroundJobs, background
from tests.agent.sandbox_lab import Lab, make_lab, needs_linux
from tests.agent.test_background import call, run, session
from tests.processes import Fifo, until_gone

pytestmark = needs_linux


@pytest.fixture
def lab(monkeypatch: pytest.MonkeyPatch) -> Iterator[Lab]:
    yield from make_lab(monkeypatch)


def detaching(fifo: Path) -> tuple[str, str]:
    """A command that leaves three processes behind, each marked with the same unique word:
    one in a session of its own, one orphaned by a double fork, one in its group. Each says on
    `fifo` that it runs (after its exec: its command line is final then)."""
    marker = f"earshot-lingering-{uuid.uuid4().hex}"
    linger = shlex.quote(f": {marker}; echo >> {fifo}; sleep 1000; :")
    command = f"setsid bash -c {linger} & ( bash -c {linger} & ) ; bash -c {linger} & wait"
    return command, marker


def running_with(marker: str) -> list[int]:
    """Pids (as seen here) of live processes whose command line holds `marker`."""
    found: list[int] = []
    for name in os.listdir("/proc"):
        try:
            with open(f"/proc/{name}/cmdline", "rb") as handle:
                if marker.encode() not in handle.read():
                    continue
            with open(f"/proc/{name}/stat", encoding="utf-8") as handle:
                stat = handle.read()
        except (OSError, ValueError):
            continue
        if stat[stat.rfind(")") + 2 :][:1] not in ("Z", "X"):
            found.append(int(name))
    return found


async def started(jobs: BackgroundJobs, lab: Lab, confined: bool) -> list[int]:
    fifo = Fifo(lab.project / "ready")
    try:
        command, marker = detaching(fifo.path)
        sandbox = await lab.sandbox() if confined else None
        await jobs.start(command, confine=sandbox)
        for _ in range(3):
            await fifo.wait()
    finally:
        fifo.close()
    # The reaper's own command line holds the whole command, so the marker too.
    pids = [pid for pid in running_with(marker) if b"reaper.py" not in _cmdline(pid)]
    assert len(pids) >= 3
    return pids


def _cmdline(pid: int) -> bytes:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read()
    except OSError:
        return b""


@pytest.mark.parametrize("confined", [False, True], ids=["unsandboxed", "sandboxed"])
async def test_detached_processes_end_when_the_session_closes(lab: Lab, confined: bool) -> None:
    jobs = BackgroundJobs(lab.project)
    pids = await started(jobs, lab, confined)
    await jobs.aclose()
    await until_gone(pids)


async def test_detached_processes_end_when_the_command_is_killed(lab: Lab) -> None:
    jobs = BackgroundJobs(lab.project)
    try:
        pids = await started(jobs, lab, confined=False)
        output = await jobs.kill("bg1")
        assert not output.running
        await until_gone(pids)
    finally:
        await jobs.aclose()


async def test_where_detached_processes_cannot_be_tracked_the_start_says_so(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # macOS has no subreaper: the command runs as it is, and the user and the model are told.
    monkeypatch.setattr(background, "TRACKS_DETACHED", False)
    assert background.reaped(["bash", "-c", "x"]) == ["bash", "-c", "x"]
    project = tmp_path / "project"
    project.mkdir()
    agent = await session(project, [call("bash", {"command": "true", "background": True}, "s")])
    try:
        results = await run(agent)
    finally:
        await agent.aclose()
    assert background.UNTRACKED_NOTE in results["s"].result.text
