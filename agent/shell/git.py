"""git's command line as the permission gate needs it.

- Global options come before the subcommand and change nothing a `Bash(git push *)` rule is
  about, so deny and ask rules match with them stripped (`git -C . push`, `git --no-pager push`,
  `git -c k=v push`, `git --git-dir=.git push`). Allow rules only look past the harmless ones
  (`--no-pager`, `-P`, `--no-optional-locks`...): `-C`, `--git-dir` and `-c` choose which
  configuration git obeys, and configuration can run commands.
- `-c key=value` can make git run anything (`alias.x=!cmd`, `core.pager`, `core.fsmonitor`,
  `diff.external`...): the command is opaque, an alias is read for deny rules, and every value is
  scanned for their words. So are the subcommand options that run a command
  (`submodule foreach`, `bisect run`, `rebase --exec`, `filter-branch --tree-filter`,
  `difftool --extcmd`, `--upload-pack`, `ext::` URLs...).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from agent.shell.words import Effects, Script, Words, code_string

_VALUE_OPTIONS = frozenset(
    {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--config-env",
     "--attr-source"}
)  # fmt: skip
_EQUALS_OPTIONS = _VALUE_OPTIONS | {"--exec-path", "--list-cmds"}
HARMLESS_OPTIONS = frozenset(
    {"--no-pager", "-P", "--literal-pathspecs", "--glob-pathspecs", "--noglob-pathspecs",
     "--icase-pathspecs", "--no-replace-objects", "--no-optional-locks", "--no-lazy-fetch",
     "--no-advice"}
)  # fmt: skip
_FLAGS = HARMLESS_OPTIONS | {
    "-p", "--paginate", "--bare", "--exec-path", "--html-path", "--man-path", "--info-path",
    "--version", "-v", "--help", "-h",
}  # fmt: skip
_REMOTE_CODE_OPTIONS = ("--upload-pack", "--receive-pack", "--exec")
_FILTERS = frozenset(
    {"--env-filter", "--tree-filter", "--index-filter", "--parent-filter", "--msg-filter",
     "--commit-filter", "--tag-name-filter"}
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class GitCommand:
    subcommand: int | None
    """Index of the subcommand; None when there is none."""
    options: tuple[tuple[str, str | None, int], ...]
    """Global options before it: (option, value, index of the value or of the option)."""
    precise: bool
    """False: an option this reader does not know, so the subcommand might start later."""


def read(words: Words) -> GitCommand:
    """Split `git [global options] subcommand ...`."""
    options: list[tuple[str, str | None, int]] = []
    precise = True
    index = 1
    while index < len(words):
        word = words.items[index]
        if words.expands(index):
            precise = False
            break
        option, equals, value = word.partition("=")
        if word in _VALUE_OPTIONS:
            has_value = index + 1 < len(words)
            options.append((word, words.items[index + 1] if has_value else None, index + 1))
            index += 2
        elif equals and option in _EQUALS_OPTIONS:
            options.append((option, value, index))
            index += 1
        elif word in _FLAGS:
            options.append((word, None, index))
            index += 1
        elif word.startswith("-"):
            precise = False
            index += 1
        else:
            break
    return GitCommand(index if index < len(words) else None, tuple(options), precise)


def subcommand_starts(words: Words) -> list[int]:
    """Where the subcommand may start: one index when the global options can be read, else
    every later word."""
    command = read(words)
    if command.precise:
        return [command.subcommand] if command.subcommand is not None else []
    return list(range(1, len(words)))


def allow_words(words: tuple[str, ...]) -> tuple[str, ...]:
    """The words with the harmless global options dropped (what allow rules see)."""
    out = [words[0]]
    index = 1
    while index < len(words) and words[index] in HARMLESS_OPTIONS:
        index += 1
    out.extend(words[index:])
    return tuple(out)


def analyse(words: Words, effects: Effects) -> None:
    command = read(words)
    if not command.precise:
        effects.opaque.append("cannot read the options given to `git`")
    alias = words.items[command.subcommand] if command.subcommand is not None else None
    for option, value, at in command.options:
        if option in ("-c", "--config-env", "--exec-path") and value is not None:
            effects.opaque.append(f"`git {option}` can make git run a command")
            if option != "-c" or words.expands(at):
                effects.hidden.append(f"`git {option}` takes what git runs from elsewhere")
                continue
            key, _, setting = value.partition("=")
            effects.foreign.append(setting)
            if alias is not None and key.lower() == f"alias.{alias.lower()}":
                _alias(words, command.subcommand or 0, setting, effects)
    if command.subcommand is not None:
        _subcommand(words, command.subcommand, effects)


def _alias(words: Words, at: int, setting: str, effects: Effects) -> None:
    rest = list(words.items[at + 1 :])
    if setting.startswith("!"):
        effects.scripts.append(Script(setting[1:] + " " + shlex.join(rest), listed=False))
        return
    try:
        expanded = shlex.split(setting)
    except ValueError:
        effects.hidden.append("a git alias that cannot be split")
        return
    effects.scripts.append(Script(shlex.join(["git", *expanded, *rest]), listed=False))


def _subcommand(words: Words, at: int, effects: Effects) -> None:
    name = words.items[at]
    rest = range(at + 1, len(words))
    if name == "submodule" and "foreach" in words.items[at + 1 :]:
        start = words.items.index("foreach", at + 1) + 1
        while start < len(words) and words.items[start].startswith("--"):
            start += 1
        effects.opaque.append("`git submodule foreach` runs a command")
        code_string(words, start, len(words), effects, listed=False)
        return
    if name == "bisect" and at + 1 < len(words) and words.items[at + 1] == "run":
        effects.opaque.append("`git bisect run` runs a command")
        effects.guesses.append((at + 2, len(words)))
        return
    for index in rest:
        word = words.items[index]
        option, equals, value = word.partition("=")
        code: str | None = None
        code_at: int | None = None
        if _takes_command(name, word, option):
            code, code_at = (value, None) if equals else (None, index + 1)
        elif name == "grep" and (word.startswith("-O") or option == "--open-files-in-pager"):
            code = word[2:] if word.startswith("-O") else value
        elif word.startswith("ext::"):
            code = word[len("ext::") :]
        if code is None and code_at is None:
            continue
        effects.opaque.append(f"`git {name} {option}` runs a command")
        if code_at is not None:
            code_string(words, code_at, code_at + 1, effects, listed=False)
            if code_at < len(words) and not words.expands(code_at):
                effects.foreign.append(words.items[code_at])
        elif code:
            effects.foreign.append(code)
            effects.scripts.append(Script(code, listed=False))


def _takes_command(subcommand: str, word: str, option: str) -> bool:
    """Whether `option` of `git SUBCOMMAND` takes a command (as `=VALUE` or the next word)."""
    if option in _FILTERS:
        return True
    if subcommand == "rebase":
        return option in ("-x", "--exec")
    if subcommand == "difftool":
        return option in ("-x", "--extcmd")
    if subcommand == "clone" and (word == "-u" or option in ("-c", "--config")):
        return True
    return option in _REMOTE_CODE_OPTIONS
