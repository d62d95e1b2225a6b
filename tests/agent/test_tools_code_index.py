"""`repo_map` and `search_code` on a real index, through a real `ToolContext`."""

from __future__ import annotations

import dataclasses
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agent.codeindex import CodeIndex
from agent.permissions import PermissionGate, PermissionRules
from agent.tools import ToolError
from agent.tools.code_index import repo_map_tool, search_code_tool
from tests.agent.tools_harness import Harness, harness, text_of

FILES = {
    "core/store.py": "class SessionStore:\n    def append_entry(self) -> None:\n        pass\n",
    "core/use.py": "from core.store import SessionStore\n\ndef use_store():\n"
    "    return SessionStore()\n",
    "private/keys.py": "def private_signing_key():\n    return SessionStore()\n",
}


class Ready:
    """The index as a session's host offers it (`agent.code.index_host.CodeIndexHost`)."""

    def __init__(self, index: CodeIndex) -> None:
        self.index = index

    async def ready(self) -> CodeIndex:
        return self.index


@pytest.fixture
async def h(tmp_path: Path) -> AsyncIterator[Harness]:
    root = tmp_path / "repo"
    for name, content in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(content)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    root = root.resolve()
    index = CodeIndex(root, database=tmp_path / "index.sqlite")
    await index.refresh()
    gate = PermissionGate(PermissionRules.parse(deny=["Read(./private/)"]), cwd=root, roots=(root,))
    h = harness(root)
    h.ctx.services = dataclasses.replace(
        h.ctx.services, code_index=Ready(index), read_denied=gate.read_denied
    )
    yield h
    await index.aclose()


async def test_repo_map_shows_ranked_definitions_and_hides_denied_files(h: Harness) -> None:
    text = text_of(await h.run(repo_map_tool))
    assert text.startswith("Repository map:")
    assert "core/store.py:\n  1│class SessionStore:" in text
    assert "private" not in text


async def test_the_files_read_in_the_conversation_come_first(h: Harness) -> None:
    h.ctx.reads.seen[h.ctx.cwd / "core" / "use.py"] = "hash"
    text = text_of(await h.run(repo_map_tool, budget=300))
    assert text.split("\n\n")[1].startswith("core/use.py:")


async def test_search_code_lists_matching_definitions(h: Harness) -> None:
    text = text_of(await h.run(search_code_tool, query="append entry"))
    assert text.splitlines()[0].startswith("core/store.py (score")
    assert "  2│def append_entry(self) -> None:" in text
    assert "private" not in text_of(await h.run(search_code_tool, query="private signing key"))


async def test_both_tools_say_when_there_is_no_index(tmp_path: Path) -> None:
    bare = harness(tmp_path)
    with pytest.raises(ToolError, match="not available"):
        await bare.run(search_code_tool, query="x")
    with pytest.raises(ToolError, match="not available"):
        await bare.run(repo_map_tool)


def test_the_tools_are_read_only_and_ask_as_reads(tmp_path: Path) -> None:
    bare = harness(tmp_path)
    assert repo_map_tool.read_only and search_code_tool.read_only
    assert bare.permission(search_code_tool, query="x").rule_tool == "Read"
