"""Issue 24, item 1: the file tools decide on the object they then use.

A background process flips a directory inside the project between a harmless target and the
user's home (or `~/.ssh`, or earshot's config), while each tool runs 1,000 times through the
real gate and executor in `auto` (prompts refused). Nothing outside may be written, and no
secret may reach what the model receives. Before the fix each of these lost within a few
hundred tries: the gate resolved the path once, the tool opened it by a second resolution.
Controls beside them: ordinary work and symbolic links inside the project still work.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from agent.files import safe_paths
from agent.tools import grep as grep_module
from agent.tools.ripgrep import Captured
from tests.security.races import (
    HOME_ONLY,
    OUTSIDE,
    Lab,
    ToolRunner,
    flipping,
    home_state,
    leaked,
    make_lab,
    result_text,
)

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the races are run on Linux"
)

TRIES = 1000


@pytest.fixture
def lab(tmp_path: Path) -> Lab:
    return make_lab(tmp_path)


@pytest.mark.parametrize("openat2", [True, False], ids=["openat2", "walk"])
async def test_read_through_a_flipping_link_never_returns_a_secret(
    lab: Lab, openat2: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # "walk": one component at a time with O_NOFOLLOW, as on macOS and before Linux 5.6.
    monkeypatch.setattr(safe_paths, "_openat2_state", openat2)
    runner = ToolRunner(lab)
    ssh, config = lab.project / "ssh_flip", lab.project / "config_flip"
    shown: list[str] = []
    with flipping(ssh, lab.real, lab.ssh), flipping(config, lab.real, lab.earshot_config):
        for attempt in range(TRIES):
            target = "ssh_flip/id_ed25519" if attempt % 2 else "config_flip/settings.json"
            shown.append(result_text(await runner.call("read", path=target)))
    assert [text for text in shown if leaked(text)] == []
    assert any("harmless" in text for text in shown)  # the race was run, not refused outright


async def test_write_through_a_flipping_link_never_lands_outside(lab: Lab) -> None:
    runner = ToolRunner(lab)
    before = home_state(lab)
    flip = lab.project / "flip"
    written = 0
    with flipping(flip, lab.real, lab.home):
        for attempt in range(TRIES):
            name = ".bashrc" if attempt % 2 else f"tt{attempt}.txt"
            if name == ".bashrc":
                # The model must have read it first; reading a file outside is allowed in auto.
                await runner.call("read", path="flip/.bashrc")
            result = await runner.call("write", path=f"flip/{name}", content=f"pwned {attempt}\n")
            written += not result.is_error
    assert home_state(lab) == before
    assert written > 0  # the inside target was written meanwhile
    assert any(lab.real.glob("tt*.txt"))


async def test_edit_through_a_flipping_link_never_changes_a_file_outside(lab: Lab) -> None:
    runner = ToolRunner(lab)
    # Both files read (absolute paths), so an edit reaching either passes the fresh-read check.
    await runner.call("read", path=str(lab.real / "notes.txt"))
    await runner.call("read", path=str(lab.home / "notes.txt"))
    before = home_state(lab)
    flip = lab.project / "flip"
    edited = 0
    with flipping(flip, lab.real, lab.home):
        for attempt in range(TRIES):
            old, new = ("A", "B") if attempt % 2 == 0 else ("B", "A")
            result = await runner.call(
                "edit", path="flip/notes.txt", old_string=f"notes {old}", new_string=f"notes {new}"
            )
            edited += not result.is_error
            # Checked each time: a second edit reaching the same file would undo the first.
            assert (lab.home / "notes.txt").read_bytes() == before["notes.txt"]
    assert home_state(lab) == before
    assert edited > 0


@pytest.mark.parametrize("tool", ["ls", "glob", "grep"])
async def test_a_search_through_a_flipping_link_shows_nothing_outside(lab: Lab, tool: str) -> None:
    # accept-edits: a read outside the workspace asks (and nobody can say yes here).
    runner = ToolRunner(lab, mode="accept-edits")
    arguments = {
        "ls": {"path": "flip"},
        "glob": {"pattern": "*", "path": "flip"},
        "grep": {"pattern": "notes|harmless", "path": "flip"},
    }[tool]
    flip = lab.project / "flip"
    shown: list[str] = []
    with flipping(flip, lab.real, lab.home):
        for _ in range(TRIES):
            shown.append(result_text(await runner.call(tool, **arguments)))
    assert [text for text in shown if leaked(text) or OUTSIDE in text] == []
    assert any("id_ed25519" in text or "harmless" in text for text in shown)


async def test_grep_never_searches_what_its_tree_walk_met_through_a_swapped_directory(
    lab: Lab, monkeypatch: pytest.MonkeyPatch
) -> None:
    # rg walks the tree by name: a directory it listed can be a link to ~/.ssh by the time it
    # reads the files in it (before the fix, 1 to 4 of 1,000 searches of the project returned
    # the key while `real` was swapped for such a link in a loop). Here that moment is made to
    # last: the first pass lists `real/id_ed25519`, and `real` is then the link.
    runner = ToolRunner(lab)
    real = lab.real
    listed = grep_module._matching_files  # pyright: ignore[reportPrivateUsage]

    async def listed_then_swapped(*args: Any) -> Captured:
        captured = await listed(*args)
        real.rename(lab.project / "parked")
        real.symlink_to(lab.ssh)
        return captured

    monkeypatch.setattr(grep_module, "_matching_files", listed_then_swapped)
    result = await runner.call("grep", pattern="SECRET|harmless")
    assert not leaked(result_text(result))
    assert result_text(result) == "No matches found."


# ------------------------------------------------------------------------------- controls


async def test_ordinary_work_and_links_inside_the_project_still_work(lab: Lab) -> None:
    runner = ToolRunner(lab)
    (lab.project / "inside_link").symlink_to(lab.real)
    (lab.project / "file_link").symlink_to(lab.real / "notes.txt")
    read = await runner.call("read", path="inside_link/notes.txt")
    assert "project notes A" in result_text(read)
    await runner.call("read", path="file_link")
    edited = await runner.call("edit", path="file_link", old_string="notes A", new_string="notes C")
    assert not edited.is_error, result_text(edited)
    # The link stays a link; the file it names changed.
    assert (lab.project / "file_link").is_symlink()
    assert (lab.real / "notes.txt").read_text(encoding="utf-8") == "project notes C\n"
    written = await runner.call("write", path="inside_link/new/deep.txt", content="made\n")
    assert not written.is_error, result_text(written)
    assert (lab.real / "new" / "deep.txt").read_text(encoding="utf-8") == "made\n"
    listed = result_text(await runner.call("ls", path="inside_link"))
    assert "notes.txt" in listed
    found = result_text(await runner.call("grep", pattern="notes C", path="inside_link"))
    assert "notes.txt" in found
    globbed = result_text(await runner.call("glob", pattern="**/*.txt"))
    assert "real/notes.txt" in globbed


async def test_a_link_out_of_the_project_is_followed_when_its_target_is_allowed(lab: Lab) -> None:
    runner = ToolRunner(lab)
    (lab.project / "linked").symlink_to(lab.home)
    read = await runner.call("read", path="linked/notes.txt")
    assert "outside notes A" in result_text(read)  # auto reads outside the workspace
    listed = result_text(await runner.call("ls", path="linked"))
    assert "notes.txt" in listed
    secret = await runner.call("read", path="linked/.ssh/id_ed25519")
    assert secret.is_error and not leaked(result_text(secret))
    assert HOME_ONLY not in result_text(await runner.call("ls", path="linked/.ssh"))
    written = await runner.call("write", path="linked/new.txt", content="x\n")
    assert written.is_error  # a write outside the workspace asks, and nobody can say yes here
    assert not (lab.home / "new.txt").exists()
