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
whose files are no longer as it found them (`agent.undo.choice`; deleting files the batch
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
return without doing anything. A snapshot that cannot be taken raises `SnapshotFailed` saying why.

Every session of a project (of this process or another) shares the store: each operation works
on a copy of the index of its own, and undos and large stagings take the store's lock for a
bounded wait (`agent.undo.lock`). Each batch is sealed once its calls have run, and an undo puts
back only what that batch changed (`agent.undo.after`).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from agent.undo.after import AfterStates
from agent.undo.choice import BatchChoice
from agent.undo.files import (
    Refused,
    blobs,
    identity,
    read_entry,
    remove_created,
    restore_beneath,
    restore_file,
    restore_link,
    tree_entries,
)
from agent.undo.git import git_error as _err
from agent.undo.lock import operation_exclusive, operation_index
from agent.undo.repository import SnapshotFailed
from agent.undo.repository import ref_name as _ref_name
from providers.records import Record

_MAX_FILES = 5_000
_MAX_TREE_FILES = 50_000
_MAX_TREE_BYTES = 1_000_000_000
"""A whole-tree snapshot hashing more than this (files or bytes not in the private index yet)
is skipped, saying so: the first command in a huge unignored tree must not stall the turn."""


_LOCK_FILES = 500
_LOCK_BYTES = 20_000_000
"""A staging with more new or changed files (or bytes) than this takes the store's lock."""


class _MuchToHash(Exception):
    """A staging without the store's lock found much to hash: it is done again under it."""


class UndoResult(Record, kw_only=False):
    restored: bool
    message: str
    paths: tuple[str, ...] = ()
    """The paths restored or deleted, relative to the cwd where inside it."""


class UndoStore(AfterStates, BatchChoice):
    """Snapshots of the files tool batches change, per session, in a private git database."""

    def __init__(self, cwd: Path, data_dir: Path, *, max_bytes: int = 50_000_000) -> None:
        super().__init__(cwd, data_dir)
        self.max_bytes = max_bytes
        self._open: dict[str, dict[str, Any]] = {}
        """Snapshots taken here and not yet sealed: their manifests."""

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
        record.

        Raises:
            SnapshotFailed: no snapshot could be taken (the store cannot be written, the work
                tree cannot be staged or holds too much): the batch cannot be undone.
        """
        if not self.available or not (paths or whole_tree):
            return None
        try:
            return await self._snapshot(session_id, batch_id, paths, whole_tree)
        except OSError as error:
            raise SnapshotFailed(f"the undo store cannot be written: {error}") from error

    async def _snapshot(
        self, session_id: str, batch_id: str, paths: Sequence[Path], whole_tree: bool
    ) -> str | None:
        if not await self._ensure_ready():
            raise SnapshotFailed(self.unavailable_reason or "undo is unavailable")
        started = time.time_ns()  # the batch's window opens (`agent.undo.after`)
        tree: str | None = None
        tree_skipped: list[dict[str, Any]] = []
        if whole_tree:
            paths = [p for p in paths if not self._inside(self._absolute(p))]
            tree = await self._stage_work_tree(tree_skipped)
            if tree is None:
                raise SnapshotFailed(
                    "the work tree was not snapshotted: "
                    + "; ".join(item["reason"] for item in tree_skipped if item["path"] == ".")
                )
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
            "cwd_id": identity(self.cwd),
            "created": time.time(),
            "started": started,
            "entries": entries,
            "skipped": skipped,
        }
        if tree is not None:
            manifest["tree"] = tree
        sha = await self._commit(session_id, batch_id, manifest, blobs, work_tree=tree)
        self._open[sha] = manifest  # until it is sealed
        return sha

    async def undo_last(self, session_id: str) -> UndoResult:
        """Restore the newest not-yet-undone batch of `session_id` (only that session's)."""
        if not self.available:
            return UndoResult(False, self.unavailable_reason or "undo is unavailable")
        async with self._exclusive():
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
        async with self._exclusive():
            if not await self._ensure_ready():
                return UndoResult(False, self.unavailable_reason or "undo is unavailable")
            changed: list[str] = []
            problems: list[str] = []
            kept: list[str] = []
            for snapshot in snapshots:
                shown = await self._git_run("cat-file", "blob", f"{snapshot}:manifest.json")
                if shown.returncode != 0:
                    problems.append(f"snapshot {snapshot[:12]} ({_err(shown)})")
                    continue
                manifest = await self._since_batch(snapshot, json.loads(shown.stdout))
                done, failed = await self._restore(manifest)
                kept.extend(manifest.get("kept", []))
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
            if kept:
                message += f" Left as they are (changed since): {', '.join(kept)}."
            if problems:
                message += f" Could not restore: {'; '.join(problems)}."
            return UndoResult(not problems, message, tuple(changed))

    async def seal(self, snapshot: str, paths: Sequence[Path], *, whole_tree: bool = False) -> None:
        """Record what the batch of `snapshot` left, once its calls have run (the same `paths`
        and `whole_tree` as the snapshot): an undo then puts back only what the batch changed
        (`agent.undo.after`).

        Raises:
            SnapshotFailed: it could not be recorded (an undo then restores the whole snapshot).
        """
        if not self.available:
            return
        before = self._open.pop(snapshot, None)
        if before is None:  # taken by another store object: read it back
            shown = await self._git_run("cat-file", "blob", f"{snapshot}:manifest.json")
            if not await self._ensure_ready() or shown.returncode != 0:
                raise SnapshotFailed(f"snapshot {snapshot[:12]} is unreadable: {_err(shown)}")
            before = cast("dict[str, Any]", json.loads(shown.stdout))
        tree = await self._stage_work_tree([]) if whole_tree else None
        earlier = {e["path"]: e for e in cast("list[dict[str, Any]]", before["entries"])}
        entries: list[dict[str, Any]] = []
        changed: list[str] = []
        for path in [Path(name) for name in earlier]:
            entry = await self._record(path, [])
            if entry is not None:
                entries.append(entry)
            if not _same(entry, earlier[str(path)]):
                changed.append(self._display(path))
        await self._record_after(
            before, entries, tree, changed, snapshot=snapshot, precise=not whole_tree
        )

    async def _since_batch(self, snapshot: str, manifest: dict[str, Any]) -> dict[str, Any]:
        """`manifest` narrowed to what its batch changed, once sealed (`agent.undo.after`): of
        the work tree only the paths the batch changed are put back (`only`), and a path changed
        again since, or changed by a batch of another session at the same time, is left as it
        is (named under `kept`)."""
        seen = await self._sealed(snapshot)
        if seen is None:
            return manifest
        sealed, batch, doubtful = seen
        later = {entry["path"]: entry for entry in sealed.entries}
        entries: list[dict[str, Any]] = []
        kept: list[str] = []
        for entry in cast("list[dict[str, Any]]", manifest.get("entries", [])):
            then, path = later.get(entry["path"]), Path(entry["path"])
            if self._display(path) in doubtful or (
                then is not None and not _same(await self._record(path, []), then)
            ):
                kept.append(self._display(path))
            else:
                entries.append(entry)
        before = manifest.get("tree")
        if isinstance(before, str) and sealed.tree is not None:
            now = await self._stage_work_tree([])
            since: set[str] = set()
            if now is not None:
                since = await self._tree_changes(sealed.tree, now)
            kept.extend(sorted(batch & (since | doubtful)))
            manifest = {**manifest, "only": sorted(batch - since - doubtful)}
        return {**manifest, "entries": entries, "kept": kept}

    # --------------------------------------------------------------------------- snapshot

    def _absolute(self, raw: Path) -> Path:
        return Path(os.path.abspath(self.cwd / Path(raw).expanduser()))

    async def _stage_work_tree(self, skipped: list[dict[str, Any]]) -> str | None:
        """Stage the work tree into the private index (`git add -A`: incremental, as the index
        remembers what it hashed; the ignore files apply) and return its tree. Files over
        `max_bytes` are left out, and named in `skipped`; so is the whole tree (None) when it
        cannot be read or holds too much that was never snapshotted. Outside an undo, it works
        on an index of its own, under the store's lock when there is much to hash
        (`agent.undo.lock`)."""
        if operation_index() is None:
            mark = len(skipped)
            try:
                async with self._exclusive(locked=False):
                    return await self._stage_work_tree(skipped)
            except _MuchToHash:
                del skipped[mark:]
            async with self._exclusive():
                return await self._stage_work_tree(skipped)
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
        if not operation_exclusive() and (len(names) > _LOCK_FILES or total > _LOCK_BYTES):
            raise _MuchToHash
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
        entry = read_entry(path, self.max_bytes)  # read exactly in its directory, held open
        state = entry["state"]
        if state == "skipped":
            skipped.append({"path": str(path), "reason": entry["reason"]})
            return None
        if state != "file":
            return {"path": str(path), **entry}
        data: bytes = entry.pop("data")
        hashed = await self._git_run("hash-object", "-w", "--no-filters", "--stdin", input=data)
        if hashed.returncode != 0:
            skipped.append({"path": str(path), "reason": f"git hash-object failed: {_err(hashed)}"})
            return None
        return {"path": str(path), **entry, "blob": hashed.stdout.decode().strip()}

    # ---------------------------------------------------------------------------- restore

    async def _restore(self, manifest: Mapping[str, Any]) -> tuple[list[str], list[str]]:
        changed: list[str] = []
        problems: list[str] = []
        tree = manifest.get("tree")
        if isinstance(tree, str):
            await self._restore_tree(tree, manifest, changed, problems)
        for entry in cast("list[dict[str, Any]]", manifest.get("entries", [])):
            path = Path(entry["path"])
            recorded = entry.get("dir")  # absent in snapshots older than the check
            try:
                match entry["state"]:
                    case "absent":
                        parent = Path(entry.get("existing_parent") or path.parent)
                        if remove_created(path, parent, recorded):
                            changed.append(self._display(path))
                    case "symlink":
                        restore_link(path, entry["target"], recorded)
                        changed.append(self._display(path))
                    case "file":
                        blob = await self._git_run("cat-file", "blob", entry["blob"])
                        if blob.returncode != 0:
                            problems.append(f"{self._display(path)} (snapshot missing)")
                            continue
                        restore_file(path, blob.stdout, int(entry.get("mode", 0o644)), recorded)
                        changed.append(self._display(path))
                    case other:
                        problems.append(f"{self._display(path)} (unknown state {other!r})")
            except Refused as refused:
                problems.append(f"{self._display(path)} ({refused})")
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
        only = set(cast("list[str]", manifest["only"])) if "only" in manifest else None
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
            if not name or name in skipped or (only is not None and name not in only):
                continue
            (created if status == "A" else restore).append(name)
        entries = await tree_entries(self._git_run, tree)
        wanted = [name for name in restore if name in entries]
        contents = await blobs(self._git_run, (entries[name][1] for name in wanted))
        files: dict[str, tuple[int, bytes]] = {}
        links: dict[str, str] = {}
        for name in wanted:
            mode, blob = entries[name]
            if blob not in contents:
                problems.append(f"{name} (snapshot missing)")
            elif mode == "120000":
                links[name] = contents[blob].decode(errors="surrogateescape")
            else:
                files[name] = (0o755 if mode == "100755" else 0o644, contents[blob])
        listed = await self._git_run("ls-tree", "-r", "-d", "-z", "--name-only", tree)
        kept_dirs = {name for name in listed.stdout.decode().split("\0") if name}
        # Beneath the work tree's own directory, held open (the one recorded), no link followed:
        # what was created goes first, so a link that replaced a directory is removed, not used.
        done, failed = restore_beneath(
            self.cwd, manifest.get("cwd_id"), files, links, created, kept_dirs
        )
        changed.extend(done)
        problems.extend(failed)

    # -------------------------------------------------------------------------------- git

    def _inside(self, path: Path) -> bool:
        return path == self.cwd or self.cwd in path.parents

    def _display(self, path: Path) -> str:
        return path.relative_to(self.cwd).as_posix() if self._inside(path) else str(path)


def _same(now: Mapping[str, Any] | None, then: Mapping[str, Any]) -> bool:
    """Whether a path is as a recorded entry says (content, mode, link target; or absent)."""
    if now is None:
        return False
    keys = ("state", "blob", "mode", "target")
    return all(now.get(key) == then.get(key) for key in keys)


def _message(manifest: Mapping[str, Any], changed: Sequence[str], problems: Sequence[str]) -> str:
    batch = manifest.get("batch", "?")
    parts = [f"Undid batch {batch}: restored {len(changed)} path(s)"]
    if changed:
        parts[0] += ": " + ", ".join(changed)
    skipped = cast("list[dict[str, str]]", manifest.get("skipped", []))
    if skipped:
        listed = ", ".join(f"{item['path']} ({item['reason']})" for item in skipped)
        parts.append(f"not snapshotted, so not restored: {listed}")
    kept = cast("list[str]", manifest.get("kept", []))
    if kept:
        parts.append("left as they are, changed since the batch: " + ", ".join(kept))
    if problems:
        parts.append("could not restore: " + ", ".join(problems))
    return "; ".join(parts)
