"""Undo after shell commands: a batch with a bash call snapshots the work tree first, so `/undo`
puts back what the command edited, created and deleted, and never touches the user's repository
(index, refs, stash)."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest

from agent.backends import DenyingInteraction
from agent.undo import UndoStore
from providers.wire.scripted import ScriptedCall, ScriptedModel, ScriptedTurn
from sessions import UndoSnapshotEntry
from tests.agent.loop_support import collect, env, make_session, results_of
from tests.agent.test_undo import GIT, git, repo_state

pytestmark = pytest.mark.skipif(GIT is None, reason="git is required")


def work_tree(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every file outside .git: content and permission bits (symlinks by target)."""
    state: dict[str, tuple[bytes, int]] = {}
    for directory, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in names:
            path = Path(directory) / name
            key = path.relative_to(root).as_posix()
            if path.is_symlink():
                state[key] = (os.readlink(path).encode(), 0)
            else:
                state[key] = (path.read_bytes(), path.stat().st_mode & 0o777)
    return state


def directories(root: Path) -> set[str]:
    return {
        Path(d).relative_to(root).as_posix()
        for d, _, _ in os.walk(root)
        if ".git" not in Path(d).relative_to(root).parts
    }


SHELL = " && ".join(
    [
        "sed -i 's/v1/v9/' app.py",
        "rm doomed.py",
        "echo created > created.txt",
        "mkdir -p newdir/sub && echo deep > newdir/sub/f.txt",
        "echo more >> notes.md",
        "chmod +x run.sh",
        "printf 'a\\r\\nb\\r\\n' > crlf.txt",
        "rm -r olddir",
        "echo build > out.log",  # ignored by .gitignore: neither snapshotted nor removed
    ]
)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "project"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / ".gitattributes").write_text("* text=auto eol=crlf\n", encoding="utf-8")
    (repo / ".gitignore").write_text("*.log\n", encoding="utf-8")
    (repo / "app.py").write_text("print('v1')\n", encoding="utf-8")
    (repo / "doomed.py").write_text("bye\n", encoding="utf-8")
    (repo / "run.sh").write_text("echo run\n", encoding="utf-8")
    (repo / "olddir").mkdir()
    (repo / "olddir" / "kept.txt").write_text("in a directory the command removes\n", "utf-8")
    (repo / "stashed.txt").write_text("base\n", encoding="utf-8")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "initial")
    (repo / "stashed.txt").write_text("stash me\n", encoding="utf-8")
    git(repo, "stash", "push", "-q", "-m", "user stash")
    (repo / "app.py").write_text("print('v1 staged')\n", encoding="utf-8")
    git(repo, "add", "app.py")
    (repo / "notes.md").write_text("untracked\n", encoding="utf-8")
    (repo / "crlf.txt").write_bytes(b"x\r\ny\n")
    return repo


async def test_undo_after_a_bash_batch_restores_exactly_the_prior_work_tree(
    tmp_path: Path, repo: Path
) -> None:
    where = env(tmp_path)
    where.cwd = repo
    model = ScriptedModel(
        [
            ScriptedTurn(
                tool_calls=[
                    ScriptedCall(
                        name="write", arguments={"path": "first.txt", "content": "first edit\n"}
                    )
                ]
            ),
            ScriptedTurn(text="edited"),
            ScriptedTurn(tool_calls=[ScriptedCall(name="bash", arguments={"command": SHELL})]),
            ScriptedTurn(text="ran it"),
        ]
    )
    session = await make_session(where, model, builtin=True, mode="yolo")
    untouched_repo = repo_state(repo)
    await collect(session.run_turn("write a file"))
    before_tree, before_dirs, before_repo = work_tree(repo), directories(repo), repo_state(repo)

    await collect(session.run_turn("run the script"))
    result = results_of(session.history())["call_3_1"]
    assert not result.is_error, result.text
    assert work_tree(repo) != before_tree

    message = await session.undo()
    after = work_tree(repo)
    assert after.pop("out.log") == (b"build\n", 0o644)  # ignored: left alone
    assert after == before_tree, message
    assert directories(repo) == before_dirs  # newdir/ removed, olddir/ back
    assert repo_state(repo) == before_repo
    assert "created.txt" in message and "doomed.py" in message

    # The next undo is the write batch, not a silent repeat.
    second = await session.undo()
    assert "first.txt" in second and not (repo / "first.txt").exists()
    assert repo_state(repo) == untouched_repo
    stored = session.transcript.stored
    assert stored is not None
    snapshots = [e.paths for e in stored.entries if isinstance(e, UndoSnapshotEntry)]
    assert snapshots == [["first.txt"], ["."]]
    await session.aclose()


