"""`grep`: search file contents with ripgrep (which skips what .gitignore and .ignore exclude).

In two passes, so that only files the decision covers are ever read: rg first lists the
matching files under the directory decided on (held open: its `cwd`); each is then opened
beneath that directory with no link followed, checked against the `Read` rules, and searched
by rg through its descriptor. A directory swapped for a link while rg walks the tree can only
add names to the first pass, never content to the result.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Generator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from agent.backends import Location, ToolUi
from agent.files import READ_FLAGS, FileId, PathChanged, open_exact, opened_place
from agent.tools.base import PermissionRequest, ToolContext, ToolError, ToolOutput, define_tool
from agent.tools.results import capped, display_path, short
from agent.tools.ripgrep import Captured, held_cwd, held_path, ripgrep, run_lines
from agent.tools.services import deny_glob_args, visible_filter
from agent.tools.text_files import changed

DEFAULT_MAX_RESULTS = 200
MAX_RESULTS = 2000
MAX_COLUMNS = 400

OutputMode = Literal["content", "files_with_matches", "count"]


class GrepInput(BaseModel):
    model_config = ConfigDict(defer_build=True)

    pattern: str = Field(
        description="A regular expression (Rust regex syntax, like ripgrep: escape literal "
        "braces, parentheses and dots, e.g. `interface\\{\\}`, `fn\\(`)."
    )
    path: str | None = Field(
        default=None,
        description="File or directory to search (default: the working directory).",
    )
    glob: str | None = Field(
        default=None,
        description="Only search files matching this glob, e.g. `*.py`, `src/**/*.ts`, "
        "`*.{js,jsx}`.",
    )
    case_insensitive: bool = Field(default=False, description="Ignore case.")
    output_mode: OutputMode = Field(
        default="content",
        description="`content`: matching lines as path:line:text; `files_with_matches`: only the "
        "paths of files that match; `count`: path:number of matching lines.",
    )
    context: int = Field(
        default=0,
        ge=0,
        le=10,
        description="Lines of context before and after each match (content mode only).",
    )
    max_results: int = Field(
        default=DEFAULT_MAX_RESULTS,
        ge=1,
        le=MAX_RESULTS,
        description="At most this many output lines are returned.",
    )


DESCRIPTION = """Search file contents with a regular expression (ripgrep).

