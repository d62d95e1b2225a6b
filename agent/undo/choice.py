"""Which batch `/undo` restores: the newest one whose files are no longer as it found them.

A batch that changed nothing has nothing to put back: a cancelled `sleep`, or a command the user
refused (its snapshot is taken before the gate decides). Undoing it said "restored 0 path(s)"
while the change the user meant stayed. So `UndoStore.undo_last` passes over such batches to the
newest one that would change a file now, and retires the passed ones with it, as the undo went
past them (left in place, the next undo would find the files changed since, and put the undone
batch's change back).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from subprocess import CompletedProcess
from typing import Any, cast


class BatchChoice:
    """The choice, for `agent.undo.store.UndoStore` (which supplies the git and file methods)."""

    async def _git_run(self, *args: str, input: bytes | None = None) -> CompletedProcess[bytes]:
        raise NotImplementedError

    async def _record(self, path: Path, skipped: list[dict[str, Any]]) -> dict[str, Any] | None:
        raise NotImplementedError

    async def _stage_work_tree(self, skipped: list[dict[str, Any]]) -> str | None:
        raise NotImplementedError

    async def _since_batch(self, snapshot: str, manifest: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    async def _last_changing_batch(
        self, refs: Sequence[tuple[int, str]]
    ) -> tuple[dict[str, Any], int, str, list[tuple[int, str]]] | str:
        """The newest batch of `refs` (newest first) whose files are not as it found them: its
        manifest, number and ref, and the newer batches passed over; or why there is none."""
        passed: list[tuple[int, str]] = []
        for number, ref in refs:
            shown = await self._git_run("cat-file", "blob", f"{ref}:manifest.json")
            if shown.returncode != 0:
                said = shown.stderr.decode(errors="replace").strip()[:500]
                return f"undo snapshot {ref} is unreadable: {said or shown.returncode}"
            # Narrowed to what the batch itself changed (`agent.undo.after`): a batch whose
            # files only other sessions changed since has nothing of its own to put back.
            recorded = cast("dict[str, Any]", json.loads(shown.stdout))
            manifest = await self._since_batch(ref, recorded)
            # A batch whose changes were changed again since (`kept`) did change files: undo
            # says what it leaves, rather than passing it over as a batch that changed nothing.
            if manifest.get("kept") or await self._differs(manifest):
                return manifest, number, ref, passed
            passed.append((number, ref))
        return f"nothing to undo: the files are as the last {len(passed)} batch(es) found them"

    async def _differs(self, manifest: Mapping[str, Any]) -> bool:
        """Whether undoing the batch of `manifest` would change a file now."""
        for entry in cast("list[dict[str, Any]]", manifest.get("entries", [])):
            now = await self._record(Path(entry["path"]), [])
            keys = ("state", "blob", "mode", "target")
            if now is None or any(now.get(key) != entry.get(key) for key in keys):
                return True
        tree = manifest.get("tree")
        if not isinstance(tree, str):
            return False
        scratch: list[dict[str, Any]] = []
        if await self._stage_work_tree(scratch) is None:
            return True  # cannot tell: let the restore say what it could not do
        recorded = cast("list[dict[str, Any]]", manifest.get("skipped", []))
        skipped = {item.get("path") for item in [*recorded, *scratch]}
        only = set(cast("list[str]", manifest["only"])) if "only" in manifest else None
        diff = await self._git_run("diff-index", "--cached", "-z", "--name-only", tree)
        names = diff.stdout.decode(errors="surrogateescape").split("\0")
        return diff.returncode != 0 or any(
            name and name not in skipped and (only is None or name in only) for name in names
        )
