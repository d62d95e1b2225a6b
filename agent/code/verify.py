"""The verify loop: after a batch of edits, run the configured checks on what the batch touched.

Settings `verify`: a list of `{"files": "<glob>", "command": "...", "timeout": <seconds>}`
(`ruff check {files}`, `tsc --noEmit`, `cargo check`). Off unless configured; a project's own
settings file may propose commands only once the user trusts the workspace (`agent.settings.trust`):
they run programs. `run_verify` takes the files a batch of edits touched, picks the rules whose
glob matches any of them (gitignore-style: `*.py` matches at any depth, `src/**/*.ts` under
`src/`), and runs each distinct command once, with `{files}` replaced by the matching files,
each shell-quoted (a file the model named `$(rm -rf ~).py` is an argument, not a command).

How a command runs is the caller's: `run_verify` takes a `CommandRunner`. The composition root
passes the sandboxed, permission-gated path the `bash` tool uses (so a verify command is
confined like any command); `run_locally` is the plain local runner (tests, print mode). A
failure's output is trimmed to what concerns the touched files (`trim_output`) and returned in
the report, whose `text()` is appended to the edit's tool result so the model sees it in the
same step.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from agent.settings import DEFAULT_VERIFY_TIMEOUT, VerifyRule

DEFAULT_TIMEOUT: Final = DEFAULT_VERIFY_TIMEOUT
MAX_LINES: Final = 40
MAX_LINE_CHARS: Final = 300
FOLLOWING_LINES: Final = 4
"""Lines kept after a line that names a touched file (a code frame, a note)."""
CAPTURE_LIMIT: Final = 1_000_000
"""Output bytes a local run keeps (the trimmed part is what matters)."""


@dataclass(frozen=True, slots=True)
class CommandResult:
    """What running one command gave."""

    exit_code: int | None
    """None: it did not finish (timed out, or was stopped)."""
    output: str
    """stdout and stderr, interleaved as the command wrote them."""
    timed_out: bool = False


CommandRunner = Callable[[str, float], Awaitable[CommandResult]]
"""Runs a shell command with a timeout in seconds, in the workspace root."""


@dataclass(frozen=True, slots=True)
class VerifyFailure:
    command: str
    exit_code: int | None
    timed_out: bool
    output: str
    """Trimmed to the lines that concern the touched files."""


@dataclass(frozen=True, slots=True)
class VerifyReport:
    ran: tuple[str, ...] = ()
    """The command lines run, in order."""
    failures: tuple[VerifyFailure, ...] = ()

    def text(self) -> str | None:
        """What to append to the edit's tool result: the failures, or None when all passed (or
        nothing ran): a passing check adds nothing for the model to read."""
        if not self.failures:
            return None
        blocks: list[str] = []
        for failure in self.failures:
            if failure.timed_out:
                status = "did not finish in time"
            else:
                status = f"failed (exit code {failure.exit_code})"
            output = f"\n{failure.output}" if failure.output else ""
            blocks.append(f"Verify `{failure.command}` {status}:{output}")
        return "\n\n".join(blocks)


def matching(
    rules: Sequence[VerifyRule], touched: Sequence[Path], root: Path
) -> list[tuple[VerifyRule, list[str]]]:
    """The rules that match any touched file, each with those files (relative POSIX paths,
    in the order touched; files outside `root` match nothing)."""
    from pathspec import GitIgnoreSpec

    relative: list[str] = []
    for path in touched:
        try:
            name = path.relative_to(root).as_posix()
        except ValueError:
            continue
        if name not in relative:
            relative.append(name)
    found: list[tuple[VerifyRule, list[str]]] = []
    for rule in rules:
        spec = GitIgnoreSpec.from_lines([rule.files])
        files = [name for name in relative if spec.match_file(name)]
        if files:
            found.append((rule, files))
    return found


def command_line(rule: VerifyRule, files: Sequence[str]) -> str:
    """The rule's command with `{files}` replaced by `files`, each shell-quoted."""
    return rule.command.replace("{files}", " ".join(shlex.quote(name) for name in files))


