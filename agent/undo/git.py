"""Running git on earshot's own undo store (`agent.undo.store`): the environment and settings every
command gets, and the runner.

Every git command runs with `GIT_DIR` pointed at the store, `GIT_WORK_TREE` at the project, an
index of the store's own (`GIT_INDEX_FILE`), no system or global config (a user's
`core.fsmonitor` or filter would run code), and `core.hooksPath=/dev/null`.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import AsyncIterable, Sequence
from pathlib import Path
from subprocess import DEVNULL, PIPE, CompletedProcess

import anyio

GIT_CONFIG = (
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "core.autocrlf=false",
    "core.safecrlf=false",
    "core.quotePath=false",
    "gc.auto=0",
    "maintenance.auto=false",
    "commit.gpgSign=false",
    # Deleting a ref (an undo retiring its snapshot) takes packed-refs.lock: wait for another
    # process holding it rather than fail at once (git waits 1 s by default).
    "core.packedRefsTimeout=10000",
)
_RAW_ATTRIBUTES = "* -text -filter -ident -working-tree-encoding\n"


def git_environment(git_dir: Path, work_tree: Path, index_file: Path) -> dict[str, str]:
    # inherited GIT_* variables (GIT_DIR, GIT_OBJECT_DIRECTORY, GIT_NAMESPACE...) would point
    # our commands at someone else's repository
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env.update(
        GIT_DIR=str(git_dir),
        GIT_WORK_TREE=str(work_tree),
        GIT_INDEX_FILE=str(index_file),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_TERMINAL_PROMPT="0",
        GIT_OPTIONAL_LOCKS="0",
        GIT_AUTHOR_NAME="earshot",
        GIT_AUTHOR_EMAIL="earshot@localhost",
        GIT_COMMITTER_NAME="earshot",
        GIT_COMMITTER_EMAIL="earshot@localhost",
    )
    return env


async def run_git(
    git: str, args: Sequence[str], *, env: dict[str, str], cwd: Path, input: bytes | None = None
) -> CompletedProcess[bytes]:
    """Run one git command to its end: its exit status, output and error text.

    `input` is written to git's stdin; git may exit without reading it (a lock it cannot take
    ends `git add` before it reads the paths given to it), and that is git's failure to report,
    with its own message, not a broken pipe to raise (`anyio.run_process` raised
    `BrokenResourceError` there, which hid the message). Without `input`, stdin is /dev/null:
    an inherited stdin is the editor's protocol stream."""
    command = [git]
    for setting in GIT_CONFIG:
        command += ["-c", setting]
    command += args
    output: list[bytes] = []
    errors: list[bytes] = []

    async def drain(stream: AsyncIterable[bytes], into: list[bytes]) -> None:
        async for chunk in stream:
            into.append(chunk)

    async with await anyio.open_process(
        command, stdin=PIPE if input is not None else DEVNULL, env=env, cwd=str(cwd)
    ) as process:
        async with anyio.create_task_group() as group:
            assert process.stdout is not None and process.stderr is not None
            group.start_soon(drain, process.stdout, output)
            group.start_soon(drain, process.stderr, errors)
            if process.stdin is not None:
                with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                    await process.stdin.send(input or b"")
                with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                    await process.stdin.aclose()
        returncode = await process.wait()
    return CompletedProcess(command, returncode, b"".join(output), b"".join(errors))


def git_error(result: CompletedProcess[bytes]) -> str:
    return result.stderr.decode(errors="replace").strip()[:500] or f"exit {result.returncode}"


async def create_store(git: str, git_dir: Path, *, env: dict[str, str], cwd: Path) -> str | None:
    """Create the store (a bare repository with `write_attributes`) under a temporary name and
    rename it into place: another process creating it at the same moment (past a lock wait
    that ran out) never sees it half made, and whichever rename comes second finds the store
    there and drops its own. None when done, else git's error."""
    partial = git_dir.with_name(f".{git_dir.name}.{os.getpid()}.{os.urandom(4).hex()}")
    try:
        made = await run_git(
            git, ["init", "-q", "--bare", "--template=", str(partial)], env=env, cwd=cwd
        )
        if made.returncode != 0:
            return git_error(made)
        write_attributes(partial)
        try:
            os.rename(partial, git_dir)
        except OSError:
            if not (git_dir / "HEAD").exists():
                raise
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return None


def write_attributes(git_dir: Path) -> None:
    """`$GIT_DIR/info/attributes`, which takes precedence over the project's .gitattributes: no
    eol conversion or filter between the work tree and a snapshot, so a restore is byte for
    byte. Written whole or not at all."""
    attributes = git_dir / "info" / "attributes"
    attributes.parent.mkdir(parents=True, exist_ok=True)
    partial = attributes.with_name(f"attributes.{os.getpid()}.{os.urandom(4).hex()}")
    partial.write_text(_RAW_ATTRIBUTES, encoding="utf-8")
    os.replace(partial, attributes)
