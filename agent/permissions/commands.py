"""What a `Bash(pattern)` rule matches, given a command parsed by `agent.shell.parse`.

Allow rules (`command_allowed`) must cover every segment of the command, and never cover one
that runs code they cannot see (`ParsedCommand.opaque`: `eval`, `python -c`, `xargs`, `... | sh`,
`git -c`, a quoted array subscript...). A wrapper is covered through the command it runs:
`timeout 5 npm test` by `Bash(npm test *)`; `sudo X` and `env A=1 X` only by a rule that spells
out the whole command and names X (`Bash(sudo apt install *)`). A shell running a literal
script (`bash -c 'a && b'`) is covered by the rules covering `a` and `b`. Allow rules also see
git commands without git's harmless global options (`git --no-pager log` is `git log`).

Deny and ask rules (`command_matches`) match the whole line, and when ANY command the line
might run matches: every segment and every guess, each also read as the program's basename
(`/bin/rm`), after every wrapper prefix (`sudo`, `env`, `xargs`, `find -exec`...), and for git
without its global options (`git -C . push` is `git push`). A word bash computes at run time
could be anything, so a rule whose literal words reach a computed word matches (`git $X` for
`Bash(git push *)`).
`fallback_match` covers what the parser cannot read: code in other languages and unparsable
commands are scanned for the rule's literal words, and code that is not in the command line at
all (`curl ... | sh`, `eval "$X"`) is matched by every rule.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from functools import lru_cache
from typing import Literal

from agent.shell import (
    SHELLS,
    ParsedCommand,
    Segment,
    Words,
    code_tokens,
    program_name,
    tokens,
    tokens_decoded,
    unquote,
)
from agent.shell import git as shell_git

# programs that run their arguments as a command (deny rules look past them)
WRAPPERS = frozenset(
    {"sudo", "doas", "env", "nohup", "nice", "ionice", "timeout", "stdbuf", "setsid", "exec",
     "command", "builtin", "xargs", "watch", "time", "chronic", "unbuffer", "flock", "strace",
     "ltrace", "chroot", "runuser", "su", "parallel", "nsenter", "unshare", "setpriv", "pkexec",
     "firejail", "bwrap", "systemd-run", "taskset", "numactl", "chrt", "prlimit", "faketime",
     "fakeroot", "eatmydata", "proxychains", "proxychains4", "torsocks", "xvfb-run", "sg",
     "dbus-run-session", "ssh-agent", "catchsegv", "cgexec", "trickle", "nocache", "rlwrap",
     "entr", "caffeinate", "script", "valgrind", "gdb", "runcon"}
)  # fmt: skip
_EXEC_FLAGS = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_DURATION = re.compile(r"[0-9.]+[smhd]?")
# in a command that cannot be parsed: signs that it runs code given as text or on stdin
_SHELL_NAMES = "|".join(sorted(SHELLS))
_RUNS_TEXT = re.compile(
    r"\|\s*(?:(?:sudo|env|exec|command|nohup)\s+)*(?:\S*/)?(?:" + _SHELL_NAMES + r")(?![\w.-])"
    r"|(?:^|[;&|(`\n])\s*(?:eval|source|\.|trap|alias|xargs|parallel)\s"
    r"|(?:^|[;&|(`\n])\s*(?:\S*/)?(?:" + _SHELL_NAMES + r")(?:\s+-\S+)*?\s+-\S*c"
    r"|(?:^|[;&|(`\n])\s*(?:\S*/)?(?:" + _SHELL_NAMES + r")\b[^|;&\n]*(?:<<|/dev/stdin|/dev/fd/)"
)
Covered = Literal[True]


# ------------------------------------------------------------------------------- patterns


def normalise_command_pattern(pattern: str) -> str:
    pattern = " ".join(pattern.split())
    if pattern.endswith(":*"):
        pattern = pattern[:-2].rstrip() + " *"
    return pattern


@lru_cache(maxsize=1024)
def command_regex(pattern: str) -> re.Pattern[str]:
    """A command pattern as a regex over a segment's text."""
    pattern = normalise_command_pattern(pattern)
    optional_tail = pattern.endswith(" *")
    body = pattern[:-2] if optional_tail else pattern
    regex = ".*".join(re.escape(part) for part in body.split("*"))
    if optional_tail:
        regex += r"(?: .*)?"
    return re.compile(regex, re.DOTALL)


def literal_words(pattern: str) -> list[str]:
    """The pattern's leading words up to the first glob."""
    words: list[str] = []
    for word in normalise_command_pattern(pattern).split(" "):
        if any(ch in word for ch in "*?"):
            break
        words.append(word)
    return words


def _open_tail(pattern: str) -> bool:
    """Whether all the pattern has past its literal words is a trailing ` *`."""
    normalised = normalise_command_pattern(pattern)
    literal = " ".join(literal_words(pattern))
    return normalised[len(literal) :] in ("", " *", "*")


# ---------------------------------------------------------------------------------- allow


def command_allowed(command: ParsedCommand, patterns: Sequence[str]) -> int | None:
    """Index of the first pattern an allow decision rests on, when the patterns together cover
    every segment of `command`."""
    if not command.parsed or command.opaque or not command.segments or not patterns:
        return None
    first: int | None = None
    for segment in command.segments:
        covered = _covering(segment, patterns)
        if covered is None:
            return None
        if covered is not True and first is None:
            first = covered
    return first


