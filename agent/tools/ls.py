"""`ls`: list a directory, leaving out what .gitignore (and .ignore, .rgignore) exclude."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from agent.backends import Location, ToolUi
from agent.files import PathChanged, opened_directory
from agent.tools.base import PermissionRequest, ToolContext, ToolError, ToolOutput, define_tool
from agent.tools.results import capped, display_path
from agent.tools.services import visible_filter
from agent.tools.text_files import changed, inside

if TYPE_CHECKING:
    from pathspec import GitIgnoreSpec

MAX_ENTRIES = 500
IGNORE_FILES = (".gitignore", ".ignore", ".rgignore")
"""Per directory, in increasing precedence (ripgrep's order)."""


class LsInput(BaseModel):
    model_config = ConfigDict(defer_build=True)

    path: str | None = Field(
        default=None, description="Directory to list (default: the working directory)."
    )
    show_ignored: bool = Field(
        default=False,
        description="Also list entries that ignore files exclude (build output, node_modules...).",
    )


DESCRIPTION = """List the entries of a directory (not recursive). Directories end with `/`.

Entries excluded by .gitignore/.ignore files and the .git directory are left out unless \
`show_ignored` is set. Use `glob` to find files by pattern across the tree."""


@dataclass(frozen=True, slots=True)
class _IgnoreLayer:
    base: Path
    spec: GitIgnoreSpec


def _permission(params: LsInput, ctx: ToolContext) -> PermissionRequest:
    path = ctx.resolve(params.path or ".")
    return PermissionRequest(
        rule_tool="Read", description=f"List {display_path(path, ctx)}", paths=(path,)
    )


def _ui(params: LsInput, ctx: ToolContext) -> ToolUi:
    path = ctx.resolve(params.path or ".")
    return ToolUi(
        title=f"List {display_path(path, ctx)}", kind="read", locations=(Location(path=str(path)),)
    )


async def _execute(params: LsInput, ctx: ToolContext) -> ToolOutput:
    directory = ctx.decided_path(params.path or ".").path
    try:
        # Exactly the directory decided on: listed from its descriptor, no link followed.
        with opened_directory(directory, readable=True) as fd, os.scandir(fd) as scan:
            entries = [(entry.name, _is_dir(entry)) for entry in scan]
    except FileNotFoundError as error:
        raise ToolError(f"Path not found: {directory}") from error
    except NotADirectoryError as error:
        raise ToolError(
            f"{directory} is a file, not a directory. Use the read tool to read it."
        ) from error
    except PathChanged as error:
        raise changed(directory, error, "listed") from error
    except PermissionError as error:
        raise ToolError(f"Permission denied listing {directory}") from error
    layers = [] if params.show_ignored else _ignore_layers(directory, ctx.roots)
    visible = visible_filter(ctx)
    shown: list[str] = []
    hidden: list[str] = []
    for name, is_dir in sorted(entries, key=lambda item: (not item[1], item[0].lower())):
        label = name + "/" if is_dir else name
        if name == ".git" or not visible(directory / name):
            continue  # a Read deny rule covers it: not even among the ignored names
        if layers and _ignored(directory / name, is_dir, layers):
            hidden.append(label)
        else:
            shown.append(label)
    lines = [f"{directory}/"] if shown else [f"{directory}/ (no entries)"]
    lines += [f"  {label}" for label in shown[:MAX_ENTRIES]]
    if len(shown) > MAX_ENTRIES:
        lines.append(
            f"[Showing {MAX_ENTRIES} of {len(shown)} entries. Use glob with a pattern to narrow.]"
        )
    if hidden:
        examples = ", ".join(hidden[:5]) + (", ..." if len(hidden) > 5 else "")
        lines.append(f"[{len(hidden)} ignored entries not shown: {examples}]")
    return ToolOutput.text("\n".join(lines))


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _ignore_layers(directory: Path, roots: tuple[Path, ...]) -> list[_IgnoreLayer]:
    """Ignore files that apply inside `directory`, outermost first: from the repository root (or
    else the workspace root) down to `directory`."""
    from pathspec import GitIgnoreSpec  # costs ~10 ms to import: loaded when ls first runs

    chain = [directory, *directory.parents]
    top = next((i for i, d in enumerate(chain) if (d / ".git").exists()), None)
    if top is None:
        top = next((i for i, d in enumerate(chain) if d in roots), 0)
    layers: list[_IgnoreLayer] = []
    for index in range(top, -1, -1):
        base = chain[index]
        sources = [base / ".git" / "info" / "exclude"] if index == top else []
        sources += [base / name for name in IGNORE_FILES]
        for source in sources:
            try:
                text = source.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            layers.append(_IgnoreLayer(base=base, spec=GitIgnoreSpec.from_lines(text.splitlines())))
    return layers


def _ignored(path: Path, is_dir: bool, layers: list[_IgnoreLayer]) -> bool:
    ignored = False
    for layer in layers:
        if not inside(path, (layer.base,)) or path == layer.base:
            continue
        relative = path.relative_to(layer.base).as_posix() + ("/" if is_dir else "")
        decision = layer.spec.check_file(relative).include
        if decision is not None:
            ignored = decision
    return ignored


ls_tool = define_tool(
    name="ls",
    description=DESCRIPTION,
    input_model=LsInput,
    execute=capped(_execute),
    ui=_ui,
    read_only=True,
    permission=_permission,
)
