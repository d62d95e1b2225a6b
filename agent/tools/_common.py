"""Helpers the built-in tools share: result caps, path display, routed file access, diffs, and
running ripgrep."""

from __future__ import annotations

import difflib
import hashlib
import shutil
import stat
import subprocess
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar, cast

import anyio

from agent.local import LocalFiles
from agent.regular_files import check_regular, read_regular
from agent.tools.base import ToolContext, ToolError, ToolOutput
from providers.types import TextPart

MAX_RESULT_CHARS = 30_000
"""No tool result enters history longer than this; the cut is stated in the result."""
MAX_TEXT_FILE_BYTES = 20_000_000
"""Larger text files are not loaded whole (read, edit, write refuse and point at bash)."""
PREVIEW_FILE_BYTES = 2_000_000
"""Largest file `ui()` reads synchronously to show a proposed diff."""

InputT = TypeVar("InputT")

_local_files = LocalFiles()


def cap_text(text: str, limit: int = MAX_RESULT_CHARS) -> str:
    """`text` cut to `limit` characters (keeping the start), saying how much was cut."""
    if len(text) <= limit:
        return text
    omitted = len(text) - limit
    return (
        text[:limit]
        + f"\n\n[Result truncated: {omitted} more characters omitted (results are capped at "
        f"{limit} characters). Narrow the request to see the rest.]"
    )


def capped(
    execute: Callable[[InputT, ToolContext], Awaitable[ToolOutput]],
) -> Callable[[InputT, ToolContext], Awaitable[ToolOutput]]:
    """Wrap a tool's `execute` so every text part of its result is capped."""

    async def run(params: InputT, ctx: ToolContext) -> ToolOutput:
        output = await execute(params, ctx)
        if all(
            not isinstance(part, TextPart) or len(part.text) <= MAX_RESULT_CHARS
            for part in output.content
        ):
            return output
        content = [
            TextPart(text=cap_text(part.text)) if isinstance(part, TextPart) else part
            for part in output.content
        ]
        return ToolOutput(
            content=content, is_error=output.is_error, ui=output.ui, raw_output=output.raw_output
        )

    return run


def inside(path: Path, roots: Sequence[Path]) -> bool:
    return any(path == root or root in path.parents for root in roots)


def display_path(path: Path, ctx: ToolContext) -> str:
    """`path` relative to the cwd when inside it (shorter titles and results), else absolute."""
    if path == ctx.cwd:
        return "."
    if ctx.cwd in path.parents:
        return str(path.relative_to(ctx.cwd))
    return str(path)


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).hexdigest()