- Searches the working directory (or `path`) recursively, skipping files that .gitignore and \
.ignore exclude, and the .git directory.
- `glob` restricts which files are searched; `output_mode` picks matching lines with line \
numbers (default), file paths only, or per-file counts.
- Use this instead of running grep or rg through bash."""


def _permission(params: GrepInput, ctx: ToolContext) -> PermissionRequest:
    path = ctx.resolve(params.path or ".")
    return PermissionRequest(
        rule_tool="Read",
        description=f"Search {display_path(path, ctx)} for `{params.pattern}`",
        paths=(path,),
    )


def _ui(params: GrepInput, ctx: ToolContext) -> ToolUi:
    path = ctx.resolve(params.path or ".")
    where = f" in {display_path(path, ctx)}" if params.path else ""
    glob = f" ({params.glob})" if params.glob else ""
    return ToolUi(
        title=f"Search `{short(params.pattern, 60)}`{where}{glob}",
        kind="search",
        locations=(Location(path=str(path)),),
    )


async def _execute(params: GrepInput, ctx: ToolContext) -> ToolOutput:
    rg = ripgrep()
    path = ctx.decided_path(params.path or ".").path
    try:
        with opened_place(path) as (held, is_dir):
            if is_dir:
                listed = await _matching_files(rg, params, ctx, path, held)
                names, more = listed.lines, listed.truncated
            else:
                names, more = [""], False
            with _files_beneath(ctx, path, held, names) as files:
                lines, stderr, cut = await _search(rg, params, files)
    except FileNotFoundError as error:
        raise ToolError(f"Path not found: {path}") from error
    except PathChanged as error:
        raise changed(path, error, "searched") from error
    if not lines:
        return ToolOutput.text("No matches found.")
    text = "\n".join(lines)
    if cut or (more and params.output_mode != "content"):
        text += (
            f"\n\n[Results cut at {params.max_results} lines. Narrow the pattern, path or glob, "
            "or raise max_results.]"
        )
    if stderr:
        text += f"\n\n[Some paths could not be searched: {short(stderr, 500)}]"
    return ToolOutput.text(text)


def _filters(params: GrepInput, ctx: ToolContext) -> list[str]:
    """What selects files and lines, the same in both passes."""
    args = ["--no-config", "--hidden", "--no-require-git", "--glob=!.git", *deny_glob_args(ctx)]
    if params.case_insensitive:
        args.append("--ignore-case")
    if params.glob and "/" not in params.glob:
        # A file type, unlike --glob, does not override the ignore files.
        args += [f"--type-add=picked:{params.glob}", "--type=picked"]
    elif params.glob:
        args.append(f"--glob={params.glob}")
    return args


async def _matching_files(
    rg: str, params: GrepInput, ctx: ToolContext, path: Path, held: int
) -> Captured:
    """The first pass: which files under the directory held match (names relative to it, in
    path order). rg walks the tree by name, and a directory swapped for a link meanwhile could
    lead it anywhere: only names come from this pass, never content."""
    args = [rg, *_filters(params, ctx), "--sort=path", "--files-with-matches"]
    args += ["--regexp", params.pattern]
    captured = await run_lines(args, cwd=held_cwd(held, path), max_lines=params.max_results)
    if captured.returncode not in (0, 1, None) and not captured.lines:
        raise ToolError(f"ripgrep failed: {captured.stderr or f'exit code {captured.returncode}'}")
    return captured


@contextmanager
def _files_beneath(
    ctx: ToolContext, path: Path, held: int, names: list[str]
) -> Generator[list[tuple[int, str]]]:
    """Each listed file opened beneath the directory held, following no link, and kept only if
    a regular file the `Read` rules let the model see (a hard link counts as every name it has):
    (descriptor, name shown). `names` [""]: the held file itself."""
    visible = visible_filter(ctx)
    denied = ctx.services.read_denied
    files: list[tuple[int, str]] = []
    try:
        for name in names:
            real = path / name if name else path
            if name and not visible(real):
                continue
            try:
                fd = open_exact(name, READ_FLAGS, dir_fd=held) if name else os.dup(held)
            except (OSError, ValueError):
                continue  # gone, or changed since it was listed: not searched
            files.append((fd, display_path(real, ctx)))
            status = os.fstat(fd)
            file = FileId.of(status)
            if not stat.S_ISREG(status.st_mode) or (file.linked and denied(real, file)):
                os.close(files.pop()[0])
        yield files
    finally:
        for fd, _ in files:
            os.close(fd)


_BATCH = 256
"""Files searched by one rg process (each an open descriptor it inherits)."""


async def _search(
    rg: str, params: GrepInput, files: list[tuple[int, str]]
) -> tuple[list[str], str, bool]:
    """The second pass: rg searches exactly the files held open (named by descriptor), one
    at a time in order; the lines as shown, rg's complaints, and whether the output was cut."""
    lines: list[str] = []
    problems: list[str] = []
    for start in range(0, len(files), _BATCH):
        batch = files[start : start + _BATCH]
        names = {held_path(fd): shown for fd, shown in batch}
        budget = params.max_results - len(lines)
        captured = await run_lines(
            [rg, *_output_args(params), "--", *names],
            cwd=Path("/"),
            max_lines=budget,
            pass_fds=[fd for fd, _ in batch],
        )
        if captured.returncode not in (0, 1, None) and not captured.lines:
            raise ToolError(
                f"ripgrep failed: {captured.stderr or f'exit code {captured.returncode}'}"
            )
        if captured.returncode == 2 and captured.stderr:
            problems.append(captured.stderr)
        if lines and params.output_mode == "content" and params.context and captured.lines:
            lines.append("--")  # rg separates context groups within one run only
        lines.extend(_renamed(captured.lines, params.output_mode, names))
        if captured.truncated:
            return lines, "\n".join(problems), True
    return lines, "\n".join(problems), False


def _output_args(params: GrepInput) -> list[str]:
    args = [
        "--no-config",
        "--color=never",
        "--threads=1",  # in the order given: the files' path order
        f"--max-columns={MAX_COLUMNS}",
        "--max-columns-preview",
    ]
    if params.case_insensitive:
        args.append("--ignore-case")
    match params.output_mode:
        case "content":
            # --null: a NUL after the path, so a path with `:` in it still parses
            args += ["--line-number", "--no-heading", "--with-filename", "--null"]
            if params.context:
                args.append(f"--context={params.context}")
        case "files_with_matches":
            args.append("--files-with-matches")
        case "count":
            args += ["--count", "--with-filename", "--null"]
    return [*args, "--regexp", params.pattern]


def _renamed(lines: list[str], mode: OutputMode, names: dict[str, str]) -> list[str]:
    """rg's lines (`path:line:text`, `path-line-text`, `path:count`, `path`) with each held
    file's descriptor path replaced by the name shown."""
    shown: list[str] = []
    for line in lines:
        if mode == "files_with_matches":
            if line in names:
                shown.append(names[line])
            continue
        name, nul, rest = line.partition("\0")
        if not nul:  # a `--` between context groups
            if shown and shown[-1] != "--":
                shown.append(line)
            continue
        if name not in names:
            continue
        numbered = _NUMBERED.match(rest)
        shown.append(f"{names[name]}{numbered.group(1) if numbered else ':'}{rest}")
    while shown and shown[-1] == "--":
        shown.pop()
    return shown


_NUMBERED = re.compile(r"[0-9]+([:-])")


grep_tool = define_tool(
    name="grep",
    description=DESCRIPTION,
    input_model=GrepInput,
    execute=capped(_execute),
    ui=_ui,
    read_only=True,
    permission=_permission,
)
