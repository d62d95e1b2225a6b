"""Incoming params, checked at the boundary and returned as the protocol's typed shapes
(`acp_server.protocol`): a handler gets a `NewSessionRequest`, never a raw dict.

Each check names the field at fault (`-32602` with `data.field`). Hand-written rather than
validated against the JSON schema: the messages say exactly which field is wrong and why (an
existing directory, an absolute path), and `jsonschema` costs more to import than all of the
transport. Only the members the server reads are checked and kept; extension members (`_meta`)
are dropped here, except `session/list`'s (its `_meta.earshot` filters subagents' sessions:
`acp_server.branches`). `initialize`'s are checked in `acp_server.initialization`, which
loads before this module does (the reply comes before the event loop).
"""

from __future__ import annotations

import os
import stat
from typing import TYPE_CHECKING, Literal, cast

from acp_server.framing import InvalidParams, RawObject, shown
from acp_server.ports import (
    ClientSystemPrompt,
    McpAcpServer,
    McpRemoteServer,
    McpServerSpec,
    McpStdioServer,
)
from providers.records import Record

if TYPE_CHECKING:
    from pathlib import Path

    from acp_server.protocol.common import ContentBlock, EnvVariable, JsonObject
    from acp_server.protocol.connection import AuthenticateRequest
    from acp_server.protocol.prompt import CancelNotification, PromptRequest
    from acp_server.protocol.sessions import (
        CloseSessionRequest,
        DeleteSessionRequest,
        HttpHeader,
        SetSessionConfigOptionRequestValueId,
        SetSessionModeRequest,
    )
    from acp_server.protocol.unstable.sessions import (
        ListSessionsRequest,
        LoadSessionRequest,
        McpServer,
        NewSessionRequest,
        ResumeSessionRequest,
        SystemPrompt,
    )
    from sessions.archive import ArchiveFilter


# ------------------------------------------------------------------------------ fields


def _str(params: RawObject, name: str) -> str:
    value = params.get(name)
    if not isinstance(value, str):
        raise InvalidParams(name, f"invalid params: {name} must be a string")
    return value


def _optional_str(params: RawObject, name: str) -> str | None:
    return None if params.get(name) is None else _str(params, name)


def _list(params: RawObject, name: str, *, required: bool = False) -> list[object]:
    value = params.get(name)
    if value is None:
        if required:
            raise InvalidParams(name, f"invalid params: {name} is required")
        return []
    if not isinstance(value, list):
        raise InvalidParams(name, f"invalid params: {name} must be an array")
    return cast("list[object]", value)


def _object(value: object) -> RawObject | None:
    return cast("RawObject", value) if isinstance(value, dict) else None


def _session_id(params: RawObject) -> str:
    value = _str(params, "sessionId")
    if not value:
        raise InvalidParams("sessionId", "invalid params: sessionId must not be empty")
    return value


def _absolute(params: RawObject, name: str) -> str:
    value = _str(params, name)
    if not os.path.isabs(value):
        raise InvalidParams(name, f"invalid params: {name} must be an absolute path")
    return os.path.normpath(value)


def _absolute_list(params: RawObject, name: str) -> list[str]:
    paths: list[str] = []
    for index, item in enumerate(_list(params, name)):
        if not isinstance(item, str) or not os.path.isabs(item):
            raise InvalidParams(
                f"{name}[{index}]", f"invalid params: {name} must be absolute paths"
            )
        paths.append(os.path.normpath(item))
    return paths


def path_error(name: str, error: OSError) -> InvalidParams:
    """An OS error about a path the client named (too long, a file where a directory should
    be, a symlink loop, no permission...): the request is at fault, so -32602 naming the
    field, never -32603. The message gives the reason, not the path (it may be megabytes)."""
    reason = error.strerror or type(error).__name__
    return InvalidParams(name, f"invalid params: {name}: {reason}")


def _directory(params: RawObject, name: str) -> str:
    """An absolute path naming an existing directory (a session's working directory)."""
    path = _absolute(params, name)
    if "\0" in path:
        raise InvalidParams(name, f"invalid params: {name} holds a NUL character")
    try:
        # Not `is_dir`: it raises ENAMETOOLONG and EACCES, which would be internal errors.
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        mode = 0
    except OSError as error:
        raise path_error(name, error) from None
    except ValueError as error:
        raise InvalidParams(name, f"invalid params: {name} is not a valid path ({error})") from None
    if not stat.S_ISDIR(mode):
        raise InvalidParams(
            name, f"invalid params: {name} is not an existing directory: {shown(path, 200)}"
        )
    return path


# ------------------------------------------------------------------------------ connection


def authenticate(params: RawObject) -> AuthenticateRequest:
    return {"methodId": _str(params, "methodId")}


# ------------------------------------------------------------------------------ sessions


