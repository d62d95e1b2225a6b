from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from agent.tools import ToolError
from agent.tools.glob_tool import glob_matcher, glob_tool
from agent.tools.grep import grep_tool
from agent.tools.ls import ls_tool
from tests.agent.tools_harness import Harness, harness, text_of


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    files = {
        "src/app.py": "import os\n\ndef main():\n    return TODO_one\n",
        "src/util.py": "def helper():\n    pass  # todo_two\n",
        "src/web/page.ts": "const x = 1; // TODO three\n",
        "README.md": "# Project\nTODO: docs\n",
        ".env": "SECRET=todo\n",
        "build/out.py": "TODO ignored\n",
        "debug.log": "TODO ignored too\n",
        "keep.log": "TODO kept\n",
    }
    for name, content in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
    (tmp_path / ".gitignore").write_text("build/\n*.log\n!keep.log\n", encoding="utf-8")
    (tmp_path / "empty").mkdir()
    return tmp_path


@pytest.fixture
def h(tree: Path) -> Harness:
    return harness(tree)


def set_mtimes(root: Path, names: list[str]) -> None:
    """Newest first."""
    for age, name in enumerate(names):
        os.utime(root / name, (1_700_000_000 - age * 100, 1_700_000_000 - age * 100))


# ------------------------------------------------------------------------------------- grep


async def test_grep_content_with_line_numbers_respecting_gitignore(h: Harness) -> None:
    text = text_of(await h.run(grep_tool, pattern="TODO"))
    assert text.splitlines() == [
        "README.md:2:TODO: docs",
        "keep.log:1:TODO kept",
        "src/app.py:4:    return TODO_one",
        "src/web/page.ts:1:const x = 1; // TODO three",
    ]


async def test_grep_case_insensitive_glob_and_modes(h: Harness) -> None:
    text = text_of(await h.run(grep_tool, pattern="todo", case_insensitive=True, glob="*.py"))
    assert text.splitlines() == [
        "src/app.py:4:    return TODO_one",
        "src/util.py:2:    pass  # todo_two",
    ]
    files = text_of(
        await h.run(
            grep_tool, pattern="todo", case_insensitive=True, output_mode="files_with_matches"
        )
    )
    assert files.splitlines() == [
        ".env",
        "README.md",
        "keep.log",
        "src/app.py",
        "src/util.py",
        "src/web/page.ts",
    ]
    counts = text_of(await h.run(grep_tool, pattern="o", output_mode="count", path="src"))
    assert counts.splitlines() == ["src/app.py:2", "src/util.py:1", "src/web/page.ts:1"]


async def test_grep_glob_does_not_override_ignore_files(h: Harness) -> None:
    text = text_of(await h.run(grep_tool, pattern="TODO", glob="*.log"))
    assert text.splitlines() == ["keep.log:1:TODO kept"]
    text = text_of(await h.run(grep_tool, pattern="TODO", glob="*.{ts,md}"))
    assert text.splitlines() == [
        "README.md:2:TODO: docs",
        "src/web/page.ts:1:const x = 1; // TODO three",
    ]
    text = text_of(await h.run(grep_tool, pattern="TODO", glob="src/**/*.ts"))
    assert text.splitlines() == ["src/web/page.ts:1:const x = 1; // TODO three"]


async def test_grep_context_and_single_file(h: Harness) -> None:
    text = text_of(await h.run(grep_tool, pattern="def main", path="src/app.py", context=1))
    assert text.splitlines() == [
        "src/app.py-2-",
        "src/app.py:3:def main():",
        "src/app.py-4-    return TODO_one",
    ]


async def test_grep_caps_results(h: Harness) -> None:
    text = text_of(await h.run(grep_tool, pattern=".", max_results=3))
    assert len(text.split("\n\n")[0].splitlines()) == 3
    assert "[Results cut at 3 lines." in text


async def test_grep_no_match_and_bad_regex(h: Harness) -> None:
    assert text_of(await h.run(grep_tool, pattern="nothing-like-this")) == "No matches found."
    with pytest.raises(ToolError, match="regex parse error"):
        await h.run(grep_tool, pattern="fn(")
    with pytest.raises(ToolError, match="Path not found"):
        await h.run(grep_tool, pattern="x", path="missing")


