from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

from providers.types import Message, TextPart
from sessions import (
    EntryNotFound,
    ForkOrigin,
    InvalidCursor,
    Session,
    SessionNotFound,
    SessionStore,
    SessionUnreadable,
    TitleEntry,
    cwd_hash,
    data_dir,
    new_id,
)
from sessions.session import title_path


def user(text: str) -> Message:
    return Message(role="user", parts=[TextPart(text=text)])


def test_data_dir_follows_xdg() -> None:
    assert data_dir({"XDG_DATA_HOME": "/xdg", "HOME": "/home/u"}) == Path("/xdg/earshot")
    assert data_dir({"HOME": "/home/u"}) == Path("/home/u/.local/share/earshot")
    # A relative XDG_DATA_HOME is invalid per the spec and ignored.
    assert data_dir({"XDG_DATA_HOME": "rel", "HOME": "/h"}) == Path("/h/.local/share/earshot")


def test_default_root_is_under_the_data_dir(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert SessionStore().root == tmp_path / "earshot" / "sessions"


async def test_file_layout(store: SessionStore, project: Path) -> None:
    session = await store.create(project)
    assert session.path == store.root / cwd_hash(project) / f"{session.id}.jsonl"
    assert len(cwd_hash(project)) == 16
    assert cwd_hash(project) == cwd_hash(str(project) + "/")
    assert session.cwd == project
    assert session.path.stat().st_mode & 0o777 == 0o600
    await session.aclose()


async def test_create_under_an_id_minted_earlier(
    store: SessionStore, project: Path, tmp_path: Path
) -> None:
    promised = new_id()
    later = new_id()
    session = await store.create(project, session_id=promised)
    assert session.id == promised
    await session.aclose()
    reopened = await store.open(promised)
    assert reopened.id == promised and reopened.cwd == project
    await reopened.aclose()
    # An id already taken, even by a session of another directory, or not an id at all.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for bad in [promised, "../x", ""]:
        with pytest.raises(ValueError, match="cannot create a session"):
            await store.create(elsewhere, session_id=bad)
    # Minting stays ordered: a session made now sorts after the promised one.
    fresh = await store.create(project)
    assert promised < later < fresh.id
    await fresh.aclose()


async def test_open_unknown_or_unsafe_ids(store: SessionStore, project: Path) -> None:
    with pytest.raises(SessionNotFound):
        await store.open("0000")
    session = await store.create(project)
    await session.aclose()
    for bad in ["../x", f"../{cwd_hash(project)}/{session.id}", "", ".hidden"]:
        with pytest.raises(SessionNotFound):
            await store.open(bad)


async def test_unreadable_header(store: SessionStore, project: Path) -> None:
    session = await store.create(project)
    await session.aclose()
    session.path.write_text('{"kind":"head', encoding="utf-8")
    with pytest.raises(SessionUnreadable):
        await store.open(session.id)
    with capture_logs() as logs:
        assert store.list().items == []
    assert len(logs) == 1


async def test_latest_picks_the_newest_even_within_one_millisecond(
    store: SessionStore, project: Path, tmp_path: Path
) -> None:
    assert await store.latest(project) is None
    created: list[Session] = []
    for _ in range(5):
        session = await store.create(project)
        await session.aclose()
        created.append(session)
    other = await store.create(tmp_path / "elsewhere")
    await other.aclose()
    # Force an mtime tie: only the time-ordered id can tell them apart.
    stamp = 1_700_000_000_000_000_000
    for session in created:
        os.utime(session.path, ns=(stamp, stamp))
    latest = await store.latest(project)
    assert latest is not None
    assert latest.id == created[-1].id
    await latest.aclose()

    # An update makes an older session the latest.
    first = await store.open(created[0].id)
    await first.append_message(user("again"))
    await first.aclose()
    latest = await store.latest(project)
    assert latest is not None and latest.id == created[0].id
    await latest.aclose()


async def test_list_pages_newest_first(store: SessionStore, project: Path, tmp_path: Path) -> None:
    ids: list[str] = []
    for index in range(7):
        cwd = project if index % 2 == 0 else tmp_path / "other"
        session = await store.create(cwd, additional_directories=[f"/add/{index}"])
        await session.append(TitleEntry(title=f"title {index}"))
        await session.aclose()
        stamp = 1_700_000_000_000_000_000 + index * 1_000_000_000
        os.utime(session.path, ns=(stamp, stamp))
        ids.append(session.id)

    page = store.list(limit=3)
    assert [item.id for item in page.items] == ids[::-1][:3]
    seen = [item.id for item in page.items]
    while page.next_cursor is not None:
        page = store.list(cursor=page.next_cursor, limit=3)
        seen += [item.id for item in page.items]
    assert seen == ids[::-1]

    item = store.list(limit=1).items[0]
    assert item.title == "title 6"
    assert item.cwd == str(project)
    assert item.additional_directories == ("/add/6",)
    assert item.updated == "2023-11-14T22:13:26.000Z"
    assert item.created.endswith("Z")
    assert item.size_bytes == (store.root / cwd_hash(project) / f"{ids[6]}.jsonl").stat().st_size

    mine = store.list(project)
    assert [item.id for item in mine.items] == [ids[6], ids[4], ids[2], ids[0]]
    assert mine.next_cursor is None
    assert store.list(tmp_path / "nowhere").items == []


def test_list_of_an_empty_store(store: SessionStore) -> None:
    assert store.list().items == []
    with pytest.raises(InvalidCursor):
        store.list(cursor="not a cursor!")
    with pytest.raises(ValueError, match="limit"):
        store.list(limit=0)


async def test_title_sidecar_tracks_the_latest_title(store: SessionStore, project: Path) -> None:
    session = await store.create(project)
    assert store.list().items[0].title is None
    await session.append(TitleEntry(title="first"))
    await session.append(TitleEntry(title="second"))
    assert store.list().items[0].title == "second"
    await session.aclose()

    # A crash between the title entry and its sidecar: the next full load repairs it.
    title_path(session.path).unlink()
    assert store.list().items[0].title is None
    reopened = await store.open(session.id)
    await reopened.aclose()
    assert store.list().items[0].title == "second"


async def test_delete(store: SessionStore, project: Path) -> None:
    session = await store.create(project)
    await session.append(TitleEntry(title="t"))
    await session.aclose()
    assert await store.delete(session.id)
    assert not session.path.exists()
    assert not title_path(session.path).exists()
    assert not await store.delete(session.id)
    with pytest.raises(SessionNotFound):
        await store.open(session.id)
    assert store.list().items == []


async def test_fork_copies_the_branch(store: SessionStore, project: Path) -> None:
    session = await store.create(project, additional_directories=["/extra"])
    one = await session.append_message(user("one"))
    await session.append(TitleEntry(title="named"))
    two = await session.append_message(user("two"))
    await session.rewind(one.id)
    three = await session.append_message(user("three"))
    await session.aclose()

    fork = await store.fork(session.id)
    assert fork.id != session.id
    assert fork.header.forked_from == ForkOrigin(session_id=session.id, entry_id=three.id)
    assert fork.header.additional_directories == ["/extra"]
    assert fork.cwd == project
    assert [m.text for m in fork.history()] == ["one", "three"]
    assert fork.title is None
    four = await fork.append_message(user("four"))
    assert four.parent_id == three.id
    await fork.aclose()

    at_two = await store.fork(session.id, at_entry=two.id)
    assert [m.text for m in at_two.history()] == ["one", "two"]
    assert at_two.title == "named"
    assert store.list().items[0].title == "named"
    lines = at_two.path.read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[0])["forked_from"] == {"session_id": session.id, "entry_id": two.id}
    await at_two.aclose()

    reloaded = await store.open(at_two.id)
    assert [m.text for m in reloaded.history()] == ["one", "two"]
    await reloaded.aclose()

    original = await store.open(session.id)
    assert [m.text for m in original.history()] == ["one", "three"]
    await original.aclose()

    with pytest.raises(EntryNotFound):
        await store.fork(session.id, at_entry="missing")
    with pytest.raises(SessionNotFound):
        await store.fork("missing")


