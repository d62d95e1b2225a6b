"""The user's own slash commands: Markdown files whose text becomes the prompt.

    $XDG_CONFIG_HOME/earshot/commands/<name>.md     the user's, in every project
    <cwd>/.earshot/commands/<name>.md               the project's, once the workspace is trusted

`/name some words` sends the file's text with `$ARGUMENTS` replaced by `some words` (when the
text has no `$ARGUMENTS`, the words follow it on a line `Arguments: ...`). Optional front matter
(`---` fenced `key: value` lines, as skills have):

    description: one line for the command menu (default: the text's first line)
    argument-hint: the input hint (default: "arguments")
    model: provider/model for this command's turn only
    allowed-tools: Bash(git *), Read          rules; the turn may use only calls they match

`allowed-tools` narrows and never widens (`agent.commands.sources`): a matching call is still
decided by the permission gate. A user command wins over a project command of the same name, so
a repository cannot replace one; a project command file must resolve inside the project, and
every file is read through the session's read checks (a command symlinked to `~/.ssh/id_rsa` is
skipped). The directories are read again each time commands are listed or run, so a file added
between turns is a command at the next one.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from agent.commands.sources import CommandReply, CommandSource, ExtraCommand
from agent.skills import split_frontmatter

COMMANDS_DIR = "commands"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_MAX_BYTES = 256 * 1024


@dataclass(frozen=True, slots=True)
class UserCommand:
    """One Markdown command file, read."""

    name: str
    description: str
    hint: str | None
    body: str
    model: str | None
    allowed_tools: tuple[str, ...] | None
    source: Literal["user", "project"]
    path: Path

    async def run(self, argument: str) -> CommandReply:
        return CommandReply(
            prompt=expand(self.body, argument),
            model=self.model,
            allowed_tools=self.allowed_tools,
        )


def expand(body: str, argument: str) -> str:
    """The prompt: `$ARGUMENTS` replaced, or the argument added after the text."""
    if "$ARGUMENTS" in body:
        return body.replace("$ARGUMENTS", argument)
    text = body.strip()
    return f"{text}\n\nArguments: {argument}" if argument else text


def user_commands_source(
    *,
    cwd: Path,
    config_home: Path | None,
    trusted: bool,
    readable: Callable[[Path], bool] | None = None,
) -> CommandSource:
    """The commands as the files are now (see the module docstring)."""

    def commands() -> Sequence[ExtraCommand]:
        found: dict[str, ExtraCommand] = {}
        if config_home is not None:
            user_dir = config_home / "earshot" / COMMANDS_DIR
            for command in scan(user_dir, "user", inside=None, readable=readable):
                found.setdefault(command.name, command)
        if trusted:
            project = _real(cwd)
            project_dir = cwd / ".earshot" / COMMANDS_DIR
            for command in scan(project_dir, "project", inside=project, readable=readable):
                found.setdefault(command.name, command)
        return list(found.values())

    return commands


def scan(
    directory: Path,
    source: Literal["user", "project"],
    *,
    inside: Path | None,
    readable: Callable[[Path], bool] | None,
) -> list[UserCommand]:
    try:
        paths = sorted(path for path in directory.iterdir() if path.suffix == ".md")
    except OSError:
        return []
    commands: list[UserCommand] = []
    for path in paths:
        name = path.stem
        real = _real(path)
        if not _NAME.match(name) or not real.is_file():
            continue
        if inside is not None and inside not in real.parents:
            continue  # a project command must be the project's own file
        if readable is not None and not (readable(path) and readable(real)):
            continue
        try:
            if real.stat().st_size > _MAX_BYTES:
                continue
            text = real.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        commands.append(_parse(name, text, source, path))
    return commands


def _parse(name: str, text: str, source: Literal["user", "project"], path: Path) -> UserCommand:
    fields, body = split_frontmatter(text)
    tools = fields.get("allowed-tools")
    return UserCommand(
        name=name,
        description=fields.get("description") or _first_line(body) or f"/{name} ({source})",
        hint=fields.get("argument-hint") or "arguments",
        body=body,
        model=fields.get("model") or None,
        allowed_tools=None if tools is None else tuple(split_rules(tools)),
        source=source,
        path=path,
    )


def split_rules(text: str) -> list[str]:
    """`Bash(git add, git commit), Read` -> the two rules: commas inside parentheses stay; a
    YAML flow list's brackets are dropped."""
    text = text.strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    rules: list[str] = []
    depth, current = 0, ""
    for char in text:
        if char == "," and depth == 0:
            rules.append(current)
            current = ""
            continue
        depth += {"(": 1, ")": -1}.get(char, 0)
        current += char
    rules.append(current)
    return [rule.strip().strip("\"'") for rule in rules if rule.strip()]


def _first_line(body: str) -> str:
    for line in body.splitlines():
        stripped = line.strip().lstrip("#").strip()
        if stripped:
            return stripped[:120]
    return ""


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


__all__ = ["COMMANDS_DIR", "UserCommand", "expand", "split_rules", "user_commands_source"]
