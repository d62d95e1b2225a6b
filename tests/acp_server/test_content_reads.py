"""The time limit on reading a linked file (the server-level tests cover the rest)."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from acp_server import content
from acp_server.protocol.common import ContentBlock
from agent.files import Expected
from providers.types import TextPart


class StalledEditor:
    """A file backend whose reads never complete (an editor that never answers)."""

    async def read_text(self, path: Path, *, expected: Expected = "any") -> str:
        await anyio.sleep_forever()
        raise AssertionError

    async def write_text(self, path: Path, content: str) -> None:
        raise AssertionError


async def test_a_read_that_never_completes_becomes_a_note_after_the_time_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(content, "READ_TIMEOUT_SECONDS", 0.05)
    linked = tmp_path / "notes.md"
    linked.write_text("notes\n", encoding="utf-8")
    block: ContentBlock = {"type": "resource_link", "uri": linked.as_uri(), "name": "notes.md"}
    problems: list[str] = []
    with anyio.fail_after(10):
        [part] = await content.prompt_parts([block], StalledEditor(), problems)
    assert isinstance(part, TextPart)
    assert problems == [f"Attached file {linked} could not be read: not read within 0.05 seconds"]
    assert problems[0] in part.text
