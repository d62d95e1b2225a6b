"""What each batch left, so that `/undo` puts back what the batch changed and nothing else
(issue 29: many sessions in one project).

A snapshot is the state before a batch. Sealed once the batch's calls have run
(`UndoStore.seal`), it also records the state after, under `refs/earshot-after/<snapshot>`: a
commit (parent: the snapshot) whose tree is the work tree as the batch left it (for a batch that
ran a command) and whose message holds the batch's window (`window <start> <end>`, nanoseconds:
from before the snapshot was staged to after the seal was) and, as JSON, the named files' states
and which of them the batch changed.
An undo then:

- puts back only what changed between before and after (a whole-tree snapshot otherwise rewinds
  every file, another session's later work included);
- leaves as it is, and names, a path that changed again since the batch (another session, the
  user);
- leaves as it is, and names, a path another session's batch changed in an overlapping window
  (concurrent batches): whose change it was cannot be told, and losing another session's work
  is worse than keeping some of this one's. A batch whose calls named their files (edits) is
  certain of them, so only another such batch makes them doubtful, never a command running
  alongside.

A batch never sealed (the process died in it) is restored whole, as before.
"""

from __future__ import annotations

import json
import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from agent.undo_git import git_error as _err
from agent.undo_repository import SnapshotFailed, UndoRepository

_REFS = "refs/earshot-after/"
_EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
"""git's empty tree (every repository has it): the tree of a seal that recorded no work tree."""


@dataclass(frozen=True, slots=True)
class Sealed:
    """What a sealed batch left."""

    snapshot: str
    start: int
    end: int
    entries: Sequence[Mapping[str, Any]]
    """The named files' states after the batch (as a snapshot records them)."""
    tree: str | None
    """The work tree after the batch (whole-tree snapshots)."""
    changed: frozenset[str]
    """The paths the batch changed (relative to the cwd where inside it)."""
    precise: bool
    """The batch named every file it changed (no command ran)."""


class AfterStates(UndoRepository):
    """Sealing batches, and reading what they left (see the module docstring)."""

    async def _record_after(
        self,
        before: Mapping[str, Any],
        entries: Sequence[Mapping[str, Any]],
        tree: str | None,
        changed: Collection[str],
        *,
        snapshot: str,
        precise: bool,
    ) -> None:
        """Seal the batch of `snapshot` (two git processes: what it left is the commit's message
        and tree, so no blob or tree is written for it)."""
        start = int(before.get("started") or float(before.get("created", 0)) * 1e9)
        before_tree = before.get("tree")
        data = {
            "version": 1,
            "entries": list(entries),
            "changed": sorted(changed),
            "before": before_tree if isinstance(before_tree, str) and tree else None,
            "precise": precise,
        }
        message = f"window {start} {time.time_ns()}\n\n{json.dumps(data)}\n".encode()
        commit = await self._git_run(
            "commit-tree", tree or _EMPTY_TREE, "-p", snapshot, input=message
        )
        if commit.returncode != 0:
            raise SnapshotFailed(f"could not seal the batch: {_err(commit)}")
        sha = commit.stdout.decode().strip()
        updated = await self._git_run("update-ref", f"{_REFS}{snapshot}", sha)
        if updated.returncode != 0:
            raise SnapshotFailed(f"could not seal the batch: {_err(updated)}")

    async def _sealed(self, snapshot: str) -> Sealed | None:
        """What the batch of `snapshot` (a commit, or a ref to one) left; None when unsealed."""
        resolved = await self._git_run("rev-parse", "--verify", "-q", f"{snapshot}^{{commit}}")
        sha = resolved.stdout.decode().strip()
        if resolved.returncode != 0 or not sha:
            return None
        windows = await self._windows()
        if sha not in windows:
            return None
        return await self._read_sealed(sha, windows[sha])

    async def _changed_alongside(self, sealed: Sealed) -> set[str]:
        """The paths other batches changed in windows overlapping `sealed`'s (see the module
        docstring: a precise batch is doubted only by precise ones)."""
        doubtful: set[str] = set()
        for other, (start, end) in (await self._windows()).items():
            if other == sealed.snapshot or start >= sealed.end or sealed.start >= end:
                continue
            alongside = await self._read_sealed(other, (start, end))
            if alongside is not None and (alongside.precise or not sealed.precise):
                doubtful.update(alongside.changed)
        return doubtful

    async def _windows(self) -> dict[str, tuple[int, int]]:
        """Every sealed batch: its snapshot -> its window."""
        listed = await self._git_run(
            "for-each-ref", "--format=%(refname:lstrip=2) %(contents:subject)", _REFS
        )
        windows: dict[str, tuple[int, int]] = {}
        for line in listed.stdout.decode().splitlines():
            snapshot, _, subject = line.partition(" ")
            words = subject.split()
            if len(words) == 3 and words[0] == "window" and all(w.isdigit() for w in words[1:]):
                windows[snapshot] = (int(words[1]), int(words[2]))
        return windows

    async def _read_sealed(self, snapshot: str, window: tuple[int, int]) -> Sealed | None:
        shown = await self._git_run("cat-file", "commit", f"{_REFS}{snapshot}")
        headers, _, message = shown.stdout.decode(errors="replace").partition("\n\n")
        try:
            data = json.loads(message.partition("\n\n")[2]) if shown.returncode == 0 else None
        except ValueError:
            data = None
        if not isinstance(data, dict):
            return None
        after = cast("dict[str, Any]", data)
        tree = next((line[5:] for line in headers.splitlines() if line.startswith("tree ")), None)
        changed = set(cast("list[str]", after.get("changed", [])))
        before = after.get("before")
        if isinstance(before, str) and tree is not None:
            changed.update(await self._tree_changes(before, tree))
        return Sealed(
            snapshot=snapshot,
            start=window[0],
            end=window[1],
            entries=cast("list[dict[str, Any]]", after.get("entries", [])),
            tree=tree if isinstance(before, str) else None,
            changed=frozenset(changed),
            precise=bool(after.get("precise")),
        )

    async def _tree_changes(self, old: str, new: str) -> set[str]:
        diff = await self._git_run("diff-tree", "-r", "-z", "--name-only", "--no-renames", old, new)
        return {name for name in diff.stdout.decode(errors="surrogateescape").split("\0") if name}
