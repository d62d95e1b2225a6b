"""Skills: folders of instructions (`SKILL.md`) the model can load by name when a task calls
for them.

Looked up in `<cwd>/.earshot/skills/<name>/SKILL.md` (the project's) and
`$XDG_CONFIG_HOME/earshot/skills/<name>/SKILL.md` (the user's); the project's wins on a name
clash. The frontmatter is a few `key: value` lines between `---` fences; only `name` and
`description` are read, so no YAML parser is needed.

A skill's name and description go into the tool list of the very first request, so a skill is a
read, checked like one before anything of it is read: the project's skills only once the user
trusts the workspace (`project=True`, see `agent.settings.trust`), and every `SKILL.md` after
resolving symlinks, through `readable` (the session's `Read` deny rules and secrets: a skill
symlinked to `.env` or `~/.ssh/id_rsa` is skipped). A project skill that resolves outside the
project is skipped too. Loading a skill later checks again.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

SKILL_FILE = "SKILL.md"

Readable = Callable[[Path], bool]
"""Whether the session may read a path (False: a deny rule or a secret)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Skill:
    name: str
    description: str
    path: Path
    """The SKILL.md file."""
    source: Literal["project", "user"]
    confined_to: Path | None = None
    """A project skill's file must resolve inside this directory (the project)."""

    @property
    def directory(self) -> Path:
        return self.path.parent


@dataclass(frozen=True, slots=True)
class SkillIndex:
    skills: tuple[Skill, ...] = ()
    readable: Readable | None = field(default=None, compare=False)
    """The read check applied when a skill is loaded (None: every file may be read)."""

    @classmethod
    def discover(
        cls,
        cwd: Path,
        config_home: Path | None = None,
        *,
        project: bool = False,
        readable: Readable | None = None,
    ) -> SkillIndex:
        """The user's skills (`config_home` defaults to `$XDG_CONFIG_HOME`, else `~/.config`)
        and, with `project` (the workspace is trusted), the project's at `cwd`; sorted by name.
        A skill whose resolved file `readable` refuses is left out (see the module docstring)."""
        home = config_home if config_home is not None else _config_home()
        found: dict[str, Skill] = {}
        roots: list[tuple[Path, Literal["project", "user"]]] = [
            (home / "earshot" / "skills", "user")
        ]
        if project:
            roots.append((cwd / ".earshot" / "skills", "project"))
        for root, source in roots:
            inside = _real(cwd) if source == "project" else None
            for skill in _scan(root, source, inside=inside, readable=readable):
                found[skill.name] = skill  # project scanned last: it wins
        ordered = tuple(sorted(found.values(), key=lambda skill: skill.name))
        return cls(ordered, readable)

    def get(self, name: str) -> Skill | None:
        return next((skill for skill in self.skills if skill.name == name), None)

    def load(self, name: str) -> str:
        """The skill's instructions (SKILL.md without its frontmatter).

        Raises:
            KeyError: no skill has that name.
            OSError: the file can no longer be read, or may not be (it now resolves to a file
                the read checks refuse).
        """
        skill = self.get(name)
        if skill is None:
            raise KeyError(name)
        real = _real(skill.path)
        if not _inside(real, skill.confined_to) or (
            self.readable is not None and not (self.readable(skill.path) and self.readable(real))
        ):
            raise PermissionError(f"reading {skill.path} is not allowed")
        _, body = split_frontmatter(real.read_text(encoding="utf-8", errors="replace"))
        return body.strip()

    def __bool__(self) -> bool:
        return bool(self.skills)


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _inside(path: Path, directory: Path | None) -> bool:
    return directory is None or path == directory or directory in path.parents


def _config_home() -> Path:
    configured = os.environ.get("XDG_CONFIG_HOME")
    return Path(configured) if configured else Path.home() / ".config"


def _scan(
    root: Path,
    source: Literal["project", "user"],
    *,
    inside: Path | None,
    readable: Readable | None,
) -> list[Skill]:
    try:
        folders = sorted(child for child in root.iterdir() if child.is_dir())
    except OSError:
        return []
    skills: list[Skill] = []
    for folder in folders:
        path = folder / SKILL_FILE
        real = _real(path)
        if not _inside(real, inside):
            continue  # a project skill must be the project's own file
        if readable is not None and not (readable(path) and readable(real)):
            continue
        try:
            text = real.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        fields, body = split_frontmatter(text)
        name = fields.get("name") or folder.name
        description = fields.get("description") or _first_line(body)
        skills.append(
            Skill(name=name, description=description, path=path, source=source, confined_to=inside)
        )
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
