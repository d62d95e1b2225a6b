from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest

from agent.local import LocalFiles, LocalProcesses
from agent.local import backends as local
from tests.processes import until_gone


def running(pid: int) -> bool:
    """Alive and not a zombie (an orphan's zombie may linger under a non-reaping init)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    except OSError:
        return True
    return stat[stat.rfind(")") + 2] not in ("Z", "X")


async def test_files_round_trip_keeps_line_endings_and_creates_parents(tmp_path: Path) -> None:
    files = LocalFiles()
    target = tmp_path / "a" / "b" / "c.txt"
    await files.write_text(target, "one\r\ntwo\n\u00e9")
    assert target.read_bytes() == "one\r\ntwo\n\u00e9".encode()
    assert await files.read_text(target) == "one\r\ntwo\n\u00e9"


async def test_files_errors(tmp_path: Path) -> None:
    files = LocalFiles()
    with pytest.raises(FileNotFoundError):
        await files.read_text(tmp_path / "missing")
    with pytest.raises(IsADirectoryError):
        await files.read_text(tmp_path)
    (tmp_path / "bin").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(UnicodeDecodeError):
        await files.read_text(tmp_path / "bin")


async def test_run_merges_output_and_reports_exit_code(tmp_path: Path) -> None:
    chunks: list[str] = []

    async def sink(text: str) -> None:
        chunks.append(text)

    result = await LocalProcesses().run(
        "echo out; echo err >&2; pwd; exit 3",
        cwd=tmp_path,
        timeout=10,
        output_limit=10_000,
        on_output=sink,
    )
    assert result.exit_code == 3
    assert result.output == f"out\nerr\n{tmp_path}\n"
    assert "".join(chunks) == result.output
    assert not result.truncated and not result.timed_out and result.signal is None


async def test_stdin_is_empty_and_env_is_added(tmp_path: Path) -> None:
    result = await LocalProcesses().run(
        'cat; echo "[$EARSHOT_TEST]"; echo "$HOME" | wc -c',
        cwd=tmp_path,
        timeout=10,
        output_limit=10_000,
        env={"EARSHOT_TEST": "x y"},
    )
    lines = result.output.splitlines()
    assert lines[0] == "[x y]"
    assert int(lines[1]) > 1  # the inherited environment is still there


async def test_output_is_streamed_before_the_command_ends(tmp_path: Path) -> None:
    seen = anyio.Event()
    release = tmp_path / "release"

    async def sink(text: str) -> None:
        if "first" in text:
            seen.set()

    async def run() -> None:
        await LocalProcesses().run(
            f"echo first; while [ ! -e {release} ]; do sleep 0.01; done; echo second",
            cwd=tmp_path,
            timeout=20,
            output_limit=1000,
            on_output=sink,
        )

    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            group.start_soon(run)
            await seen.wait()
            release.touch()


async def test_output_keeps_the_tail(tmp_path: Path) -> None:
    result = await LocalProcesses().run(
        "for i in $(seq 1 5000); do echo line$i; done",
        cwd=tmp_path,
        timeout=10,
        output_limit=100,
    )
    assert result.truncated
    assert len(result.output.encode()) <= 100
    assert result.output.endswith("line5000\n")
    assert "line1\n" not in result.output


async def test_truncation_never_splits_a_character(tmp_path: Path) -> None:
    result = await LocalProcesses().run(
        "for i in $(seq 1 300); do printf '\u00e9'; done",
        cwd=tmp_path,
        timeout=10,
        output_limit=101,
    )
    assert result.truncated
    assert set(result.output) == {"\u00e9"}


async def test_timeout_kills_the_whole_group(tmp_path: Path) -> None:
    result = await LocalProcesses().run(
        "sleep 1000 & echo $!; wait", cwd=tmp_path, timeout=0.8, output_limit=1000
    )
    assert result.timed_out
    assert result.exit_code is None
    child = int(result.output.split()[0])
    assert not running(child)


async def test_cancellation_kills_the_whole_group(tmp_path: Path) -> None:
    pids: list[int] = []
    started = anyio.Event()

    async def sink(text: str) -> None:
        pids.extend(int(word) for word in text.split())
        started.set()

    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:

            async def run() -> None:
                await LocalProcesses().run(
                    "sleep 1000 & echo $!; wait",
                    cwd=tmp_path,
                    timeout=60,
                    output_limit=1000,
                    on_output=sink,
                )

            group.start_soon(run)
            await started.wait()
            group.cancel_scope.cancel()
    assert pids
    assert not running(pids[0])


async def test_background_children_do_not_outlive_the_command(tmp_path: Path) -> None:
    with anyio.fail_after(10):
        result = await LocalProcesses().run(
            "sleep 1000 & echo $!", cwd=tmp_path, timeout=30, output_limit=1000
        )
    assert result.exit_code == 0
    assert not running(int(result.output.split()[0]))


async def test_a_child_ignoring_sigterm_is_killed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(local, "KILL_GRACE_SECONDS", 0.2)
    with anyio.fail_after(15):
        result = await LocalProcesses().run(
            "bash -c 'trap \"\" TERM; sleep 1000' & echo $!; wait",
            cwd=tmp_path,
            timeout=0.8,
            output_limit=1000,
        )
    assert result.timed_out
    # SIGKILL is sent, not waited for: the kernel ends the child when it next runs.
    child = int(result.output.split()[0])
    await until_gone([child])


async def test_signal_death_is_reported(tmp_path: Path) -> None:
    result = await LocalProcesses().run("kill -KILL $$", cwd=tmp_path, timeout=10, output_limit=100)
    assert result.exit_code is None
    assert result.signal == "SIGKILL"
