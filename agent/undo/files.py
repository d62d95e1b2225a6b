"""How undo touches the work tree: what a snapshot records of a path, and putting it back only
where it was (issue 24).

A snapshot entry records the path (its directory resolved), its state (bytes, a link, absent),
and the identity of its directory (`dir`: device and inode; for a path that did not exist, of
the nearest directory that did). Reading the bytes opens the file exactly there, following no
link (`agent.files.safe_paths`).

Restoring opens that directory exactly again and compares: a directory replaced since (by a link
to `$HOME`, or by another directory) is refused for that path, saying so, and nothing there is
written or deleted. Files are written to a temporary name in the directory held open and renamed
over the name; deletions and links are made in it by name (`unlinkat`, `symlinkat`). So a name
swapped for a hard link to a file outside is replaced or removed, and the file it shared is not
changed. A directory the batch removed (so there is nothing to compare) is made again, exactly.

A whole-tree snapshot (a command's batch) is put back beneath the work tree's own directory, held
open and checked against the identity the snapshot recorded, every name opened beneath it with no
link followed: its files come from git (`cat-file --batch`) and are written the same way.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from contextlib import suppress
from functools import partial
from pathlib import Path
from subprocess import CompletedProcess
from typing import Any, cast

from agent.files import (
    READ_FLAGS,
    PathChanged,
    open_directory,
    opened_directory,
    read_descriptor,
    replace_in,
)

GitRun = Callable[..., Awaitable[CompletedProcess[bytes]]]
"""`git_run(*args, input=None)`: a git command on the undo store."""

REPLACED = "its directory is not the directory the snapshot recorded"


class Refused(Exception):
    """A path undo will not touch; the message says why."""


# ------------------------------------------------------------------------------- recording


def identity(path: Path) -> list[int] | None:
    """`[device, inode]` of the directory exactly at `path` (no link followed); None when there
    is none."""
    try:
        with opened_directory(path) as fd:
            status = os.fstat(fd)
    except (OSError, ValueError):
        return None
    return [status.st_dev, status.st_ino]


def read_entry(path: Path, max_bytes: int) -> dict[str, Any]:
    """What a snapshot records of `path` (absolute, its directory resolved): `state` "file"
    (with `data` bytes and `mode`), "symlink" (`target`), "absent" (`existing_parent`), or
    "skipped" (`reason`); and `dir`, its directory's identity.

    The file is opened exactly in its directory, held open: a link swapped in on the way is
    not followed (the path is skipped)."""
    try:
        with opened_directory(path.parent) as directory:
            status = os.fstat(directory)
            where = [status.st_dev, status.st_ino]
            return {**_entry_in(directory, path, max_bytes), "dir": where}
    except FileNotFoundError:
        parent = _existing_parent(path)
        return {"state": "absent", "existing_parent": str(parent), "dir": identity(parent)}
    except PathChanged:
        return {"state": "skipped", "reason": "a symbolic link is on its way"}
    except OSError as error:
        return {"state": "skipped", "reason": f"unreadable: {error.strerror or error}"}


def _entry_in(directory: int, path: Path, max_bytes: int) -> dict[str, Any]:
    name = path.name
    try:
        status = os.stat(name, dir_fd=directory, follow_symlinks=False)
    except FileNotFoundError:
        return {"state": "absent", "existing_parent": str(path.parent)}
    if stat.S_ISLNK(status.st_mode):
        return {"state": "symlink", "target": os.readlink(name, dir_fd=directory)}
    if not stat.S_ISREG(status.st_mode):
        return {"state": "skipped", "reason": "not a regular file"}
    if status.st_size > max_bytes:
        return {"state": "skipped", "reason": f"larger than {max_bytes} bytes"}
    fd = os.open(name, READ_FLAGS | getattr(os, "O_NOFOLLOW", 0), dir_fd=directory)
    try:
        opened = os.fstat(fd)
        if not stat.S_ISREG(opened.st_mode):
            return {"state": "skipped", "reason": "not a regular file"}
        data, more = read_descriptor(fd, max_bytes)
    finally:
        os.close(fd)
    if more:
        return {"state": "skipped", "reason": f"larger than {max_bytes} bytes"}
    return {"state": "file", "data": data, "mode": stat.S_IMODE(opened.st_mode)}


def _existing_parent(path: Path) -> Path:
    parent = path.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    return parent


# ------------------------------------------------------------------------------- restoring


def _open_recorded(directory: Path, recorded: object, *, create: bool) -> int:
    """The directory exactly at `directory`, if it is the one recorded (`[dev, ino]`; None:
    nothing was recorded, as in snapshots from before this check). `create`: make it (and its
    missing parents) when it is gone.

    Raises:
        Refused: a link on the way, or another directory than the one recorded.
        OSError: it is gone (and not `create`), or cannot be opened.
    """
    try:
        fd = open_directory(directory)
    except PathChanged:
        raise Refused(f"{REPLACED}: a symbolic link is in its place now") from None
    except FileNotFoundError:
        if not create:
            raise
        try:
            return open_directory(directory, create=True)
        except PathChanged:
            raise Refused(f"{REPLACED}: a symbolic link is in its place now") from None
    status = os.fstat(fd)
    if isinstance(recorded, list):
        wanted = cast("list[int]", recorded)
        if [status.st_dev, status.st_ino] != wanted:
            os.close(fd)
            raise Refused(f"{REPLACED}: another directory is in its place now")
    return fd


def restore_file(path: Path, data: bytes, mode: int, recorded: object) -> None:
    """Put `data` back at `path`, in the directory recorded (made again if it is gone)."""
    fd = _open_recorded(path.parent, recorded, create=True)
    try:
        _clear_link(fd, path.name)
        replace_in(fd, path.name, data, mode=mode, path=path)
    finally:
        os.close(fd)


def restore_link(path: Path, target: str, recorded: object) -> None:
    """Put the symbolic link back at `path` (to `target`), in the directory recorded."""
    fd = _open_recorded(path.parent, recorded, create=True)
    try:
        _remove_in(fd, path.name)
        os.symlink(target, path.name, dir_fd=fd)
    finally:
        os.close(fd)


def remove_created(path: Path, existing_parent: Path, recorded: object) -> bool:
    """Delete what a batch created at `path` (a file or link, not a directory) and the now
    empty directories it made for it, below `existing_parent` (the directory recorded, which
    existed before the batch). False when there was nothing to delete."""
    try:
        top = _open_recorded(existing_parent, recorded, create=False)
    except FileNotFoundError:
        return False
    below = path.parent.relative_to(existing_parent).parts
    chain = [top]
    try:
        for name in below:
            chain.append(open_directory(name, dir_fd=chain[-1]))
        removed = _remove_in(chain[-1], path.name)
        for index in range(len(below) - 1, -1, -1):  # the directories made for it, if empty
            try:
                os.rmdir(below[index], dir_fd=chain[index])
            except OSError:
                break
        return removed
    except FileNotFoundError:
        return False
    except PathChanged:
        raise Refused(f"{REPLACED}: a symbolic link is in its place now") from None
    finally:
        for fd in chain:
            os.close(fd)


def _remove_in(directory: int, name: str) -> bool:
    """Unlink `name` in the directory held (a file or a link; never a directory)."""
    try:
        status = os.stat(name, dir_fd=directory, follow_symlinks=False)
    except FileNotFoundError:
        return False
    if stat.S_ISDIR(status.st_mode):
        return False
    os.unlink(name, dir_fd=directory)
    return True


def _clear_link(directory: int, name: str) -> None:
    """A link where a file goes is removed (renaming over it would do, but says less)."""
    with suppress(FileNotFoundError):
        if stat.S_ISLNK(os.stat(name, dir_fd=directory, follow_symlinks=False).st_mode):
            os.unlink(name, dir_fd=directory)


# ------------------------------------------------------------------------- the whole tree


async def tree_entries(git_run: GitRun, tree: str) -> dict[str, tuple[str, str]]:
    """`name -> (mode, object)` for every file and link in `tree` (recursively)."""
    listed = await git_run("ls-tree", "-r", "-z", "--full-tree", tree)
    entries: dict[str, tuple[str, str]] = {}
    for record in listed.stdout.decode(errors="surrogateescape").split("\0"):
        head, tab, name = record.partition("\t")
        fields = head.split()
        if tab and len(fields) == 3 and fields[1] == "blob":
            entries[name] = (fields[0], fields[2])
    return entries


async def blobs(git_run: GitRun, objects: Iterable[str]) -> dict[str, bytes]:
    """The content of each blob, from one `git cat-file --batch`."""
    wanted = list(dict.fromkeys(objects))
    if not wanted:
        return {}
    answer = await git_run("cat-file", "--batch", input="".join(f"{o}\n" for o in wanted).encode())
    out = answer.stdout
    found: dict[str, bytes] = {}
    position = 0
    for name in wanted:
        end = out.index(b"\n", position)
        header = out[position:end].split()
        position = end + 1
        if len(header) != 3:
            continue  # "<object> missing"
        size = int(header[2])
        found[name] = out[position : position + size]
        position += size + 1
    return found


def restore_beneath(
    root: Path,
    recorded: object,
    files: Mapping[str, tuple[int, bytes]],
    links: Mapping[str, str],
    created: Sequence[str],
    kept_dirs: set[str],
) -> tuple[list[str], list[str]]:
    """Put the work tree back beneath `root` (the directory recorded): the `created` names
    deleted first, with the directories made for them that the snapshot's tree does not have
    (`kept_dirs`), so a link that took a directory's place is removed and never used; then
    `files` (name -> mode, bytes) and `links` (name -> target) written. Returns what changed
    and the problems (`name (why)`)."""
    try:
        top = _open_recorded(root, recorded, create=False)
    except Refused as refused:
        return [], [f". ({refused})"]
    except OSError as error:
        return [], [f". ({error.strerror or error})"]
    tree = _Beneath(top)
    try:
        for name in created:
            if tree.apply(name, _remove_in, create=False):
                tree.prune(name, kept_dirs)
        for name, (mode, data) in files.items():
            tree.apply(name, partial(_write_in, data=data, mode=mode))
        for name, target in links.items():
            tree.apply(name, partial(_link_in, target=target))
    finally:
        os.close(top)
    return tree.changed, tree.problems


def _write_in(directory: int, name: str, *, data: bytes, mode: int) -> bool:
    _clear_link(directory, name)
    replace_in(directory, name, data, mode=mode)
    return True


def _link_in(directory: int, name: str, *, target: str) -> bool:
    _remove_in(directory, name)
    os.symlink(target, name, dir_fd=directory)
    return True


class _Beneath:
    """Changes to names under one directory held open, each reached with no link followed."""

    def __init__(self, top: int) -> None:
        self.top = top
        self.changed: list[str] = []
        self.problems: list[str] = []

    def apply(self, name: str, action: Callable[[int, str], bool], *, create: bool = True) -> bool:
        """`action(directory, last name)` in the directory that holds `name` (made when missing
        and `create`); whether it changed something. A failure is noted, not raised."""
        parent, _, last = name.rpartition("/")
        try:
            fd = open_directory(parent, dir_fd=self.top, create=create) if parent else self.top
        except FileNotFoundError:
            return False
        except (PathChanged, ValueError):
            self.problems.append(f"{name} (a symbolic link is on its way now)")
            return False
        except OSError as error:
            self.problems.append(f"{name} ({error.strerror or error})")
            return False
        try:
            done = action(fd, last)
        except OSError as error:
            self.problems.append(f"{name} ({error.strerror or error})")
            return False
        finally:
            if fd != self.top:
                os.close(fd)
        if done:
            self.changed.append(name)
        return done

    def prune(self, name: str, kept_dirs: set[str]) -> None:
        """Remove the now-empty directories above `name` the snapshot's tree did not have."""
        parts = name.split("/")[:-1]
        while parts and "/".join(parts) not in kept_dirs:
            parent = "/".join(parts[:-1])
            try:
                fd = open_directory(parent, dir_fd=self.top) if parent else self.top
            except (OSError, ValueError):
                return
            try:
                os.rmdir(parts[-1], dir_fd=fd)
            except OSError:
                return
            finally:
                if fd != self.top:
                    os.close(fd)
            parts.pop()
