"""Prompt content blocks -> the parts a user turn is made of.

`text` stays text; `image` becomes an `ImagePart`; `resource_link` to a `file://` is read (through
the session's file backend, so unsaved editor buffers count) and inlined as context, other schemes
are described; `resource` text is inlined and blobs are described (images become image parts).

A linked file is whatever the client names, so it is read with bounds: resolved once and opened
exactly there (`agent.files.safe_paths`: a link swapped in meanwhile is not followed; one that was
followed to a place the session's read rules refuse is described, not read), regular files only
(a device, FIFO, socket or directory is described as unreadable, never opened for a blocking
read), at most `TEXT_READ_LIMIT` bytes of text (`IMAGE_READ_LIMIT` of an
image), within `READ_TIMEOUT_SECONDS`, and cancellable by `session/cancel` (the server cancels
the reading with the prompt). A link whose URI cannot name a file (a NUL, bad percent-encoding)
is -32602 naming the block's `uri`.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import mimetypes
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, assert_never, cast
from urllib.parse import unquote, urlparse

import anyio
import anyio.to_thread

from acp_server.framing import InvalidParams, shown
from agent.backends import FileBackend
from agent.files import FileId, check_regular, open_for_reading, read_descriptor
from providers.types import ImagePart, TextPart

if TYPE_CHECKING:
    from acp_server.protocol.common import ContentBlock
    from agent.tools import ReadDenied

INLINE_LIMIT = 512_000
"""Characters of one attached file inlined into the prompt."""
TEXT_READ_LIMIT = 4 * INLINE_LIMIT
"""Bytes of an attached text file read at most (enough for `INLINE_LIMIT` characters)."""
IMAGE_READ_LIMIT = 20_000_000
"""Bytes of an attached image; a larger one is described, not sent."""
READ_TIMEOUT_SECONDS = 10.0
"""How long reading one attached file may take (a hung mount, a slow editor)."""

PromptPart = TextPart | ImagePart

_BAD_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")


class _BadUri(ValueError):
    """A `file:` URI that names no file; the message says why."""


def _require(block: dict[str, object], name: str, where: str, what: str = "a string") -> None:
    if not isinstance(block.get(name), str):
        raise InvalidParams(f"{where}.{name}", f"invalid params: {where}.{name} must be {what}")


def _optional(block: dict[str, object], name: str, where: str) -> None:
    if block.get(name) is not None:
        _require(block, name, where)


def _check_resource(resource: object, where: str) -> None:
    fields = cast("dict[str, object]", resource) if isinstance(resource, dict) else None
    if fields is None or not isinstance(fields.get("uri"), str):
        raise InvalidParams(f"{where}.resource", f"invalid params: {where}.resource needs a uri")
    _optional(fields, "mimeType", f"{where}.resource")
    if not isinstance(fields.get("text"), str) and not isinstance(fields.get("blob"), str):
        raise InvalidParams(
            f"{where}.resource", f"invalid params: {where}.resource needs a text or a blob"
        )


def check_blocks(raw: Sequence[object]) -> list[ContentBlock]:
    """Every block checked for the members `prompt_parts` reads (no I/O), as its typed shape.
    Audio is refused here: earshot does not advertise it."""
    blocks: list[ContentBlock] = []
    for index, item in enumerate(raw):
        where = f"prompt[{index}]"
        if not isinstance(item, dict):
            raise InvalidParams(where, f"invalid params: {where} must be a content block object")
        block = cast("dict[str, object]", item)
        kind = block.get("type")
        match kind:
            case "text":
                _require(block, "text", where)
            case "image":
                _require(block, "mimeType", where)
                _require(block, "data", where, "base64")
            case "resource_link":
                _require(block, "uri", where)
                _require(block, "name", where)
                _optional(block, "title", where)
                _optional(block, "mimeType", where)
                try:
                    _file_path(cast("str", block["uri"]))
                except _BadUri as exc:
                    raise InvalidParams(
                        f"{where}.uri", f"invalid params: {where}.uri {exc}"
                    ) from None
            case "resource":
                _check_resource(block.get("resource"), where)
            case "audio":
                raise InvalidParams(
                    f"{where}.type", "invalid params: audio prompts are not supported"
                )
            case _:
                raise InvalidParams(
                    f"{where}.type", f"invalid params: unknown content block type {shown(kind)}"
                )
        # Checked above for every member read later (the type names the variant).
        blocks.append(cast("ContentBlock", block))
    return blocks


def _file_path(uri: str) -> Path | None:
    """The local path a `file:` URI names; None for another scheme or a relative path.

    Raises:
        _BadUri: a NUL, bad percent-encoding, or a URI `urlparse` rejects.
    """
    try:
        parsed = urlparse(uri)
    except ValueError as exc:
        raise _BadUri(f"is not a valid URI ({exc})") from None
    if parsed.scheme != "file":
        return None
    if _BAD_PERCENT.search(parsed.path):
        raise _BadUri("has invalid percent-encoding")
    # Bytes that are not UTF-8 stay as the file name's own bytes (as `os.fsdecode` does).
    decoded = unquote(parsed.path, errors="surrogateescape")
    if "\0" in decoded:
        raise _BadUri("holds a NUL character")
    path = Path(decoded)
    return path if path.is_absolute() else None


def _label(uri: str) -> str:
    """How an embedded resource is named in the prompt: its path, else its URI."""
    try:
        path = _file_path(uri)
    except _BadUri:
        return uri
    return str(path or uri)


def _context(label: str, text: str, *, cut: bool = False) -> TextPart:
    if len(text) > INLINE_LIMIT:
        text = (
            text[:INLINE_LIMIT] + f"\n[... truncated: {len(text) - INLINE_LIMIT} more characters]"
        )
    elif cut:
        text += f"\n[... truncated: only the first {TEXT_READ_LIMIT} bytes were read]"
    return TextPart(text=f'\n<context source="{label}">\n{text}\n</context>\n')


def _image(data: str, mime_type: str, where: str) -> ImagePart:
    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise InvalidParams(f"{where}.data", f"invalid params: {where}.data is not base64") from exc
    return ImagePart(media_type=mime_type, data=data)


class _Unreadable(Exception):
    """A linked file that cannot be attached; the message says why."""


async def _linked_file(
    path: Path, mime_type: str | None, files: FileBackend, read_denied: ReadDenied | None
) -> PromptPart:
    """The part for a linked file.

    Raises:
        _Unreadable: not a regular file, unreadable, too large an image, too slow, or reached
            through a symbolic link at a place the read rules refuse.
    """
    part: PromptPart | None = None
    with anyio.move_on_after(READ_TIMEOUT_SECONDS):
        part = await _read_linked(path, mime_type, files, read_denied)
    if part is None:
        raise _Unreadable(f"not read within {READ_TIMEOUT_SECONDS:g} seconds")
    return part


def _read_exactly(
    path: Path, read_denied: ReadDenied | None, limit: int
) -> tuple[Path, bytes, bool, FileId]:
    """The file the link names: resolved once, opened exactly there (regular files only, never
    a blocking open), refused when a symbolic link on the way led somewhere the read rules
    refuse (the user named the path, not the place a link swapped in meanwhile points to), and
    its first `limit` bytes read. Returns where it is, the bytes, whether there is more, and
    which file it was."""
    real = Path(os.path.realpath(path))
    fd = open_for_reading(real)
    try:
        status = os.fstat(fd)
        check_regular(real, status.st_mode)
        file = FileId.of(status)
        named = Path(os.path.normpath(path))
        if read_denied is not None and (real != named or file.linked) and read_denied(real, file):
            raise _Unreadable("it leads through a link to a place the read rules refuse")
        data, more = read_descriptor(fd, limit)
    finally:
        os.close(fd)
    return real, data, more, file


async def _read_linked(
    path: Path, mime_type: str | None, files: FileBackend, read_denied: ReadDenied | None
) -> PromptPart:
    guessed = mime_type or mimetypes.guess_type(path.name)[0] or ""
    try:
        limit = IMAGE_READ_LIMIT if guessed.startswith("image/") else TEXT_READ_LIMIT
        real, data, more, file = await anyio.to_thread.run_sync(
            _read_exactly, path, read_denied, limit, abandon_on_cancel=True
        )
        if guessed.startswith("image/"):
            if more:
                raise _Unreadable(f"an image larger than {IMAGE_READ_LIMIT} bytes")
            return ImagePart(media_type=guessed, data=base64.b64encode(data).decode("ascii"))
        if more:
            # Too large to inline whole: the start, read from disk (an editor buffer of this
            # size would only be cut too).
            text = codecs.getincrementaldecoder("utf-8")().decode(data, final=False)
            return _context(str(path), text, cut=True)
        data.decode("utf-8")  # binary files are described, not sent to the editor
        # Through the backend: the editor's unsaved buffer, when it has one, is what counts (the
        # same file: opened exactly at the place just checked).
        return _context(str(path), await files.read_text(real, expected=file))
    except UnicodeDecodeError:
        return TextPart(text=f"\n[Attached file {path}: binary, not shown]\n")
    except OSError as exc:
        raise _Unreadable(exc.strerror or type(exc).__name__) from None


async def prompt_parts(
    blocks: Sequence[ContentBlock],
    files: FileBackend,
    problems: list[str] | None = None,
    *,
    read_denied: ReadDenied | None = None,
) -> list[PromptPart]:
    """Convert checked blocks; reads attached files. A linked file that cannot be read becomes
    a note in the prompt (the model learns why), and its sentence is added to `problems` (for
    the user). `read_denied`: the session's read rules, for a link that leads elsewhere."""
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
                    try:
                        parts.append(
                            await _linked_file(path, block.get("mimeType"), files, read_denied)
                        )
                    except _Unreadable as exc:
                        sentence = f"Attached file {path} could not be read: {exc}"
                        parts.append(TextPart(text=f"\n[{sentence}]\n"))
                        if problems is not None:
                            problems.append(sentence)
            case "resource":
                resource = block["resource"]
                uri = resource["uri"]
                mime_type = resource.get("mimeType")
                if "text" in resource:
                    parts.append(_context(_label(uri), resource["text"]))
                elif str(mime_type or "").startswith("image/"):
                    parts.append(_image(resource["blob"], str(mime_type), f"{where}.resource"))
                else:
                    kind = f" ({mime_type})" if mime_type else ""
                    parts.append(
                        TextPart(text=f"\n[Attached binary resource {uri}{kind}: not shown]\n")
                    )
            case "audio":
                raise InvalidParams(f"{where}.type", "invalid params: unsupported content block")
            case _:
                assert_never(block)
    return parts
