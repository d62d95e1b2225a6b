"""Random interleavings of append / fork / rewind / compaction / reload against a plain model."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import anyio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from providers.types import Message, TextPart
from sessions import (
    CompactionEntry,
    Entry,
    LeafMoveEntry,
    MessageEntry,
    Session,
    SessionStore,
    TitleEntry,
)


@dataclass
class Model:
    """The semantics, written as plainly as possible."""

    entries: dict[str, Entry] = field(default_factory=lambda: {})
    leaf: str | None = None

    def add(self, entry: Entry) -> None:
        assert entry.id not in self.entries
        assert entry.parent_id == self.leaf
        self.entries[entry.id] = entry
        self.leaf = entry.target_id if isinstance(entry, LeafMoveEntry) else entry.id

    def ancestry(self, entry_id: str | None) -> list[Entry]:
        chain: list[Entry] = []
        while entry_id is not None:
            entry = self.entries[entry_id]
            chain.insert(0, entry)
            entry_id = entry.parent_id
        return [entry for entry in chain if not isinstance(entry, LeafMoveEntry)]

    def path(self) -> list[Entry]:
        return self.ancestry(self.leaf)

    def history(self) -> list[Message]:
        path = self.path()
        compactions = [i for i, entry in enumerate(path) if isinstance(entry, CompactionEntry)]
        if not compactions:
            return [entry.message for entry in path if isinstance(entry, MessageEntry)]
        at = compactions[-1]
        compaction = path[at]
        assert isinstance(compaction, CompactionEntry)
        ids = [entry.id for entry in path]
        start = at + 1 if compaction.first_kept_id is None else ids.index(compaction.first_kept_id)
        kept = [entry.message for entry in path[start:] if isinstance(entry, MessageEntry)]
        return [Message(role="user", parts=[TextPart(text=compaction.summary)]), *kept]

    def title(self) -> str | None:
        titles = [entry.title for entry in self.path() if isinstance(entry, TitleEntry)]
        return titles[-1] if titles else None


picks = st.none() | st.integers(min_value=0, max_value=1_000)


def message_operation(max_size: int) -> st.SearchStrategy[tuple[str, str]]:
    return st.tuples(st.just("message"), st.text(max_size=max_size))


operations = st.lists(
    st.one_of(
        # Messages dominate real sessions and give compaction and rewind something to cut.
        message_operation(1),
        message_operation(4),
        message_operation(8),
        st.tuples(st.just("title"), st.text(max_size=6)),
        st.tuples(st.just("compact"), picks, st.text(max_size=6)),
        st.tuples(st.just("rewind"), picks),
        st.tuples(st.just("fork"), picks),
        st.tuples(st.just("reload")),
    ),
    min_size=8,
    max_size=40,
)


def check(session: Session, model: Model) -> None:
    assert session.leaf_id == model.leaf
    assert list(session.entries) == list(model.entries.values())
    assert session.path_entries() == model.path()
    assert session.history() == model.history()
    assert session.title == model.title()


async def run(operations: list[tuple[object, ...]], root: Path) -> None:
    store = SessionStore(root)
    session = await store.create(root / "project")
    model = Model()
    for operation in operations:
        match operation:
            case ("message", str(text)):
                message = Message(role="user", parts=[TextPart(text=text)])
                model.add(await session.append_message(message))
            case ("title", str(text)):
                model.add(await session.append(TitleEntry(title=text)))
            case ("compact", pick, str(summary)):
                path = model.path()
                kept = None if pick is None or not path else path[int(str(pick)) % len(path)].id
                model.add(
                    await session.append(CompactionEntry(summary=summary, first_kept_id=kept))
                )
            case ("rewind", pick):
                targets = [e.id for e in model.entries.values() if not isinstance(e, LeafMoveEntry)]
                target = (
                    None if pick is None or not targets else targets[int(str(pick)) % len(targets)]
                )
                model.add(await session.rewind(target))
            case ("fork", pick):
                targets = [e.id for e in model.entries.values() if not isinstance(e, LeafMoveEntry)]
                at = None if pick is None or not targets else targets[int(str(pick)) % len(targets)]
                forked = await store.fork(session.id, at_entry=at)
                assert forked.header.forked_from is not None
                assert forked.header.forked_from.entry_id == (at if at is not None else model.leaf)
                copied = model.ancestry(at if at is not None else model.leaf)
                await session.aclose()
                session, model = forked, Model()
                for entry in copied:
                    model.entries[entry.id] = entry
                model.leaf = copied[-1].id if copied else None
            case ("reload",):
                await session.aclose()
                session = await store.open(session.id)
            case _:
                raise AssertionError(operation)
        check(session, model)
    await session.aclose()
    reloaded = await store.open(session.id)
    check(reloaded, model)
    await reloaded.aclose()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(operations)
def test_session_behaves_like_the_model(operations: list[tuple[object, ...]]) -> None:
    with tempfile.TemporaryDirectory() as directory:
        anyio.run(run, operations, Path(directory))
