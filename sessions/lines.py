"""Session file lines <-> values.

A line is one JSON object. Writing goes through `providers.codec` for messages. Reading a message
takes a fast path that builds the dataclasses directly (pydantic validation of a 10,000-message
transcript costs ~200 ms, several times the budget for resuming one); any shape the fast path does
not know exactly (a field added by a newer version, a malformed part) falls back to the codec, so
nothing is dropped silently.
"""

from __future__ import annotations

import json
from typing import cast, get_args

from providers import codec
from providers.types import (
    ImagePart,
    JsonValue,
    Message,
    Part,
    ProviderMetadata,
    ReasoningEffort,
    ReasoningPart,
    Role,
    TextPart,
    ToolCallPart,
    ToolResultContent,
    ToolResultPart,
    ensure_json,
)
from sessions.entries import (
    FORMAT_VERSION,
    CompactionEntry,
    Entry,
    ExtensionEntry,
    ForkOrigin,
    Header,
    LeafMoveEntry,
    MessageEntry,
    ModeChangeEntry,
    ModelChangeEntry,
    ParentLink,
    TitleEntry,
    UndoSnapshotEntry,
    UnknownEntry,
)

JsonObject = dict[str, JsonValue]

_EFFORTS: frozenset[str] = frozenset(get_args(ReasoningEffort))


class MalformedLine(ValueError):
    """A line that is JSON but not a valid entry or header of a kind this version knows."""


def dumps_line(data: JsonObject) -> bytes:
    """One line of the file, newline included.

    `ensure_ascii` keeps the file valid UTF-8 even for strings holding lone surrogates (tool
    output decoded with `surrogateescape`), and escapes U+2028 so every line splitter agrees.
    """
    text = json.dumps(data, ensure_ascii=True, allow_nan=False, separators=(",", ":"))
    return text.encode("ascii") + b"\n"


# ----------------------------------------------------------------------------------- header


def header_to_json(header: Header) -> JsonObject:
    forked: JsonValue = None
    if header.forked_from is not None:
        forked = {
            "session_id": header.forked_from.session_id,
            "entry_id": header.forked_from.entry_id,
        }
    line: JsonObject = {
        "kind": "header",
        "version": header.version,
        "session_id": header.session_id,
        "cwd": header.cwd,
        "created": header.created,
        "earshot_version": header.earshot_version,
        "forked_from": forked,
        "additional_directories": list[JsonValue](header.additional_directories),
    }
    if header.parent is not None:
        # Only on a child's header (readers that predate children never see the key).
        line["parent"] = {"session_id": header.parent.session_id, "call_id": header.parent.call_id}
    return line


def header_from_json(data: JsonValue) -> Header:
    """Read a header, ignoring fields a newer version added.

    Raises:
        MalformedLine: not a header, or its session id or cwd is missing.
    """
    if not isinstance(data, dict) or data.get("kind") != "header":
        raise MalformedLine("the first line is not a session header")
    version = data.get("version")
    forked = data.get("forked_from")
    origin = None
    if isinstance(forked, dict):
        origin = ForkOrigin(
            session_id=_str(forked, "session_id"), entry_id=_opt_str(forked, "entry_id")
        )
    directories = data.get("additional_directories")
    parent = data.get("parent")
    link = None
    if isinstance(parent, dict):
        parent_id, call_id = parent.get("session_id"), parent.get("call_id")
        if isinstance(parent_id, str) and isinstance(call_id, str):
            link = ParentLink(session_id=parent_id, call_id=call_id)
    return Header(
        session_id=_str(data, "session_id"),
        cwd=_str(data, "cwd"),
        created=_opt_str(data, "created") or "",
        earshot_version=_opt_str(data, "earshot_version") or "",
        version=version if isinstance(version, int) else FORMAT_VERSION,
        forked_from=origin,
        additional_directories=[d for d in directories if isinstance(d, str)]
        if isinstance(directories, list)
        else [],
        parent=link,
    )


# ----------------------------------------------------------------------------------- entries


