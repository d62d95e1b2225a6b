"""Skills: folders of instructions (`SKILL.md`) the model can load by name when a task calls
for them.

Looked up in `<cwd>/.earshot/skills/<name>/SKILL.md` (the project's) and
`$XDG_CONFIG_HOME/earshot/skills/<name>/SKILL.md` (the user's); the project's wins on a name
clash. The frontmatter is a few `key: value` lines between `---` fences; only `name` and
`description` are read, so no YAML parser is needed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

SKILL_FILE = "SKILL.md"


@dataclass(frozen=True, slots=True, kw_only=True)
class Skill:
    name: str
    description: str
    path: Path
    """The SKILL.md file."""
    source: Literal["project", "user"]

    @property
    def directory(self) -> Path:
        return self.path.parent


@dataclass(frozen=True, slots=True)
class SkillIndex:
    skills: tuple[Skill, ...] = ()

    @classmethod
    def discover(cls, cwd: Path, config_home: Path | None = None) -> SkillIndex:
        """The skills of the project at `cwd` and of the user (`config_home` defaults to
        `$XDG_CONFIG_HOME`, else `~/.config`), sorted by name."""
        home = config_home if config_home is not None else _config_home()
        found: dict[str, Skill] = {}
        roots: tuple[tuple[Path, Literal["project", "user"]], ...] = (
            (home / "earshot" / "skills", "user"),
            (cwd / ".earshot" / "skills", "project"),
        )
        for root, source in roots:
            for skill in _scan(root, source):
                found[skill.name] = skill  # project scanned last: it wins
        return cls(tuple(sorted(found.values(), key=lambda skill: skill.name)))

    def get(self, name: str) -> Skill | None:
        return next((skill for skill in self.skills if skill.name == name), None)

    def load(self, name: str) -> str:
        """The skill's instructions (SKILL.md without its frontmatter).

        Raises:
            KeyError: no skill has that name.
            OSError: the file can no longer be read.
        """
        skill = self.get(name)
        if skill is None:
            raise KeyError(name)
        _, body = split_frontmatter(skill.path.read_text(encoding="utf-8", errors="replace"))
        return body.strip()

    def __bool__(self) -> bool:
        return bool(self.skills)


def _config_home() -> Path:
    configured = os.environ.get("XDG_CONFIG_HOME")
    return Path(configured) if configured else Path.home() / ".config"


def _scan(root: Path, source: Literal["project", "user"]) -> list[Skill]:
    try:
        folders = sorted(child for child in root.iterdir() if child.is_dir())
    except OSError:
        return []
    skills: list[Skill] = []
    for folder in folders:
        path = folder / SKILL_FILE
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        fields, body = split_frontmatter(text)
        name = fields.get("name") or folder.name
        description = fields.get("description") or _first_line(body)
        skills.append(Skill(name=name, description=description, path=path, source=source))
    return skills


def split_frontmatter(text: str) -> tuple[dict[str, str], str]:
    """`key: value` pairs of a leading `---` fenced block, and the text after it."""
    lines = text.lstrip("\ufeff").splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return {}, text
    fields: dict[str, str] = {}
    for index, line in enumerate(lines[1:], start=1):
        if line.strip() == "---":
            return fields, "".join(lines[index + 1 :])
        key, separator, value = line.partition(":")
        if separator and key.strip() and not line.startswith((" ", "\t", "#")):
            fields[key.strip()] = _unquote(value.strip())
    return {}, text  # no closing fence: not frontmatter


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


def _first_line(body: str) -> str:
    for line in body.splitlines():
        stripped = line.strip().lstrip("#").strip()
        if stripped:
            return stripped
    return ""