async def test_only_commands_and_pathless_calls_need_a_whole_tree_snapshot(
    tmp_path: Path,
) -> None:
    from agent.tools.bash import bash_tool
    from agent.tools.fetch import fetch_tool
    from agent.tools.write import write_tool
    from agent.turn.execution import _mutation_paths  # pyright: ignore[reportPrivateUsage]
    from agent.turn.tool_calls import SchemaValidators, validate_call
    from providers.types import JsonValue, ToolCallPart

    session = await make_session(env(tmp_path), [ScriptedTurn(text="x")], builtin=True)
    tools = {t.name: t for t in (bash_tool, fetch_tool, write_tool)}
    validators = SchemaValidators()
    tooling = session._tooling(anyio.CancelScope(), DenyingInteraction())  # pyright: ignore[reportPrivateUsage]

    def batch(*calls: tuple[str, dict[str, JsonValue]]) -> tuple[list[Path], bool]:
        checked = [
            validate_call(
                ToolCallPart(id=f"c{n}", name=name, arguments=arguments),
                tools,
                validators,
                tooling.context,
                lambda event: None,
            )
            for n, (name, arguments) in enumerate(calls)
        ]
        return _mutation_paths(checked)

    assert batch(("fetch", {"url": "https://example.com"})) == ([], False)
    write: tuple[str, dict[str, JsonValue]] = ("write", {"path": "a.txt", "content": "x"})
    assert batch(write) == ([session.cwd / "a.txt"], False)
    assert batch(write, ("bash", {"command": "ls"})) == ([session.cwd / "a.txt"], True)
    await session.aclose()


async def test_after_a_whole_tree_snapshot_the_private_index_knows_every_unchanged_file(
    tmp_path: Path,
) -> None:
    # What keeps later snapshots cheap (they stat, and hash only what changed; the cost is
    # measured by `bench/undo.py`, not here): the private index remembers what it hashed.
    project = tmp_path / "big"
    for number in range(300):
        path = project / f"pkg{number % 30}" / f"module{number}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"value = {number}\n" * 20, encoding="utf-8")
    store = UndoStore(project, tmp_path / "data")
    for batch in range(3):
        assert await store.snapshot("s", f"b{batch}", [], whole_tree=True) is not None
        (project / "pkg0" / "module0.py").write_text(f"changed {batch}\n", encoding="utf-8")
        listed = await store._git_run(  # pyright: ignore[reportPrivateUsage]
            "ls-files", "-z", "--others", "--modified", "--exclude-standard"
        )
        assert listed.stdout.split(b"\0")[:-1] == [b"pkg0/module0.py"]
    undone = await store.undo_last("s")
    assert undone.restored and "pkg0/module0.py" in undone.paths
    assert (project / "pkg0" / "module0.py").read_text(encoding="utf-8") == "changed 1\n"


async def test_a_batch_without_a_snapshot_says_so_to_the_model_and_at_undo(
    tmp_path: Path, repo: Path
) -> None:
    where = env(tmp_path)
    where.cwd = repo
    write = ScriptedCall(name="write", arguments={"path": "first.txt", "content": "first\n"})
    model = ScriptedModel(
        [
            ScriptedTurn(tool_calls=[write]),
            ScriptedTurn(text="edited"),
            ScriptedTurn(tool_calls=[ScriptedCall(name="bash", arguments={"command": SHELL})]),
            ScriptedTurn(text="ran it"),
        ]
    )
    session = await make_session(where, model, builtin=True, mode="yolo")
    await collect(session.run_turn("write a file"))
    # The store breaks between the two batches (a full disk, a damaged object database).
    objects = next((where.data / "undo").glob("*.git")) / "objects"
    os.rename(objects, tmp_path / "objects-elsewhere")
    objects.write_text("not a directory\n", encoding="utf-8")
    await collect(session.run_turn("run the script"))
    result = results_of(session.history())["call_3_1"]
    assert "/undo cannot undo this change" in result.text, result.text

    told = await session.undo()
    assert "has no undo snapshot" in told and "sed -i" in told, told
    assert (repo / "created.txt").exists()  # nothing restored
    # the next /undo goes on to the batch before it
    os.remove(objects)
    os.rename(tmp_path / "objects-elsewhere", objects)
    second = await session.undo()
    assert "first.txt" in second and not (repo / "first.txt").exists()
    await session.aclose()
