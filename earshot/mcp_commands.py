"""MCP as slash commands: `/mcp` (the session's servers and their status), `/mcp restart NAME`,
and each prompt a connected server offers as `/mcp__<server>__<prompt>`.

A prompt's arguments are the command's input: one argument takes the whole text; several take
`name=value` pairs, or words in the order the server lists them (the last one takes the rest).
The prompt's messages become the turn's input, text and images kept (an assistant message is
marked as such), as `agent.commands.sources` runs any command's prompt: an ordinary turn, each
tool call through the permission gate. The server's text is input like anything the user
pastes; it grants nothing.

`/mcp restart NAME` stops the server's client, starts a new one in the same task group, and
waits for it (at most `mcp.startupTimeout`; the command can be cancelled). The tools the session
offered for that server call the new connection; a server that had failed has its prompts back
at once, and its tools join at the next model request, at the end of the tool list
(`earshot.mcp_connections`).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio

from agent.commands import CommandReply, CommandSource, ExtraCommand
from earshot.mcp_connections import McpConnections
from earshot.mcp_tools import EditorServer, McpServer, RemoteServer, tool_prefix
from providers.types import ImagePart, TextPart

if TYPE_CHECKING:
    from mcp.types import GetPromptResult, Prompt

_NAME_CHARS = re.compile(r"[^A-Za-z0-9_-]")
PROMPT_TIMEOUT_SECONDS = 30.0
"""How long `/mcp__<server>__<prompt>` waits for the server's prompt."""


def mcp_command_source(connections: McpConnections) -> CommandSource:
    """`/mcp`, and the prompts of the servers connected now."""

    def commands() -> Sequence[ExtraCommand]:
        found: list[ExtraCommand] = [McpStatusCommand(connections)]
        for connection in connections.connections:
            if connection.session is None:
                continue
            for prompt in connection.prompts:
                found.append(McpPromptCommand(connections, connection.server.name, prompt))
        return found

    return commands


@dataclass(frozen=True, slots=True)
class McpStatusCommand:
    connections: McpConnections
    name: str = "mcp"
    description: str = "MCP servers: status (connected, failed and why, tools); restart NAME"
    hint: str | None = "restart NAME"

    async def run(self, argument: str) -> CommandReply:
        self.connections.start()  # if nothing has started them yet
        verb, _, rest = argument.strip().partition(" ")
        if verb == "restart" and rest.strip():
            note = await self.connections.restart(rest.strip())
            return status_reply(self.connections, note)
        if verb:
            return CommandReply(text="Use `/mcp` or `/mcp restart NAME`.")
        return status_reply(self.connections)


def status_reply(connections: McpConnections, note: str = "") -> CommandReply:
    servers = server_statuses(connections)
    lines = [note, ""] if note else []
    if not servers:
        lines.append("No MCP servers in this session.")
    for server in servers:
        match server["status"]:
            case "connected":
                state = f"connected, {server['tools']} tools, {server['prompts']} prompts"
            case "failed":
                state = f"failed: {server['error']}"
            case _:
                state = str(server["status"])
        where = f"{server['transport']}, from {server['source']}"
        lines.append(f"- {server['name']} ({where}): {state}")
    return CommandReply(text="\n".join(lines), data={"mcpServers": servers})


def server_statuses(connections: McpConnections) -> list[dict[str, Any]]:
    """Each server: name, source, transport, status (`connected`, `starting`, `failed`), tool
    and prompt counts, and the error (a reason without header values or environment)."""
    statuses: list[dict[str, Any]] = []
    known: set[str] = set()
    for connection in connections.connections:
        server = connection.server
        known.add(server.name)
        if connection.session is not None:
            status = "connected"
        elif connection.settled.is_set() or connection.closed.is_set():
            status = "failed"
        else:
            status = "starting"
        failure = next((f for f in connections.failures if f.server == server.name), None)
        error = connection.error or (failure.message if failure else None)
        statuses.append(
            {
                "name": server.name,
                "source": server.source,
                "transport": _transport(server),
                "status": status,
                "tools": len(connection.tools) if status == "connected" else 0,
                "prompts": len(connection.prompts) if status == "connected" else 0,
                "error": None if status == "connected" else error or "it did not start",
            }
        )
    for failure in connections.failures:
        if failure.server not in known:  # refused before starting (an ambiguous name)
            known.add(failure.server)
            statuses.append(
                {
                    "name": failure.server,
                    "source": None,
                    "transport": None,
                    "status": "failed",
                    "tools": 0,
                    "prompts": 0,
                    "error": failure.message,
                }
            )
    return statuses


