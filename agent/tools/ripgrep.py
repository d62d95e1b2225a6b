"""Running ripgrep (or another line-oriented program) for the search tools."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio

from agent.tools.base import ToolError


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


def held_path(fd: int) -> str:
    """A path naming exactly what the descriptor `fd` holds, in a child process started while
    `fd` is open (Linux: `/proc/self/fd/N`, resolved in the child, which has the same table
    until it runs the program; a directory there also works as its `cwd`). Elsewhere (macOS)
    `/dev/fd/N`, for a file the child inherits (`pass_fds`)."""
    return f"/proc/self/fd/{fd}" if _PROC_FD else f"/dev/fd/{fd}"


def held_cwd(fd: int, path: Path) -> Path:
    """The `cwd` for a child that must work in exactly the directory `fd` holds (`path` is
    where it was decided to be). Linux: the descriptor itself. Elsewhere the path, named again
    (the one step not race-free on macOS: it has no way to start a child in a directory held
    open)."""
    return Path(held_path(fd)) if _PROC_FD else path


_PROC_FD = sys.platform.startswith("linux") and os.path.isdir("/proc/self/fd")


async def run_lines(
    args: Sequence[str],
    *,
    cwd: Path,
    max_lines: int,
    timeout: float = RG_TIMEOUT_SECONDS,
    pass_fds: Sequence[int] = (),
) -> Captured:
    """Run a program (not through a shell) and keep its first `max_lines` stdout lines; it is
    stopped as soon as more arrive, so a huge result costs nothing. `pass_fds`: descriptors the
    program inherits (files named to it by `held_path`).

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
            pass_fds=pass_fds,
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
