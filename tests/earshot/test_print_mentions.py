"""`@file` mentions in print mode: only regular files are attached, and only so much of them."""

from __future__ import annotations

import os
from pathlib import Path

from earshot.print_mode import MAX_INLINE_CHARS, build_prompt
from providers.types import TextPart


def prompt_text(text: str, cwd: Path) -> str:
    [part] = build_prompt(text, [], cwd)
    assert isinstance(part, TextPart)
    return part.text


def test_a_huge_mentioned_file_is_cut(tmp_path: Path) -> None:
    (tmp_path / "big.log").write_bytes(b"0123456789" * (MAX_INLINE_CHARS // 2))
    text = prompt_text("see @big.log", tmp_path)
    assert f"[cut at {MAX_INLINE_CHARS} characters]" in text
    assert len(text) < MAX_INLINE_CHARS + 1000


def test_devices_and_fifos_are_not_attached(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    assert prompt_text("see @pipe and @/dev/zero", tmp_path) == "see @pipe and @/dev/zero"
