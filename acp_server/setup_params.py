"""The params `session/new`, `session/load` and `session/resume` share: the working directory,
the extra roots and the editor's MCP servers, checked field by field (`-32602` names the field).

Standard library only: the start-up path parses a `session/new` with it before the event loop
loads (`acp_server.early_session`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from acp_server import params as p
from acp_server.factory import McpRemoteServer, McpServerSpec, McpStdioServer
from acp_server.wire import InvalidParams, JsonObject


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionSetup:
    """Where a session works and what the editor connects it to."""

    cwd: Path
    additional_directories: tuple[Path, ...]
    mcp_servers: tuple[McpServerSpec, ...]


def parse_setup(params: JsonObject, *, servers_required: bool = False) -> SessionSetup:
    """`cwd` (an existing directory), `additionalDirectories` and `mcpServers` (required by
    `session/new`, optional elsewhere)."""
    cwd = p.require_directory(params, "cwd")
    additional = p.absolute_paths(params, "additionalDirectories")
    servers = parse_mcp_servers(p.optional_list(params, "mcpServers"))
    if servers_required and "mcpServers" not in params:
        raise InvalidParams("mcpServers", "invalid params: mcpServers is required")
    return SessionSetup(cwd=cwd, additional_directories=additional, mcp_servers=tuple(servers))


def parse_mcp_servers(raw: Sequence[Any]) -> list[McpServerSpec]:
    """`mcpServers` as plain values (stdio: env array; http/sse: header array)."""
    servers: list[McpServerSpec] = []
    for index, item in enumerate(raw):
        where = f"mcpServers[{index}]"
        if not isinstance(item, dict):
            raise InvalidParams(where, f"invalid params: {where} must be an object")
        try:
            servers.append(_mcp_server(cast("JsonObject", item)))
        except InvalidParams as exc:
            field = f"{where}.{exc.field}"
            raise InvalidParams(field, exc.message.replace(exc.field, field, 1)) from None
    return servers


def _mcp_server(server: JsonObject) -> McpServerSpec:
    name = p.require_str(server, "name")
    kind = server.get("type")
    if kind in ("http", "sse"):
        return McpRemoteServer(
            name=name,
            url=p.require_str(server, "url"),
            transport="http" if kind == "http" else "sse",
            headers=_pairs(server, "headers"),
        )
    if kind is None or kind == "stdio":
        args = p.optional_list(server, "args")
        if not all(isinstance(arg, str) for arg in args):
            raise InvalidParams("args", "invalid params: args must be strings")
        return McpStdioServer(
            name=name,
            command=p.require_str(server, "command"),
            args=tuple(cast("list[str]", args)),
            env=_pairs(server, "env"),
        )
    raise InvalidParams("type", f"invalid params: unknown MCP transport {p.shown(kind)}")


def _pairs(server: JsonObject, name: str) -> tuple[tuple[str, str], ...]:
    pairs: list[tuple[str, str]] = []
    for item in p.optional_list(server, name):
        entry = cast("JsonObject", item) if isinstance(item, dict) else {}
        key, value = entry.get("name"), entry.get("value")
        if not isinstance(key, str) or not isinstance(value, str):
            raise InvalidParams(name, f"invalid params: {name} are name/value pairs")
        pairs.append((key, value))
    return tuple(pairs)
