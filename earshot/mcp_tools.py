"""MCP servers as tools named `mcp__<server>__<tool>`, through the official `mcp` SDK.

Servers come from settings (`mcpServers`) and from the ACP client (`session/new` `mcpServers`);
`earshot.mcp_connections` runs their clients.

Tools annotated `readOnlyHint: true` are read-only (no prompt); every other MCP tool goes through
the permission gate as `mcp__server__tool`. MCP prompts are slash commands, and `/mcp` shows and
restarts the servers (`earshot.mcp_commands`).

Names: permission rules are matched against the server and tool names AS CONFIGURED
(`PermissionRequest.mcp_server`), never against the name the model sees, which has to be
rewritten for vendors (`[A-Za-z0-9_-]`, at most 64 characters). So `mcp__a` does not cover a
server named `a_`, and a rule `mcp__a__b` written for a server `a__b` covers it. Two servers
whose names would make a rule ambiguous (`a` and `a__b`: is `mcp__a__b` the server `a__b`, or
the tool `b` of `a`?) are refused: the second is not started and the user is told to rename
one. Two tools whose rewritten names coincide (`a.b` and `a_b`, or a cut at 64 characters) get
distinct names with a short hash; nothing is merged.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

import anyio
from pydantic import BaseModel, ConfigDict

from agent.backends import ToolUi
from agent.tools import (
    AnyTool,
    PermissionRequest,
    ToolContext,
    ToolError,
    ToolOutput,
    argument_summary,
    define_tool,
)
from providers.types import ImagePart, JsonValue, NotJsonError, TextPart, ensure_json

if TYPE_CHECKING:
    from mcp import ClientSession
    from mcp.types import CallToolResult, Tool

    from acp_server.mcp_over_acp import McpChannel
    from acp_server.ports import McpServerSpec
    from agent.settings import Settings

CALL_TIMEOUT_SECONDS = 600.0
"""A tool call with no answer after this long fails (the user can cancel sooner)."""
MAX_NAME = 64
"""Vendors reject longer tool names."""


# ------------------------------------------------------------------------------ definitions


@dataclass(frozen=True, slots=True, kw_only=True)
class StdioServer:
    """A server earshot runs as a subprocess, speaking MCP on its stdin/stdout."""

    name: str
    command: str
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    """Added to the SDK's safe default environment (PATH, HOME...), not to all of earshot's: API
    keys are not handed to servers unless configured here."""
    cwd: Path | None = None
    source: str = "settings"


@dataclass(frozen=True, slots=True, kw_only=True)
class RemoteServer:
    """A server earshot connects to over streamable HTTP (or the legacy SSE transport)."""

    name: str
    url: str
    transport: Literal["http", "sse"] = "http"
    headers: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    source: str = "settings"


@dataclass(frozen=True, slots=True, kw_only=True)
class EditorServer:
    """A server the ACP client provides over the connection itself (`mcp/message`:
    `earshot.mcp_acp_transport`)."""

    name: str
    server_id: str
    channel: McpChannel = field(repr=False, compare=False)
    source: str = "editor"


McpServer = StdioServer | RemoteServer | EditorServer


@dataclass(frozen=True, slots=True, kw_only=True)
class McpFailure:
    server: str
    message: str

    @property
    def notice(self) -> str:
        return f"MCP server '{self.server}' is not available: {self.message}"


def servers_from_settings(settings: Settings, cwd: Path) -> list[McpServer]:
    """`mcpServers` from the settings files (a relative stdio `cwd` is resolved against `cwd`)."""
    from agent.settings import HttpServerSettings

    servers: list[McpServer] = []
    for name, entry in settings.mcp_servers.items():
        scope = settings.mcp_server_scopes.get(name, "user")
        source = f"{scope} settings"
        if isinstance(entry, HttpServerSettings):
            servers.append(
                RemoteServer(
                    name=name,
                    url=entry.url,
                    transport=entry.type,
                    headers=tuple(entry.headers.items()),
                    source=source,
                )
            )
        else:
            server_cwd = cwd if entry.cwd is None else cwd / Path(entry.cwd).expanduser()
            servers.append(
                StdioServer(
                    name=name,
                    command=entry.command,
                    args=tuple(entry.args),
                    env=tuple(entry.env.items()),
                    cwd=server_cwd,
                    source=source,
                )
            )
    return servers


def servers_from_client(
    specs: Sequence[McpServerSpec], cwd: Path, channel: McpChannel | None = None
) -> list[McpServer]:
    """The MCP servers an ACP client sent with `session/new` (run in the session's cwd); those
    it provides over the connection are reached through `channel` (none: not connected)."""
    from acp_server.ports import McpAcpServer, McpRemoteServer

    servers: list[McpServer] = []
    for spec in specs:
        if isinstance(spec, McpAcpServer):
            if channel is not None:
                servers.append(
                    EditorServer(name=spec.name, server_id=spec.server_id, channel=channel)
                )
        elif isinstance(spec, McpRemoteServer):
            servers.append(
                RemoteServer(
                    name=spec.name,
                    url=spec.url,
                    transport=spec.transport,
                    headers=spec.headers,
                    source="editor",
                )
            )
        else:
            servers.append(
                StdioServer(
                    name=spec.name,
                    command=spec.command,
                    args=spec.args,
                    env=spec.env,
                    cwd=cwd,
                    source="editor",
                )
            )
    return servers


def merge_servers(*groups: Sequence[McpServer]) -> list[McpServer]:
    """Later groups replace same-named servers of earlier ones (the editor's over settings)."""
    merged: dict[str, McpServer] = {}
    for group in groups:
        for server in group:
            merged.pop(server.name, None)
            merged[server.name] = server
    return list(merged.values())


# ------------------------------------------------------------------------------------ names


def _clean(text: str) -> str:
    # One for one, so that names differing in underscores stay different (`a` and `a_`).
    return re.sub(r"[^A-Za-z0-9_-]", "_", text) or "x"


def tool_prefix(server: str) -> str:
    """`mcp__<server>__`: how the names of a server's tools begin (see `tool_name`)."""
    return f"mcp__{_clean(server)}__"


def tool_name(server: str, tool: str) -> str:
    """`mcp__<server>__<tool>` as the model sees it: characters vendors reject replaced, at most
    64 long. Only a label: rules match the configured names (see the module docstring)."""
    return f"{tool_prefix(server)}{_clean(tool)}"[:MAX_NAME]


def distinct_name(server: str, tool: str) -> str:
    """A model-facing name for a tool whose `tool_name` is taken by another server or tool."""
    digest = hashlib.sha256(f"{server}\0{tool}".encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{tool_name(server, tool)[: MAX_NAME - 9]}_{digest}"


def ambiguous_servers(servers: Sequence[McpServer]) -> list[McpFailure]:
    """The servers refused because their names make `mcp__...` rules ambiguous: `a__b` beside
    `a` (`mcp__a__b` would name both), or a name with `*` (a rule naming it is a glob)."""
    names = [server.name for server in servers]
    failures: list[McpFailure] = []
    for name in names:
        if "*" in name:
            failures.append(
                McpFailure(server=name, message="a server name cannot contain '*'; rename it")
            )
            continue
        clash = next((other for other in names if name.startswith(f"{other}__")), None)
        if clash is not None:
            failures.append(
                McpFailure(
                    server=name,
                    message=(
                        f"its name makes permission rules ambiguous with the server '{clash}' "
                        f"(`mcp__{name}` could name a tool of '{clash}'); rename one of them"
                    ),
                )
            )
    return failures


# ------------------------------------------------------------------------------------ tools


class McpArguments(BaseModel):
    """Whatever the server's own schema allows: the loop validates against that schema."""

    model_config = ConfigDict(extra="allow")


class McpClient(Protocol):
    """What an MCP tool calls through: its server's client (`earshot.mcp_connections`)."""

    @property
    def server(self) -> McpServer: ...
    @property
    def session(self) -> ClientSession | None:
        """None while the server is not connected."""
        ...

    @property
    def error(self) -> str | None: ...


def mcp_tool(
    connection: McpClient,
    tool: Tool,
    *,
    label: str | None = None,
    call_timeout: float = CALL_TIMEOUT_SECONDS,
) -> AnyTool:
    """One MCP tool as an earshot tool, named `label` for the model (default: `tool_name`). A
    call the server has not answered after `call_timeout` seconds fails, saying so; a cancelled
    turn abandons it at once (the SDK tells the server)."""
    server = connection.server.name
    name = label or tool_name(server, tool.name)
    rule_name = f"mcp__{server}__{tool.name}"
    annotations = tool.annotations
    read_only = bool(annotations is not None and annotations.read_only_hint)
    title = tool.title or (annotations.title if annotations is not None else None) or tool.name
    description = (tool.description or title).strip()
    schema = _schema(tool.input_schema)

    def ui(params: McpArguments, ctx: ToolContext) -> ToolUi:
        # What the call does with which arguments, in the one line every client shows.
        summary = argument_summary(params.model_dump())
        named = f"{title} ({server})"
        return ToolUi(
            title=f"{named}: {summary}" if summary else named, kind="read" if read_only else "other"
        )

    def permission(params: McpArguments, ctx: ToolContext) -> PermissionRequest:
        # Even a read-only tool describes itself: deny rules name the configured names.
        return PermissionRequest(
            rule_tool=rule_name,
            description=f"Call {tool.name} on the MCP server '{server}'",
            mcp_server=server,
        )

    async def execute(params: McpArguments, ctx: ToolContext) -> ToolOutput:
        session = connection.session
        if session is None:
            reason = f": {connection.error}" if connection.error else ""
            raise ToolError(f"The MCP server '{server}' is no longer connected{reason}.")
        from mcp import MCPError
        from mcp.types import REQUEST_TIMEOUT

        try:
            result = await session.call_tool(
                tool.name, params.model_dump(), read_timeout_seconds=call_timeout
            )
        except MCPError as exc:
            if exc.error.code == REQUEST_TIMEOUT:
                raise ToolError(
                    f"The MCP server '{server}' did not answer the call to {tool.name} within "
                    f"{call_timeout:g} s (the `mcp.toolTimeout` setting); the call was abandoned."
                ) from exc
            raise ToolError(f"MCP server '{server}': {exc.error.message}") from exc
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream) as exc:
            raise ToolError(f"The MCP server '{server}' closed the connection.") from exc
        return tool_output(result)

    return define_tool(
        name=name,
        description=f"[MCP server '{server}'] {description}",
        input_model=McpArguments,
        execute=execute,
        ui=ui,
        read_only=read_only,
        permission=permission,
        input_schema=schema,
    )


def _schema(schema: Mapping[str, Any]) -> dict[str, JsonValue]:
    try:
        checked = ensure_json(dict(schema), "inputSchema")
    except NotJsonError:
        checked = None
    if not isinstance(checked, dict) or checked.get("type") != "object":
        return {"type": "object", "additionalProperties": True}
    return checked


def tool_output(result: CallToolResult) -> ToolOutput:
    """An MCP tool result as earshot's: text and images kept, embedded resources inlined, other
    content described in a line."""
    from mcp.types import (
        AudioContent,
        BlobResourceContents,
        ImageContent,
        ResourceLink,
        TextContent,
    )

    parts: list[TextPart | ImagePart] = []
    for block in result.content:
        if isinstance(block, TextContent):
            parts.append(TextPart(text=block.text))
        elif isinstance(block, ImageContent):
            parts.append(ImagePart(media_type=block.mime_type, data=block.data))
        elif isinstance(block, AudioContent):
            parts.append(TextPart(text=f"[audio ({block.mime_type}) omitted]"))
        elif isinstance(block, ResourceLink):
            about = f": {block.description}" if block.description else ""
            parts.append(TextPart(text=f"[resource {block.name} at {block.uri}{about}]"))
        else:
            resource = block.resource
            mime = resource.mime_type or ""
            if isinstance(resource, BlobResourceContents):
                if mime.startswith("image/"):
                    parts.append(ImagePart(media_type=mime, data=resource.blob))
                else:
                    kind = mime or "binary"
                    parts.append(TextPart(text=f"[resource {resource.uri} ({kind}) omitted]"))
            else:
                parts.append(TextPart(text=f"[resource {resource.uri}]\n{resource.text}"))
    raw: JsonValue = None
    if result.structured_content is not None:
        try:
            raw = ensure_json(result.structured_content, "structuredContent")
        except NotJsonError:
            raw = None
    if not parts and raw is not None:
        parts.append(TextPart(text=json.dumps(raw, ensure_ascii=False)))
    if not parts:
        parts.append(TextPart(text="(no output)"))
    return ToolOutput(content=parts, is_error=result.is_error, raw_output=raw)
