"""Many sessions, one undo store (issue 29): snapshots taken at the same moment by several
sessions all land, each undo puts back its own batch's files only, git's own lock files cannot
stop a snapshot, and a snapshot that cannot be taken says why instead of vanishing."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import anyio
import pytest

from agent.undo import SnapshotFailed, UndoStore
from agent.undo.git import run_git
from tests.agent.test_undo import GIT
from tests.barrier import Barrier

pytestmark = pytest.mark.skipif(GIT is None, reason="git is required")

SESSIONS = 8
"""Twenty sessions (and four processes) at once: `tests/acp_server/test_concurrency*.py`."""


def project(root: Path) -> Path:
    cwd = root / "project"
    cwd.mkdir()
    (cwd / "calc.py").write_text("def add(a, b):\n    return a + b\n", encoding="utf-8")
    return cwd


async def test_sessions_snapshotting_at_once_each_undo_only_their_own_files(
    tmp_path: Path,
) -> None:
    cwd = project(tmp_path)
    stores = [UndoStore(cwd, tmp_path / "data") for _ in range(SESSIONS)]  # one per session
    barrier = Barrier(SESSIONS)
    made = {number: cwd / f"made-by-{number}.txt" for number in range(SESSIONS)}

    async def session(number: int) -> None:
        # even sessions edit (their calls name the file), odd ones run a command (whole tree)
        precise = number % 2 == 0
        paths = [made[number]] if precise else []
        await barrier.wait()
        snapshot = await stores[number].snapshot(f"s{number}", "b1", paths, whole_tree=not precise)
        assert snapshot is not None
        made[number].write_text("new\n", encoding="utf-8")
        await stores[number].seal(snapshot, paths, whole_tree=not precise)

    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            for number in range(SESSIONS):
                group.start_soon(session, number)
    # the store's shared index is whole (renamed into place) and no copy is left behind
    undo_dir = tmp_path / "data" / "undo"
    assert sorted(p.suffix for p in undo_dir.iterdir()) == [".git", ".index"]
    for number in [*range(0, SESSIONS, 2), *range(1, SESSIONS, 2)]:
        others = {n: path.exists() for n, path in made.items() if n != number}
        undone = await stores[number].undo_last(f"s{number}")
        assert undone.restored, undone.message
        # never another session's file; its own unless a concurrent command makes it doubtful
        assert {n: path.exists() for n, path in made.items() if n != number} == others
        if number % 2 == 0:
            assert not made[number].exists(), undone.message
        else:
            assert not made[number].exists() or f"made-by-{number}.txt" in undone.message


async def test_undoing_a_command_leaves_what_others_did_since_or_meanwhile(tmp_path: Path) -> None:
    cwd = project(tmp_path)
    mine, theirs = UndoStore(cwd, tmp_path / "data"), UndoStore(cwd, tmp_path / "data")
    command = await mine.snapshot("mine", "b1", [], whole_tree=True)  # a command starts
    assert command is not None
    edit = await theirs.snapshot("theirs", "b1", [cwd / "calc.py"])  # an edit meanwhile
    assert edit is not None
    (cwd / "calc.py").write_text("edited by the other session\n", encoding="utf-8")
    await theirs.seal(edit, [cwd / "calc.py"])
    (cwd / "out.txt").write_text("the command's output\n", encoding="utf-8")
    await mine.seal(command, [], whole_tree=True)  # the command ends
    later = await theirs.snapshot("theirs", "b2", [cwd / "later.txt"])  # an edit after it
    assert later is not None
    (cwd / "later.txt").write_text("later\n", encoding="utf-8")
    await theirs.seal(later, [cwd / "later.txt"])

    undone = await mine.undo_last("mine")
    assert not (cwd / "out.txt").exists()  # the command's own output is gone
    assert (cwd / "later.txt").exists()  # what came after is left
    assert (cwd / "calc.py").read_text(encoding="utf-8") == "edited by the other session\n"
    assert "calc.py" in undone.message  # doubtful: named, and left as it is
    # the other session's edits are certain: its undo restores them, command or not
    assert (await theirs.undo_last("theirs")).restored and not (cwd / "later.txt").exists()
    await theirs.undo_last("theirs")
    assert (cwd / "calc.py").read_text(encoding="utf-8").startswith("def add")


async def test_a_file_changed_again_since_the_batch_is_left_and_named(tmp_path: Path) -> None:
    cwd = project(tmp_path)
    mine = UndoStore(cwd, tmp_path / "data")
    target = cwd / "calc.py"
    snapshot = await mine.snapshot("mine", "b1", [target])
    assert snapshot is not None
    target.write_text("mine\n", encoding="utf-8")
    await mine.seal(snapshot, [target])
    target.write_text("someone else's, later\n", encoding="utf-8")
    undone = await mine.undo_last("mine")
    assert target.read_text(encoding="utf-8") == "someone else's, later\n"
    assert "calc.py" in undone.message and "left as they are" in undone.message


async def test_a_git_that_exits_before_reading_its_input_reports_its_own_error(
    tmp_path: Path,
) -> None:
    # The cause of issue 29's BrokenResourceError: `git add` dies on index.lock before reading
    # the paths piped to it. The runner must hand back git's message, not a broken pipe.
    assert GIT is not None
    (tmp_path / "index.lock").write_text("", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_DIR=str(tmp_path / "nowhere.git"), GIT_INDEX_FILE=str(tmp_path / "index"))
    subprocess.run([GIT, "init", "-q", "--bare", str(tmp_path / "nowhere.git")], check=True)
    result = await run_git(
        GIT,
        ["--work-tree", str(tmp_path), "add", "-A", "--pathspec-from-file=-"],
        env=env,
        cwd=tmp_path,
        input=b"x" * 1_000_000,  # more than a pipe holds: the write must meet the closed end
    )
    assert result.returncode != 0
    assert b"index.lock" in result.stderr


async def test_git_lock_files_left_by_a_killed_git_do_not_stop_snapshots(tmp_path: Path) -> None:
    cwd = project(tmp_path)
    store = UndoStore(cwd, tmp_path / "data")
    assert await store.snapshot("s", "b1", [], whole_tree=True)
    # a git killed mid-way leaves its lock files: on the store's index and on packed-refs
    index_lock = store.undo_dir / f"{store.git_dir.stem}.index.lock"
    index_lock.write_text("", encoding="utf-8")
    packed = store.git_dir / "packed-refs.lock"
    packed.write_text("", encoding="utf-8")
    os.utime(packed, (0, 0))  # long ago: no git of ours holds one for more than a moment
    (cwd / "calc.py").write_text("changed\n", encoding="utf-8")
    fresh = UndoStore(cwd, tmp_path / "data")
    assert await fresh.snapshot("s", "b2", [], whole_tree=True)
    (cwd / "calc.py").write_text("changed again\n", encoding="utf-8")
    undone = await fresh.undo_last("s")  # retiring the ref takes packed-refs.lock
    assert undone.restored, undone.message
    assert not packed.exists()
    assert (cwd / "calc.py").read_text(encoding="utf-8") == "changed\n"


async def test_a_lock_held_too_long_is_waited_for_a_bounded_time_then_gone_without(
    tmp_path: Path,
) -> None:
    import fcntl

    cwd = project(tmp_path)
    store = UndoStore(cwd, tmp_path / "data")
    assert await store.snapshot("s", "b1", [cwd / "calc.py"])
    (cwd / "calc.py").write_text("changed\n", encoding="utf-8")
    lock = os.open(store.undo_dir / f"{store.git_dir.stem}.lock", os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another process, stuck while holding it
        store.lock_wait = 0.2
        with anyio.fail_after(20):
            undone = await store.undo_last("s")  # an undo takes the lock
        assert undone.restored, undone.message
    finally:
        os.close(lock)
    assert (cwd / "calc.py").read_text(encoding="utf-8").startswith("def add")


async def test_a_snapshot_that_cannot_be_taken_says_why(tmp_path: Path) -> None:
    cwd = project(tmp_path)
    store = UndoStore(cwd, tmp_path / "data")
    assert await store.snapshot("s", "b1", [], whole_tree=True)
    objects = store.git_dir / "objects"
    os.rename(objects, tmp_path / "moved-objects")
    objects.write_text("not a directory\n", encoding="utf-8")  # the store is broken
    (cwd / "calc.py").write_text("changed\n", encoding="utf-8")
    with pytest.raises(SnapshotFailed) as failed:
        await UndoStore(cwd, tmp_path / "data").snapshot("s", "b2", [], whole_tree=True)
    assert "git" in str(failed.value)
    with pytest.raises(SnapshotFailed, match="undo store"):
        blocked = tmp_path / "blocked"
        blocked.write_text("a file where the data dir should be\n", encoding="utf-8")
        await UndoStore(cwd, blocked).snapshot("s", "b1", [cwd / "calc.py"])


async def test_only_a_staging_with_much_to_hash_queues_for_the_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import fcntl

    from structlog.testing import capture_logs

    import agent.undo.store

    cwd = project(tmp_path)
    for number in range(5):
        (cwd / f"module{number}.py").write_text(f"value = {number}\n", encoding="utf-8")
    store = UndoStore(cwd, tmp_path / "data")
    store.lock_wait = 0.2
    store.undo_dir.mkdir(parents=True)
    lock = os.open(store.undo_dir / f"{store.git_dir.stem}.lock", os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another session is staging
        monkeypatch.setattr(agent.undo.store, "_LOCK_FILES", 3)
        with capture_logs() as first:  # 6 files never hashed: it waits for the lock
            assert await store.snapshot("s", "b1", [], whole_tree=True)
        (cwd / "module0.py").write_text("changed\n", encoding="utf-8")
        with capture_logs() as later:  # one changed file: it goes ahead
            assert await store.snapshot("s", "b2", [], whole_tree=True)
    finally:
        os.close(lock)
    assert [entry["event"] for entry in first] == ["undo store busy: going on without its lock"]
    assert later == []