async def run_verify(
    rules: Sequence[VerifyRule], touched: Sequence[Path], *, root: Path, run: CommandRunner
) -> VerifyReport:
    """Run the checks for a batch of edits (see the module docstring), one after the other."""
    ran: list[str] = []
    failures: list[VerifyFailure] = []
    for rule, files in matching(rules, touched, root):
        command = command_line(rule, files)
        if command in ran:
            continue
        ran.append(command)
        result = await run(command, rule.timeout)
        if result.exit_code == 0 and not result.timed_out:
            continue
        failures.append(
            VerifyFailure(
                command=command,
                exit_code=result.exit_code,
                timed_out=result.timed_out,
                output=trim_output(result.output, files),
            )
        )
    return VerifyReport(ran=tuple(ran), failures=tuple(failures))


def trim_output(output: str, files: Sequence[str], *, max_lines: int = MAX_LINES) -> str:
    """The lines of `output` that concern `files`: each line naming one (as given, or by its
    file name) with the few lines after it, plus the last line (a summary such as "Found 3
    errors."). Output that names none of them keeps its first and last lines. At most
    `max_lines` lines, each at most `MAX_LINE_CHARS` characters."""
    lines = [line.rstrip() for line in output.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    if not lines:
        return ""
    names = set(files) | {Path(name).name for name in files}
    keep: list[int] = []
    following = 0
    for number, line in enumerate(lines):
        if any(name in line for name in names):
            keep.append(number)
            following = FOLLOWING_LINES
        elif following and line.strip():
            keep.append(number)
            following -= 1
        else:
            following = 0
    if not keep:
        head = max_lines * 2 // 3
        keep = list(range(min(head, len(lines))))
        keep += range(max(len(lines) - (max_lines - head), len(keep)), len(lines))
    elif keep[-1] != len(lines) - 1:
        keep.append(len(lines) - 1)
    omitted = 0
    if len(keep) > max_lines:
        omitted = len(keep) - max_lines
        keep = [*keep[: max_lines - 1], keep[-1]]
    shown: list[str] = []
    previous = -1
    for index, number in enumerate(keep):
        if omitted and index == len(keep) - 1:
            shown.append(f"… ({omitted} more lines)")
        elif previous >= 0 and number > previous + 1:
            shown.append("…")
        line = lines[number]
        shown.append(line if len(line) <= MAX_LINE_CHARS else line[: MAX_LINE_CHARS - 1] + "…")
        previous = number
    return "\n".join(shown)


async def run_locally(command: str, timeout: float, *, cwd: Path) -> CommandResult:
    """Run `command` with bash in `cwd`, unconfined, with earshot's environment minus the
    provider keys; on timeout its whole process group is killed."""
    import anyio

    from agent.tool_env import tool_environment

    process = await anyio.open_process(
        ["bash", "-c", command],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        cwd=cwd,
        env=tool_environment(),
        start_new_session=True,
    )
    chunks: list[bytes] = []
    size = 0
    timed_out = False
    try:
        with anyio.move_on_after(timeout) as scope:
            assert process.stdout is not None
            async for chunk in process.stdout:
                if size < CAPTURE_LIMIT:
                    chunks.append(chunk)
                    size += len(chunk)
            await process.wait()
        timed_out = scope.cancelled_caught
    finally:
        with anyio.CancelScope(shield=True):
            if process.returncode is None:
                try:
                    os.killpg(process.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    process.kill()
                await process.wait()
            await process.aclose()
    output = b"".join(chunks).decode("utf-8", "replace")
    return CommandResult(
        exit_code=None if timed_out else process.returncode, output=output, timed_out=timed_out
    )


def local_runner(cwd: Path) -> CommandRunner:
    """`run_locally` in `cwd`, as a `CommandRunner`."""

    async def run(command: str, timeout: float) -> CommandResult:
        return await run_locally(command, timeout, cwd=cwd)

    return run