def short(text: str, limit: int = 80) -> str:
    """One line of at most `limit` characters, for titles."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "\u2026"


async def read_text(ctx: ToolContext, path: Path) -> str:
    """A text file's content. Inside the roots it goes through the session's file backend (an
    editor's unsaved buffer counts); elsewhere it is read from disk.

    Raises:
        ToolError: missing, a directory, binary, unreadable or too large.
    """
    try:
        info = path.stat()
        size = info.st_size
        if not stat.S_ISDIR(info.st_mode):
            # A FIFO or a device would block or never end (`/dev/zero`): never opened.
            check_regular(path, info.st_mode)
    except FileNotFoundError:
        size = None
    except OSError as error:
        raise ToolError(f"Cannot read {path}: {error.strerror or error}") from error
    if size is not None and size > MAX_TEXT_FILE_BYTES:
        raise ToolError(
            f"{path} is {size} bytes, too large to load whole. Use bash (e.g. `sed -n '1,200p'`, "
            "`head`, `tail`) or grep to look at parts of it."
        )
    if path.is_dir():
        raise ToolError(f"{path} is a directory, not a file. Use the ls tool to list it.")
    if size is not None and looks_binary(path):
        raise ToolError(f"{path} is a binary file; it cannot be shown as text.")
    files = ctx.files if inside(path, ctx.roots) else _local_files
    try:
        return await files.read_text(path)
    except FileNotFoundError as error:
        raise ToolError(f"File not found: {path}") from error
    except IsADirectoryError as error:
        raise ToolError(
            f"{path} is a directory, not a file. Use the ls tool to list it."
        ) from error
    except UnicodeDecodeError as error:
        raise ToolError(f"{path} is not UTF-8 text (binary?); it cannot be shown.") from error
    except PermissionError as error:
        raise ToolError(f"Permission denied reading {path}") from error


async def write_text(ctx: ToolContext, path: Path, content: str) -> None:
    """Write through the session's file backend inside the roots, to disk elsewhere."""
    files = ctx.files if inside(path, ctx.roots) else _local_files
    try:
        await files.write_text(path, content)
    except IsADirectoryError as error:
        raise ToolError(f"{path} is a directory, not a file.") from error
    except PermissionError as error:
        raise ToolError(f"Permission denied writing {path}") from error
    except NotADirectoryError as error:
        raise ToolError(f"Cannot create {path}: a parent is a file, not a directory") from error


def looks_binary(path: Path) -> bool:
    """NUL bytes in the first 8 KiB (how git and grep decide)."""
    try:
        head, _ = read_regular(path, 8192)
    except OSError:
        return False
    return b"\x00" in head


def preview_text(path: Path) -> str | None:
    """The file as on disk, for `ui()` previews (synchronous, small files only); None when it
    cannot be shown."""
    try:
        data, more = read_regular(path, PREVIEW_FILE_BYTES)
        return None if more else data.decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def require_fresh_read(ctx: ToolContext, path: Path, current: str, *, action: str) -> None:
    """Refuse to change a file the model has not read this session, or that changed since.

    Raises:
        ToolError: never read, or changed since it was read.
    """
    seen = ctx.reads.seen.get(path)
    if seen is None:
        raise ToolError(
            f"You must read {path} with the read tool before you {action} it "
            "(so the change is based on its actual content)."
        )
    if seen != text_hash(current):
        raise ToolError(
            f"{path} has changed since you last read it (by the user, a formatter or another "
            f"tool). Read it again before you {action} it."
        )


def unified_diff(old: str, new: str, label: str, *, context: int = 3) -> str:
    lines = difflib.unified_diff(
        old.splitlines(keepends=True),
        new.splitlines(keepends=True),
        fromfile=f"a/{label}",
        tofile=f"b/{label}",
        n=context,
    )
    return "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    )


# ------------------------------------------------------------------------ Read deny rules

READ_DENIED = "read_denied"
"""`ctx.services[READ_DENIED]`: `Callable[[Path], bool]`, whether reading a path is refused (a
`Read` deny rule, or a secret no rule names: the session's permission gate). Without it nothing
is hidden."""
RECHECK_PERMISSION = "recheck_permission"
"""`ctx.services[RECHECK_PERMISSION]`: `async (PermissionRequest) -> bool`, the permission gate
applied to a follow-up request of the running call (a fetch's redirect to another host, a host
that resolved to a local address), asking the user if the policy says so. Set per call by the
executor; absent (a tool run outside a session), a tool must treat the follow-up as refused."""
READ_DENY_GLOBS = "read_deny_globs"
"""`ctx.services[READ_DENY_GLOBS]`: `Callable[[], tuple[str, ...]]`, name globs ripgrep can skip
(`--glob=!<glob>`) before the results are filtered."""


def visible_filter(ctx: ToolContext) -> Callable[[Path], bool]:
    """For search results: False for a path a `Read` deny rule covers, which a result must not
    show (not its content, not that it exists). Remembers its answers for one call."""
    denied = cast("Callable[[Path], bool] | None", ctx.services.get(READ_DENIED))
    if denied is None:
        return lambda path: True
    answers: dict[Path, bool] = {}

    def visible(path: Path) -> bool:
        answer = answers.get(path)
        if answer is None:
            answer = answers[path] = not denied(path)
        return answer

    return visible


def deny_glob_args(ctx: ToolContext) -> list[str]:
    """ripgrep arguments excluding the denied name globs."""
    globs = cast("Callable[[], tuple[str, ...]] | None", ctx.services.get(READ_DENY_GLOBS))
    return [f"--glob=!{glob}" for glob in (globs() if globs is not None else ())]


# ------------------------------------------------------------------------------ ripgrep


@dataclass(frozen=True, slots=True)
class Captured:
    lines: list[str]
    truncated: bool
    """More lines existed than were kept (the process was stopped early)."""
    returncode: int | None
    stderr: str


RG_TIMEOUT_SECONDS = 60.0


def ripgrep() -> str:
    """The `rg` executable.

    Raises:
        ToolError: ripgrep is not installed.
    """
    found = shutil.which("rg")
    if found is None:
        raise ToolError(
            "ripgrep (`rg`) is not installed, so this tool cannot run. Install it "
            "(`apt install ripgrep`, `brew install ripgrep`, `winget install BurntSushi.ripgrep`) "
            "or use bash with grep/find meanwhile."
        )
    return found


async def run_lines(
    args: Sequence[str], *, cwd: Path, max_lines: int, timeout: float = RG_TIMEOUT_SECONDS
) -> Captured:
    """Run a program (not through a shell) and keep its first `max_lines` stdout lines; it is
    stopped as soon as more arrive, so a huge result costs nothing.

    Raises:
        ToolError: the program could not be started or timed out.
    """
    lines: list[str] = []
    truncated = False
    stderr_chunks: list[bytes] = []
    try:
        process = await anyio.open_process(
            list(args),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
        )
    except OSError as error:
        raise ToolError(f"Cannot run {args[0]}: {error}") from error
    try:
        with anyio.fail_after(timeout):
            async with anyio.create_task_group() as group:

                async def collect_stderr() -> None:
                    assert process.stderr is not None
                    async for chunk in process.stderr:
                        if sum(map(len, stderr_chunks)) < 10_000:
                            stderr_chunks.append(chunk)

                group.start_soon(collect_stderr)
                assert process.stdout is not None
                pending = b""
                async for chunk in process.stdout:
                    pending += chunk
                    *complete, pending = pending.split(b"\n")
                    for raw in complete:
                        if len(lines) >= max_lines:
                            truncated = True
                            break
                        lines.append(raw.decode("utf-8", errors="replace"))
                    if truncated:
                        process.kill()
                        break
                if pending and not truncated:
                    if len(lines) >= max_lines:
                        truncated = True
                    else:
                        lines.append(pending.decode("utf-8", errors="replace"))
                await process.wait()
    except TimeoutError as error:
        raise ToolError(
            f"{Path(args[0]).name} took longer than {timeout:g}s and was stopped."
        ) from error
    finally:
        with anyio.CancelScope(shield=True):
            if process.returncode is None:
                process.kill()
            await process.aclose()
    return Captured(
        lines=lines,
        truncated=truncated,
        returncode=None if truncated else process.returncode,
        stderr=b"".join(stderr_chunks).decode("utf-8", errors="replace").strip(),
    )
