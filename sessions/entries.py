"""The lines of a session file.

The first line is a `Header`. Every later line is one entry `{kind, id, parent_id, ts, ...}`. A
`Message` inside an entry carries no ids: identity is this module's concern, content is the
provider types' (style-anchors "identity stays apart from content").

Entries are built by callers with empty `id`/`parent_id`/`ts`; the store fills those in inside its
write queue, so concurrent appends chain instead of becoming siblings.
"""

from __future__ import annotations

from dataclasses import field
from typing import Literal, TypeAlias

from providers.records import Record
from providers.types import JsonValue, Message, ReasoningEffort

FORMAT_VERSION = 1


class ForkOrigin(Record):
    session_id: str
    entry_id: str | None
    """The entry the fork was taken at (None: the source's leaf at the time)."""


class ParentLink(Record):
    """A child session's parent: the session and the `task` tool call that started it."""

    session_id: str
    call_id: str


class Header(Record):
    session_id: str
    cwd: str
    """Absolute working directory the session belongs to."""
    created: str
    """ISO 8601 UTC."""
    earshot_version: str
    version: int = FORMAT_VERSION
    forked_from: ForkOrigin | None = None
    additional_directories: list[str] = field(default_factory=lambda: [])
    parent: ParentLink | None = None
    """Set on a subagent's session (a child): the session and call that ran it."""
    kind: Literal["header"] = "header"


class MessageEntry(Record):
    message: Message
    id: str = ""
    parent_id: str | None = None
    ts: str = ""
    kind: Literal["message"] = "message"


class CompactionEntry(Record):
    """A cut point and a preamble. The request history becomes the preamble (as a user message)
    followed by the path entries from `first_kept_id` on. Nothing before it is deleted."""

    summary: str
    first_kept_id: str | None
    """The first entry kept verbatim; None keeps nothing but the summary."""
    tokens_before: int | None = None
    instructions: str | None = None
    """The user's `/compact` instructions, if any."""
    id: str = ""
    parent_id: str | None = None
    ts: str = ""
    kind: Literal["compaction"] = "compaction"


class ModelChangeEntry(Record):
    model: str
    """`provider/model`."""
    reasoning_effort: ReasoningEffort | None = None
    id: str = ""
    parent_id: str | None = None
    ts: str = ""
    kind: Literal["model_change"] = "model_change"


class ModeChangeEntry(Record):
    mode: str
    id: str = ""
    parent_id: str | None = None
    ts: str = ""
    kind: Literal["mode_change"] = "mode_change"


class TitleEntry(Record):
    title: str
    id: str = ""
    parent_id: str | None = None
    ts: str = ""
    kind: Literal["title"] = "title"


class LeafMoveEntry(Record):
    """Rewind: the current leaf becomes `target_id` (None: before the first entry). The next
    append's parent is the target, starting a new branch; the old branch stays in the file."""

    target_id: str | None
    id: str = ""
    parent_id: str | None = None
    ts: str = ""
    kind: Literal["leaf_move"] = "leaf_move"


class UndoSnapshotEntry(Record):
    """A reference to an undo snapshot (a tree in earshot's own git object store)."""

    snapshot: str
    """The git object id of the snapshot taken before the batch ran."""
    batch_id: str
    paths: list[str] = field(default_factory=lambda: [])
    """Paths the batch was about to change, relative to the cwd."""
    restored: bool = False
    """True on the entry that records an undo having restored this snapshot."""
    id: str = ""
    parent_id: str | None = None
    ts: str = ""
    kind: Literal["undo_snapshot"] = "undo_snapshot"


class ExtensionEntry(Record):
    """Anything else a component needs to keep (plan state, usage totals...): `name` says whose."""

    name: str
    data: JsonValue = None
    id: str = ""
    parent_id: str | None = None
    ts: str = ""
    kind: Literal["extension"] = "extension"


class UnknownEntry(Record):
    """A line of a kind this version does not know (written by a newer earshot): kept, skipped."""

    raw: dict[str, JsonValue]
    id: str = ""
    parent_id: str | None = None
    ts: str = ""
    kind: Literal["unknown"] = "unknown"


Entry: TypeAlias = (
    MessageEntry
    | CompactionEntry
    | ModelChangeEntry
    | ModeChangeEntry
    | TitleEntry
    | LeafMoveEntry
    | UndoSnapshotEntry
    | ExtensionEntry
    | UnknownEntry
)