async def test_grep_outside_cwd_shows_absolute_paths(tmp_path: Path, tree: Path) -> None:
    other = harness(tree / "src" / "web")
    text = text_of(await other.run(grep_tool, pattern="def main", path=str(tree / "src")))
    assert text == f"{tree / 'src' / 'app.py'}:3:def main():"


async def test_missing_ripgrep_is_a_clear_error(
    h: Harness, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(ToolError, match="ripgrep"):
        await h.run(grep_tool, pattern="x")
    with pytest.raises(ToolError, match="ripgrep"):
        await h.run(glob_tool, pattern="*")


async def test_grep_permission_is_a_read_of_the_path(h: Harness, tree: Path) -> None:
    request = h.permission(grep_tool, pattern="x", path="src")
    assert request.rule_tool == "Read"
    assert request.paths == (tree.resolve() / "src",)
    assert h.ui(grep_tool, pattern="x").kind == "search"


# ------------------------------------------------------------------------------------- glob


async def test_glob_newest_first_respecting_gitignore(h: Harness, tree: Path) -> None:
    set_mtimes(tree, ["src/util.py", "build/out.py", "src/app.py"])
    assert text_of(await h.run(glob_tool, pattern="**/*.py")).splitlines() == [
        "src/util.py",
        "src/app.py",
    ]
    assert text_of(await h.run(glob_tool, pattern="*.log")).splitlines() == ["keep.log"]
    assert text_of(await h.run(glob_tool, pattern="web/*", path="src")).splitlines() == [
        "src/web/page.ts"
    ]


async def test_glob_cap_and_no_match(h: Harness) -> None:
    text = text_of(await h.run(glob_tool, pattern="*", max_results=2))
    assert len(text.split("\n\n")[0].splitlines()) == 2
    assert "[Showing the 2 most recently modified of 7 files." in text
    assert text_of(await h.run(glob_tool, pattern="*.rs")) == "No files found."
    with pytest.raises(ToolError, match="Not a directory"):
        await h.run(glob_tool, pattern="*", path="README.md")


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("*.py", "a/b/c.py", True),
        ("*.py", "c.pyc", False),
        ("src/*.py", "src/a.py", True),
        ("src/*.py", "src/sub/a.py", False),
        ("src/**/*.py", "src/a.py", True),
        ("src/**/*.py", "src/x/y/a.py", True),
        ("**/test_*.py", "tests/test_a.py", True),
        ("*.{ts,tsx}", "web/app.tsx", True),
        ("*.{ts,tsx}", "web/app.js", False),
        ("file?.[ch]", "file1.c", True),
        ("file?.[!ch]", "file1.c", False),
        ("./docs/*.md", "docs/a.md", True),
        ("a+b(1).txt", "a+b(1).txt", True),
    ],
)
def test_glob_matcher(pattern: str, path: str, expected: bool) -> None:
    assert glob_matcher(pattern)(path) is expected


# --------------------------------------------------------------------------------------- ls


async def test_ls_marks_directories_and_hides_ignored(h: Harness, tree: Path) -> None:
    text = text_of(await h.run(ls_tool))
    assert text.splitlines() == [
        f"{tree.resolve()}/",
        "  empty/",
        "  src/",
        "  .env",
        "  .gitignore",
        "  keep.log",
        "  README.md",
        "[2 ignored entries not shown: build/, debug.log]",
    ]
    everything = text_of(await h.run(ls_tool, show_ignored=True))
    assert "  build/" in everything and "  debug.log" in everything


async def test_ls_in_a_git_repository_uses_the_root_ignore_files(h: Harness, tree: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tree)], check=True)
    (tree / "src" / "web" / ".gitignore").write_text("*.ts\n", encoding="utf-8")
    (tree / "src" / "web" / "page.log").write_text("", encoding="utf-8")
    (tree / "src" / "web" / "keep.log").write_text("", encoding="utf-8")
    text = text_of(await h.run(ls_tool, path="src/web"))
    assert text.splitlines() == [
        f"{tree.resolve()}/src/web/",
        "  .gitignore",
        "  keep.log",
        "[2 ignored entries not shown: page.log, page.ts]",
    ]
    assert ".git/" not in text_of(await h.run(ls_tool))


async def test_ls_errors(h: Harness) -> None:
    with pytest.raises(ToolError, match="read tool"):
        await h.run(ls_tool, path="README.md")
    with pytest.raises(ToolError, match="not found"):
        await h.run(ls_tool, path="nope")
    assert text_of(await h.run(ls_tool, path="empty")).endswith("(no entries)")
