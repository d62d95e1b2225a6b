"""Earshot's own git store of a project's undo snapshots (`agent.undo.store`): where it lives,
making it, one operation at a time on it (`agent.undo.lock`), running git on it and recording a
snapshot under a session's refs."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from subprocess import CompletedProcess
from typing import Any

from agent.undo.git import create_store, git_environment, run_git, write_attributes
from agent.undo.git import git_error as _err
from agent.undo.lock import LOCK_WAIT, operation_index, remove_dead_copies, store_operation

_SAFE_REF = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,99}")


class SnapshotFailed(Exception):
    """No snapshot could be taken before a batch, so its changes cannot be undone; the message
    says why."""


class UndoRepository:
    """The store of the project at `cwd` under `data_dir` (`UndoStore` reads and writes it)."""

    available: bool
    unavailable_reason: str | None

    def __init__(self, cwd: Path, data_dir: Path) -> None:
        self.cwd = Path(os.path.realpath(cwd))
        key = hashlib.sha256(str(self.cwd).encode()).hexdigest()[:16]
        self.undo_dir = Path(data_dir) / "undo"
        self.git_dir = self.undo_dir / f"{key}.git"
        self._index_file = self.undo_dir / f"{key}.index"
        self._lock_file = self.undo_dir / f"{key}.lock"
        self.lock_wait = LOCK_WAIT
        """Seconds an operation waits for the store's lock (`agent.undo.lock`)."""
        self._git = shutil.which("git")
        self.available = self._git is not None
        self.unavailable_reason = (
            None if self._git else "undo is disabled: git was not found on PATH"
        )
        self._ready = False
        self._next_numbers: dict[str, int] = {}
        """Per session: the number its next snapshot ref takes, once listed. Numbers only grow
        (undo moves a ref to `refs/earshot-undone/` under the same number) and one process
        writes a session, so the listing (a git process per snapshot) is needed only once."""

    async def newest_snapshot(self, session_id: str) -> str | None:
        """The newest snapshot of `session_id` not yet undone (its commit), if any."""
        if not self.available or not (self.git_dir / "HEAD").exists():
            return None
        refs = await self._session_refs(f"refs/earshot/{ref_name(session_id)}/")
        if not refs:
            return None
        resolved = await self._git_run("rev-parse", max(refs)[1])
        return resolved.stdout.decode().strip() or None

    def _exclusive(self, *, locked: bool = True) -> contextlib.AbstractAsyncContextManager[Path]:
        return store_operation(
            self._lock_file, self._index_file, self.git_dir, self.lock_wait, exclusive=locked
        )

    async def _ensure_ready(self) -> bool:
        if self._ready:
            return True
        self.undo_dir.mkdir(parents=True, exist_ok=True)
        remove_dead_copies(self._index_file)
        if not (self.git_dir / "HEAD").exists():
            env = self._env()
            for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
                env.pop(name)
            assert self._git is not None
            failed = await create_store(self._git, self.git_dir, env=env, cwd=self.cwd)
            if failed is not None:
                self.available = False
                self.unavailable_reason = f"undo is disabled: git init failed: {failed}"
                return False
        attributes = self.git_dir / "info" / "attributes"
        if not attributes.exists():
            write_attributes(self.git_dir)
        self._ready = True
        return True

    async def _session_refs(self, *prefixes: str) -> list[tuple[int, str]]:
        listed = await self._git_run("for-each-ref", "--format=%(refname)", *prefixes)
        refs: list[tuple[int, str]] = []
        for line in listed.stdout.decode().splitlines():
            tail = line.rsplit("/", 1)[-1]
            if tail.isdigit():
                refs.append((int(tail), line))
        return refs

    async def _git_run(self, *args: str, input: bytes | None = None) -> CompletedProcess[bytes]:
        return await self._run(list(args), self._env(), input=input)

    async def _run(
        self, args: list[str], env: dict[str, str], *, input: bytes | None = None
    ) -> CompletedProcess[bytes]:
        assert self._git is not None
        return await run_git(self._git, args, env=env, cwd=self.cwd, input=input)

    def _env(self) -> dict[str, str]:
        index = operation_index() or self._index_file  # the operation's own copy
        return git_environment(self.git_dir, self.cwd, index)

    async def _commit(
        self,
        session_id: str,
        batch_id: str,
        manifest: Mapping[str, Any],
        blobs: Sequence[str],
        *,
        work_tree: str | None = None,
    ) -> str:
        data = json.dumps(manifest, indent=1).encode()
        hashed = await self._git_run("hash-object", "-w", "--stdin", input=data)
        if hashed.returncode != 0:
            raise SnapshotFailed(f"git hash-object failed: {_err(hashed)}")
        lines = [f"100644 blob {hashed.stdout.decode().strip()}\tmanifest.json"]
        lines.extend(f"100644 blob {blob}\tblob-{blob}" for blob in dict.fromkeys(blobs))
        if work_tree is not None:
            lines.append(f"040000 tree {work_tree}\twork-tree")  # keeps its objects reachable
        tree = await self._git_run("mktree", input=("\n".join(lines) + "\n").encode())
        if tree.returncode != 0:
            raise SnapshotFailed(f"git mktree failed: {_err(tree)}")
        message = f"earshot undo: session {session_id} batch {batch_id}".encode()
        commit = await self._git_run("commit-tree", tree.stdout.decode().strip(), input=message)
        if commit.returncode != 0:
            raise SnapshotFailed(f"git commit-tree failed: {_err(commit)}")
        sha = commit.stdout.decode().strip()
        name = ref_name(session_id)
        number = self._next_numbers.get(name)
        if number is None:
            refs = await self._session_refs(f"refs/earshot/{name}/", f"refs/earshot-undone/{name}/")
            number = max((n for n, _ in refs), default=0) + 1
        made: CompletedProcess[bytes] | None = None
        for attempt in range(number, number + 100):
            # "" as the old value: create only, never overwrite a concurrent snapshot's ref
            made = await self._git_run("update-ref", f"refs/earshot/{name}/{attempt:08d}", sha, "")
            if made.returncode == 0:
                self._next_numbers[name] = attempt + 1
                return sha
        assert made is not None
        raise SnapshotFailed(f"git update-ref failed: {_err(made)}")


def ref_name(session_id: str) -> str:
    if _SAFE_REF.fullmatch(session_id) and not session_id.endswith(".lock"):
        return session_id
    return "h-" + hashlib.sha256(session_id.encode()).hexdigest()[:32]
