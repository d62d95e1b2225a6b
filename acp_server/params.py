"""Checking incoming params: each helper names the field at fault (`-32602` with `data.field`).

Hand-written rather than pydantic so the cheap methods (`initialize`, `session/list`) stay cheap
and every message says exactly which field is wrong.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any, cast

from acp_server.wire import InvalidParams, JsonObject


def shown(value: object, limit: int = 60) -> str:
    """A value quoted for an error message, cut short (messages never echo big inputs)."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def require_str(params: JsonObject, name: str) -> str:
    value = params.get(name)
    if not isinstance(value, str):
        raise InvalidParams(name, f"invalid params: {name} must be a string")
    return value


def optional_str(params: JsonObject, name: str) -> str | None:
    value = params.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidParams(name, f"invalid params: {name} must be a string")
    return value


def require_session_id(params: JsonObject) -> str:
    value = require_str(params, "sessionId")
    if not value:
        raise InvalidParams("sessionId", "invalid params: sessionId must not be empty")
    return value


def require_absolute_path(params: JsonObject, name: str) -> Path:
    value = require_str(params, name)
    if not os.path.isabs(value):
        raise InvalidParams(name, f"invalid params: {name} must be an absolute path")
    return Path(os.path.normpath(value))


def path_error(name: str, error: OSError) -> InvalidParams:
    """An OS error about a path the client named (too long, a file where a directory should
    be, a symlink loop, no permission...): the request is at fault, so -32602 naming the
    field, never -32603. The message gives the reason, not the path (it may be megabytes)."""
    reason = error.strerror or type(error).__name__
    return InvalidParams(name, f"invalid params: {name}: {reason}")


def require_directory(params: JsonObject, name: str) -> Path:
    """An absolute path naming an existing directory (a session's working directory)."""
    path = require_absolute_path(params, name)
    if "\0" in str(path):
        raise InvalidParams(name, f"invalid params: {name} holds a NUL character")
    try:
        # Not `is_dir`: it raises ENAMETOOLONG and EACCES, which would be internal errors.
        mode = path.stat().st_mode
    except (FileNotFoundError, NotADirectoryError):
        mode = 0
    except OSError as error:
        raise path_error(name, error) from None
    except ValueError as error:
        raise InvalidParams(name, f"invalid params: {name} is not a valid path ({error})") from None
    if not stat.S_ISDIR(mode):
        raise InvalidParams(
            name, f"invalid params: {name} is not an existing directory: {shown(str(path), 200)}"
        )
    return path


def optional_object(params: JsonObject, name: str) -> JsonObject:
    value = params.get(name)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InvalidParams(name, f"invalid params: {name} must be an object")
    return cast("JsonObject", value)


def optional_list(params: JsonObject, name: str) -> list[Any]:
    value = params.get(name)
    if value is None:
        return []
    if not isinstance(value, list):
        raise InvalidParams(name, f"invalid params: {name} must be an array")
    return cast("list[Any]", value)


def require_list(params: JsonObject, name: str) -> list[Any]:
    if params.get(name) is None:
        raise InvalidParams(name, f"invalid params: {name} is required")
    return optional_list(params, name)


def absolute_paths(params: JsonObject, name: str) -> tuple[Path, ...]:
    paths: list[Path] = []
    for index, item in enumerate(optional_list(params, name)):
        if not isinstance(item, str) or not os.path.isabs(item):
            raise InvalidParams(
                f"{name}[{index}]", f"invalid params: {name} must be absolute paths"
            )
        paths.append(Path(os.path.normpath(item)))
    return tuple(paths)


def protocol_version(params: JsonObject) -> int:
    value = params.get("protocolVersion")
    if type(value) is not int or not 0 <= value <= 65535:
        raise InvalidParams("protocolVersion", "invalid params: protocolVersion must be a uint16")
    return value
