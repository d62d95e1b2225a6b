from __future__ import annotations

from pathlib import Path

import pytest

from agent.skills import SkillIndex, split_frontmatter


def make_skill(root: Path, folder: str, text: str) -> Path:
    path = root / folder / "SKILL.md"
    path.parent.mkdir(parents=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_discovers_project_and_user_skills_project_wins(tmp_path: Path) -> None:
    project = tmp_path / "project"
    config = tmp_path / "config"
    make_skill(
        project / ".earshot" / "skills",
        "release",
        '---\nname: release\ndescription: "Cut a release: tag, changelog"\n---\n\nSteps here.\n',
    )
    make_skill(
        config / "earshot" / "skills",
        "release",
        "---\nname: release\ndescription: user's\n---\nold",
    )
    make_skill(config / "earshot" / "skills", "pdf", "# Working with PDFs\n\nUse pdftotext.\n")
    (config / "earshot" / "skills" / "not-a-skill").mkdir()
    index = SkillIndex.discover(project, config_home=config, project=True)
    assert [(s.name, s.source) for s in index.skills] == [("pdf", "user"), ("release", "project")]
    release = index.get("release")
    assert release is not None
    assert release.description == "Cut a release: tag, changelog"
    assert index.load("release") == "Steps here."
    pdf = index.get("pdf")
    assert pdf is not None and pdf.description == "Working with PDFs"
    assert pdf.directory == config / "earshot" / "skills" / "pdf"


def test_xdg_config_home_is_the_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    make_skill(tmp_path / "xdg" / "earshot" / "skills", "lint", "---\ndescription: Lint\n---\nx")
    index = SkillIndex.discover(tmp_path / "nowhere")
    assert [s.name for s in index.skills] == ["lint"]
    assert index


def test_no_skills(tmp_path: Path) -> None:
    index = SkillIndex.discover(tmp_path, config_home=tmp_path / "empty")
    assert not index
    assert index.get("x") is None


def test_frontmatter_parsing() -> None:
    assert split_frontmatter("---\nname: a\n  nested: no\n# c: no\nempty:\n---\nbody") == (
        {"name": "a", "empty": ""},
        "body",
    )
    assert split_frontmatter("no frontmatter") == ({}, "no frontmatter")
    assert split_frontmatter("---\nname: a\nunclosed") == ({}, "---\nname: a\nunclosed")
    assert split_frontmatter("\ufeff---\r\nname: 'q'\r\n---\r\nb") == ({"name": "q"}, "b")
