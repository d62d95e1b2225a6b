"""Opening a path as it was decided: no symbolic link followed when it is used, and the object
found checked against the decision.

A permission decision is about a place: the REAL path of what a call names (every symbolic link
resolved) and, for a file with more than one name (hard links), which file it is. A background
command can swap a directory for a link to `$HOME` between the decision and the use, so the use
must not resolve the path again: it opens exactly the decided real path, following no link on
the way (a link found there now means the path changed: `PathChanged`, refused, never followed),
and checks the descriptor (`fstat`: device, inode, link count) against what was decided.

- Linux: `openat2` (syscall 437) with `RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS`, plus
  `RESOLVE_BENEATH` for a name under a directory held open (a tree walked from a descriptor: a
  `..` or a link cannot climb out). One system call.
- Where the kernel has no `openat2` (before 5.6, or a seccomp filter that refuses it) and on
  macOS (no `openat2`, no `O_PATH`): the same walk done one component at a time from a directory
  descriptor, each opened `O_NOFOLLOW | O_DIRECTORY`. The macOS path cannot be run here (Linux
  CI); it is the portable fallback the Linux tests also run (`use_openat2(False)`).
- Writes never open the target: the new content goes to a temporary file created (`O_EXCL |
  O_NOFOLLOW`) in the verified directory descriptor, renamed over the name there (`renameat`).
  A name swapped meanwhile for a link or a hard link is replaced, and what it pointed at is not
  touched.

What this does not do: decide. The caller resolves (`os.path.realpath`) and decides on the
result (`agent.permissions.policy`); this module makes the use match that decision or refuse.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
from collections.abc import Generator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, Final, Literal, TypeAlias

from providers.records import Record

_CLOEXEC: Final = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK: Final = getattr(os, "O_NONBLOCK", 0)
_NOCTTY: Final = getattr(os, "O_NOCTTY", 0)
_PATH_ONLY: Final = getattr(os, "O_PATH", 0)
"""Linux: a descriptor that names a place without opening it (no read permission needed, no
device opened). Elsewhere directories are opened read-only."""
_DIRECTORY: Final = getattr(os, "O_DIRECTORY", 0)
"""POSIX only: earshot's file tools need directory descriptors (`openat`), so Windows, which
has none, is not supported by this module."""
_DIRECTORY_FLAGS: Final = (_PATH_ONLY or os.O_RDONLY) | _DIRECTORY | _NOFOLLOW | _CLOEXEC
READ_FLAGS: Final = os.O_RDONLY | _NONBLOCK | _NOCTTY | _CLOEXEC
"""For reading a file someone named: a FIFO swapped in cannot block the open."""
_CHUNK: Final = 1 << 20

_RESOLVE_NO_MAGICLINKS: Final = 0x02
_RESOLVE_NO_SYMLINKS: Final = 0x04
_RESOLVE_BENEATH: Final = 0x08
_OPENAT2: Final = 437
"""The same number on every architecture that has it (new system calls share one table)."""
_AT_FDCWD: Final = -100


_KINDS: Final = {
    stat.S_IFIFO: "a named pipe (FIFO)",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
}


class NotARegularFile(OSError):
    """The path names a FIFO, a device or a socket: nothing that can be read as a file."""


def check_regular(path: Path, mode: int) -> None:
    """Raise unless `mode` (from a stat of `path`) is a regular file.

    Raises:
        IsADirectoryError: a directory (the error callers already handle for one).
        NotARegularFile: a FIFO, a device, a socket.
    """
    if stat.S_ISREG(mode):
        return
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, "Is a directory", str(path))
    kind = _KINDS.get(stat.S_IFMT(mode), "not a regular file")
    raise NotARegularFile(errno.EINVAL, f"not a regular file: it is {kind}", str(path))


class PathChanged(OSError):
    """The path no longer leads where it was decided: a symbolic link where a directory or the
    file was, a name that climbs out of the directory it must stay in, or a different file with
    several names. Nothing was read or written."""

    def __init__(self, path: Path | str, why: str) -> None:
        super().__init__(errno.ESTALE, why, str(path))


class FileId(Record, kw_only=False):
    """Which file a name led to, from a `stat`."""

    dev: int
    ino: int
    nlink: int
    kind: int
    """`stat.S_IFMT` of the mode."""

    @classmethod
    def of(cls, status: os.stat_result) -> FileId:
        return cls(status.st_dev, status.st_ino, status.st_nlink, stat.S_IFMT(status.st_mode))

    def same(self, other: FileId | None) -> bool:
        """The same file (device and inode), whatever its link count now."""
        return other is not None and (self.dev, self.ino) == (other.dev, other.ino)

    @property
    def linked(self) -> bool:
        """A regular file with more than one name: another may be somewhere else."""
        return self.kind == stat.S_IFREG and self.nlink > 1


class Decided(Record, kw_only=False):
    """A path as a permission decision saw it: its real path, and what was there."""

    path: Path
    """Absolute, every symbolic link resolved."""
    file: FileId | None
    """None: nothing was there (a file to create)."""


Expected: TypeAlias = FileId | None | Literal["any"]
"""What a use expects to find: the decided file (None: the decision saw nothing there), or
"any" (no decision depends on which file it is)."""


def identify(path: Path | str) -> FileId | None:
    """What `path` names now (a link itself, not its target); None when nothing does."""
    try:
        return FileId.of(os.lstat(path))
    except (FileNotFoundError, NotADirectoryError):
        return None


def decided_now(path: Path | str) -> Decided:
    """`path` resolved now and what is there: for a use nobody decided on beforehand (a tool
    run outside a session)."""
    real = Path(os.path.realpath(path))
    return Decided(real, identify(real))


def check_expected(path: Path | str, found: FileId, expected: Expected) -> None:
    """Raise unless `found` may be used where `expected` was decided. A decision about a file
    with one name holds for whatever single-named file is at that real path now (the policy
    looks at the place); one about a file with several names holds only for that file (which of
    its names a deny rule covers, whether a write reaches them, was decided for it).

    Raises:
        PathChanged: a file with several names that is not the one decided on.
    """
    if expected == "any" or not found.linked or found.same(expected):
        return
    raise PathChanged(
        path,
        f"it is now a file with {found.nlink} names (hard links), not the one that was checked",
    )


# ------------------------------------------------------------------------------- opening


def open_exact(
    path: Path | str, flags: int, mode: int = 0o666, *, dir_fd: int | None = None
) -> int:
    """Open `path` following no symbolic link anywhere on it. Absolute, or (with `dir_fd`)
    relative and then kept beneath that directory (no `..` out of it).

    Raises:
        PathChanged: a symbolic link on the way, or a name that leaves `dir_fd`.
        OSError: missing, not permitted...
    """
    text = os.fspath(path)
    parts = _parts(text, relative=dir_fd is not None)
    if _openat2_works():
        resolve = _RESOLVE_NO_SYMLINKS | _RESOLVE_NO_MAGICLINKS
        if dir_fd is not None:
            resolve |= _RESOLVE_BENEATH
        try:
            return _openat2(_AT_FDCWD if dir_fd is None else dir_fd, text, flags, mode, resolve)
        except OSError as error:
            if error.errno in (errno.ELOOP, errno.EXDEV) or (
                # O_DIRECTORY | O_NOFOLLOW meeting a link as the last component
                error.errno == errno.ENOTDIR
                and _is_link(_AT_FDCWD if dir_fd is None else dir_fd, text)
            ):
                raise PathChanged(text, "a symbolic link is on its way now") from None
            raise
    return _open_walking(text, parts, flags, mode, dir_fd=dir_fd, create=False)


def open_directory(
    path: Path | str, *, create: bool = False, readable: bool = False, dir_fd: int | None = None
) -> int:
    """A descriptor of the directory `path` (as `open_exact`), creating missing components when
    `create` (each made with `mkdirat` in its verified parent, then opened without following).
    `readable`: open it for listing (`scandir`), not only as a place.

    Raises:
        PathChanged, NotADirectoryError, OSError.
    """
    flags = (os.O_RDONLY | _DIRECTORY | _CLOEXEC) if readable else _DIRECTORY_FLAGS
    try:
        return open_exact(path, flags, dir_fd=dir_fd)
    except FileNotFoundError:
        if not create:
            raise
    text = os.fspath(path)
    return _open_walking(
        text, _parts(text, relative=dir_fd is not None), flags, 0, dir_fd=dir_fd, create=True
    )


@contextmanager
def opened_directory(
    path: Path | str, *, create: bool = False, readable: bool = False, dir_fd: int | None = None
) -> Generator[int]:
    """`open_directory`, closed when the block ends."""
    fd = open_directory(path, create=create, readable=readable, dir_fd=dir_fd)
    try:
        yield fd
    finally:
        os.close(fd)


@contextmanager
def opened_place(path: Path | str) -> Generator[tuple[int, bool]]:
    """What is exactly at `path`, held open as a place (Linux `O_PATH`; elsewhere read-only and
    non-blocking), and whether it is a directory. Closed when the block ends.

    Raises:
        PathChanged, OSError."""
    fd = open_exact(path, (_PATH_ONLY or (os.O_RDONLY | _NONBLOCK | _NOCTTY)) | _CLOEXEC)
    try:
        yield fd, stat.S_ISDIR(os.fstat(fd).st_mode)
    finally:
        os.close(fd)


def _parts(text: str, *, relative: bool) -> list[str]:
    if "\0" in text:
        raise ValueError("a path with a NUL character")  # C would see only what comes before it
    if relative == text.startswith("/"):
        raise ValueError(f"{text!r}: expected a {'relative' if relative else 'absolute'} path")
    parts = [part for part in text.split("/") if part and part != "."]
    if ".." in parts:
        raise PathChanged(text, "a `..` in a path that was already resolved")
    if not parts and relative:
        raise ValueError("an empty relative path")
    return parts


def _step(parent: int, name: str, flags: int, mode: int, *, path: str) -> int:
    try:
        return os.open(name, flags | _NOFOLLOW | _CLOEXEC, mode, dir_fd=parent)
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK) and _is_link(parent, name):
            raise PathChanged(path, "a symbolic link is on its way now") from None
        raise


def _is_link(parent: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _open_walking(
    text: str, parts: list[str], flags: int, mode: int, *, dir_fd: int | None, create: bool
) -> int:
    """One component at a time from `dir_fd` (or `/`), each directory opened `O_NOFOLLOW |
    O_DIRECTORY` in the one before; the last with `flags | O_NOFOLLOW`."""
    current = os.open("/", _DIRECTORY_FLAGS) if dir_fd is None else dir_fd
    try:
        if not parts:  # the root itself
            return os.open(".", flags | _CLOEXEC, mode, dir_fd=current)
        for index, name in enumerate(parts):
            last = index == len(parts) - 1
            wanted = flags if last else _DIRECTORY_FLAGS
            try:
                following = _step(current, name, wanted, mode, path=text)
            except FileNotFoundError:
                if not create:
                    raise
                with suppress(FileExistsError):  # made meanwhile: opened below like any other
                    os.mkdir(name, 0o777, dir_fd=current)
                following = _step(current, name, wanted, mode, path=text)
            if current != dir_fd:
                os.close(current)
            current = following
            # O_PATH | O_NOFOLLOW opens a link itself instead of refusing it.
            if last and flags & _PATH_ONLY and stat.S_ISLNK(os.fstat(current).st_mode):
                raise PathChanged(text, "a symbolic link is on its way now")
        result, current = current, -1
        return result
    finally:
        if current not in (-1, dir_fd):
            os.close(current)


def exists_beneath(directory: int, name: str) -> bool:
    """Whether `name` (relative) is there beneath the directory `directory` holds, reached with
    no symbolic link on the way (the last component may be one)."""
    parent, _, last = name.rpartition("/")
    try:
        held = open_directory(parent, dir_fd=directory) if parent else directory
    except (OSError, ValueError):
        return False
    try:
        os.stat(last, dir_fd=held, follow_symlinks=False)
    except OSError:
        return False
    finally:
        if held != directory:
            os.close(held)
    return True


# ------------------------------------------------------------------------ reading, writing


def read_exact(
    path: Path | str,
    *,
    limit: int | None = None,
    expected: Expected = "any",
    dir_fd: int | None = None,
) -> tuple[bytes, bool, FileId]:
    """The first `limit` bytes (None: all) of the regular file exactly at `path`, whether it
    holds more, and which file it was (from the descriptor).

    Raises:
        PathChanged: a link on the way, or not the file `expected`.
        IsADirectoryError, NotARegularFile (a FIFO, a device: never read), OSError.
    """
    fd = open_for_reading(path, dir_fd=dir_fd)
    try:
        status = os.fstat(fd)
        check_regular(Path(path), status.st_mode)
        found = FileId.of(status)
        check_expected(path, found, expected)
        data, more = read_descriptor(fd, limit)
    finally:
        os.close(fd)
    return data, more, found


def open_for_reading(path: Path | str, *, dir_fd: int | None = None) -> int:
    """`open_exact` for reading what someone named: non-blocking (a FIFO cannot hold the open),
    and a socket (which cannot be opened at all) said to be one.

    Raises:
        NotARegularFile: a socket. PathChanged, OSError.
    """
    try:
        return open_exact(path, READ_FLAGS, dir_fd=dir_fd)
    except OSError as error:
        if error.errno != errno.ENXIO:
            raise
        kind = os.stat(path, dir_fd=dir_fd, follow_symlinks=False).st_mode
        check_regular(Path(path), kind)
        raise


def read_descriptor(fd: int, limit: int | None) -> tuple[bytes, bool]:
    """At most `limit` bytes from `fd` (None: to the end), and whether there was more."""
    wanted = None if limit is None else limit + 1
    chunks: list[bytes] = []
    size = 0
    while wanted is None or size < wanted:
        chunk = os.read(fd, _CHUNK if wanted is None else min(_CHUNK, wanted - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    data = b"".join(chunks)
    if limit is not None and len(data) > limit:
        return data[:limit], True
    return data, False


def replace_exact(path: Path | str, data: bytes, *, make_parents: bool = True) -> None:
    """Give the file exactly at `path` the content `data`: its directory is opened exactly (made
    when missing and `make_parents`), the bytes go to a temporary file created there, which is
    then renamed over the name. A new file gets the default mode (umask applies); an existing
    one keeps its permission bits.

    Raises:
        PathChanged, IsADirectoryError, NotADirectoryError, OSError.
    """
    target = Path(path)
    with opened_directory(target.parent, create=make_parents) as directory:
        replace_in(directory, target.name, data, path=target)


def replace_in(
    directory: int, name: str, data: bytes, *, mode: int | None = None, path: Path | None = None
) -> None:
    """`replace_exact` for `name` in the directory held by `directory`; `mode`: the permission
    bits to give it (default: the existing file's, or the default for a new one)."""
    shown = path or Path(name)
    try:
        existing: os.stat_result | None = os.stat(name, dir_fd=directory, follow_symlinks=False)
    except FileNotFoundError:
        existing = None
    if existing is not None and stat.S_ISDIR(existing.st_mode):
        raise IsADirectoryError(errno.EISDIR, "Is a directory", str(shown))
    if mode is None and existing is not None and stat.S_ISREG(existing.st_mode):
        mode = stat.S_IMODE(existing.st_mode)
    temporary = _temporary_name(name)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC
    fd = os.open(temporary, flags, 0o666 if mode is None else 0o600, dir_fd=directory)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            if mode is not None:
                os.fchmod(fd, mode)
        finally:
            os.close(fd)
        os.rename(temporary, name, src_dir_fd=directory, dst_dir_fd=directory)
    except BaseException:
        with suppress(OSError):
            os.unlink(temporary, dir_fd=directory)
        raise


def _temporary_name(name: str) -> str:
    stem = name[:200]  # room for the rest within NAME_MAX (255)
    return f".{stem}.{os.urandom(4).hex()}.earshot-tmp"


def directory_chain(root: Path | str, path: Path | str) -> tuple[tuple[int, int, int, int], ...]:
    """For each directory from `root` down to `path` (inside it; opened exactly, no link
    followed), its device, inode, and change and modification times (ns). Two equal chains mean
    no entry on the way was replaced in between, as far as the file system's timestamps tell
    (Linux 6.13 and later give a timestamp fine enough to see any change made after it was last
    read; older kernels tick every few milliseconds).

    Raises:
        PathChanged, OSError, ValueError (`path` is not inside `root`).
    """
    below = Path(path).relative_to(root).parts
    chain: list[tuple[int, int, int, int]] = []
    current = open_directory(root)
    try:
        chain.append(_chain_link(current))
        for name in below:
            following = _step(current, name, _DIRECTORY_FLAGS, 0, path=os.fspath(path))
            os.close(current)
            current = following
            chain.append(_chain_link(current))
    finally:
        os.close(current)
    return tuple(chain)


def _chain_link(fd: int) -> tuple[int, int, int, int]:
    status = os.fstat(fd)
    return (status.st_dev, status.st_ino, status.st_ctime_ns, status.st_mtime_ns)


# ---------------------------------------------------------------------------------- openat2

_openat2_state: bool | None = None
_syscall: tuple[Any, Any, Any] | None = None


def use_openat2(enabled: bool | None) -> None:
    """Force the `openat2` path on or off (None: probe again). For the tests of the walk."""
    global _openat2_state
    _openat2_state = enabled


def _openat2_works() -> bool:
    global _openat2_state
    if _openat2_state is None:
        _openat2_state = _probe_openat2()
    return _openat2_state


def _probe_openat2() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        fd = _openat2(_AT_FDCWD, "/", _DIRECTORY_FLAGS & ~_NOFOLLOW, 0, _RESOLVE_NO_SYMLINKS)
    except OSError:
        return False  # ENOSYS (before Linux 5.6), EPERM (a seccomp filter), ...
    os.close(fd)
    return True


def _openat2(dir_fd: int, path: str, flags: int, mode: int, resolve: int) -> int:
    call, how_type, ctypes = _syscall or _load_syscall()
    how = how_type(flags | _CLOEXEC, mode if flags & os.O_CREAT else 0, resolve)
    fd = call(
        ctypes.c_long(_OPENAT2),
        ctypes.c_int(dir_fd),
        ctypes.c_char_p(os.fsencode(path)),
        ctypes.byref(how),
        ctypes.c_size_t(ctypes.sizeof(how)),
    )
    if fd < 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code), path)
    return int(fd)


def _load_syscall() -> tuple[Any, Any, Any]:
    global _syscall
    import ctypes  # only where openat2 is used (a few ms to import)

    class OpenHow(ctypes.Structure):
        """`struct open_how` (linux/openat2.h)."""

        _fields_ = [
            ("flags", ctypes.c_uint64),
            ("mode", ctypes.c_uint64),
            ("resolve", ctypes.c_uint64),
        ]

    call = ctypes.CDLL(None, use_errno=True).syscall
    call.restype = ctypes.c_long
    _syscall = (call, OpenHow, ctypes)
    return _syscall
