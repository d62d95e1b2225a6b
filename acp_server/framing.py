"""JSON-RPC framing: one JSON object per line, the JSON-RPC error codes, and the errors handlers
raise. Standard library only (with `providers.text`, which is too): it is on the path to the
`initialize` reply.

What the reader holds to, whatever it reads:
- decoded text is valid Unicode: a lone surrogate a client spelled as `"\\ud800"` (valid JSON)
  becomes U+FFFD as the message is decoded (`decode_message`), before any handler sees it;
- an error never echoes unbounded input: every string an error carries is cut to a bound in one
  place (`RpcError.to_json`), so a 20 MB method name or session id cannot make a 40 MB answer;
- a request id longer than `MAX_ID_CHARS` is not echoed either (`request_id_problem`);
- a message that is a response (`result` or `error`, no `method`) is never answered
  (`is_response`): it is matched to a request we sent, or logged and dropped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Literal, TypeAlias, cast

from providers.text import valid_json

RawObject: TypeAlias = dict[str, object]
InputUnit: TypeAlias = Literal["line", "message"]
"""What the input is counted in, for errors that say where: lines on stdio, messages over
WebSocket (`earshot serve` hands the server one line per message)."""
"""A JSON object as decoded, before anything checked its members."""
Message: TypeAlias = Mapping[str, object]
"""A JSON object to write: what a handler returns is written as is."""

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
AUTH_REQUIRED = -32000
RESOURCE_NOT_FOUND = -32002
REQUEST_CANCELLED = -32800


MAX_QUOTED_CHARS = 200
"""The longest value an error message or its `data` quotes; longer ones are cut, with an
ellipsis."""
MAX_MESSAGE_CHARS = 1000
"""The longest error message (a sentence with a few quoted values fits easily)."""
MAX_ID_CHARS = 256
"""The longest string request id answered as such: a longer one would be echoed in the
response, so the request is refused (`-32600`, id null) instead."""


def bounded(text: str, limit: int = MAX_QUOTED_CHARS) -> str:
    """`text` cut to `limit` characters, the cut marked with an ellipsis."""
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def _bounded_data(value: object) -> object:
    """`data` of an error with every string bounded (errors name fields, ids and methods)."""
    if isinstance(value, str):
        return bounded(value)
    if isinstance(value, dict):
        items = cast("dict[object, object]", value).items()
        return {bounded(str(key)): _bounded_data(item) for key, item in items}
    if isinstance(value, list | tuple):
        return [_bounded_data(item) for item in cast("list[object]", value)]
    return value


class RpcError(Exception):
    """A JSON-RPC error a handler wants sent as the response."""

    def __init__(self, code: int, message: str, data: object = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def to_json(self) -> RawObject:
        """The `error` member. The one place an error's text is bounded: whatever a handler
        quoted, the answer stays small."""
        error: RawObject = {"code": self.code, "message": bounded(self.message, MAX_MESSAGE_CHARS)}
        if self.data is not None:
            error["data"] = _bounded_data(self.data)
        return error


def shown(value: object, limit: int = 60) -> str:
    """A value quoted for an error message, cut short (messages never echo big inputs)."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class InvalidParams(RpcError):
    """-32602, naming the field at fault in `data.field`."""

    def __init__(self, field_name: str, message: str) -> None:
        super().__init__(INVALID_PARAMS, message, {"field": field_name})
        self.field = field_name


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]|\xed[\xa0-\xbf]")
"""What a line holding a surrogate looks like: a `\\uD800`-`\\uDFFF` escape, or the bytes
`json` decodes to one (`surrogatepass`). Lines without it (nearly all) skip the cleaning walk."""


def encode_message(message: Message) -> bytes:
    """One JSON object on one line (json escapes every newline inside strings)."""
    text = _ENCODER.encode(message)
    try:
        return text.encode("utf-8") + b"\n"
    except UnicodeEncodeError:
        # A lone surrogate cannot be UTF-8, and strict peers reject even its \u escape (serde
        # refuses "lone leading surrogate"): send U+FFFD instead.
        return _ENCODER.encode(valid_json(message)).encode("utf-8") + b"\n"


def decode_message(line: bytes) -> object:
    """One line as JSON, its strings valid Unicode (lone surrogates become U+FFFD).

    Raises:
        ValueError: not JSON (or not UTF-8).
        RecursionError: nested too deeply.
    """
    decoded: object = json.loads(line)
    if _SURROGATE_ESCAPE.search(line) is None:
        return decoded
    return valid_json(decoded)


def parse_problem(
    exc: ValueError | RecursionError, number: int, unit: InputUnit = "line"
) -> RpcError:
    """The -32700 answer to an input that is not JSON: where (the input's line, or over
    WebSocket its message, counted from 1, and the column in it: `data.line` or `data.message`,
    `data.column`) and what was expected, bounded like every error."""
    where: RawObject = {unit: number}
    if isinstance(exc, json.JSONDecodeError):
        where["column"] = exc.colno
        problem = f"{unit} {number}, column {exc.colno}: {exc.msg}"
    elif isinstance(exc, UnicodeDecodeError):
        where["column"] = exc.start + 1
        problem = f"{unit} {number}, byte {exc.start + 1}: not UTF-8"
    elif isinstance(exc, RecursionError):
        problem = f"{unit} {number}: nested too deeply"
    else:
        problem = f"{unit} {number}: {exc}"
    return RpcError(PARSE_ERROR, f"parse error: not valid JSON at {problem}", where)


def result_response(request_id: object, result: object) -> Message:
    """A request's answer with its result: the one shape both the transport and the answer
    before the event loop (`acp_server.first_line`) write, so the two give the same bytes."""
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def is_response(message: Message) -> bool:
    """A response rather than a request or notification: no `method`, and a `result` or an
    `error`. Never answered (answering one could only confuse the peer about ids)."""
    return "method" not in message and ("result" in message or "error" in message)


def request_id_problem(raw_id: object) -> str | None:
    """Why a request's `id` cannot be echoed in its answer, or None when it can."""
    if not (raw_id is None or isinstance(raw_id, str) or type(raw_id) is int):
        return "bad id type"
    if isinstance(raw_id, str) and len(raw_id) > MAX_ID_CHARS:
        return f"id longer than {MAX_ID_CHARS} characters"
    return None
