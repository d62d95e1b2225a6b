"""Running git on earshot's own undo store (`agent.undo`): the environment and settings every
command gets, and the runner.

Every git command runs with `GIT_DIR` pointed at the store, `GIT_WORK_TREE` at the project, an
index of the store's own (`GIT_INDEX_FILE`), no system or global config (a user's
`core.fsmonitor` or filter would run code), and `core.hooksPath=/dev/null`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from subprocess import CompletedProcess

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
)


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
    command = [git]
    for setting in GIT_CONFIG:
        command += ["-c", setting]
    command += args
    return await anyio.run_process(command, input=input, env=env, cwd=str(cwd), check=False)


def git_error(result: CompletedProcess[bytes]) -> str:
    return result.stderr.decode(errors="replace").strip()[:500] or f"exit {result.returncode}"
