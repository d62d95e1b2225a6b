from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from agent.undo import UndoStore

GIT = shutil.which("git")
pytestmark = pytest.mark.skipif(GIT is None, reason="git is required")


def git(repo: Path, *args: str) -> bytes:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    # GIT_OPTIONAL_LOCKS=0: `git status` must not refresh (rewrite) the index we compare
    env.update(
        GIT_OPTIONAL_LOCKS="0",
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.com",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.com",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_CONFIG_NOSYSTEM="1",
    )
    return subprocess.run(
        [GIT or "git", *args], cwd=repo, env=env, check=True, capture_output=True
    ).stdout


def repo_state(repo: Path) -> dict[str, bytes]:
    index = (repo / ".git" / "index").read_bytes()
    return {
        "index": index,
        "status": git(repo, "status", "--porcelain=v1", "--untracked-files=all"),
        "cached": git(repo, "diff", "--cached"),
        "refs": git(repo, "for-each-ref"),
        "stash": git(repo, "stash", "list"),
        "head": git(repo, "rev-parse", "HEAD"),
    }


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "project"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / ".gitignore").write_text("*.log\nbuild/\n", encoding="utf-8")
    (repo / "app.py").write_text("print('v1')\n", encoding="utf-8")
    (repo / "doomed.py").write_text("bye\n", encoding="utf-8")
    (repo / "stashed.txt").write_text("base\n", encoding="utf-8")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "initial")
    (repo / "stashed.txt").write_text("stash me\n", encoding="utf-8")
    git(repo, "stash", "push", "-q", "-m", "user stash")
    (repo / "app.py").write_text("print('v2 staged')\n", encoding="utf-8")
    git(repo, "add", "app.py")
    (repo / "notes.md").write_text("untracked\n", encoding="utf-8")
    return repo


async def test_undo_restores_the_work_tree_and_never_touches_the_users_repository(
    repo: Path, tmp_path: Path
) -> None:
    before = repo_state(repo)
    store = UndoStore(repo, tmp_path / "data")
    assert store.available
    targets = [repo / "app.py", repo / "doomed.py", repo / "notes.md", repo / "pkg" / "new.py"]
    contents = {path: path.read_bytes() for path in targets if path.exists()}

    snapshot = await store.snapshot("s1", "batch-1", targets)
    assert snapshot is not None

    (repo / "app.py").write_text("print('agent')\n", encoding="utf-8")
    (repo / "doomed.py").unlink()
    (repo / "notes.md").write_text("rewritten\n", encoding="utf-8")
    (repo / "pkg").mkdir()
    (repo / "pkg" / "new.py").write_text("new\n", encoding="utf-8")

    result = await store.undo_last("s1")

    assert result.restored, result.message
    for path, data in contents.items():
        assert path.read_bytes() == data
    assert not (repo / "pkg" / "new.py").exists()
    assert not (repo / "pkg").exists()
    assert set(result.paths) == {"app.py", "doomed.py", "notes.md", "pkg/new.py"}
    assert repo_state(repo) == before
    assert not any((repo / ".git").glob("refs/earshot*"))


async def test_the_next_undo_goes_one_batch_further_back(repo: Path, tmp_path: Path) -> None:
    store = UndoStore(repo, tmp_path / "data")
    app = repo / "app.py"
    original = app.read_text(encoding="utf-8")
    await store.snapshot("s1", "b1", [app])
    app.write_text("one\n", encoding="utf-8")
    await store.snapshot("s1", "b2", [app])
    app.write_text("two\n", encoding="utf-8")

    first = await store.undo_last("s1")
    assert first.restored and app.read_text(encoding="utf-8") == "one\n"
    second = await store.undo_last("s1")
    assert second.restored and app.read_text(encoding="utf-8") == original
    third = await store.undo_last("s1")
    assert not third.restored
    assert "nothing to undo" in third.message


