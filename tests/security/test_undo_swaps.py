"""Issue 24, item 1: undo and rewind put files back only into the directories their snapshot
recorded.

The model writes `d/.bashrc` (or creates `d/new.txt`), a background command then replaces `d`
with a link to `$HOME`, and the user undoes the batch (`earshot undo`, `/undo`, or `/rewind`
with files, which restores the same snapshots). Before the fix the restore followed the link:
it overwrote `~/.bashrc` or deleted `~/new.txt`. A hard link planted in the project must not
make undo change or delete the file it shares with a place outside either. Controls: an
ordinary undo, including one that recreates a directory the batch removed, still works.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from agent.undo import UndoStore
from tests.security.races import Lab, make_lab

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is required")


@pytest.fixture
def lab(tmp_path: Path) -> Lab:
    lab = make_lab(tmp_path)
    (lab.project / "d").mkdir()
    return lab


def store(lab: Lab) -> UndoStore:
    return UndoStore(lab.project, lab.root / "data")


def swap_for_link(directory: Path, target: Path) -> None:
    """What the background command does: the directory moves away, a link takes its place."""
    directory.rename(directory.with_name(directory.name + ".moved"))
    directory.symlink_to(target)


async def test_undo_does_not_restore_into_a_directory_swapped_for_a_link(lab: Lab) -> None:
    undo = store(lab)
    target = lab.project / "d" / ".bashrc"
    target.write_text("v0\n", encoding="utf-8")
    for version in ("v1\n", "v2\n"):
        await undo.snapshot("s", version.strip(), [target])
        target.write_text(version, encoding="utf-8")
    before = (lab.home / ".bashrc").read_bytes()
    swap_for_link(lab.project / "d", lab.home)
    result = await undo.undo_last("s")
    assert (lab.home / ".bashrc").read_bytes() == before
    assert "could not restore: d/.bashrc" in result.message
    assert "not the directory the snapshot recorded" in result.message


async def test_undo_does_not_delete_through_a_directory_swapped_for_a_link(lab: Lab) -> None:
    undo = store(lab)
    created = lab.project / "d" / "notes.txt"
    await undo.snapshot("s", "b1", [created])
    created.write_text("made by the model\n", encoding="utf-8")
    swap_for_link(lab.project / "d", lab.home)
    result = await undo.undo_last("s")
    assert (lab.home / "notes.txt").read_text(encoding="utf-8") == "outside notes A\n"
    assert "not the directory the snapshot recorded" in result.message


async def test_undoing_a_command_does_not_delete_through_a_swapped_directory(lab: Lab) -> None:
    undo = store(lab)
    (lab.project / "d" / "kept.txt").write_text("kept\n", encoding="utf-8")
    await undo.snapshot("s", "b1", [], whole_tree=True)
    (lab.project / "d" / "notes.txt").write_text("made by a command\n", encoding="utf-8")
    (lab.project / "d" / "kept.txt").write_text("changed by a command\n", encoding="utf-8")
    swap_for_link(lab.project / "d", lab.home)
    (lab.home / "kept.txt").write_text("the user's own\n", encoding="utf-8")
    result = await undo.undo_last("s")
    assert (lab.home / "notes.txt").read_text(encoding="utf-8") == "outside notes A\n"
    assert (lab.home / "kept.txt").read_text(encoding="utf-8") == "the user's own\n"
    assert "d/" in result.message


async def test_rewind_restores_nothing_through_a_swapped_directory(lab: Lab) -> None:
    undo = store(lab)
    target = lab.project / "d" / ".bashrc"
    target.write_text("v0\n", encoding="utf-8")
    snapshot = await undo.snapshot("s", "b1", [target])
    assert snapshot is not None
    target.write_text("v1\n", encoding="utf-8")
    before = (lab.home / ".bashrc").read_bytes()
    swap_for_link(lab.project / "d", lab.home)
    result = await undo.restore_snapshots("s", [snapshot])
    assert (lab.home / ".bashrc").read_bytes() == before
    assert not result.restored
    assert "not the directory the snapshot recorded" in result.message


async def test_a_planted_hard_link_does_not_make_undo_touch_the_file_outside(lab: Lab) -> None:
    undo = store(lab)
    outside = lab.home / "keep.txt"
    outside.write_text("the user's file\n", encoding="utf-8")
    changed, created = lab.project / "changed.txt", lab.project / "created.txt"
    changed.write_text("v0\n", encoding="utf-8")
    await undo.snapshot("s", "b1", [changed, created])
    changed.write_text("v1\n", encoding="utf-8")
    created.write_text("new\n", encoding="utf-8")
    for name in (changed, created):  # both names now share the user's file
        name.unlink()
        os.link(outside, name)
    await undo.undo_last("s")
    assert outside.read_text(encoding="utf-8") == "the user's file\n"
    assert changed.read_text(encoding="utf-8") == "v0\n"
    assert not created.exists()


# ------------------------------------------------------------------------------- controls


async def test_an_ordinary_undo_still_restores_deletes_and_recreates(lab: Lab) -> None:
    undo = store(lab)
    kept = lab.project / "d" / "kept.txt"
    kept.write_text("v0\n", encoding="utf-8")
    created = lab.project / "new" / "deep" / "made.txt"
    (lab.project / "link").symlink_to("d/kept.txt")
    await undo.snapshot("s", "b1", [kept, created, lab.project / "link"])
    kept.write_text("v1\n", encoding="utf-8")
    created.parent.mkdir(parents=True)
    created.write_text("made\n", encoding="utf-8")
    (lab.project / "link").unlink()
    result = await undo.undo_last("s")
    assert result.restored, result.message
    assert kept.read_text(encoding="utf-8") == "v0\n"
    assert not (lab.project / "new").exists()
    assert os.readlink(lab.project / "link") == "d/kept.txt"


async def test_undoing_a_command_that_removed_a_directory_puts_it_back(lab: Lab) -> None:
    undo = store(lab)
    (lab.project / "d" / "a.txt").write_text("a\n", encoding="utf-8")
    (lab.project / "top.txt").write_text("top\n", encoding="utf-8")
    await undo.snapshot("s", "b1", [], whole_tree=True)
    shutil.rmtree(lab.project / "d")
    (lab.project / "top.txt").write_text("changed\n", encoding="utf-8")
    (lab.project / "extra").mkdir()
    (lab.project / "extra" / "x.txt").write_text("x\n", encoding="utf-8")
    result = await undo.undo_last("s")
    assert result.restored, result.message
    assert (lab.project / "d" / "a.txt").read_text(encoding="utf-8") == "a\n"
    assert (lab.project / "top.txt").read_text(encoding="utf-8") == "top\n"
    assert not (lab.project / "extra").exists()