class OpeningParams(Record):
    """Where a session works and what the editor connects it to (`session/new`, `session/load`,
    `session/resume`)."""

    cwd: Path
    additional_directories: tuple[Path, ...]
    mcp_servers: tuple[McpServerSpec, ...]
    system_prompt: ClientSystemPrompt | None = None
    """The client's instructions (`systemPrompt`, unstable); None: none given."""


def _mcp_servers(params: RawObject, *, required: bool) -> list[McpServer]:
    if required and "mcpServers" not in params:
        raise InvalidParams("mcpServers", "invalid params: mcpServers is required")
    servers: list[McpServer] = []
    for index, item in enumerate(_list(params, "mcpServers")):
        where = f"mcpServers[{index}]"
        server = _object(item)
        if server is None:
            raise InvalidParams(where, f"invalid params: {where} must be an object")
        try:
            servers.append(_mcp_server(server))
        except InvalidParams as exc:
            field = f"{where}.{exc.field}"
            raise InvalidParams(field, exc.message.replace(exc.field, field, 1)) from None
    return servers


def _mcp_server(server: RawObject) -> McpServer:
    name = _str(server, "name")
    kind = server.get("type")
    if kind == "http" or kind == "sse":
        headers: list[HttpHeader] = [
            {"name": key, "value": value} for key, value in _pairs(server, "headers")
        ]
        url = _str(server, "url")
        if kind == "http":
            return {"type": "http", "name": name, "url": url, "headers": headers}
        return {"type": "sse", "name": name, "url": url, "headers": headers}
    if kind == "acp":  # provided over this connection (`acp_server.mcp_over_acp`)
        server_id = _str(server, "serverId")
        if not server_id:
            raise InvalidParams("serverId", "invalid params: serverId must not be empty")
        return {"type": "acp", "name": name, "serverId": server_id}
    if kind is None or kind == "stdio":
        args = _list(server, "args")
        if not all(isinstance(arg, str) for arg in args):
            raise InvalidParams("args", "invalid params: args must be strings")
        env: list[EnvVariable] = [
            {"name": key, "value": value} for key, value in _pairs(server, "env")
        ]
        command = _str(server, "command")
        return {"name": name, "command": command, "args": cast("list[str]", args), "env": env}
    raise InvalidParams("type", f"invalid params: unknown MCP transport {shown(kind)}")


def _pairs(server: RawObject, name: str) -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []
    for item in _list(server, name):
        entry = _object(item) or {}
        key, value = entry.get("name"), entry.get("value")
        if not isinstance(key, str) or not isinstance(value, str):
            raise InvalidParams(name, f"invalid params: {name} are name/value pairs")
        pairs.append((key, value))
    return pairs


def _system_prompt(params: RawObject) -> SystemPrompt | None:
    """`systemPrompt` (unstable): a mode earshot takes (`append`, `override`) and text blocks,
    at least one; anything else is refused rather than applied otherwise."""
    raw = params.get("systemPrompt")
    if raw is None:
        return None
    prompt = _object(raw)
    if prompt is None:
        raise InvalidParams("systemPrompt", "invalid params: systemPrompt must be an object")
    mode = prompt.get("mode")
    if mode != "append" and mode != "override":
        raise InvalidParams(
            "systemPrompt.mode",
            f"invalid params: systemPrompt.mode {shown(mode)} is not one earshot supports "
            "(append, override)",
        )
    content = _list(prompt, "content")
    if not content:
        raise InvalidParams(
            "systemPrompt.content", "invalid params: systemPrompt.content must not be empty"
        )
    blocks: list[ContentBlock] = []
    for index, item in enumerate(content):
        block = _object(item) or {}
        text = block.get("text")
        if block.get("type") != "text" or not isinstance(text, str):
            field = f"systemPrompt.content[{index}]"
            raise InvalidParams(field, f"invalid params: {field} must be a text block")
        blocks.append({"type": "text", "text": text})
    return {"mode": "append" if mode == "append" else "override", "content": blocks}


def new_session(params: RawObject) -> NewSessionRequest:
    cwd = _directory(params, "cwd")
    additional = _absolute_list(params, "additionalDirectories")
    request: NewSessionRequest = {"cwd": cwd, "mcpServers": _mcp_servers(params, required=True)}
    if additional:
        request["additionalDirectories"] = additional
    system_prompt = _system_prompt(params)
    if system_prompt is not None:
        request["systemPrompt"] = system_prompt
    return request


def load_session(params: RawObject) -> LoadSessionRequest:
    """Also `session/resume`'s params (the same members; `mcpServers` may be left out)."""
    session_id = _session_id(params)
    cwd = _directory(params, "cwd")
    additional = _absolute_list(params, "additionalDirectories")
    request: LoadSessionRequest = {
        "sessionId": session_id,
        "cwd": cwd,
        "mcpServers": _mcp_servers(params, required=False),
    }
    if additional:
        request["additionalDirectories"] = additional
    system_prompt = _system_prompt(params)
    if system_prompt is not None:
        request["systemPrompt"] = system_prompt
    return request


