"""Per-tool-batch snapshots, so `/undo` can put files back.

Snapshots live in a git object database of our own, `<data_dir>/undo/<cwd-hash>.git`; every git
command runs with `GIT_DIR` pointed there, `GIT_WORK_TREE` at the project, a private
`GIT_INDEX_FILE`, no system or global config (a user's `core.fsmonitor` or filter would run code),
and `core.hooksPath=/dev/null`. The user's repository is never touched: no commits, no stash, no
index change, no refs. An agent that commits to manage its own undo has silently rewritten the
user's history.

A snapshot records, for each path a batch is about to change, its bytes (a blob) or the fact that
it did not exist, in a `manifest.json`; a commit of those blobs is kept under
`refs/earshot/<session>/<n>`. `undo_last(session)` restores the newest batch of THAT session only
whose files are no longer as it found them (`agent.undo_choice`; deleting files the batch
created) and moves its ref to `refs/earshot-undone/...`, so the next undo goes one further
back. Other sessions' batches stay on disk, restorable by them only.

A batch running a command (or any call that names no paths) snapshots the whole work tree
instead (`whole_tree`): `git add -A` into the private index, whose stat cache makes every
snapshot after the first only hash what changed (~50 ms for 3,000 files, ~1.5 s for the first),
and the tree is kept with the manifest. Undoing it rewrites the files changed or deleted since and
deletes the files created since. `$GIT_DIR/info/attributes` turns off the project's eol and filter
attributes, so both directions are byte for byte.

Ignored paths (the project's `.gitignore` files; not `.git/info/exclude` or the user's global
excludes, which belong to config we deliberately do not read) and files over `max_bytes` are not
snapshotted; the undo message names them. No git on PATH: `available` is False and both methods
return without doing anything.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import stat
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from subprocess import CompletedProcess
from typing import Any, cast

import anyio

from agent.undo_choice import BatchChoice

_GIT_CONFIG = (
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "core.autocrlf=false",
    "core.safecrlf=false",
    "core.quotePath=false",
    "gc.auto=0",
    "maintenance.auto=false",
    "commit.gpgSign=false",
)
_MAX_FILES = 5_000
_MAX_TREE_FILES = 50_000
_MAX_TREE_BYTES = 1_000_000_000
"""A whole-tree snapshot hashing more than this (files or bytes not in the private index yet)
is skipped, saying so: the first command in a huge unignored tree must not stall the turn."""
_RAW_ATTRIBUTES = "* -text -filter -ident -working-tree-encoding\n"
_SAFE_REF = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,99}")


@dataclass(frozen=True)
class UndoResult:
    restored: bool
    message: str
    paths: tuple[str, ...] = ()
    """The paths restored or deleted, relative to the cwd where inside it."""


class UndoStore(BatchChoice):
    """Snapshots of the files tool batches change, per session, in a private git database."""

    available: bool
    unavailable_reason: str | None

    def __init__(self, cwd: Path, data_dir: Path, *, max_bytes: int = 50_000_000) -> None:
        self.cwd = Path(os.path.realpath(cwd))
        self.max_bytes = max_bytes
        key = hashlib.sha256(str(self.cwd).encode()).hexdigest()[:16]
        self.undo_dir = Path(data_dir) / "undo"
        self.git_dir = self.undo_dir / f"{key}.git"
        self._index_file = self.undo_dir / f"{key}.index"
        self._git = shutil.which("git")
        self.available = self._git is not None
        self.unavailable_reason = (
            None if self._git else "undo is disabled: git was not found on PATH"
        )
        self._ready = False
        self._lock = anyio.Lock()
        self._next_numbers: dict[str, int] = {}
        """Per session: the number its next snapshot ref takes, once listed. Numbers only grow
        (undo moves a ref to `refs/earshot-undone/` under the same number) and one process
        writes a session, so the listing (a git process per snapshot) is needed only once."""

    # ------------------------------------------------------------------------------ public

    async def snapshot(
        self,
        session_id: str,
        batch_id: str,
        paths: Sequence[Path],
        *,
        whole_tree: bool = False,
    ) -> str | None:
        """Record the current state of `paths` (files or directories) before a batch changes
        them; with `whole_tree`, of every file under the cwd that the ignore files do not
        exclude (for commands, whose paths nobody knows beforehand), plus `paths` outside it.
        Returns the snapshot id, or None when undo is unavailable or there was nothing to
        record."""
        if not self.available or not (paths or whole_tree):
            return None
        async with self._lock:
            if not await self._ensure_ready():
                return None
            tree: str | None = None
            tree_skipped: list[dict[str, Any]] = []
            if whole_tree:
                paths = [p for p in paths if not self._inside(self._absolute(p))]
                tree = await self._stage_work_tree(tree_skipped)
            files, skipped = self._expand(paths)
            skipped.extend(tree_skipped)
            ignored = await self._ignored(files)
            entries: list[dict[str, Any]] = []
            blobs: list[str] = []
            for path in files:
                if path in ignored:
                    skipped.append({"path": str(path), "reason": "ignored by .gitignore"})
                    continue
                entry = await self._record(path, skipped)
                if entry is not None:
                    entries.append(entry)
                    if entry["state"] == "file":
                        blobs.append(entry["blob"])
            if not entries and not skipped and not whole_tree:
                return None
            manifest: dict[str, Any] = {
                "version": 1,
                "session": session_id,
                "batch": batch_id,
                "cwd": str(self.cwd),
                "created": time.time(),
                "entries": entries,
                "skipped": skipped,
            }
            if tree is not None:
                manifest["tree"] = tree
            return await self._commit(session_id, batch_id, manifest, blobs, work_tree=tree)

    async def undo_last(self, session_id: str) -> UndoResult:
        """Restore the newest not-yet-undone batch of `session_id` (only that session's)."""
        if not self.available:
            return UndoResult(False, self.unavailable_reason or "undo is unavailable")
        async with self._lock:
            if not await self._ensure_ready():
                return UndoResult(False, self.unavailable_reason or "undo is unavailable")
            refs = await self._session_refs(f"refs/earshot/{_ref_name(session_id)}/")
            if not refs:
                return UndoResult(False, "nothing to undo in this session")
            chosen = await self._last_changing_batch(sorted(refs, reverse=True))
            if isinstance(chosen, str):
                return UndoResult(False, chosen)
            manifest, number, ref, passed = chosen
            changed, problems = await self._restore(manifest)
            for retired_number, retired in [(number, ref), *passed]:
                commit = (await self._git_run("rev-parse", retired)).stdout.decode().strip()
                done = f"refs/earshot-undone/{_ref_name(session_id)}/{retired_number:08d}"
                await self._git_run("update-ref", done, commit)
                await self._git_run("update-ref", "-d", retired, commit)
            message = _message(manifest, changed, problems)
            if passed:
                message += f" (passed over {len(passed)} later batch(es) that changed no file)"
            return UndoResult(True, message, tuple(changed))

    async def restore_snapshots(self, session_id: str, snapshots: Sequence[str]) -> UndoResult:
        """Restore `snapshots` (ids `snapshot` returned), in the order given (newest first for a
        rewind), and retire their refs so `/undo` does not restore them again."""
        if not self.available:
            return UndoResult(False, self.unavailable_reason or "undo is unavailable")
        async with self._lock:
            if not await self._ensure_ready():
                return UndoResult(False, self.unavailable_reason or "undo is unavailable")
            changed: list[str] = []
            problems: list[str] = []
            for snapshot in snapshots:
                shown = await self._git_run("cat-file", "blob", f"{snapshot}:manifest.json")
                if shown.returncode != 0:
                    problems.append(f"snapshot {snapshot[:12]} ({_err(shown)})")
                    continue
                done, failed = await self._restore(json.loads(shown.stdout))
                changed.extend(name for name in done if name not in changed)
                problems.extend(failed)
            name = _ref_name(session_id)
            for number, ref in await self._session_refs(f"refs/earshot/{name}/"):
                commit = (await self._git_run("rev-parse", ref)).stdout.decode().strip()
                if commit in snapshots:
                    await self._git_run(
                        "update-ref", f"refs/earshot-undone/{name}/{number:08d}", commit
                    )
                    await self._git_run("update-ref", "-d", ref, commit)
            message = f"Restored {len(changed)} path(s): {', '.join(changed) or 'none'}."
            if problems:
                message += f" Could not restore: {'; '.join(problems)}."
            return UndoResult(not problems, message, tuple(changed))

    # --------------------------------------------------------------------------- snapshot

    def _absolute(self, raw: Path) -> Path:
        return Path(os.path.abspath(self.cwd / Path(raw).expanduser()))

    async def _stage_work_tree(self, skipped: list[dict[str, Any]]) -> str | None:
        """Stage the work tree into the private index (`git add -A`: incremental, as the index
        remembers what it hashed; the ignore files apply) and return its tree. Files over
        `max_bytes` are left out, and named in `skipped`; so is the whole tree (None) when it
        cannot be read or holds too much that was never snapshotted."""
        changed = await self._git_run(
            "ls-files", "-z", "--others", "--modified", "--exclude-standard"
        )
        if changed.returncode != 0:
            skipped.append({"path": ".", "reason": f"the work tree is unreadable: {_err(changed)}"})
            return None
        names = [n for n in changed.stdout.decode(errors="surrogateescape").split("\0") if n]
        if len(names) > _MAX_TREE_FILES:
            skipped.append({"path": ".", "reason": f"{len(names)} new or changed files"})
            return None
        oversized: list[str] = []
        total = 0
        for name in names:
            try:
                size = (self.cwd / name).lstat().st_size
            except OSError:
                continue
            if size > self.max_bytes:
                oversized.append(name)
                skipped.append({"path": name, "reason": f"larger than {self.max_bytes} bytes"})
            else:
                total += size
        if total > _MAX_TREE_BYTES:
            skipped.append({"path": ".", "reason": f"{total} bytes of new or changed files"})
            return None
        specs = ["."] + [f":(exclude,literal){name}" for name in oversized]
        payload = "".join(spec + "\0" for spec in specs).encode(errors="surrogateescape")
        added = await self._git_run(
            "add", "-A", "--ignore-errors", "--pathspec-from-file=-", "--pathspec-file-nul",
            input=payload,
        )  # fmt: skip
        if added.returncode != 0 and b"fatal" in added.stderr:
            skipped.append({"path": ".", "reason": f"git add failed: {_err(added)}"})
            return None
        if oversized:
            # A file that grew past the cap must not be restored to its older staged bytes.
            payload = "".join(name + "\0" for name in oversized).encode(errors="surrogateescape")
            await self._git_run(
                "rm", "--cached", "-q", "--ignore-unmatch", "--pathspec-from-file=-",
                "--pathspec-file-nul", input=payload,
            )  # fmt: skip
        written = await self._git_run("write-tree")
        if written.returncode != 0:
            skipped.append({"path": ".", "reason": f"git write-tree failed: {_err(written)}"})
            return None
        return written.stdout.decode().strip()

    def _expand(self, paths: Sequence[Path]) -> tuple[list[Path], list[dict[str, Any]]]:
        files: list[Path] = []
        skipped: list[dict[str, Any]] = []
        for raw in paths:
            given = self._absolute(raw)
            # resolve the directory, not the file: a symlink is snapshotted as a symlink
            path = Path(os.path.realpath(given.parent)) / given.name
            if path.is_dir() and not path.is_symlink():
                for root, dirs, names in os.walk(path):
                    dirs[:] = [name for name in dirs if name != ".git"]
                    files.extend(Path(root) / name for name in names)
            else:
                files.append(path)
        unique = list(dict.fromkeys(files))
        if len(unique) > _MAX_FILES:
            skipped.append({"path": str(unique[_MAX_FILES]), "reason": "too many files"})
            unique = unique[:_MAX_FILES]
        return unique, skipped

    async def _ignored(self, files: Sequence[Path]) -> set[Path]:
        inside = {
            path.relative_to(self.cwd).as_posix(): path for path in files if self._inside(path)
        }
        if not inside:
            return set()
        payload = "".join(name + "\0" for name in inside).encode()
        result = await self._git_run("check-ignore", "--no-index", "-z", "--stdin", input=payload)
        if result.returncode not in (0, 1):
            return set()
        names = result.stdout.decode(errors="surrogateescape").split("\0")
        return {inside[name] for name in names if name in inside}

    async def _record(self, path: Path, skipped: list[dict[str, Any]]) -> dict[str, Any] | None:
        try:
            info = path.lstat()
        except FileNotFoundError:
            return {"path": str(path), "state": "absent", "existing_parent": _existing_parent(path)}
        except OSError as error:
            skipped.append({"path": str(path), "reason": f"unreadable: {error.strerror}"})
            return None
        if stat.S_ISLNK(info.st_mode):
            return {"path": str(path), "state": "symlink", "target": os.readlink(path)}
        if not stat.S_ISREG(info.st_mode):
            skipped.append({"path": str(path), "reason": "not a regular file"})
            return None
        if info.st_size > self.max_bytes:
            skipped.append({"path": str(path), "reason": f"larger than {self.max_bytes} bytes"})
            return None
        try:
            data = path.read_bytes()
        except OSError as error:
            skipped.append({"path": str(path), "reason": f"unreadable: {error.strerror}"})
            return None
        hashed = await self._git_run("hash-object", "-w", "--no-filters", "--stdin", input=data)
        if hashed.returncode != 0:
            skipped.append({"path": str(path), "reason": f"git hash-object failed: {_err(hashed)}"})
            return None
        return {
            "path": str(path),
            "state": "file",
            "blob": hashed.stdout.decode().strip(),
            "mode": stat.S_IMODE(info.st_mode),
        }

    async def _commit(
        self,
        session_id: str,
        batch_id: str,
        manifest: Mapping[str, Any],
        blobs: Sequence[str],
        *,
        work_tree: str | None = None,
    ) -> str | None:
        data = json.dumps(manifest, indent=1).encode()
        hashed = await self._git_run("hash-object", "-w", "--stdin", input=data)
        if hashed.returncode != 0:
            return None
        lines = [f"100644 blob {hashed.stdout.decode().strip()}\tmanifest.json"]
        lines.extend(f"100644 blob {blob}\tblob-{blob}" for blob in dict.fromkeys(blobs))
        if work_tree is not None:
            lines.append(f"040000 tree {work_tree}\twork-tree")  # keeps its objects reachable
        tree = await self._git_run("mktree", input=("\n".join(lines) + "\n").encode())
        if tree.returncode != 0:
            return None
        message = f"earshot undo: session {session_id} batch {batch_id}".encode()
        commit = await self._git_run("commit-tree", tree.stdout.decode().strip(), input=message)
        if commit.returncode != 0:
            return None
        sha = commit.stdout.decode().strip()
        name = _ref_name(session_id)
        number = self._next_numbers.get(name)
        if number is None:
            refs = await self._session_refs(f"refs/earshot/{name}/", f"refs/earshot-undone/{name}/")
            number = max((n for n, _ in refs), default=0) + 1
        for attempt in range(number, number + 100):
            # "" as the old value: create only, never overwrite a concurrent snapshot's ref
            made = await self._git_run("update-ref", f"refs/earshot/{name}/{attempt:08d}", sha, "")
            if made.returncode == 0:
                self._next_numbers[name] = attempt + 1
                return sha
        return None

    # ---------------------------------------------------------------------------- restore

    async def _restore(self, manifest: Mapping[str, Any]) -> tuple[list[str], list[str]]:
        changed: list[str] = []
        problems: list[str] = []
        tree = manifest.get("tree")
        if isinstance(tree, str):
            await self._restore_tree(tree, manifest, changed, problems)
        for entry in cast("list[dict[str, Any]]", manifest.get("entries", [])):
            path = Path(entry["path"])
            try:
                match entry["state"]:
                    case "absent":
                        if _remove(path):
                            changed.append(self._display(path))
                            _prune_empty_dirs(path.parent, entry.get("existing_parent"))
                    case "symlink":
                        _remove(path)
                        path.parent.mkdir(parents=True, exist_ok=True)
                        os.symlink(entry["target"], path)
                        changed.append(self._display(path))
                    case "file":
                        blob = await self._git_run("cat-file", "blob", entry["blob"])
                        if blob.returncode != 0:
                            problems.append(f"{self._display(path)} (snapshot missing)")
                            continue
                        _write_atomically(path, blob.stdout, int(entry.get("mode", 0o644)))
                        changed.append(self._display(path))
                    case other:
                        problems.append(f"{self._display(path)} (unknown state {other!r})")
            except OSError as error:
                problems.append(f"{self._display(path)} ({error.strerror or error})")
        return changed, problems

    async def _restore_tree(
        self, tree: str, manifest: Mapping[str, Any], changed: list[str], problems: list[str]
    ) -> None:
        """Put the work tree back to `tree`: files changed or deleted since are rewritten, files
        created since are deleted. Ignored and oversized files are left as they are."""
        skipped = {
            item.get("path") for item in cast("list[dict[str, Any]]", manifest.get("skipped", []))
        }
        scratch: list[dict[str, Any]] = []
        if await self._stage_work_tree(scratch) is None:
            problems.append(". (the work tree could not be read)")
            return
        skipped.update(item["path"] for item in scratch)
        diff = await self._git_run(
            "diff-index", "--cached", "-z", "--name-status", "--no-renames", tree
        )
        if diff.returncode != 0:
            problems.append(f". ({_err(diff)})")
            return
        fields = diff.stdout.decode(errors="surrogateescape").split("\0")
        restore: list[str] = []
        created: list[str] = []
        for status, name in zip(fields[0::2], fields[1::2], strict=False):
            if not name or name in skipped:
                continue
            (created if status == "A" else restore).append(name)
        if restore:
            payload = "".join(f":(literal){name}\0" for name in restore)
            done = await self._git_run(
                "checkout", tree, "--pathspec-from-file=-", "--pathspec-file-nul",
                input=payload.encode(errors="surrogateescape"),
            )  # fmt: skip
            if done.returncode != 0:
                problems.append(f"{', '.join(restore)} ({_err(done)})")
            else:
                changed.extend(restore)
        listed = await self._git_run("ls-tree", "-r", "-d", "-z", "--name-only", tree)
        kept_dirs = {self.cwd / name for name in listed.stdout.decode().split("\0") if name}
        kept_dirs.add(self.cwd)
        for name in created:
            path = self.cwd / name
            try:
                if _remove(path):
                    changed.append(name)
                    _prune_created_dirs(path.parent, kept_dirs)
            except OSError as error:
                problems.append(f"{name} ({error.strerror or error})")

    # -------------------------------------------------------------------------------- git

    async def _ensure_ready(self) -> bool:
        if self._ready:
            return True
        if not (self.git_dir / "HEAD").exists():
            self.undo_dir.mkdir(parents=True, exist_ok=True)
            env = self._env()
            for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
                env.pop(name)
            made = await self._run(["init", "-q", "--bare", "--template=", str(self.git_dir)], env)
            if made.returncode != 0:
                self.available = False
                self.unavailable_reason = f"undo is disabled: git init failed: {_err(made)}"
                return False
        attributes = self.git_dir / "info" / "attributes"
        if not attributes.exists():
            # Highest precedence over the project's .gitattributes: no eol conversion or filter
            # between the work tree and the snapshot, so a restore is byte for byte.
            attributes.parent.mkdir(parents=True, exist_ok=True)
            attributes.write_text(_RAW_ATTRIBUTES, encoding="utf-8")
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
        command = [self._git]
        for setting in _GIT_CONFIG:
            command += ["-c", setting]
        command += args
        return await anyio.run_process(
            command, input=input, env=env, cwd=str(self.cwd), check=False
        )

    def _env(self) -> dict[str, str]:
        # inherited GIT_* variables (GIT_DIR, GIT_OBJECT_DIRECTORY, GIT_NAMESPACE...) would point
        # our commands at someone else's repository
        env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
        env.update(
            GIT_DIR=str(self.git_dir),
            GIT_WORK_TREE=str(self.cwd),
            GIT_INDEX_FILE=str(self._index_file),
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

    def _inside(self, path: Path) -> bool:
        return path == self.cwd or self.cwd in path.parents

    def _display(self, path: Path) -> str:
        return path.relative_to(self.cwd).as_posix() if self._inside(path) else str(path)


def _ref_name(session_id: str) -> str:
    if _SAFE_REF.fullmatch(session_id) and not session_id.endswith(".lock"):
        return session_id
    return "h-" + hashlib.sha256(session_id.encode()).hexdigest()[:32]


def _existing_parent(path: Path) -> str:
    parent = path.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    return str(parent)


def _remove(path: Path) -> bool:
    if path.is_symlink() or path.is_file():
        path.unlink()
        return True
    return False


def _prune_empty_dirs(directory: Path, stop: str | None) -> None:
    """Remove the directories a batch created to hold a new file, up to what existed before."""
    if stop is None:
        return
    boundary = Path(stop)
    while directory != boundary and boundary in directory.parents:
        try:
            directory.rmdir()
        except OSError:
            return
        directory = directory.parent


def _prune_created_dirs(directory: Path, kept: set[Path]) -> None:
    """Remove now-empty directories a batch created (those the snapshot's tree does not have)."""
    while directory not in kept and directory.parent != directory:
        try:
            directory.rmdir()
        except OSError:
            return
        directory = directory.parent


def _write_atomically(path: Path, data: bytes, mode: int) -> None:
    if path.is_symlink():
        path.unlink()
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.earshot-undo")
    partial.write_bytes(data)
    os.chmod(partial, mode)
    os.replace(partial, path)


def _message(manifest: Mapping[str, Any], changed: Sequence[str], problems: Sequence[str]) -> str:
    batch = manifest.get("batch", "?")
    parts = [f"Undid batch {batch}: restored {len(changed)} path(s)"]
    if changed:
        parts[0] += ": " + ", ".join(changed)
    skipped = cast("list[dict[str, str]]", manifest.get("skipped", []))
    if skipped:
        listed = ", ".join(f"{item['path']} ({item['reason']})" for item in skipped)
        parts.append(f"not snapshotted, so not restored: {listed}")
    if problems:
        parts.append("could not restore: " + ", ".join(problems))
    return "; ".join(parts)


def _err(result: CompletedProcess[bytes]) -> str:
    return result.stderr.decode(errors="replace").strip()[:500] or f"exit {result.returncode}"