def entry_to_json(entry: Entry) -> JsonObject:
    """The line of an entry: `{kind, id, parent_id, ts, ...}`."""
    if isinstance(entry, UnknownEntry):
        # Written back verbatim (a fork copies it); the identity fields are the entry's own.
        return {
            "kind": "unknown",
            **entry.raw,
            "id": entry.id,
            "parent_id": entry.parent_id,
            "ts": entry.ts,
        }
    line: JsonObject = {
        "kind": entry.kind,
        "id": entry.id,
        "parent_id": entry.parent_id,
        "ts": entry.ts,
    }
    match entry:
        case MessageEntry():
            line["message"] = codec.message_to_json(entry.message)
        case CompactionEntry():
            line["summary"] = entry.summary
            line["first_kept_id"] = entry.first_kept_id
            line["tokens_before"] = entry.tokens_before
            line["instructions"] = entry.instructions
        case ModelChangeEntry():
            line["model"] = entry.model
            line["reasoning_effort"] = entry.reasoning_effort
        case ModeChangeEntry():
            line["mode"] = entry.mode
        case TitleEntry():
            line["title"] = entry.title
        case LeafMoveEntry():
            line["target_id"] = entry.target_id
        case UndoSnapshotEntry():
            line["snapshot"] = entry.snapshot
            line["batch_id"] = entry.batch_id
            line["paths"] = list[JsonValue](entry.paths)
            line["restored"] = entry.restored
        case ExtensionEntry():
            line["name"] = entry.name
            line["data"] = ensure_json(entry.data, f"extension {entry.name} data")
    return line


def entry_from_json(data: JsonObject) -> Entry:
    """Rebuild an entry; a kind this version does not know becomes an `UnknownEntry`.

    Raises:
        MalformedLine: a known kind whose fields are missing or of the wrong type.
    """
    entry_id = _str(data, "id")
    parent_id = _opt_str(data, "parent_id")
    ts = _opt_str(data, "ts") or ""
    match data.get("kind"):
        case "message":
            return MessageEntry(
                message=message_from_json(data.get("message")),
                id=entry_id,
                parent_id=parent_id,
                ts=ts,
            )
        case "compaction":
            tokens = data.get("tokens_before")
            return CompactionEntry(
                summary=_str(data, "summary"),
                first_kept_id=_opt_str(data, "first_kept_id"),
                tokens_before=tokens if isinstance(tokens, int) else None,
                instructions=_opt_str(data, "instructions"),
                id=entry_id,
                parent_id=parent_id,
                ts=ts,
            )
        case "model_change":
            effort = data.get("reasoning_effort")
            return ModelChangeEntry(
                model=_str(data, "model"),
                # An effort level added by a newer version reads as the model's default.
                reasoning_effort=cast("ReasoningEffort", effort) if effort in _EFFORTS else None,
                id=entry_id,
                parent_id=parent_id,
                ts=ts,
            )
        case "mode_change":
            return ModeChangeEntry(mode=_str(data, "mode"), id=entry_id, parent_id=parent_id, ts=ts)
        case "title":
            return TitleEntry(title=_str(data, "title"), id=entry_id, parent_id=parent_id, ts=ts)
        case "leaf_move":
            return LeafMoveEntry(
                target_id=_opt_str(data, "target_id"), id=entry_id, parent_id=parent_id, ts=ts
            )
        case "undo_snapshot":
            paths = data.get("paths")
            restored = data.get("restored", False)
            if not isinstance(restored, bool):
                raise MalformedLine("restored must be a boolean")
            return UndoSnapshotEntry(
                snapshot=_str(data, "snapshot"),
                batch_id=_str(data, "batch_id"),
                paths=[p for p in paths if isinstance(p, str)] if isinstance(paths, list) else [],
                restored=restored,
                id=entry_id,
                parent_id=parent_id,
                ts=ts,
            )
        case "extension":
            return ExtensionEntry(
                name=_str(data, "name"),
                data=data.get("data"),
                id=entry_id,
                parent_id=parent_id,
                ts=ts,
            )
        case _:
            return UnknownEntry(raw=data, id=entry_id, parent_id=parent_id, ts=ts)


def _str(data: JsonObject, key: str) -> str:
    value = data.get(key)
    if not isinstance(value, str):
        raise MalformedLine(f"{key} must be a string")
    return value


def _opt_str(data: JsonObject, key: str) -> str | None:
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise MalformedLine(f"{key} must be a string or null")
    return value


