"""Read-only access to the undo snapshots (`agent.undo.store`) for `earshot blame`.

A snapshot, taken before each batch of mutating calls, holds the bytes of the files the batch was
about to change (or, before a command, the whole work tree): the ground truth of a file at that
moment, whoever changed it before. Undone batches have their ref moved to
`refs/earshot-undone/...`; the ref's commit is the snapshot id the transcript recorded.

Only `for-each-ref` and `cat-file` run, with the same isolation as the store's own git (no
system or global config, `GIT_*` variables dropped): nothing is written.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast


@dataclass(frozen=True, slots=True)
class FileAt:
    """A file's state in a snapshot: its text, or absent (`text` None with `exists` False)."""

    exists: bool
    text: str | None


class SnapshotReader:
    """The undo snapshots of one working directory."""

    def __init__(self, cwd: str, data_dir: Path) -> None:
        from agent.undo import UndoStore

        store = UndoStore(Path(cwd), data_dir)  # computes the paths only: creates nothing
        self.cwd = store.cwd
        self.git_dir = store.git_dir
        self._git = shutil.which("git")
        self.available = self._git is not None and (self.git_dir / "HEAD").is_file()
        self._undone: set[str] | None = None

    def undone(self) -> set[str]:
        """The snapshot ids (commit ids) of every batch that was undone (read once)."""
        if self._undone is None:
            self._undone = set()
            if self.available:
                listed = self._run(
                    ["for-each-ref", "--format=%(objectname)", "refs/earshot-undone/"]
                )
                lines = listed.decode().splitlines() if listed is not None else []
                self._undone = {line.strip() for line in lines if line.strip()}
        return set(self._undone)

    def files_at(self, snapshots: Sequence[str], path: Path) -> dict[str, FileAt]:
        """`path` in each of `snapshots` that recorded it (a snapshot that did not, or whose
        record cannot be read, is left out)."""
        if not self.available or not snapshots:
            return {}
        real = Path(os.path.realpath(path.parent)) / path.name
        manifests = self._cat([f"{sha}:manifest.json" for sha in snapshots])
        wanted: list[tuple[str, str, bool]] = []
        """(snapshot, object name, absent when missing)."""
        found: dict[str, FileAt] = {}
        for sha, raw in zip(snapshots, manifests, strict=True):
            manifest = _manifest(raw)
            if manifest is None:
                continue
            entry = next(
                (e for e in _entries(manifest) if e.get("path") == str(real)),
                None,
            )
            if entry is not None:
                state = entry.get("state")
                if state == "absent":
                    found[sha] = FileAt(False, None)
                elif state == "file" and isinstance(entry.get("blob"), str):
                    wanted.append((sha, entry["blob"], False))
                continue
            tree = manifest.get("tree")
            relative = _relative(real, self.cwd)
            skipped = {item.get("path") for item in _entries(manifest, key="skipped")}
            if isinstance(tree, str) and relative is not None and relative not in skipped:
                wanted.append((sha, f"{tree}:{relative}", False))
        contents = self._cat([name for _, name, _ in wanted])
        for (sha, _, _), data in zip(wanted, contents, strict=True):
            if data is not None:
                found[sha] = FileAt(True, data.decode("utf-8", errors="surrogateescape"))
            # Missing from a whole-tree snapshot: absent, or ignored by .gitignore; unknown.
        return found

    # -------------------------------------------------------------------------------- git

    def _cat(self, names: Sequence[str]) -> list[bytes | None]:
        """`git cat-file --batch` for `names`: each object's bytes, None when missing."""
        if not names:
            return []
        payload = "".join(name + "\n" for name in names).encode(errors="surrogateescape")
        output = self._run(["cat-file", "--batch"], payload)
        if output is None:
            return [None] * len(names)
        results: list[bytes | None] = []
        position = 0
        for _ in names:
            end = output.find(b"\n", position)
            if end < 0:
                results.append(None)
                continue
            header = output[position:end].split()
            position = end + 1
            if len(header) != 3 or not header[2].isdigit():
                results.append(None)  # "<name> missing" (or ambiguous)
                continue
            size = int(header[2])
            results.append(output[position : position + size])
            position += size + 1
        return results

    def _run(self, args: list[str], payload: bytes | None = None) -> bytes | None:
        assert self._git is not None
        env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
        env.update(
            GIT_DIR=str(self.git_dir),
            GIT_CONFIG_NOSYSTEM="1",
            GIT_CONFIG_GLOBAL=os.devnull,
            GIT_TERMINAL_PROMPT="0",
            GIT_OPTIONAL_LOCKS="0",
        )
        try:
            done = subprocess.run(
                [self._git, "-c", "core.fsmonitor=false", *args],
                input=payload,
                capture_output=True,
                env=env,
                cwd=str(self.git_dir),
                check=False,
                timeout=120,
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
        return done.stdout if done.returncode == 0 else None


def _manifest(raw: bytes | None) -> dict[str, Any] | None:
    if raw is None:
        return None
    try:
        data = json.loads(raw)
    except ValueError:
        return None
    return cast("dict[str, Any]", data) if isinstance(data, dict) else None


def _entries(manifest: dict[str, Any], key: str = "entries") -> list[dict[str, Any]]:
    items: object = manifest.get(key)
    if not isinstance(items, list):
        return []
    listed = cast("list[object]", items)
    return [cast("dict[str, Any]", item) for item in listed if isinstance(item, dict)]


def _relative(path: Path, cwd: Path) -> str | None:
    if cwd not in path.parents:
        return None
    return path.relative_to(cwd).as_posix()
