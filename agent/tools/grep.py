"""`grep`: search file contents with ripgrep (which skips what .gitignore and .ignore exclude)."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from agent.backends import Location, ToolUi
from agent.tools.base import PermissionRequest, ToolContext, ToolError, ToolOutput, define_tool
from agent.tools.results import capped, display_path, short
from agent.tools.ripgrep import ripgrep, run_lines
from agent.tools.services import deny_glob_args, visible_filter

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
    path = ctx.resolve(params.path or ".")
    if not path.exists():
        raise ToolError(f"Path not found: {path}")
    args = [
        rg,
        "--no-config",
        "--color=never",
        "--hidden",
        "--no-require-git",
        "--glob=!.git",
        *deny_glob_args(ctx),
        "--sort=path",
        f"--max-columns={MAX_COLUMNS}",
        "--max-columns-preview",
    ]
    if params.case_insensitive:
        args.append("--ignore-case")
    if params.glob and "/" not in params.glob:
        # A file type, unlike --glob, does not override the ignore files.
        args += [f"--type-add=picked:{params.glob}", "--type=picked"]
    elif params.glob:
        args.append(f"--glob={params.glob}")
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
    args += ["--regexp", params.pattern]
    if path != ctx.cwd:  # rg then prints paths relative to the cwd, without a `./` prefix
        args += ["--", display_path(path, ctx)]
    captured = await run_lines(args, cwd=ctx.cwd, max_lines=params.max_results)
    if captured.returncode not in (0, 1, None) and not captured.lines:
        raise ToolError(f"ripgrep failed: {captured.stderr or f'exit code {captured.returncode}'}")
    lines = _visible_lines(captured.lines, params.output_mode, ctx)
    if not lines:
        return ToolOutput.text("No matches found.")
    text = "\n".join(lines)
    if captured.truncated:
        text += (
            f"\n\n[Results cut at {params.max_results} lines. Narrow the pattern, path or glob, "
            "or raise max_results.]"
        )
    if captured.returncode == 2 and captured.stderr:
        text += f"\n\n[Some paths could not be searched: {short(captured.stderr, 500)}]"
    return ToolOutput.text(text)


def _visible_lines(lines: list[str], mode: OutputMode, ctx: ToolContext) -> list[str]:
    """rg's lines as shown (`path:line:text`, `path-line-text`, `path:count`, `path`), without
    those of files a `Read` deny rule covers: the gate only saw the directory searched."""
    visible = visible_filter(ctx)
    shown: list[str] = []
    for line in lines:
        if mode == "files_with_matches":
            if visible(ctx.cwd / line):
                shown.append(line)
            continue
        name, nul, rest = line.partition("\0")
        if not nul:  # a `--` between context groups
            if shown and shown[-1] != "--":
                shown.append(line)
            continue
        if not visible(ctx.cwd / name):
            continue
        numbered = _NUMBERED.match(rest)
        shown.append(f"{name}{numbered.group(1) if numbered else ':'}{rest}")
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
