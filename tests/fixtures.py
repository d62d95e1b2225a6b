"""Access to the recorded provider fixtures vendored in `tests/data/providers` (sources and
licences in its `SOURCES.md`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import yaml

ROOT = Path(__file__).resolve().parent.parent
PROVIDER_FIXTURES = ROOT / "tests" / "data" / "providers"


def fixture_path(name: str) -> Path:
    return PROVIDER_FIXTURES / name


def sse_bytes(name: str) -> bytes:
    """The body of a `.sse` fixture, or a `.jsonl` fixture re-framed as SSE.

    For `.jsonl` files each line becomes `data: <line>\\n\\n`, with an `event:` line when the JSON
    has a `type` (OpenAI Responses names its events after it).
    """
    path = fixture_path(name)
    if path.suffix == ".sse":
        return path.read_bytes()
    frames: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        data: object = json.loads(line)
        event = cast("dict[str, object]", data).get("type") if isinstance(data, dict) else None
        prefix = f"event: {event}\n" if event and name.startswith("openai/responses") else ""
        frames.append(f"{prefix}data: {line}\n\n")
    return "".join(frames).encode()


def cassette(name: str) -> list[dict[str, Any]]:
    """The interactions of a VCR cassette (`.yaml`)."""
    data = yaml.safe_load(fixture_path(name).read_text(encoding="utf-8"))
    return list(data["interactions"])


def response_body(interaction: dict[str, Any]) -> bytes:
    response = interaction["response"]
    body: object = response.get("body", {})
    if isinstance(body, dict) and "string" in body:
        value: Any = cast("dict[str, Any]", body)["string"]
        return value.encode() if isinstance(value, str) else bytes(value)
    if "parsed_body" in response:
        return json.dumps(response["parsed_body"]).encode()
    return b""


def request_body(interaction: dict[str, Any]) -> Any:
    request = interaction["request"]
    if "parsed_body" in request:
        return request["parsed_body"]
    body: Any = request.get("body")
    if isinstance(body, dict):
        body = cast("dict[str, Any]", body).get("string")
    return json.loads(body) if body else None
