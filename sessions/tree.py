"""The in-memory tree of one session file, and the request history it implies.

Lines are kept as the raw dicts `json.loads` produced; an `Entry` (and the `Message` inside it) is
built only when someone asks for it, so resuming a long session parses each line once and builds
only the messages on the current path.

Semantics, in file order:
- every entry except a `leaf_move` becomes the leaf (its parent is the leaf before it);
- a `leaf_move` makes its `target_id` the leaf (None: before the first entry) and stays out of
  every path;
- the current path is the leaf and its ancestors, followed through `parent_id`. A parent must come
  earlier in the file, which rules out cycles in a damaged file.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator

from providers.logs import get_logger
from providers.text import valid_json
from providers.types import Message, TextPart
from sessions.entries import CompactionEntry, Entry, MessageEntry, UnknownEntry
from sessions.lines import JsonObject, MalformedLine, entry_from_json
from sessions.repair import Memo, join_results

try:
    # orjson parses a long transcript's lines about three times faster than the stdlib, which is
    # most of the time a resume takes; the stdlib stays as the fallback.
    from orjson import loads as _loads
except ImportError:  # pragma: no cover - orjson is a declared dependency
    _loads = json.loads

_log = get_logger(__name__)


def parse_lines(lines: Iterable[tuple[int, str]], where: str) -> list[JsonObject]:
    """JSON objects of `(line number, text)` pairs; other lines are skipped with a warning."""
    objects: list[JsonObject] = []
    loads = _loads
    for number, text in lines:
        if not text:
            continue
        try:
            value = loads(text)
        except ValueError:  # orjson.JSONDecodeError is a ValueError too
            value = _lenient_loads(text)
            if value is None:
                _log.warning("session line is not JSON, skipped", path=where, line=number)
                continue
        if isinstance(value, dict):
            objects.append(value)  # pyright: ignore[reportUnknownArgumentType]
        else:
            _log.warning("session line is not an object, skipped", path=where, line=number)
    return objects


def _lenient_loads(text: str) -> object:
    """A line orjson refused, parsed by the stdlib, which accepts the escape of a lone surrogate
    (`"\\ud800"`, valid JSON that earlier versions wrote for a client's bad text): the line
    loads with U+FFFD in its place. None when it is not JSON at all."""
    try:
        return valid_json(json.loads(text))
    except (ValueError, RecursionError):
        return None


class Tree:
    """Entries in file order, indexed by id, with the current leaf."""

    def __init__(self, where: str) -> None:
        self._where = where
        self._raws: list[JsonObject] = []
        self._ids: list[str] = []
        self._parents: list[str | None] = []
        self._kinds: list[str] = []
        self._built: list[Entry | None] = []
        self._index: dict[str, int] = {}
        self._leaf: str | None = None
        self._last_title: int | None = None
        self._path_key: tuple[str | None, int] = (None, -1)
        self._path: list[int] = []
        self._joined: Memo = {}

    def __len__(self) -> int:
        return len(self._raws)

    def __contains__(self, entry_id: str) -> bool:
        return entry_id in self._index

    @property
    def leaf_id(self) -> str | None:
        return self._leaf

    @property
    def last_title_id(self) -> str | None:
        """The id of the last `title` entry in file order (what listings show)."""
        return None if self._last_title is None else self._ids[self._last_title]

    def raw(self, entry_id: str) -> JsonObject:
        return self._raws[self._index[entry_id]]

    def raw_at(self, position: int) -> JsonObject:
        return self._raws[position]

    def kind_at(self, position: int) -> str:
        return self._kinds[position]

    def add(self, raw: JsonObject, built: Entry | None = None) -> bool:
        """Add one line; returns False (after warning) for a line that cannot be an entry."""
        kind = raw.get("kind")
        entry_id = raw.get("id")
        parent_id = raw.get("parent_id")
        if not isinstance(kind, str) or kind == "header":
            _log.warning("session line has no entry kind, skipped", path=self._where, kind=kind)
            return False
        if not isinstance(entry_id, str) or not entry_id or entry_id in self._index:
            _log.warning(
                "session entry id missing or repeated, skipped", path=self._where, id=entry_id
            )
            return False
        if not isinstance(parent_id, str):
            parent_id = None
        elif parent_id not in self._index:
            _log.warning(
                "session entry's parent is not earlier in the file", path=self._where, id=entry_id
            )
        position = len(self._raws)
        self._raws.append(raw)
        self._ids.append(entry_id)
        self._parents.append(parent_id)
        self._kinds.append(kind)
        self._built.append(built)
        self._index[entry_id] = position
        if kind == "leaf_move":
            target = raw.get("target_id")
            if target is None or (isinstance(target, str) and self.can_be_leaf(target)):
                self._leaf = target
            else:
                _log.warning(
                    "session leaf move to an unknown entry ignored", path=self._where, id=entry_id
                )
        else:
            self._leaf = entry_id
        if kind == "title":
            self._last_title = position
        return True

    def can_be_leaf(self, entry_id: str) -> bool:
        """Whether the leaf may move to `entry_id` (an entry of this tree, not a leaf move)."""
        position = self._index.get(entry_id)
        return position is not None and self._kinds[position] != "leaf_move"

    # ------------------------------------------------------------------------------- reading

    def entry_at(self, position: int) -> Entry:
        built = self._built[position]
        if built is None:
            raw = self._raws[position]
            try:
                built = entry_from_json(raw)
            except MalformedLine as exc:
                _log.warning(
                    "session entry unreadable, kept as unknown",
                    path=self._where,
                    id=self._ids[position],
                    error=str(exc),
                )
                built = UnknownEntry(
                    raw=raw,
                    id=self._ids[position],
                    parent_id=self._parents[position],
                    ts=ts if isinstance(ts := raw.get("ts"), str) else "",
                )
            self._built[position] = built
        return built

    def entries(self) -> list[Entry]:
        return [self.entry_at(position) for position in range(len(self._raws))]

    def get(self, entry_id: str) -> Entry | None:
        position = self._index.get(entry_id)
        return None if position is None else self.entry_at(position)

    def ancestry(self, entry_id: str | None) -> list[int]:
        """Positions from the root down to `entry_id` (empty for None)."""
        positions: list[int] = []
        bound = len(self._raws)
        current = entry_id
        while current is not None:
            position = self._index.get(current)
            if position is None or position >= bound:
                break
            positions.append(position)
            bound = position
            current = self._parents[position]
        positions.reverse()
        return positions

    def path_positions(self) -> list[int]:
        key = (self._leaf, len(self._raws))
        if key != self._path_key:
            self._path = [
                position
                for position in self.ancestry(self._leaf)
                if self._kinds[position] != "leaf_move"
            ]
            self._path_key = key
        return self._path

    def path_entries(self) -> list[Entry]:
        return [self.entry_at(position) for position in self.path_positions()]

    def latest_on_path(self, kind: str) -> Entry | None:
        for position in reversed(self.path_positions()):
            if self._kinds[position] == kind:
                return self.entry_at(position)
        return None

    def history(self) -> list[Message]:
        """The request history: after the latest compaction on the path, its summary as a user
        message and then the path's messages from its `first_kept_id` on; otherwise every message
        on the path. The tool messages answering one assistant message are joined into one, in
        call order, with every call answered (`sessions.repair.join_results`)."""
        path = self.path_positions()
        start = 0
        messages: list[Message] = []
        positions: list[int] = []
        for offset in range(len(path) - 1, -1, -1):
            if self._kinds[path[offset]] != "compaction":
                continue
            compaction = self.entry_at(path[offset])
            if not isinstance(compaction, CompactionEntry):
                continue
            start = offset + 1
            if compaction.first_kept_id is not None:
                kept = self._index.get(compaction.first_kept_id)
                if kept is not None and kept in path:
                    start = path.index(kept)
                else:
                    _log.warning(
                        "compaction keeps an entry not on the path; keeping what follows it",
                        path=self._where,
                        id=compaction.id,
                    )
            messages.append(Message(role="user", parts=[TextPart(text=compaction.summary)]))
            positions.append(-1)
            break
        kinds = self._kinds
        for position in path[start:]:
            if kinds[position] == "message":
                entry = self.entry_at(position)
                if isinstance(entry, MessageEntry):
                    messages.append(entry.message)
                    positions.append(position)
        return join_results(messages, positions, self._joined)

    def newest_first(self) -> Iterator[Entry]:
        """The current path's entries from the leaf back (built as they are reached)."""
        for position in reversed(self.path_positions()):
            yield self.entry_at(position)