@dataclass(frozen=True, slots=True)
class McpPromptCommand:
    connections: McpConnections
    server: str
    prompt: Prompt

    @property
    def name(self) -> str:
        return f"{tool_prefix(self.server)}{_NAME_CHARS.sub('_', self.prompt.name) or 'x'}"

    @property
    def description(self) -> str:
        text = self.prompt.description or self.prompt.title or self.prompt.name
        return f"[MCP server '{self.server}'] {text.strip()}"

    @property
    def hint(self) -> str | None:
        arguments = self.prompt.arguments or []
        if not arguments:
            return None
        return " ".join(
            argument.name if argument.required else f"[{argument.name}]" for argument in arguments
        )

    async def run(self, argument: str) -> CommandReply:
        connection = next(
            (c for c in self.connections.connections if c.server.name == self.server), None
        )
        session = None if connection is None else connection.session
        if session is None:
            return CommandReply(text=f"The MCP server '{self.server}' is not connected.")
        try:
            values = prompt_arguments(self.prompt, argument)
        except ValueError as error:
            return CommandReply(text=f"/{self.name}: {error}")
        from mcp import MCPError

        try:
            with anyio.fail_after(PROMPT_TIMEOUT_SECONDS):
                result = await session.get_prompt(self.prompt.name, values or None)
        except MCPError as error:
            return CommandReply(text=f"MCP server '{self.server}': {error.error.message}")
        except TimeoutError:
            return CommandReply(text=f"MCP server '{self.server}' did not answer in time.")
        parts = prompt_parts(result)
        if not parts:
            return CommandReply(text=f"The prompt '{self.prompt.name}' has no content.")
        return CommandReply(prompt=parts)


def prompt_arguments(prompt: Prompt, text: str) -> dict[str, str]:
    """The command's input as the prompt's arguments (see the module docstring).

    Raises:
        ValueError: a required argument is missing, or an unknown one is named.
    """
    arguments = prompt.arguments or []
    names = [argument.name for argument in arguments]
    text = text.strip()
    values: dict[str, str] = {}
    if len(arguments) == 1 and text:
        values[names[0]] = text
    elif text:
        try:
            words = shlex.split(text)
        except ValueError:
            words = text.split()
        if all("=" in word for word in words):
            for word in words:
                key, _, value = word.partition("=")
                if key not in names:
                    raise ValueError(f"unknown argument '{key}' (it takes {', '.join(names)})")
                values[key] = value
        else:
            for index, name in enumerate(names):
                if index >= len(words):
                    break
                last = index == len(names) - 1
                values[name] = " ".join(words[index:]) if last else words[index]
    missing = [a.name for a in arguments if a.required and not values.get(a.name)]
    if missing:
        raise ValueError(f"missing {', '.join(missing)} (give: {' '.join(names)})")
    return values


def prompt_parts(result: GetPromptResult) -> list[TextPart | ImagePart]:
    from mcp.types import EmbeddedResource, ImageContent, TextContent, TextResourceContents

    parts: list[TextPart | ImagePart] = []
    for message in result.messages:
        content = message.content
        blocks = content if isinstance(content, list) else [content]
        for block in blocks:
            if isinstance(block, TextContent):
                text = block.text if message.role == "user" else f"(assistant) {block.text}"
                parts.append(TextPart(text=text))
            elif isinstance(block, ImageContent):
                parts.append(ImagePart(media_type=block.mime_type, data=block.data))
            elif isinstance(block, EmbeddedResource) and isinstance(
                block.resource, TextResourceContents
            ):
                resource = block.resource
                parts.append(TextPart(text=f"[resource {resource.uri}]\n{resource.text}"))
            else:
                parts.append(TextPart(text=f"[{type(block).__name__} omitted]"))
    return parts


__all__ = [
    "McpPromptCommand",
    "McpStatusCommand",
    "mcp_command_source",
    "prompt_arguments",
    "prompt_parts",
    "server_statuses",
]


def _transport(server: McpServer) -> str:
    if isinstance(server, RemoteServer):
        return server.transport
    return "acp" if isinstance(server, EditorServer) else "stdio"
