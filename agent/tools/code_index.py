"""`repo_map` and `search_code`: the code index (`agent.codeindex`) as tools.

Both read the session's code index from `ctx.services.code_index` (`agent.code.index_host`
opens one per work tree and refreshes it in the background); without one they say the index is not
available. "The files in the conversation" are the files the session has read (`ctx.reads`)
plus any the call names. Results never show a file a `Read` deny rule covers
(`visible_filter`), like grep's, and say when the index is still being built.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Final

from pydantic import BaseModel, ConfigDict, Field

from agent.backends import Location, ToolUi
from agent.tools.base import PermissionRequest, ToolContext, ToolError, ToolOutput, define_tool
from agent.tools.results import capped, display_path, short
from agent.tools.services import visible_filter

if TYPE_CHECKING:
    from agent.codeindex import CodeIndex

DEFAULT_MAP_BUDGET: Final = 2_000
HEADER_TOKENS: Final = 60
"""Kept out of the budget for the map's header line."""


class RepoMapInput(BaseModel):
    model_config = ConfigDict(defer_build=True)

    query: str = Field(
        default="",
        description="Words or identifiers to centre the map on (e.g. `session store append`); "
        "empty: the files read in this conversation, then what the code refers to most.",
    )
    files: list[str] = Field(
        default_factory=list[str],
        description="Files to centre the map on, besides those read in this conversation.",
    )
    budget: int = Field(
        default=DEFAULT_MAP_BUDGET,
        ge=256,
        le=16_000,
        description="Tokens the map may take.",
    )


class SearchCodeInput(BaseModel):
    model_config = ConfigDict(defer_build=True)

    query: str = Field(
        description="Identifiers or words, e.g. `TokenCounter`, `parse request`, "
        "`load_settings trust`. camelCase and snake_case names match their words."
    )
    limit: int = Field(default=10, ge=1, le=50, description="At most this many files.")


REPO_MAP_DESCRIPTION = """Show a map of the repository: the most important definitions \
(classes, functions, methods) with their line numbers, ranked by how much the rest of the code \
refers to them (PageRank over the reference graph), centred on the files read in this \
conversation, the `files` given and the `query`.

- Use it to find your way in an unfamiliar or large repository before reading files.
- Each line is `line│source line`; read the file at that line for the details."""

SEARCH_CODE_DESCRIPTION = """Search the code by identifiers and words (BM25 over definition \
names, file paths and every identifier in the files, split at camelCase and snake_case), ranked \
together with how central each file is. Returns files with their matching definitions and line \
numbers.

- Use it to find where something is defined or handled when you know roughly what it is called; \
use grep for exact text or regular expressions."""


async def _index(ctx: ToolContext) -> CodeIndex:
    source = ctx.services.code_index
    if source is None:
        raise ToolError("The code index is not available in this session; use grep and glob.")
    return await source.ready()  # brought up to date first


def _permission(description: str) -> PermissionRequestFactory:
    def permission(params: BaseModel, ctx: ToolContext) -> PermissionRequest:
        return PermissionRequest(rule_tool="Read", description=description, paths=(ctx.cwd,))

    return permission


def _visible(ctx: ToolContext, root: Path) -> VisibleRelative:
    visible = visible_filter(ctx)
    return lambda relative: visible(root / relative)


def _conversation(ctx: ToolContext, extra: list[str]) -> list[Path]:
    return [*ctx.reads.seen, *(ctx.resolve(path) for path in extra)]


def _with_note(text: str, index: CodeIndex) -> str:
    note = index.progress_note()
    return f"{text}\n\n[{note}]" if note else text


async def _repo_map(params: RepoMapInput, ctx: ToolContext) -> ToolOutput:
    from agent.codeindex import map_header

    index = await _index(ctx)
    result = await index.repo_map(
        budget=max(params.budget - HEADER_TOKENS, 64),
        conversation=_conversation(ctx, params.files),
        query=params.query,
        visible=_visible(ctx, index.root),
    )
    if not result.text:
        return ToolOutput.text(_with_note("The code index has no definitions to show.", index))
    return ToolOutput.text(_with_note(f"{map_header(result)}\n\n{result.text}", index))


async def _search_code(params: SearchCodeInput, ctx: ToolContext) -> ToolOutput:
    from agent.codeindex import clean

    index = await _index(ctx)
    hits = await index.search(
        params.query,
        limit=params.limit,
        conversation=_conversation(ctx, []),
        visible=_visible(ctx, index.root),
    )
    if not hits:
        return ToolOutput.text(_with_note("No matches found.", index))
    blocks: list[str] = []
    for hit in hits:
        lines = [f"{clean(hit.path)} (score {hit.score:.2f})"]
        shown = hit.definitions[:8]
        lines.extend(f"  {d.line}│{clean(d.text.strip())}" for d in shown)
        if len(hit.definitions) > len(shown):
            lines.append(f"  … {len(hit.definitions) - len(shown)} more matching definitions")
        blocks.append("\n".join(lines))
    return ToolOutput.text(_with_note("\n".join(blocks), index))


def _map_ui(params: RepoMapInput, ctx: ToolContext) -> ToolUi:
    about = f" for `{short(params.query, 60)}`" if params.query else ""
    return ToolUi(
        title=f"Repository map{about}",
        kind="search",
        locations=(Location(path=str(ctx.cwd)),),
    )


def _search_ui(params: SearchCodeInput, ctx: ToolContext) -> ToolUi:
    return ToolUi(
        title=f"Search code for `{short(params.query, 60)}` in {display_path(ctx.cwd, ctx)}",
        kind="search",
        locations=(Location(path=str(ctx.cwd)),),
    )


if TYPE_CHECKING:
    from collections.abc import Callable

    PermissionRequestFactory = Callable[[BaseModel, ToolContext], PermissionRequest]
    VisibleRelative = Callable[[str], bool]


repo_map_tool = define_tool(
    name="repo_map",
    description=REPO_MAP_DESCRIPTION,
    input_model=RepoMapInput,
    execute=capped(_repo_map),
    ui=_map_ui,
    read_only=True,
    permission=_permission("Map the repository"),
)

search_code_tool = define_tool(
    name="search_code",
    description=SEARCH_CODE_DESCRIPTION,
    input_model=SearchCodeInput,
    execute=capped(_search_code),
    ui=_search_ui,
    read_only=True,
    permission=_permission("Search the code"),
)
