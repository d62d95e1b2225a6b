"""The framing shared by the async transport and the start-up fast path: one JSON object per
line, and the JSON-RPC error codes and errors handlers raise. Standard library only, so the
start-up fast path can use it before anyio loads."""

from __future__ import annotations

import json
from typing import Any, TypeAlias

JsonObject: TypeAlias = dict[str, Any]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
AUTH_REQUIRED = -32000
RESOURCE_NOT_FOUND = -32002
REQUEST_CANCELLED = -32800


class RpcError(Exception):
    """A JSON-RPC error a handler wants sent as the response."""

    def __init__(self, code: int, message: str, data: object = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def to_json(self) -> JsonObject:
        error: JsonObject = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


class InvalidParams(RpcError):
    """-32602, naming the field at fault in `data.field`."""

    def __init__(self, field_name: str, message: str) -> None:
        super().__init__(INVALID_PARAMS, message, {"field": field_name})
        self.field = field_name


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def encode_message(message: JsonObject) -> bytes:
    """One JSON object on one line (json escapes every newline inside strings)."""
    text = _ENCODER.encode(message)
    try:
        return text.encode("utf-8") + b"\n"
    except UnicodeEncodeError:
        # A lone surrogate (from undecodable input) cannot be UTF-8; \u-escape everything.
        return json.dumps(message, separators=(",", ":")).encode("ascii") + b"\n"