def resume_session(params: RawObject) -> ResumeSessionRequest:
    loaded = load_session(params)
    request: ResumeSessionRequest = {
        "sessionId": loaded["sessionId"],
        "cwd": loaded["cwd"],
        "mcpServers": loaded["mcpServers"],
    }
    if "additionalDirectories" in loaded:
        request["additionalDirectories"] = loaded["additionalDirectories"]
    if "systemPrompt" in loaded:
        request["systemPrompt"] = loaded["systemPrompt"]
    return request


def setup(request: NewSessionRequest | LoadSessionRequest | ResumeSessionRequest) -> OpeningParams:
    """The session's directories and MCP servers as the composition root takes them
    (`acp_server.ports.Opening`)."""
    servers: list[McpServerSpec] = []
    for server in request.get("mcpServers", []):
        if "type" in server and server["type"] == "acp":
            servers.append(McpAcpServer(name=server["name"], server_id=server["serverId"]))
        elif "type" in server:
            headers = tuple((header["name"], header["value"]) for header in server["headers"])
            transport: Literal["http", "sse"] = server["type"]
            servers.append(
                McpRemoteServer(
                    name=server["name"], url=server["url"], transport=transport, headers=headers
                )
            )
        else:
            servers.append(
                McpStdioServer(
                    name=server["name"],
                    command=server["command"],
                    args=tuple(server["args"]),
                    env=tuple((item["name"], item["value"]) for item in server["env"]),
                )
            )
    from pathlib import Path  # off the `initialize` path (with its URL and IP address modules)

    system_prompt = request.get("systemPrompt")
    client_prompt = None
    if system_prompt is not None:
        mode: Literal["append", "override"] = (
            "override" if system_prompt["mode"] == "override" else "append"
        )
        texts = [block["text"] for block in system_prompt["content"] if block["type"] == "text"]
        client_prompt = ClientSystemPrompt(mode=mode, text="\n\n".join(texts))
    return OpeningParams(
        cwd=Path(request["cwd"]),
        additional_directories=tuple(Path(p) for p in request.get("additionalDirectories", [])),
        mcp_servers=tuple(servers),
        system_prompt=client_prompt,
    )


ARCHIVE_FILTERS = ("exclude", "include", "only")


def list_sessions(params: RawObject) -> ListSessionsRequest:
    """`archived` (unstable) is one of `ARCHIVE_FILTERS` when given (null: `exclude`)."""
    request: ListSessionsRequest = {"cursor": _optional_str(params, "cursor")}
    if params.get("cwd") is not None:
        request["cwd"] = _absolute(params, "cwd")
    archived = params.get("archived")
    if archived is not None:
        if archived not in ARCHIVE_FILTERS:
            raise InvalidParams(
                "archived",
                f"invalid params: archived is one of {', '.join(ARCHIVE_FILTERS)}, "
                f"not {shown(archived)}",
            )
        request["archived"] = archived
    meta = _object(params.get("_meta"))
    if meta is not None:
        # Checked where it is read (`acp_server.branches.list_filter`).
        request["_meta"] = cast("JsonObject", meta)
    return request


def archive_filter(value: str | None) -> ArchiveFilter:
    """A checked `archived` filter as the store takes it (none: `exclude`)."""
    match value:
        case "include" | "only":
            return value
        case _:
            return "exclude"


def close_session(params: RawObject) -> CloseSessionRequest:
    return {"sessionId": _session_id(params)}


def delete_session(params: RawObject) -> DeleteSessionRequest:
    return {"sessionId": _session_id(params)}


def set_mode(params: RawObject) -> SetSessionModeRequest:
    session_id = _session_id(params)
    mode = params.get("modeId")
    if not isinstance(mode, str):
        raise InvalidParams("modeId", f"invalid params: unknown mode {shown(mode)}")
    return {"sessionId": session_id, "modeId": mode}


def set_config_option(params: RawObject) -> SetSessionConfigOptionRequestValueId:
    """Every option earshot offers is a select: its value is one of the ids offered."""
    session_id = _session_id(params)
    config_id = _str(params, "configId")
    if params.get("type") == "boolean":
        raise InvalidParams("type", "invalid params: earshot has no boolean options")
    value = params.get("value")
    if value is None:
        raise InvalidParams("value", "invalid params: value is required")
    if not isinstance(value, str):
        raise InvalidParams("value", f"invalid params: value must be a string, not {shown(value)}")
    return {"sessionId": session_id, "configId": config_id, "value": value}


def prompt(params: RawObject) -> PromptRequest:
    from acp_server.content import check_blocks

    session_id = _session_id(params)
    blocks: list[ContentBlock] = check_blocks(_list(params, "prompt", required=True))
    return {"sessionId": session_id, "prompt": blocks}


def cancel(params: RawObject) -> CancelNotification | None:
    """None when there is no session id to cancel (a notification is never answered)."""
    session_id = params.get("sessionId")
    return {"sessionId": session_id} if isinstance(session_id, str) else None