async def test_snapshots_after_an_undo_and_in_a_new_process_are_undone_newest_first(
    repo: Path, tmp_path: Path
) -> None:
    """The store remembers the next snapshot number instead of listing refs each time; an undo
    in between and a second store (the next process) must still number after every snapshot."""
    app = repo / "app.py"
    store = UndoStore(repo, tmp_path / "data")
    await store.snapshot("s1", "b1", [app])
    app.write_text("one\n", encoding="utf-8")
    await store.snapshot("s1", "b2", [app])
    app.write_text("two\n", encoding="utf-8")
    assert (await store.undo_last("s1")).restored  # back to "one"; b2's number is retired
    await store.snapshot("s1", "b3", [app])
    app.write_text("three\n", encoding="utf-8")
    later = UndoStore(repo, tmp_path / "data")
    await later.snapshot("s1", "b4", [app])
    app.write_text("four\n", encoding="utf-8")

    assert (await later.undo_last("s1")).restored
    assert app.read_text(encoding="utf-8") == "three\n"
    assert (await later.undo_last("s1")).restored
    assert app.read_text(encoding="utf-8") == "one\n"
    names = git(store.git_dir, "for-each-ref", "--format=%(refname)").decode().split()
    assert names == [
        "refs/earshot-undone/s1/00000002",
        "refs/earshot-undone/s1/00000003",
        "refs/earshot-undone/s1/00000004",
        "refs/earshot/s1/00000001",
    ]


async def test_a_session_cannot_undo_another_sessions_batch(repo: Path, tmp_path: Path) -> None:
    store = UndoStore(repo, tmp_path / "data")
    app = repo / "app.py"
    original = app.read_bytes()
    await store.snapshot("session-a", "b1", [app])
    app.write_text("changed by a\n", encoding="utf-8")

    other = UndoStore(repo, tmp_path / "data")  # same cwd, same database, another session
    refused = await other.undo_last("session-b")
    assert not refused.restored
    assert app.read_text(encoding="utf-8") == "changed by a\n"

    mine = await other.undo_last("session-a")
    assert mine.restored
    assert app.read_bytes() == original


async def test_ignored_and_oversized_files_are_skipped_with_a_note(
    repo: Path, tmp_path: Path
) -> None:
    store = UndoStore(repo, tmp_path / "data", max_bytes=10)
    log = repo / "debug.log"
    log.write_text("ignored\n", encoding="utf-8")
    big = repo / "big.txt"
    big.write_text("x" * 100, encoding="utf-8")
    small = repo / "small.txt"
    small.write_text("tiny\n", encoding="utf-8")

    await store.snapshot("s1", "b1", [log, big, small])
    log.write_text("changed\n", encoding="utf-8")
    big.write_text("changed\n", encoding="utf-8")
    small.write_text("changed\n", encoding="utf-8")
    result = await store.undo_last("s1")

    assert result.restored
    assert small.read_text(encoding="utf-8") == "tiny\n"
    assert log.read_text(encoding="utf-8") == "changed\n"
    assert big.read_text(encoding="utf-8") == "changed\n"
    assert "debug.log (ignored by .gitignore)" in result.message
    assert "big.txt (larger than 10 bytes)" in result.message


async def test_directories_symlinks_and_modes_round_trip(repo: Path, tmp_path: Path) -> None:
    store = UndoStore(repo, tmp_path / "data")
    tools = repo / "tools"
    tools.mkdir()
    script = tools / "run.sh"
    script.write_text("#!/bin/sh\n", encoding="utf-8")
    script.chmod(0o755)
    link = repo / "link.py"
    link.symlink_to("app.py")

    await store.snapshot("s1", "b1", [tools, link])
    shutil.rmtree(tools)
    link.unlink()
    link.write_text("now a file\n", encoding="utf-8")

    result = await store.undo_last("s1")
    assert result.restored, result.message
    assert script.read_text(encoding="utf-8") == "#!/bin/sh\n"
    assert script.stat().st_mode & 0o777 == 0o755
    assert link.is_symlink() and os.readlink(link) == "app.py"


async def test_without_git_undo_is_disabled_with_a_clear_reason(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    store = UndoStore(repo, tmp_path / "data")
    assert not store.available
    assert store.unavailable_reason is not None and "git" in store.unavailable_reason
    assert await store.snapshot("s1", "b1", [repo / "app.py"]) is None
    result = await store.undo_last("s1")
    assert not result.restored
    assert result.message == store.unavailable_reason
    assert not (tmp_path / "data").exists()


async def test_inherited_git_environment_cannot_redirect_the_store(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = repo_state(repo)
    monkeypatch.setenv("GIT_DIR", str(repo / ".git"))
    monkeypatch.setenv("GIT_INDEX_FILE", str(repo / ".git" / "index"))
    store = UndoStore(repo, tmp_path / "data")
    app = repo / "app.py"
    await store.snapshot("s1", "b1", [app])
    app.write_text("changed\n", encoding="utf-8")
    assert (await store.undo_last("s1")).restored
    monkeypatch.delenv("GIT_DIR")
    monkeypatch.delenv("GIT_INDEX_FILE")
    assert repo_state(repo) == before
