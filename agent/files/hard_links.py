"""The other names of a file with several (hard links), so that a rule about one name holds for
all of them: `env_hard`, made with `ln .env env_hard`, is `.env` under another name, and a deny
rule `Read(./.env)` must refuse reading it too (issue 24).

Only a regular file whose link count is above one can have another name, and that name is on the
same device. Nothing records where the names are, so they are looked for: first in the places
the deny rules name literally (`./.env`, `./secrets/**` -> `secrets/`) and the secret places
(`~/.ssh`...), then everywhere under the workspace roots, breadth first (a `.env` sits near the
top of a project), skipping other devices and `.git`. Entries are compared by the inode number
`readdir` gives (no `stat` per file) and confirmed with one `lstat`. The search stops when every
name is found, or after `SEARCH_BUDGET` directory entries: a name beyond that (a huge tree) is not
found. It runs only for a file with several names: rare in projects, except in a pnpm store.
"""

from __future__ import annotations

import os
import stat
from collections import deque
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Final

from agent.files.safe_paths import FileId

SEARCH_BUDGET: Final = 20_000
"""Directory entries looked at, at most, to find a file's other names."""


def other_names(file: FileId, places: Iterable[Path], roots: Sequence[Path]) -> list[Path]:
    """The names of `file` found in `places` (files or directories, searched first) and under
    `roots` (absolute paths, not resolved further), at most its link count of them."""
    found: list[Path] = []
    seen_dirs: set[tuple[int, int]] = set()
    queue: deque[Path] = deque()
    budget = SEARCH_BUDGET
    for place in places:
        try:
            status = os.lstat(place)
        except OSError:
            continue
        if stat.S_ISDIR(status.st_mode):
            queue.append(place)
        elif (status.st_dev, status.st_ino) == (file.dev, file.ino) and place not in found:
            found.append(place)
    queue.extend(roots)
    while queue and budget > 0 and len(found) < file.nlink:
        directory = queue.popleft()
        try:
            status = os.lstat(directory)
        except OSError:
            continue
        key = (status.st_dev, status.st_ino)
        if key in seen_dirs or status.st_dev != file.dev or not stat.S_ISDIR(status.st_mode):
            continue
        seen_dirs.add(key)
        try:
            with os.scandir(directory) as entries:
                for entry in entries:
                    budget -= 1
                    if budget <= 0:
                        break
                    _visit(entry, file, found, queue)
        except OSError:
            continue
    return found


def _visit(entry: os.DirEntry[str], file: FileId, found: list[Path], queue: deque[Path]) -> None:
    try:
        if entry.is_dir(follow_symlinks=False):
            if entry.name != ".git":
                queue.append(Path(entry.path))
            return
        if entry.inode() != file.ino or not entry.is_file(follow_symlinks=False):
            return
        status = entry.stat(follow_symlinks=False)
    except OSError:
        return
    path = Path(entry.path)
    if status.st_dev == file.dev and path not in found:
        found.append(path)
