"""Running ripgrep (or another line-oriented program) for the search tools."""

from __future__ import annotations

import shutil
import subprocess
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
