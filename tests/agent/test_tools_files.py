from __future__ import annotations

import base64
import struct
import zlib
from pathlib import Path

import pytest

from agent.files import Expected
from agent.tools import ToolError
from agent.tools import read as read_module
from agent.tools.edit import edit_tool
from agent.tools.read import read_tool
from agent.tools.write import write_tool
from providers.types import ImagePart
from tests.agent.tools_harness import Harness, harness, text_of


@pytest.fixture
def h(tmp_path: Path) -> Harness:
    return harness(tmp_path)


def png_bytes() -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\x00\x00")
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    )


# ------------------------------------------------------------------------------------- read


async def test_read_numbers_lines_and_records_the_read(h: Harness, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\nbeta\r\ngamma", encoding="utf-8")
    output = await h.run(read_tool, path="a.txt")
    assert text_of(output) == "     1\talpha\n     2\tbeta\n     3\tgamma"
    assert tmp_path / "a.txt" in h.ctx.reads.seen


async def test_read_range_says_how_to_continue(h: Harness, tmp_path: Path) -> None:
    (tmp_path / "long.txt").write_text(
        "".join(f"line {n}\n" for n in range(1, 101)), encoding="utf-8"
    )
    text = text_of(await h.run(read_tool, path="long.txt", offset=10, limit=5))
    assert text.splitlines()[:5] == [f"{n:>6}\tline {n}" for n in range(10, 15)]
    assert "Showing lines 10-14 of 100. Use offset=15 to read more." in text


async def test_read_caps_lines_and_line_length(
    h: Harness, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(read_module, "MAX_LINES", 3)
    monkeypatch.setattr(read_module, "MAX_LINE_CHARS", 10)
    (tmp_path / "f.txt").write_text("x" * 50 + "\nb\nc\nd\ne\n", encoding="utf-8")
    text = text_of(await h.run(read_tool, path="f.txt"))
    assert text.splitlines()[0] == "     1\t" + "x" * 10 + "\u2026 [line cut: 50 characters]"
    assert "Showing lines 1-3 of 5. Use offset=4 to read more." in text
    assert "1 line longer than 10 characters were cut" in text


async def test_read_never_exceeds_the_result_cap(h: Harness, tmp_path: Path) -> None:
    (tmp_path / "wide.txt").write_text(("y" * 1500 + "\n") * 1000, encoding="utf-8")
    text = text_of(await h.run(read_tool, path="wide.txt"))
    assert len(text) < 30_000
    assert "Use offset=" in text


async def test_read_past_the_end_and_empty(h: Harness, tmp_path: Path) -> None:
    (tmp_path / "two.txt").write_text("a\nb\n", encoding="utf-8")
    (tmp_path / "empty.txt").write_text("", encoding="utf-8")
    assert "has only 2 lines" in text_of(await h.run(read_tool, path="two.txt", offset=5))
    assert "is empty" in text_of(await h.run(read_tool, path="empty.txt"))


async def test_read_refuses_binary_directories_and_missing_files(
    h: Harness, tmp_path: Path
) -> None:
    (tmp_path / "blob.bin").write_bytes(b"abc\x00def")
    (tmp_path / "latin1.txt").write_bytes(b"caf\xe9\n")
    with pytest.raises(ToolError, match="binary"):
        await h.run(read_tool, path="blob.bin")
    with pytest.raises(ToolError, match="not UTF-8"):
        await h.run(read_tool, path="latin1.txt")
    with pytest.raises(ToolError, match="ls tool"):
        await h.run(read_tool, path=".")
    with pytest.raises(ToolError, match="File not found"):
        await h.run(read_tool, path="nope.txt")


async def test_read_image_returns_the_image(h: Harness, tmp_path: Path) -> None:
    data = png_bytes()
    (tmp_path / "pic.PNG").write_bytes(data)
    (tmp_path / "fake.png").write_bytes(b"not an image")
    output = await h.run(read_tool, path="pic.PNG")
    images = [part for part in output.content if isinstance(part, ImagePart)]
    assert len(images) == 1
    assert images[0].media_type == "image/png"
    assert base64.b64decode(images[0].data or "") == data
    with pytest.raises(ToolError, match="does not contain"):
        await h.run(read_tool, path="fake.png")


async def test_read_image_size_cap(
    h: Harness, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(read_module, "MAX_IMAGE_BYTES", 10)
    (tmp_path / "pic.png").write_bytes(png_bytes())
    with pytest.raises(ToolError, match="larger than 10 bytes"):
        await h.run(read_tool, path="pic.png")


async def test_read_permission_and_ui(h: Harness, tmp_path: Path) -> None:
    request = h.permission(read_tool, path="sub/../.env")
    assert request.rule_tool == "Read"
    assert request.paths == (tmp_path.resolve() / ".env",)
    ui = h.ui(read_tool, path="x.py", offset=20, limit=10)
    assert ui.kind == "read"
    assert ui.title == "Read x.py (lines 20-29)"
    assert ui.locations[0].line == 20


async def test_read_goes_through_the_file_backend_inside_the_roots(
    h: Harness, tmp_path: Path
) -> None:
    class EditorBuffers:
        async def read_text(self, path: Path, *, expected: Expected = "any") -> str:
            return "unsaved buffer\n"

        async def write_text(self, path: Path, content: str) -> None:
            raise AssertionError

    (tmp_path / "open.py").write_text("on disk\n", encoding="utf-8")
    h.ctx.files = EditorBuffers()
    assert text_of(await h.run(read_tool, path="open.py")) == "     1\tunsaved buffer"


# ------------------------------------------------------------------------------------ write


async def test_write_creates_files_and_parents(h: Harness, tmp_path: Path) -> None:
    output = await h.run(write_tool, path="new/dir/f.py", content="print(1)\n")
    assert (tmp_path / "new/dir/f.py").read_text(encoding="utf-8") == "print(1)\n"
    assert "Created new/dir/f.py (1 lines)" in text_of(output)
    assert output.ui is not None
    assert output.ui.diffs[0].old_text is None
    assert output.ui.diffs[0].new_text == "print(1)\n"


async def test_write_over_an_existing_file_needs_a_fresh_read(h: Harness, tmp_path: Path) -> None:
    target = tmp_path / "f.txt"
    target.write_text("old\n", encoding="utf-8")
    with pytest.raises(ToolError, match="must read"):
        await h.run(write_tool, path="f.txt", content="new\n")
    await h.run(read_tool, path="f.txt")
    target.write_text("changed behind our back\n", encoding="utf-8")
    with pytest.raises(ToolError, match="changed since you last read"):
        await h.run(write_tool, path="f.txt", content="new\n")
    assert target.read_text(encoding="utf-8") == "changed behind our back\n"
    await h.run(read_tool, path="f.txt")
    output = await h.run(write_tool, path="f.txt", content="new\n")
    assert target.read_text(encoding="utf-8") == "new\n"
    assert "-changed behind our back\n+new" in text_of(output)
    # The write counts as a read: an edit right after needs no re-read.
    await h.run(edit_tool, path="f.txt", old_string="new", new_string="newer")
    assert target.read_text(encoding="utf-8") == "newer\n"


async def test_write_permission_carries_the_proposed_diff(h: Harness, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("old\n", encoding="utf-8")
    request = h.permission(write_tool, path="f.txt", content="new\n")
    assert request.rule_tool == "Write"
    assert request.is_file_edit
    assert request.paths == (tmp_path.resolve() / "f.txt",)
    assert request.diffs[0].old_text == "old\n"
    assert h.ui(write_tool, path="f.txt", content="new\n").diffs[0].new_text == "new\n"


async def test_write_outside_the_roots_writes_only_the_resolved_path(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    h = harness(work)
    await h.run(write_tool, path="../outside/f.txt", content="x")
    assert (tmp_path / "outside/f.txt").read_text(encoding="utf-8") == "x"
    assert list(work.iterdir()) == []


# ------------------------------------------------------------------------------------- edit


SOURCE = "def a():\n    return 1\n\n\ndef b():\n    return 1\n"


async def test_edit_replaces_a_unique_string(h: Harness, tmp_path: Path) -> None:
    target = tmp_path / "m.py"
    target.write_text(SOURCE, encoding="utf-8")
    await h.run(read_tool, path="m.py")
    output = await h.run(
        edit_tool,
        path="m.py",
        old_string="def b():\n    return 1",
        new_string="def b():\n    return 2",
    )
    assert target.read_text(encoding="utf-8") == SOURCE.replace(
        "return 1\n", "return 2\n", 2
    ).replace("return 2", "return 1", 1)
    text = text_of(output)
    assert "Edited m.py (1 replacement)" in text
    assert "-    return 1\n+    return 2" in text
    assert output.ui is not None
    assert output.ui.diffs[0].old_text == SOURCE
    assert output.ui.locations[0].line == 5


async def test_edit_refuses_ambiguous_and_missing_strings(h: Harness, tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(SOURCE, encoding="utf-8")
    await h.run(read_tool, path="m.py")
    with pytest.raises(ToolError, match=r"occurs 2 times in m.py \(at lines 2, 6\)"):
        await h.run(edit_tool, path="m.py", old_string="return 1", new_string="return 2")
    with pytest.raises(ToolError, match="not found"):
        await h.run(edit_tool, path="m.py", old_string="return 3", new_string="return 2")
    with pytest.raises(ToolError, match="whitespace"):
        await h.run(edit_tool, path="m.py", old_string="def  a():", new_string="def c():")
    with pytest.raises(ToolError, match="line-number prefixes"):
        await h.run(edit_tool, path="m.py", old_string="     1\tdef a():", new_string="x")
    with pytest.raises(ToolError, match="identical"):
        await h.run(edit_tool, path="m.py", old_string="def a", new_string="def a")
    assert (tmp_path / "m.py").read_text(encoding="utf-8") == SOURCE


async def test_edit_replace_all(h: Harness, tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(SOURCE, encoding="utf-8")
    await h.run(read_tool, path="m.py")
    output = await h.run(
        edit_tool, path="m.py", old_string="return 1", new_string="return 0", replace_all=True
    )
    assert "2 replacements" in text_of(output)
    assert (tmp_path / "m.py").read_text(encoding="utf-8").count("return 0") == 2


async def test_edit_requires_a_read_and_no_change_since(h: Harness, tmp_path: Path) -> None:
    target = tmp_path / "m.py"
    target.write_text(SOURCE, encoding="utf-8")
    with pytest.raises(ToolError, match="must read"):
        await h.run(edit_tool, path="m.py", old_string="def a", new_string="def z")
    await h.run(read_tool, path="m.py")
    target.write_text(SOURCE + "# formatter\n", encoding="utf-8")
    with pytest.raises(ToolError, match="changed since you last read"):
        await h.run(edit_tool, path="m.py", old_string="def a", new_string="def z")
    assert target.read_text(encoding="utf-8") == SOURCE + "# formatter\n"
    with pytest.raises(ToolError, match="use `write`"):
        await h.run(edit_tool, path="missing.py", old_string="a", new_string="b")


async def test_edit_keeps_crlf_line_endings(h: Harness, tmp_path: Path) -> None:
    target = tmp_path / "w.txt"
    target.write_bytes(b"one\r\ntwo\r\nthree\r\n")
    await h.run(read_tool, path="w.txt")
    await h.run(edit_tool, path="w.txt", old_string="one\ntwo", new_string="uno\ndos")
    assert target.read_bytes() == b"uno\r\ndos\r\nthree\r\n"


async def test_edit_ui_and_permission_show_the_proposed_diff_before_running(
    h: Harness, tmp_path: Path
) -> None:
    (tmp_path / "m.py").write_text(SOURCE, encoding="utf-8")
    args = {"path": "m.py", "old_string": "def a():", "new_string": "def alpha():"}
    ui = h.ui(edit_tool, **args)
    assert ui.kind == "edit"
    assert ui.diffs[0].old_text == SOURCE
    assert ui.diffs[0].new_text == SOURCE.replace("def a():", "def alpha():")
    assert ui.locations[0].line == 1
    request = h.permission(edit_tool, **args)
    assert request.rule_tool == "Edit" and request.is_file_edit
    assert request.diffs == ui.diffs
    assert (tmp_path / "m.py").read_text(encoding="utf-8") == SOURCE  # nothing applied yet
    ambiguous = h.ui(edit_tool, path="m.py", old_string="return 1", new_string="x")
    assert ambiguous.diffs == ()