# ---------------------------------------------------------------------------------- messages

FAST_FIELDS: dict[str, frozenset[str]] = {
    "message": frozenset({"role", "parts", "provider_metadata"}),
    "text": frozenset({"kind", "text", "provider_metadata"}),
    "reasoning": frozenset({"kind", "text", "provider_metadata"}),
    "image": frozenset({"kind", "media_type", "data", "url", "provider_metadata"}),
    "tool_call": frozenset(
        {"kind", "id", "name", "arguments", "invalid_arguments", "provider_metadata"}
    ),
    "tool_result": frozenset(
        {"kind", "tool_call_id", "name", "content", "is_error", "provider_metadata"}
    ),
}
"""The fields the fast path reads, per part kind. A test pins these to the dataclasses' fields, so
a field added to `providers.types` cannot be dropped here unnoticed."""

_ROLES = frozenset({"user", "assistant", "tool"})


class _NotFast(Exception):
    """The fast path does not know this shape exactly; the codec decides."""


def message_from_json(data: JsonValue) -> Message:
    """Rebuild a `Message` written by `providers.codec.message_to_json`.

    Raises:
        MalformedLine: the data is not a message.
    """
    try:
        return _fast_message(data)
    except (_NotFast, TypeError, ValueError, KeyError):
        pass
    try:
        return codec.message_from_json(data)
    except (ValueError, TypeError) as exc:  # ValidationError; NotJsonError (a NaN) is a TypeError
        raise MalformedLine(f"not a message: {exc}") from exc


def _fast_message(data: JsonValue) -> Message:
    if not isinstance(data, dict) or not data.keys() <= FAST_FIELDS["message"]:
        raise _NotFast
    role = data["role"]
    parts = data["parts"]
    if role not in _ROLES or not isinstance(parts, list):
        raise _NotFast
    return Message(
        role=cast("Role", role),
        parts=[_fast_part(part) for part in parts],
        provider_metadata=_metadata(data),
    )


def _fast_part(data: JsonValue) -> Part:
    if not isinstance(data, dict):
        raise _NotFast
    kind = data["kind"]
    if not isinstance(kind, str) or not data.keys() <= FAST_FIELDS.get(kind, frozenset()):
        raise _NotFast
    match kind:
        case "text":
            return TextPart(text=_fast_str(data["text"]), provider_metadata=_metadata(data))
        case "reasoning":
            return ReasoningPart(text=_fast_str(data["text"]), provider_metadata=_metadata(data))
        case "image":
            return ImagePart(
                media_type=_fast_str(data["media_type"]),
                data=_fast_opt_str(data.get("data")),
                url=_fast_opt_str(data.get("url")),
                provider_metadata=_metadata(data),
            )
        case "tool_call":
            return ToolCallPart(
                id=_fast_str(data["id"]),
                name=_fast_str(data["name"]),
                arguments=data["arguments"],
                invalid_arguments=_fast_opt_str(data.get("invalid_arguments")),
                provider_metadata=_metadata(data),
            )
        case "tool_result":
            content = data["content"]
            is_error = data.get("is_error", False)
            if not isinstance(content, list) or not isinstance(is_error, bool):
                raise _NotFast
            return ToolResultPart(
                tool_call_id=_fast_str(data["tool_call_id"]),
                name=_fast_str(data["name"]),
                content=[_fast_result_content(item) for item in content],
                is_error=is_error,
                provider_metadata=_metadata(data),
            )
        case _:
            raise _NotFast


def _fast_result_content(data: JsonValue) -> ToolResultContent:
    part = _fast_part(data)
    if not isinstance(part, TextPart | ImagePart):
        raise _NotFast
    return part


def _fast_str(value: JsonValue) -> str:
    if not isinstance(value, str):
        raise _NotFast
    return value


def _fast_opt_str(value: JsonValue) -> str | None:
    if value is not None and not isinstance(value, str):
        raise _NotFast
    return value


def _metadata(data: JsonObject) -> ProviderMetadata:
    metadata = data.get("provider_metadata", {})
    if not isinstance(metadata, dict):
        raise _NotFast
    # The part's own __post_init__ checks that every namespace holds a JSON object.
    return cast("ProviderMetadata", metadata)
