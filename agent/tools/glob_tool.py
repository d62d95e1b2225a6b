"""`glob`: find files by name pattern, newest first (ripgrep's file walk, so ignore files count)."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from agent.backends import Location, ToolUi
from agent.files import PathChanged, exists_beneath, opened_directory
from agent.tools.base import PermissionRequest, ToolContext, ToolError, ToolOutput, define_tool
from agent.tools.results import capped, display_path
from agent.tools.ripgrep import held_cwd, ripgrep, run_lines
from agent.tools.services import deny_glob_args, visible_filter
from agent.tools.text_files import changed

DEFAULT_MAX_RESULTS = 200
MAX_RESULTS = 1000
MAX_SCANNED = 200_000
"""Files listed before matching; beyond this the search is cut (and says so)."""


class GlobInput(BaseModel):
    model_config = ConfigDict(defer_build=True)

    pattern: str = Field(
        description="Glob pattern relative to `path`, e.g. `**/*.py`, `src/**/*.{ts,tsx}`, "
        "`*.md` (a pattern without `/` matches file names at any depth)."
    )
    path: str | None = Field(
        default=None, description="Directory to search in (default: the working directory)."
    )
    max_results: int = Field(
        default=DEFAULT_MAX_RESULTS, ge=1, le=MAX_RESULTS, description="At most this many paths."
    )


DESCRIPTION = """Find files whose paths match a glob pattern, most recently modified first.

- Skips files that .gitignore and .ignore exclude, and the .git directory.
- Use this to locate files by name; use `grep` to search their contents."""


def _permission(params: GlobInput, ctx: ToolContext) -> PermissionRequest:
    path = ctx.resolve(params.path or ".")
    return PermissionRequest(
        rule_tool="Read",
        description=f"Find `{params.pattern}` in {display_path(path, ctx)}",
        paths=(path,),
    )


def _ui(params: GlobInput, ctx: ToolContext) -> ToolUi:
    path = ctx.resolve(params.path or ".")
    where = f" in {display_path(path, ctx)}" if params.path else ""
    return ToolUi(
        title=f"Find `{params.pattern}`{where}",
        kind="search",
        locations=(Location(path=str(path)),),
    )


async def _execute(params: GlobInput, ctx: ToolContext) -> ToolOutput:
    rg = ripgrep()
    root = ctx.decided_path(params.path or ".").path
    if params.pattern.startswith("/"):
        raise ToolError("The pattern is relative to `path`; pass the directory as `path` instead.")
    try:
        # The directory decided on, held open: rg lists it from there, and every name shown is
        # found again beneath it with no link followed.
        with opened_directory(root) as held:
            return await _glob(rg, params, ctx, root, held)
    except (FileNotFoundError, NotADirectoryError) as error:
        raise ToolError(f"Not a directory: {root}") from error
    except PathChanged as error:
        raise changed(root, error, "searched") from error


async def _glob(rg: str, params: GlobInput, ctx: ToolContext, root: Path, held: int) -> ToolOutput:
    matches = glob_matcher(params.pattern)
    # rg lists what the ignore files allow; its own --glob would override them, so the pattern
    # is matched here instead.
    args = [rg, "--no-config", "--files", "--hidden", "--no-require-git", "--glob=!.git"]
    args += deny_glob_args(ctx)
    captured = await run_lines(args, cwd=held_cwd(held, root), max_lines=MAX_SCANNED)
    if captured.returncode not in (0, 1, None) and not captured.lines:
        raise ToolError(f"ripgrep failed: {captured.stderr or f'exit code {captured.returncode}'}")
    visible = visible_filter(ctx)
    found: list[tuple[float, str, str]] = []
    for line in captured.lines:
        if not matches(line):
            continue
        path = root / line
        if not visible(path):
            continue  # a Read deny rule covers it: not even its name is shown
        try:
            mtime = os.stat(line, dir_fd=held, follow_symlinks=False).st_mtime
        except OSError:
            continue
        found.append((mtime, display_path(path, ctx), line))
    if not found:
        return ToolOutput.text("No files found.")
    found.sort(key=lambda item: (-item[0], item[1]))
    shown: list[str] = []
    for _, name, line in found:
        if len(shown) == params.max_results:
            break
        if exists_beneath(held, line):  # still there, under the same directory, no link on the way
            shown.append(name)
    text = "\n".join(shown)
    if len(found) > params.max_results or captured.truncated:
        total = f"at least {len(found)}" if captured.truncated else str(len(found))
        text += (
            f"\n\n[Showing the {len(shown)} most recently modified of {total} files. Use a more "
            "specific pattern or path.]"
        )
    return ToolOutput.text(text)


def glob_matcher(pattern: str) -> Callable[[str], bool]:
    """A matcher for `/`-separated relative paths. A pattern without `/` matches the file name at
    any depth; `**` spans directories, `*` and `?` stay within one, `{a,b}` and `[abc]` work."""
    pattern = pattern.removeprefix("./")
    regex = re.compile(_translate(pattern) + r"\Z", re.DOTALL)
    if "/" not in pattern:
        return lambda path: regex.match(path.rsplit("/", 1)[-1]) is not None
    return lambda path: regex.match(path) is not None


def _translate(pattern: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[" and (end := pattern.find("]", i + 2)) != -1:
            body = pattern[i + 1 : end]
            if body.startswith("!"):
                body = "^" + body[1:]
            out.append("[" + body.replace("\\", "\\\\") + "]")
            i = end + 1
            continue
        elif char == "{" and (end := pattern.find("}", i)) != -1:
            options = pattern[i + 1 : end].split(",")
            out.append("(?:" + "|".join(_translate(option) for option in options) + ")")
            i = end + 1
            continue
        else:
            out.append(re.escape(char))
        i += 1
    return "".join(out)


glob_tool = define_tool(
    name="glob",
    description=DESCRIPTION,
    input_model=GlobInput,
    execute=capped(_execute),
    ui=_ui,
    read_only=True,
    permission=_permission,
)
