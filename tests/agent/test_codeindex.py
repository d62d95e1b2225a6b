"""The code index on small generated repositories: real git, real tree-sitter, real sqlite."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest

from agent.codeindex.index import CodeIndex, IndexProgress, initial_map
from agent.codeindex.terms import identifier_terms, query_terms, split_identifier
from agent.context import text_tokens

HUB = '''"""Everything leans on the store."""


class SessionStore:
    def append_entry(self, entry: str) -> None:
        pass


def open_session_store(path: str) -> SessionStore:
    return SessionStore()
'''


def _client(number: int) -> str:
    return f'''from hub import SessionStore, open_session_store


def handle_request_{number}(path: str) -> None:
    store: SessionStore = open_session_store(path)
    store.append_entry("{number}")
'''


LEAF = """def render_widget_tree(depth: int) -> str:
    return "leaf" * depth


class WidgetPainter:
    def paint_canvas(self) -> None:
        pass
"""

TS = """export function parseHttpRequest(raw: string): number {
  return raw.length;
}

export class RequestRouter {
  route(path: string): void {}
}
"""


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def _age(root: Path, *only: Path) -> None:
    """Date files a minute back, so none is "racy" (modified as it was indexed)."""
    past = time.time() - 60
    for path in only or tuple(root.rglob("*")):
        if path.is_file() and ".git" not in path.parts:
            os.utime(path, (past, past))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    _git(root, "init", "-q")
    (root / "hub.py").write_text(HUB)
    for number in range(4):
        (root / f"client_{number}.py").write_text(_client(number))
    (root / "leaf.py").write_text(LEAF)
    (root / "web").mkdir()
    (root / "web" / "router.ts").write_text(TS)
    _age(root)
    return root


def _index(root: Path, tmp_path: Path, **kwargs: int) -> CodeIndex:
    kwargs.setdefault("workers", 1)
    return CodeIndex(root, database=tmp_path / "cache" / "index.sqlite", **kwargs)


def test_identifiers_split_at_case_and_underscores() -> None:
    assert split_identifier("parseHTTPRequest") == ("parse", "http", "request")
    assert split_identifier("MAX_LINES") == ("max", "lines")
    assert identifier_terms("TokenCounter") == ("tokencounter", "token", "counter")
    assert query_terms("token_counter TokenCounter") == ["tokencounter", "token", "counter"]


async def test_the_map_ranks_the_conversation_files_definitions_first(
    repo: Path, tmp_path: Path
) -> None:
    index = _index(repo, tmp_path)
    await index.refresh()
    plain = await index.repo_map(budget=2_000)
    # Without a conversation, the file everything refers to comes first.
    assert plain.text.startswith("hub.py:")
    focused = await index.repo_map(budget=2_000, conversation=[repo / "leaf.py"])
    first_block = focused.text.split("\n\n")[0].splitlines()
    assert first_block[0] == "leaf.py:"
    assert "def render_widget_tree(depth: int) -> str:" in first_block[1]
    assert any("class WidgetPainter:" in line for line in first_block[1:4])
    assert focused.text.index("leaf.py:") < focused.text.index("hub.py:")
    await index.aclose()


async def test_the_map_fits_the_budget_and_grows_with_it(repo: Path, tmp_path: Path) -> None:
    index = _index(repo, tmp_path)
    await index.refresh()
    small = await index.repo_map(budget=40)
    large = await index.repo_map(budget=4_000)
    assert 0 < text_tokens(small.text) <= 40
    assert small.definitions < large.definitions == large.total_definitions
    await index.aclose()


async def test_a_query_centres_the_map_on_what_it_names(repo: Path, tmp_path: Path) -> None:
    index = _index(repo, tmp_path)
    await index.refresh()
    result = await index.repo_map(budget=30, query="paint canvas")
    assert result.text.startswith("leaf.py:")
    await index.aclose()


async def test_a_refresh_reads_only_the_changed_file(repo: Path, tmp_path: Path) -> None:
    index = _index(repo, tmp_path)
    first = await index.refresh()
    assert (first.listed, first.parsed) == (7, 7)
    (repo / "leaf.py").write_text(LEAF + "\n\ndef freshly_added_helper() -> None:\n    pass\n")
    _age(repo, repo / "leaf.py")
    second = await index.refresh()
    assert (second.parsed, second.unchanged, second.removed) == (1, 0, 0)
    hits = await index.search("freshly_added_helper")
    assert [hit.path for hit in hits][:1] == ["leaf.py"]
    assert hits[0].definitions[0].name == "freshly_added_helper"
    # Touched but not changed: read and hashed, not parsed.
    os.utime(repo / "hub.py")
    third = await index.refresh()
    assert (third.parsed, third.unchanged) == (0, 1)
    await index.aclose()


async def test_a_second_index_starts_from_the_cache(repo: Path, tmp_path: Path) -> None:
    first = _index(repo, tmp_path)
    await first.refresh()
    await first.aclose()
    second = _index(repo, tmp_path)
    stats = await second.refresh()
    assert (stats.listed, stats.parsed, stats.unchanged) == (7, 0, 0)
    assert (await second.search("SessionStore"))[0].path == "hub.py"
    await second.aclose()


async def test_removed_files_leave_the_index(repo: Path, tmp_path: Path) -> None:
    index = _index(repo, tmp_path)
    await index.refresh()
    (repo / "leaf.py").unlink()
    stats = await index.refresh()
    assert stats.removed == 1
    assert await index.search("render_widget_tree") == []
    await index.aclose()


async def test_ignored_files_symlinks_and_huge_files_are_skipped(
    repo: Path, tmp_path: Path
) -> None:
    (repo / ".gitignore").write_text("build/\nscratch.py\n")
    (repo / "build").mkdir()
    (repo / "build" / "generated.py").write_text("def ignored_build_output():\n    pass\n")
    (repo / "scratch.py").write_text("def ignored_scratch_helper():\n    pass\n")
    outside = tmp_path / "outside.py"
    outside.write_text("def secret_outside_function():\n    pass\n")
    (repo / "linked.py").symlink_to(outside)
    (repo / "huge.py").write_text("def huge_generated_table():\n    pass\n" + "#" * 600_000)
    index = _index(repo, tmp_path)
    stats = await index.refresh()
    assert stats.listed == 7
    for name in (
        "ignored_build_output",
        "ignored_scratch_helper",
        "secret_outside_function",
        "huge_generated_table",
    ):
        hits = await index.search(name)
        assert not [hit for hit in hits if hit.definitions], name
        assert {hit.path for hit in hits}.isdisjoint(
            {"build/generated.py", "scratch.py", "linked.py", "huge.py"}
        )
    await index.aclose()


async def test_without_git_ripgrep_lists_the_files_and_honours_gitignore(
    tmp_path: Path,
) -> None:
    if shutil.which("rg") is None:
        pytest.skip("ripgrep is not installed")
    root = tmp_path / "plain"
    root.mkdir()
    (root / ".gitignore").write_text("vendor/\n")
    (root / "vendor").mkdir()
    (root / "vendor" / "lib.py").write_text("def vendored_helper():\n    pass\n")
    (root / "app.py").write_text("def application_entry():\n    pass\n")
    index = _index(root, tmp_path)
    stats = await index.refresh()
    assert stats.listed == 1
    assert (await index.search("application_entry"))[0].path == "app.py"
    assert await index.search("vendored_helper") == []
    await index.aclose()


async def test_search_finds_identifiers_by_their_words(repo: Path, tmp_path: Path) -> None:
    index = _index(repo, tmp_path)
    await index.refresh()
    hits = await index.search("parse_http_request")
    assert hits[0].path == "web/router.ts"
    assert hits[0].definitions[0].name == "parseHttpRequest"
    assert hits[0].definitions[0].line == 1
    hits = await index.search("session store")
    assert hits[0].path == "hub.py"
    assert hits[0].definitions[0].name == "SessionStore"
    assert await index.search("nothing_matches_this_identifier") == []
    await index.aclose()


async def test_progress_is_reported_and_a_cancelled_refresh_keeps_its_work(
    repo: Path, tmp_path: Path
) -> None:
    index = _index(repo, tmp_path, chunk_size=2)
    reports: list[IndexProgress] = []
    with anyio.CancelScope() as scope:

        async def progress(status: IndexProgress) -> None:
            reports.append(status)
            if status.phase == "indexing" and status.done >= 2:
                scope.cancel()

        await index.refresh(progress)
    assert [report.phase for report in reports] == ["listing", "indexing", "indexing"]
    assert reports[1].total == 7
    assert not index.refreshed
    assert index.progress_note() is not None
    phases: list[str] = []

    async def record(status: IndexProgress) -> None:
        phases.append(status.phase)

    stats = await index.refresh(record)
    assert stats.parsed == 5
    assert phases[0] == "listing" and phases[-2:] == ["ranking", "ready"]
    assert index.refreshed and index.progress_note() is None
    await index.aclose()


async def test_update_files_reindexes_an_edited_file_at_once(repo: Path, tmp_path: Path) -> None:
    index = _index(repo, tmp_path)
    await index.refresh()
    (repo / "hub.py").write_text(HUB + "\n\ndef edited_in_place() -> None:\n    pass\n")
    await index.update_files([repo / "hub.py", tmp_path / "elsewhere.py"])
    assert (await index.search("edited_in_place"))[0].path == "hub.py"
    await index.aclose()


async def test_an_unusable_cache_is_rebuilt(repo: Path, tmp_path: Path) -> None:
    database = tmp_path / "cache" / "index.sqlite"
    database.parent.mkdir()
    database.write_bytes(b"this is not a database" * 100)
    index = CodeIndex(repo, database=database)
    stats = await index.refresh()
    assert stats.parsed == 7
    await index.aclose()
    with sqlite3.connect(database) as db:
        assert db.execute("SELECT count(*) FROM files").fetchone() == (7,)


async def test_a_listing_failure_is_reported_not_raised(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "no-programs-here"))
    index = _index(repo, tmp_path)
    reports: list[IndexProgress] = []

    async def progress(status: IndexProgress) -> None:
        reports.append(status)

    stats = await index.refresh(progress)
    assert stats.error is not None and "ripgrep" in stats.error
    assert reports[-1].phase == "failed"
    await index.aclose()


async def test_file_names_cannot_inject_control_characters(repo: Path, tmp_path: Path) -> None:
    (repo / "evil\x1b[2Jname.py").write_text("def escape_hatch_function():\n    pass\n")
    index = _index(repo, tmp_path)
    await index.refresh()
    result = await index.repo_map(budget=4_000)
    assert "\x1b" not in result.text
    assert "evil?[2Jname.py:" in result.text
    await index.aclose()


async def test_the_initial_map_never_waits_for_a_cold_index(repo: Path, tmp_path: Path) -> None:
    index = _index(repo, tmp_path)
    assert await initial_map(index) is None  # nothing indexed yet: no map, no wait
    await index.refresh()
    text = await initial_map(index, conversation=[repo / "leaf.py"], budget=300)
    assert text is not None
    assert text.startswith("Repository map:")
    assert "leaf.py:" in text
    await index.aclose()


async def test_worker_processes_index_what_the_engine_indexes(repo: Path, tmp_path: Path) -> None:
    alone = _index(repo, tmp_path / "alone", workers=1)
    together = _index(repo, tmp_path / "together", workers=2, chunk_size=2, parallel_min=1)
    assert (await alone.refresh()).parsed == (await together.refresh()).parsed == 7
    for query in ("session store", "parse_http_request", "paint canvas"):
        assert await alone.search(query) == await together.search(query)
    assert (await alone.repo_map(budget=500)).text == (await together.repo_map(budget=500)).text
    await alone.aclose()
    await together.aclose()


@pytest.mark.parametrize("program", ["/nonexistent/python", "/bin/false"])
async def test_a_worker_that_cannot_start_or_dies_falls_back_in_process(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, program: str
) -> None:
    monkeypatch.setattr("agent.codeindex.workers.sys.executable", program)
    index = _index(repo, tmp_path, workers=2, chunk_size=2, parallel_min=1)
    stats = await index.refresh()
    assert (stats.parsed, stats.error) == (7, None)
    assert (await index.search("SessionStore"))[0].path == "hub.py"
    await index.aclose()


def test_the_index_loads_no_parser_until_used() -> None:
    code = (
        "import sys, json\n"
        "import agent.codeindex.index, agent.tools.code_index\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith(('tree_sitter', "
        "'sqlite3', 'lsprotocol')))))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=30, check=True
    )
    assert result.stdout.strip() == "[]"