def _covering(segment: Segment, patterns: Sequence[str]) -> int | Covered | None:
    texts = [segment.text]
    words = segment.command_words
    if words and program_name(words[0]) == "git":
        stripped = segment.words[: segment.assignments] + shell_git.allow_words(words)
        texts.append(" ".join(stripped))
    for index, pattern in enumerate(patterns):
        regex = command_regex(pattern)
        if not any(regex.fullmatch(text) for text in texts):
            continue
        if segment.runs is None or _names_program(pattern, segment.runs):
            return index
    if segment.assignments:
        return None
    if segment.runs is not None and segment.wrap == "transparent":
        return _covering(segment.runs, patterns)
    if segment.runs is None and segment.script:
        return True  # its script's commands are segments of their own
    return None


def _names_program(pattern: str, inner: Segment) -> bool:
    words = inner.command_words
    if not words:
        return False
    return program_name(words[0]) in {program_name(word) for word in literal_words(pattern)}


# ------------------------------------------------------------------------------ deny, ask


def command_matches(pattern: str, command: ParsedCommand) -> bool:
    """Whether a deny or ask pattern matches any command `command` might run, or the whole
    line (whitespace collapsed: the rule "always reject" writes, `Bash(ls && echo marker)`)."""
    regex = command_regex(pattern)
    if regex.fullmatch(" ".join(command.source.split())):
        return True
    if not command.parsed:
        return False
    literal = literal_words(pattern)
    open_tail = _open_tail(pattern)
    for segment in (*command.segments, *command.guesses):
        if regex.fullmatch(segment.text):
            return True
        for variant in _variants(segment, depth=0):
            if _could_match(regex, literal, open_tail, variant):
                return True
    return False


def _variants(segment: Segment, *, depth: int) -> Iterator[Words]:
    yield from _unwrapped(segment.command(), depth=depth)
    if segment.runs is not None and depth < 4:
        yield from _variants(segment.runs, depth=depth + 1)


def _unwrapped(words: Words, *, depth: int) -> Iterator[Words]:
    """The command read as written, with the program's basename, after every prefix a wrapper
    might run (`sudo`, `env`, `xargs`, `find -exec`...), and git without its global options."""
    if not words.items or depth > 4:
        return
    yield words
    name = program_name(words.items[0])
    if name != words.items[0]:
        yield Words((name, *words.items[1:]), words.computed)
    if name in WRAPPERS:
        # which argument starts the wrapped command depends on each wrapper's options; any
        # suffix might, and deny errs towards matching
        for start in range(1, len(words)):
            if name == "env" and "=" in words.items[start]:
                continue
            yield from _unwrapped(words.tail(start), depth=depth + 1)
    elif name == "find":
        for index, word in enumerate(words.items):
            if word in _EXEC_FLAGS:
                yield from _unwrapped(words.tail(index + 1), depth=depth + 1)
    elif name == "git":
        for start in shell_git.subcommand_starts(words):
            if start > 1:
                flags = words.computed + (False,) * (len(words) - len(words.computed))
                yield Words(("git", *words.items[start:]), (False, *flags[start:]))


def _could_match(
    regex: re.Pattern[str], literal: list[str], open_tail: bool, variant: Words
) -> bool:
    if regex.fullmatch(" ".join(variant.items)):
        return True
    # a word bash computes could be anything (even several words): the rule could match if its
    # literal words agree with the command's up to a computed word
    for index, want in enumerate(literal):
        if index >= len(variant):
            return False
        if variant.expands(index):
            return True
        word = variant.items[index]
        if word != want and not (index == 0 and program_name(word) == want):
            return False
    if open_tail:
        return False
    return any(variant.expands(index) for index in range(len(literal), len(variant)))


def dynamic_programs(segment: Segment) -> bool:
    """Whether the program a segment (or a wrapper in it: `sudo $X`, `timeout 5 $X`) runs is
    computed at run time."""
    if segment.dynamic or (segment.runs is not None and dynamic_programs(segment.runs)):
        return True
    words = segment.command_words
    if not words or program_name(words[0]) not in WRAPPERS:
        return False
    for index in range(1, len(words)):
        if segment.is_computed(segment.assignments + index):
            return True
        word = words[index]
        if word.startswith("-") or "=" in word or _DURATION.fullmatch(word):
            continue
        if program_name(word) not in WRAPPERS:
            return False
    return False


# ------------------------------------------------------------------------------ fallback


def fallback_match(patterns: Sequence[str], command: ParsedCommand) -> int | None:
    """For what the parser cannot read: index of a pattern that could match.

    Code not in the command line at all could run anything: the first pattern. Code in other
    languages, and commands that cannot be parsed, match a pattern whose literal leading words
    appear as a token sequence in them."""
    if not patterns:
        return None
    if command.parsed:
        if command.hidden:
            return 0
        streams = [code_tokens(text) for text in command.foreign]
    else:
        if _RUNS_TEXT.search(tokens_decoded(command.source)):
            return 0
        # the source as written, with one layer of quoting removed (`bash -c '$'"'"'\x72m'`),
        # and split like code in another language
        streams = [tokens(command.source), tokens(unquote(command.source))]
        streams.append(code_tokens(command.source))
    for index, pattern in enumerate(patterns):
        literal = literal_words(pattern)
        if not literal and streams:
            return index
        if any(_contains(stream, literal) for stream in streams):
            return index
    return None


def _contains(found: Sequence[str], literal: list[str]) -> bool:
    names = [program_name(token) for token in found]
    size = len(literal)
    for start in range(len(found) - size + 1):
        window = list(found[start : start + size])
        if window == literal or [names[start], *window[1:]] == literal:
            return True
    return False
