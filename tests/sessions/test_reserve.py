"""`sessions.reserve`: a new session's file written before the session is built, which the store
then adopts."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from sessions import FORMAT_VERSION, MessageEntry, SessionBusy, SessionStore, new_id
from sessions.lines import header_from_json
from sessions.reserve import HEADER_FORMAT_VERSION, cwd_hash, reserve, take_reserved_lock
from sessions.store import cwd_hash as store_cwd_hash
from tests.sessions.test_session import user


def test_the_reserved_header_is_the_one_the_store_writes(tmp_path: Path) -> None:
    assert HEADER_FORMAT_VERSION == FORMAT_VERSION
    assert cwd_hash is store_cwd_hash
    session_id = new_id()
    path = reserve(
        tmp_path,
        session_id=session_id,
        cwd="/work/project",
        additional_directories=["/work/lib"],
        earshot_version="1.2.3",
    )
    assert path == tmp_path / cwd_hash("/work/project") / f"{session_id}.jsonl"
    [line] = path.read_text(encoding="ascii").splitlines()
    header = header_from_json(json.loads(line))
    assert (header.session_id, header.cwd, header.earshot_version) == (
        session_id,
        "/work/project",
        "1.2.3",
    )
    assert header.additional_directories == ["/work/lib"]
    assert header.created.endswith("Z") and len(header.created) == len("2025-01-31T12:00:00.000Z")
    # No temporary left; the writer lock is held for the build.
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name, f"{session_id}.lock"]
    assert path.stat().st_mode & 0o777 == 0o600
    with pytest.raises(FileExistsError):
        reserve(tmp_path, session_id=session_id, cwd="/work/project", earshot_version="1")
    held = take_reserved_lock(path.with_suffix(".lock"))
    assert held is not None
    os.close(held)


async def test_the_store_lists_loads_and_adopts_a_reserved_session(
    store: SessionStore, project: Path
) -> None:
    session_id = new_id()
    reserve(store.root, session_id=session_id, cwd=str(project), earshot_version="1")
    assert [s.id for s in store.list(project).items] == [session_id]
    opened = await store.open(session_id)  # another process loading it before it is built
    assert opened.path_entries() == []
    # It reads the session, but cannot take it from the process that announced it.
    assert not opened.writable
    holder = opened.holder()
    assert holder is not None and holder.pid == os.getpid()
    with pytest.raises(SessionBusy):
        await opened.append(MessageEntry(message=user("mine?")))
    await opened.aclose()

    adopted = await store.create(project, session_id=session_id)
    await adopted.append(MessageEntry(message=user("hello")))
    await adopted.aclose()
    reopened = await store.open(session_id)
    assert [e.message.text for e in reopened.path_entries() if isinstance(e, MessageEntry)] == [
        "hello"
    ]
    await reopened.aclose()
    # Once something was said in it, it is no longer a reservation to adopt.
    with pytest.raises(ValueError, match="cannot create a session"):
        await store.create(project, session_id=session_id)


async def test_a_reservation_for_another_directory_is_not_adopted(
    store: SessionStore, project: Path, tmp_path: Path
) -> None:
    session_id = new_id()
    reserve(store.root, session_id=session_id, cwd=str(tmp_path / "other"), earshot_version="1")
    with pytest.raises(ValueError, match="cannot create a session"):
        await store.create(project, session_id=session_id)
