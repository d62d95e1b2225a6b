"""Issue 24, item 1, beyond the tools: every other place that turns a path into a file operation
uses what it decided on. A file a client attaches (`resource_link`) or a print-mode `@mention`
names, the code index's reads, a fork's temporary file, the walk itself without `openat2`. Each
attack is set up as the race would leave it at the worst moment (a directory already swapped for
a link), so it is deterministic.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import cast

import pytest

from acp_server.content import prompt_parts
from acp_server.protocol.common import ContentBlock
from agent.backends import PermissionAnswer, PermissionPrompt, Question, QuestionAnswer
from agent.codeindex.files import read_source
from agent.files import PathChanged, read_exact, replace_exact, safe_paths
from agent.local import LocalFiles
from earshot.print_mode import build_prompt
from providers.types import TextPart
from sessions.files import SessionFile
from tests.security.races import SECRET_KEY, Lab, ToolRunner, make_lab


@pytest.fixture
def lab(tmp_path: Path) -> Lab:
    return make_lab(tmp_path)


def link(uri_path: Path) -> list[ContentBlock]:
    block = {"type": "resource_link", "uri": f"file://{uri_path}", "name": uri_path.name}
    return [cast("ContentBlock", block)]


async def attached(lab: Lab, path: Path) -> str:
    gate = ToolRunner(lab).gate
    parts = await prompt_parts(link(path), LocalFiles(), [], read_denied=gate.read_denied)
    return "".join(part.text for part in parts if isinstance(part, TextPart))


async def test_an_attached_file_reached_through_a_link_to_a_secret_is_not_read(lab: Lab) -> None:
    (lab.project / "flip").symlink_to(lab.ssh)  # where the flipper left it this time
    text = await attached(lab, lab.project / "flip" / "id_ed25519")
    assert SECRET_KEY not in text
    assert "could not be read" in text


async def test_attached_files_the_user_names_still_read(lab: Lab) -> None:
    (lab.project / "flip").symlink_to(lab.real)
    assert "project notes A" in await attached(lab, lab.project / "flip" / "notes.txt")
    # Named by the user outright, a secret is the user's choice.
    assert SECRET_KEY in await attached(lab, lab.ssh / "id_ed25519")


def test_the_code_index_reads_nothing_through_a_swapped_directory(lab: Lab) -> None:
    (lab.project / "pkg").mkdir()
    (lab.project / "pkg" / "mod.py").write_text("def inside(): ...\n", encoding="utf-8")
    (lab.home / "mod.py").write_text("def outside_secret(): ...\n", encoding="utf-8")
    read = read_source(lab.project, "pkg/mod.py")
    assert read is not None and b"inside" in read[0]
    # Listed by git while `pkg` was a directory, read after it became a link to $HOME:
    (lab.project / "pkg").rename(lab.project / "pkg.moved")
    (lab.project / "pkg").symlink_to(lab.home)
    assert read_source(lab.project, "pkg/mod.py") is None
    os.link(lab.ssh / "id_ed25519", lab.project / "key.py")  # another name of a secret
    assert read_source(lab.project, "key.py") is None


def test_a_fork_never_writes_through_a_link_planted_at_its_temporary_name(lab: Lab) -> None:
    sessions = lab.root / "sessions"
    sessions.mkdir()
    target = sessions / "0001.jsonl"
    planted = sessions / f".0001.{os.getpid()}.partial"
    planted.symlink_to(lab.home / ".bashrc")
    before = (lab.home / ".bashrc").read_bytes()
    SessionFile.create_whole(target, b'{"header": true}\n').close()
    assert (lab.home / ".bashrc").read_bytes() == before
    assert target.read_bytes() == b'{"header": true}\n'


@pytest.mark.parametrize("openat2", [True, False], ids=["openat2", "walk"])
def test_exact_opens_refuse_links_with_and_without_openat2(
    lab: Lab, openat2: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The walk one component at a time is what macOS and kernels before 5.6 use.
    monkeypatch.setattr(safe_paths, "_openat2_state", openat2)
    (lab.project / "flip").symlink_to(lab.ssh)
    with pytest.raises(PathChanged):
        read_exact(lab.project / "flip" / "id_ed25519")
    with pytest.raises(PathChanged):
        replace_exact(lab.project / "flip" / "new.txt", b"x")
    assert not (lab.ssh / "new.txt").exists()
    (lab.project / "final").symlink_to(lab.home / ".bashrc")
    with pytest.raises(PathChanged):
        read_exact(lab.project / "final")
    data, _, _ = read_exact(lab.real / "notes.txt")
    assert data == b"project notes A\n"
    replace_exact(lab.real / "a" / "b" / "new.txt", b"made\n")
    assert (lab.real / "a" / "b" / "new.txt").read_bytes() == b"made\n"
    held = os.open(lab.project, os.O_RDONLY | os.O_DIRECTORY)
    try:
        with pytest.raises(PathChanged):  # beneath a directory: no climbing out
            read_exact("real/../../home/notes.txt", dir_fd=held)
        with pytest.raises(PathChanged):
            read_exact("flip/id_ed25519", dir_fd=held)
        assert read_exact("real/notes.txt", dir_fd=held)[0] == b"project notes A\n"
    finally:
        os.close(held)


def test_a_write_replaces_a_name_and_never_writes_into_its_other_names(lab: Lab) -> None:
    os.link(lab.home / "notes.txt", lab.real / "shared.txt")
    replace_exact(lab.real / "shared.txt", b"new\n")
    assert (lab.home / "notes.txt").read_text(encoding="utf-8") == "outside notes A\n"
    assert (lab.real / "shared.txt").read_bytes() == b"new\n"


def test_a_print_mode_mention_that_a_link_leads_to_a_secret_is_not_read(
    lab: Lab, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(lab.home))
    (lab.project / "flip").symlink_to(lab.ssh)  # where the flipper left it this time
    [prompt] = build_prompt("look at @flip/id_ed25519", [], lab.project)
    assert isinstance(prompt, TextPart)
    assert SECRET_KEY not in prompt.text
    (lab.project / "flip").unlink()
    (lab.project / "flip").symlink_to(lab.real)
    [prompt] = build_prompt("look at @flip/notes.txt", [], lab.project)
    assert isinstance(prompt, TextPart)
    assert "project notes A" in prompt.text


class AllowingUser:
    """Says "allow once" to every prompt, and records why it was asked."""

    def __init__(self) -> None:
        self.reasons: list[str] = []

    async def request_permission(self, prompt: PermissionPrompt) -> PermissionAnswer:
        self.reasons.append(prompt.reason)
        return PermissionAnswer(option_id="allow_once")

    async def ask_question(self, question: Question) -> QuestionAnswer:
        return QuestionAnswer(declined=True)


async def test_an_allowed_write_to_a_hard_linked_file_leaves_its_other_name_alone(
    lab: Lab,
) -> None:
    victim = lab.home / "notes.txt"
    os.link(victim, lab.project / "hl")
    user = AllowingUser()
    runner = ToolRunner(lab, mode="accept-edits", interaction=user)
    await runner.call("read", path="hl")
    written = await runner.call("write", path="hl", content="hacked\n")
    assert not written.is_error
    assert any("hard links" in reason for reason in user.reasons)  # the gate still asks
    assert victim.read_text(encoding="utf-8") == "outside notes A\n"
    assert (lab.project / "hl").read_text(encoding="utf-8") == "hacked\n"
