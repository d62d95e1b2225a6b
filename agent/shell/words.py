"""The vocabulary the permission parser's program knowledge is written in (`agent.shell.programs`,
`agent.shell.builtins`, `agent.shell.scripts`, `agent.shell.git`): a command's words, and the
`Effects` a command has beyond its own words."""

from __future__ import annotations

from dataclasses import field
from typing import Literal, TypeAlias

from providers.records import MutableRecord, Record

WrapKind: TypeAlias = Literal["transparent", "explicit", "opaque"]
"""How allow rules see a wrapper: `transparent` ones (`timeout`, `nice`) are covered when the
command they run is; an `explicit` one (`sudo`, `env A=1`) only by a rule that matches the whole
command and names the program it runs (`Bash(sudo apt install *)`); no rule covers an `opaque`
one (`xargs`)."""

STDIN_PATHS = frozenset({"/dev/stdin", "/dev/fd/0", "/proc/self/fd/0", "-"})


def option_set(text: str) -> frozenset[str]:
    """`option_set("--a --b")`: a set of option names, written compactly."""
    return frozenset(text.split())


def program_name(word: str) -> str:
    return word.rsplit("/", 1)[-1]


class Words(Record, kw_only=False):
    """A command's words (after quote removal) and which of them bash computes at run time."""

    items: tuple[str, ...]
    computed: tuple[bool, ...]

    def __len__(self) -> int:
        return len(self.items)

    def expands(self, index: int) -> bool:
        return index < len(self.computed) and self.computed[index]

    def name(self, index: int = 0) -> str:
        return program_name(self.items[index])

    def tail(self, start: int) -> Words:
        return Words(self.items[start:], self.computed[start:])


class Script(Record, kw_only=False):
    """Shell code a command runs from a string."""

    text: str
    listed: bool
    """Its commands count as the command's own segments (allow rules may match them); otherwise
    they are only candidates for deny and ask rules."""


class Effects(MutableRecord, kw_only=False):
    """What a simple command runs or changes beyond what its own words show."""

    inner: tuple[int, WrapKind] | None = None
    """Where the command a wrapper runs starts, and what kind of wrapper it is."""
    scripts: list[Script] = field(default_factory=lambda: [])
    reads_stdin: bool = False
    """Runs shell code from stdin."""
    foreign_stdin: bool = False
    """Runs code in another language from stdin."""
    foreign: list[str] = field(default_factory=lambda: [])
    """Code in another language (or a value another program runs) the gate only scans."""
    hidden: list[str] = field(default_factory=lambda: [])
    """Why the command runs code that is not in the command line at all."""
    opaque: list[str] = field(default_factory=lambda: [])
    """Why no allow rule can admit the command."""
    guesses: list[tuple[int, int]] = field(default_factory=lambda: [])
    """Where (start, end) a command might be, when a wrapper's options cannot be read or it
builds the command from data (deny and ask rules only)."""
    runs_files: list[str] = field(default_factory=lambda: [])
    """Files the command runs as code (`bash x.sh`, `source f`, `BASH_ENV=f`)."""
    changes_cwd: bool = False
    changes_home: bool = False


def speculate(words: Words, index: int, effects: Effects) -> None:
    """The wrapper's options cannot be read: any later word may start the command it runs."""
    effects.opaque.append(f"cannot tell which command `{words.items[0]}` runs")
    effects.guesses.extend((start, len(words)) for start in range(index, len(words)))


def code_string(words: Words, start: int, end: int, effects: Effects, *, listed: bool) -> None:
    """Words `start:end` joined are shell code the command runs (`eval a b`, `trap 'x' EXIT`)."""
    if start >= end or start >= len(words):
        return
    if any(words.expands(index) for index in range(start, end)):
        effects.hidden.append(f"`{words.items[0]}` runs a string computed at run time")
        return
    effects.scripts.append(Script(" ".join(words.items[start:end]), listed=listed))


def foreign_code(words: Words, index: int, effects: Effects, *, code: str | None = None) -> None:
    """Word `index` (or `code`) is code in another language the command runs."""
    effects.opaque.append(f"`{words.items[0]}` runs code given on its command line")
    if code is not None:
        effects.foreign.append(code)
    elif index < len(words):
        if words.expands(index):
            effects.hidden.append(f"`{words.items[0]}` runs code computed at run time")
        else:
            effects.foreign.append(words.items[index])


def script_operand(words: Words, index: int, effects: Effects, *, shell: bool) -> None:
    """A shell, `source` or an interpreter given a file of code to run."""
    path = words.items[index]
    if path in STDIN_PATHS or path.startswith("/dev/fd/"):
        if shell:
            effects.reads_stdin = True
        else:
            effects.foreign_stdin = True
    elif words.expands(index):
        effects.hidden.append(f"runs a script whose name is computed at run time: {path}")
    else:
        effects.runs_files.append(path)
