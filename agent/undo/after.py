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

from agent.undo.git import git_error as _err
from agent.undo.repository import SnapshotFailed, UndoRepository

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
    before: str | None
    """The work tree before the batch (whole-tree snapshots)."""
    tree: str | None
    """The work tree after the batch (whole-tree snapshots)."""
    named: frozenset[str]
    """The named files the batch changed (relative to the cwd where inside it)."""
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

    async def _sealed(self, snapshot: str) -> tuple[Sealed, set[str], set[str]] | None:
        """What the batch of `snapshot` (a commit, or a ref to one) left, the paths it changed,
        and those of them a batch of another session changed in an overlapping window (see the
        module docstring: a precise batch is doubted only by precise ones). None when unsealed.
        A handful of git processes, however many batches overlap."""
        resolved = await self._git_run("rev-parse", "--verify", "-q", f"{snapshot}^{{commit}}")
        sha = resolved.stdout.decode().strip()
        windows = await self._windows()
        if resolved.returncode != 0 or sha not in windows:
            return None
        start, end = windows[sha]
        overlapping = [o for o, (s, e) in windows.items() if o != sha and s < end and start < e]
        read = await self._read_sealed([sha, *overlapping], windows)
        sealed = read.get(sha)
        if sealed is None:
            return None
        changed = set(sealed.named)
        if sealed.before is not None and sealed.tree is not None:
            changed.update(await self._tree_changes(sealed.before, sealed.tree))
        others = [
            other
            for name in overlapping
            if (other := read.get(name)) is not None and (other.precise or not sealed.precise)
        ]
        doubtful = {path for other in others for path in other.named if path in changed}
        doubtful.update(await self._changed_by_commands(others, changed - doubtful))
        return sealed, changed, doubtful

    async def _changed_by_commands(self, others: Sequence[Sealed], paths: set[str]) -> set[str]:
        """Of `paths` (relative to the cwd), those a whole-tree batch of `others` changed: one
        `cat-file --batch-check` asks each batch's trees before and after for each path."""
        pairs = [(o, path) for o in others if o.before and o.tree for path in sorted(paths)]
        doubtful = {path for _, path in pairs if "\n" in path or path.startswith("/")}
        probes = [(o, path) for o, path in pairs if path not in doubtful]
        if not probes:
            return doubtful
        lines = [f"{tree}:{path}\n" for o, path in probes for tree in (o.before, o.tree)]
        found = await self._git_run(
            "cat-file", "--batch-check=%(objectname)", input="".join(lines).encode()
        )
        answers = found.stdout.decode(errors="surrogateescape").splitlines()
        if found.returncode != 0 or len(answers) != 2 * len(probes):
            return doubtful | {path for _, path in probes}  # cannot tell: doubt them all
        for number, (_, path) in enumerate(probes):
            if answers[2 * number] != answers[2 * number + 1]:
                doubtful.add(path)
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

    async def _read_sealed(
        self, snapshots: Sequence[str], windows: Mapping[str, tuple[int, int]]
    ) -> dict[str, Sealed]:
        """The seals of `snapshots`, read by one `cat-file --batch`."""
        request = "".join(f"{_REFS}{snapshot}\n" for snapshot in snapshots).encode()
        shown = await self._git_run("cat-file", "--batch", input=request)
        output, position = shown.stdout, 0
        read: dict[str, Sealed] = {}
        for snapshot in snapshots:
            end_of_line = output.find(b"\n", position)
            if end_of_line < 0:
                break
            header = output[position:end_of_line].split()
            position = end_of_line + 1
            if len(header) != 3 or not header[2].isdigit():
                continue  # "<name> missing"
            size = int(header[2])
            body = output[position : position + size].decode(errors="replace")
            position += size + 1
            sealed = _parse_seal(snapshot, windows[snapshot], body)
            if sealed is not None:
                read[snapshot] = sealed
        return read

    async def _tree_changes(self, old: str, new: str) -> set[str]:
        diff = await self._git_run("diff-tree", "-r", "-z", "--name-only", "--no-renames", old, new)
        return {name for name in diff.stdout.decode(errors="surrogateescape").split("\0") if name}


def _parse_seal(snapshot: str, window: tuple[int, int], commit: str) -> Sealed | None:
    headers, _, message = commit.partition("\n\n")
    try:
        data = json.loads(message.partition("\n\n")[2])
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    after = cast("dict[str, Any]", data)
    tree = next((line[5:] for line in headers.splitlines() if line.startswith("tree ")), None)
    before = after.get("before")
    whole = isinstance(before, str) and tree is not None
    return Sealed(
        snapshot=snapshot,
        start=window[0],
        end=window[1],
        entries=cast("list[dict[str, Any]]", after.get("entries", [])),
        before=cast("str", before) if whole else None,
        tree=tree if whole else None,
        named=frozenset(cast("list[str]", after.get("changed", []))),
        precise=bool(after.get("precise")),
    )
