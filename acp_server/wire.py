"""The framing shared by the async transport and the start-up fast path: one JSON object per
line. Standard library only, so the `initialize` fast path can use it before anyio loads."""

from __future__ import annotations

import json
from typing import Any, TypeAlias

JsonObject: TypeAlias = dict[str, Any]


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def encode_message(message: JsonObject) -> bytes:
    """One JSON object on one line (json escapes every newline inside strings)."""
    text = _ENCODER.encode(message)
    try:
        return text.encode("utf-8") + b"\n"
    except UnicodeEncodeError:
        # A lone surrogate (from undecodable input) cannot be UTF-8; \u-escape everything.
        return json.dumps(message, separators=(",", ":")).encode("ascii") + b"\n"
