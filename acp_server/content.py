"""Prompt content blocks -> the parts a user turn is made of.

`text` stays text; `image` becomes an `ImagePart`; `resource_link` to a `file://` is read (through
the session's file backend, so unsaved editor buffers count) and inlined as context, other schemes
are described; `resource` text is inlined and blobs are described (images become image parts).
"""

from __future__ import annotations

import base64
import binascii
import mimetypes
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast
from urllib.parse import unquote, urlparse

import anyio

from acp_server.jsonrpc import InvalidParams
from acp_server.params import shown
from agent.backends import FileBackend
from providers.types import ImagePart, TextPart

INLINE_LIMIT = 512_000
"""Characters of one attached file inlined into the prompt."""

PromptPart = TextPart | ImagePart


def check_blocks(raw: Sequence[Any]) -> list[dict[str, Any]]:
    """Validate the shape of every block (no I/O)."""
    blocks: list[dict[str, Any]] = []
    for index, item in enumerate(raw):
        where = f"prompt[{index}]"
        if not isinstance(item, dict):
            raise InvalidParams(where, f"invalid params: {where} must be a content block object")
        block = cast("dict[str, Any]", item)
        kind = block.get("type")
        match kind:
            case "text":
                if not isinstance(block.get("text"), str):
                    raise InvalidParams(
                        f"{where}.text", f"invalid params: {where}.text must be a string"
                    )
            case "image":
                if not isinstance(block.get("mimeType"), str):
                    raise InvalidParams(
                        f"{where}.mimeType", f"invalid params: {where}.mimeType must be a string"
                    )
                if not isinstance(block.get("data"), str):
                    raise InvalidParams(
                        f"{where}.data", f"invalid params: {where}.data must be base64"
                    )
            case "resource_link":
                for name in ("uri", "name"):
                    if not isinstance(block.get(name), str):
                        raise InvalidParams(
                            f"{where}.{name}", f"invalid params: {where}.{name} must be a string"
                        )
            case "resource":
                resource = block.get("resource")
                if not isinstance(resource, dict) or not isinstance(
                    cast("dict[str, Any]", resource).get("uri"), str
                ):
                    raise InvalidParams(
                        f"{where}.resource", f"invalid params: {where}.resource needs a uri"
                    )
            case "audio":
                raise InvalidParams(
                    f"{where}.type", "invalid params: audio prompts are not supported"
                )
            case _:
                raise InvalidParams(
                    f"{where}.type", f"invalid params: unknown content block type {shown(kind)}"
                )
        blocks.append(block)
    return blocks


def leading_text(blocks: Sequence[dict[str, Any]]) -> str | None:
    """The prompt's text when it is text only (slash commands are plain text)."""
    if not blocks or any(block.get("type") != "text" for block in blocks):
        return None
    return "".join(str(block["text"]) for block in blocks)


def _file_path(uri: str) -> Path | None:
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    path = Path(unquote(parsed.path))
    return path if path.is_absolute() else None


def _context(label: str, text: str) -> TextPart:
    if len(text) > INLINE_LIMIT:
        text = (
            text[:INLINE_LIMIT] + f"\n[... truncated: {len(text) - INLINE_LIMIT} more characters]"
        )
    return TextPart(text=f'\n<context source="{label}">\n{text}\n</context>\n')


def _image(data: str, mime_type: str, where: str) -> ImagePart:
    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise InvalidParams(f"{where}.data", f"invalid params: {where}.data is not base64") from exc
    return ImagePart(media_type=mime_type, data=data)


async def _linked_file(path: Path, mime_type: str | None, files: FileBackend) -> PromptPart:
    guessed = mime_type or mimetypes.guess_type(path.name)[0] or ""
    try:
        if guessed.startswith("image/"):
            data = await anyio.Path(path).read_bytes()
            return ImagePart(media_type=guessed, data=base64.b64encode(data).decode("ascii"))
        return _context(str(path), await files.read_text(path))
    except UnicodeDecodeError:
        return TextPart(text=f"\n[Attached file {path}: binary, not shown]\n")
    except OSError as exc:
        return TextPart(text=f"\n[Attached file {path} could not be read: {exc.strerror or exc}]\n")


async def prompt_parts(blocks: Sequence[dict[str, Any]], files: FileBackend) -> list[PromptPart]:
    """Convert checked blocks; reads attached files."""
    parts: list[PromptPart] = []
    for index, block in enumerate(blocks):
        where = f"prompt[{index}]"
        match block["type"]:
            case "text":
                parts.append(TextPart(text=block["text"]))
            case "image":
                parts.append(_image(block["data"], block["mimeType"], where))
            case "resource_link":
                uri: str = block["uri"]
                path = _file_path(uri)
                if path is None:
                    title = block.get("title") or block["name"]
                    parts.append(TextPart(text=f"\n[Linked resource {title}: {uri}]\n"))
                else:
                    parts.append(await _linked_file(path, block.get("mimeType"), files))
            case "resource":
                resource = cast("dict[str, Any]", block["resource"])
                uri = resource["uri"]
                mime_type = resource.get("mimeType")
                if isinstance(resource.get("text"), str):
                    label = str(_file_path(uri) or uri)
                    parts.append(_context(label, resource["text"]))
                elif isinstance(resource.get("blob"), str) and str(mime_type or "").startswith(
                    "image/"
                ):
                    parts.append(_image(resource["blob"], str(mime_type), f"{where}.resource"))
                else:
                    kind = f" ({mime_type})" if mime_type else ""
                    parts.append(
                        TextPart(text=f"\n[Attached binary resource {uri}{kind}: not shown]\n")
                    )
            case _:
                raise InvalidParams(f"{where}.type", "invalid params: unsupported content block")
    return parts