class _CountingHandle:
    """A file handle that adds what it reads to a shared counter."""

    def __init__(self, inner: Any, counter: list[int]) -> None:
        self._inner = inner
        self._counter = counter

    def __enter__(self) -> _CountingHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self._inner.close()

    def read(self, size: int = -1) -> Any:
        data = self._inner.read(size)
        self._counter[0] += len(data)
        return data

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


async def test_listing_reads_only_the_head_of_each_transcript(
    store: SessionStore, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = await store.create(project)
    await session.append(TitleEntry(title="big one"))
    for _ in range(4):
        await session.append_message(user("x" * 500_000))
    await session.aclose()
    size = session.path.stat().st_size
    assert size > 2_000_000

    read = [0]
    real_open: Any = Path.open

    def counting_open(self: Path, *args: Any, **kwargs: Any) -> Any:
        handle: Any = real_open(self, *args, **kwargs)
        if self.suffix == ".jsonl":
            return _CountingHandle(handle, read)
        return handle

    monkeypatch.setattr(Path, "open", counting_open)
    page = store.list(project)
    assert [item.title for item in page.items] == ["big one"]
    assert page.items[0].size_bytes == size
    assert read[0] < 100_000


async def test_a_session_file_being_created_is_left_out_of_a_listing_quietly(
    store: SessionStore, project: Path
) -> None:
    # Issue 29: another session's file exists, empty, between its creation and its header.
    done = await store.create(project)
    await done.aclose()
    being_created = done.path.with_name(f"{new_id()}.jsonl")
    being_created.touch()
    with capture_logs() as logs:
        page = store.list(project)
    assert [item.id for item in page.items] == [done.id]
    assert logs == []
