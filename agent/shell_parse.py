"""Split a shell command into the simple commands it runs, for permission rules.

A `Bash(npm run *)` rule must cover every command a string runs, not just the first: `npm run build
&& rm -rf ~` runs two. `parse_command` walks bashlex's syntax tree and returns each simple command
(a *segment*) wherever it sits: after `&&`, `||`, `;`, `|`, `&` or a newline, inside `( )` and
`{ }`, loops, conditionals and function bodies, inside `$(...)`, backticks and `<(...)`/`>(...)`,
and inside the string given to `eval` or `sh -c`/`bash -c`.

Whatever bashlex cannot read, or reads differently from bash, is reported as unparsed
(`parsed=False`): ANSI-C `$'...'` and locale `$"..."` strings (bashlex drops their meaning),
substitutions nested inside `${...}` (bashlex does not descend into them), arithmetic, `[[ ]]`,
`case`, `time`, and expansions inside an unquoted here-document. An unparsed command never matches
an allow rule; deny rules fall back to `tokens`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, cast

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "busybox"})
"""Commands that run a string or stdin as shell code."""

_WRITE_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&"})
_HARMLESS_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})
# `-c` optionally bundled with flags that do not make the shell read anything else (`-ec`, `-xc`).
_DASH_C = re.compile(r"-[euxc]*c[euxc]*")
_MAX_DEPTH = 8
# Constructs bashlex parses into something other than what bash runs.
_MISREAD = re.compile(r"\$'|\$\"")
_SUBSTITUTION = re.compile(r"\$\(|`|<\(|>\(")


@dataclass(frozen=True, slots=True)
class Segment:
    """One simple command, as bash will see its words after quote removal."""

    words: tuple[str, ...]
    """Leading `NAME=value` assignments included."""
    assignments: int = 0
    """How many of `words` are leading assignments."""
    computed: tuple[bool, ...] = ()
    """Per word: whether bash computes its value (an expansion, a glob, a brace expansion)."""

    @property
    def text(self) -> str:
        """The words joined by single spaces: what command patterns are matched against."""
        return " ".join(self.words)

    @property
    def command_words(self) -> tuple[str, ...]:
        """The words without the leading assignments."""
        return self.words[self.assignments :]

    @property
    def dynamic(self) -> bool:
        """Whether the command name is computed at run time (`$CMD`, `{r,m}`, `/bin/r?`), so no
        pattern can say which program runs."""
        return self.assignments < len(self.words) and self.is_computed(self.assignments)

    def is_computed(self, index: int) -> bool:
        """Whether bash computes word `index` at run time."""
        if index < len(self.computed) and self.computed[index]:
            return True
        return is_dynamic_word(self.words[index])


@dataclass(frozen=True, slots=True)
class ParsedCommand:
    source: str
    parsed: bool
    """False: the command could not be read reliably; `segments` is then empty."""
    segments: tuple[Segment, ...] = ()
    writes: tuple[str, ...] = ()
    """Files that redirections write (`> out.txt`), as written."""
    opaque: bool = False
    """Runs shell code the parser cannot see: a shell reading stdin or a here-document, `eval` or
    `sh -c` of an expansion, `source`."""
    error: str | None = None


def is_dynamic_word(word: str) -> bool:
    """A word that bash would glob or brace-expand (quotes are gone by now, so a quoted `*` counts
    too: harmless, as it only makes the check stricter)."""
    if any(ch in word for ch in "*?["):
        return True
    return "{" in word and ("," in word or ".." in word)


def parse_command(command: str) -> ParsedCommand:
    """Split `command` into the simple commands it runs; never raises."""
    try:
        walker = _Walker(command)
        walker.walk_source(command, depth=0)
    except _Unreadable as error:
        return ParsedCommand(source=command, parsed=False, error=str(error))
    except (
        Exception
    ) as error:  # bashlex raises assorted errors (ParsingError, NotImplementedError...)
        return ParsedCommand(source=command, parsed=False, error=f"{type(error).__name__}: {error}")
    return ParsedCommand(
        source=command,
        parsed=True,
        segments=tuple(walker.segments),
        writes=tuple(walker.writes),
        opaque=walker.opaque,
    )


_TOKEN_SPLIT = re.compile(r"[\s;&|()<>{}`]+|\$\(")


def tokens(command: str) -> tuple[str, ...]:
    """A best-effort split into words for commands that cannot be parsed: quotes and backslashes
    are dropped (bash concatenates `r''m` into `rm`) and every operator separates words."""
    unquoted = re.sub(r"['\"\\]", "", command)
    return tuple(token for token in _TOKEN_SPLIT.split(unquoted) if token)


class _Unreadable(Exception):
    pass


@dataclass
class _Walker:
    source: str
    segments: list[Segment] = field(default_factory=lambda: [])
    writes: list[str] = field(default_factory=lambda: [])
    opaque: bool = False

    def walk_source(self, text: str, *, depth: int) -> None:
        import bashlex  # a yacc parser: costs start-up time, so loaded on first use

        if depth > _MAX_DEPTH:
            raise _Unreadable("commands nested too deeply")
        if _MISREAD.search(text):
            raise _Unreadable("$'...' and $\"...\" strings are not supported")
        if not text.strip():
            return
        nodes = cast("list[Any]", bashlex.parse(text))  # pyright: ignore[reportUnknownMemberType]
        for node in nodes:
            self._visit(node, text, depth)

    def _visit(self, node: Any, text: str, depth: int) -> None:
        kind: str = node.kind
        if kind == "command":
            self._command(node, text, depth)
            return
        if kind in ("commandsubstitution", "processsubstitution"):
            self._visit(node.command, text, depth)
            return
        if kind == "parameter":
            if _SUBSTITUTION.search(str(getattr(node, "value", ""))):
                raise _Unreadable("a substitution inside ${...}")
            return
        if kind == "redirect":
            self._redirect(node, text, depth)
            return
        if kind in ("word", "assignment"):
            _check_word(node, text)
        for child in _children(node):
            self._visit(child, text, depth)

    def _command(self, node: Any, text: str, depth: int) -> None:
        words: list[str] = []
        computed: list[bool] = []
        assignments = 0
        heredocs: list[str] = []
        for part in node.parts:
            match part.kind:
                case "assignment":
                    if len(words) == assignments:
                        assignments += 1
                    words.append(part.word)
                    computed.append(_expands(part))
                    self._visit_word_parts(part, text, depth)
                case "word":
                    words.append(part.word)
                    computed.append(_expands(part))
                    self._visit_word_parts(part, text, depth)
                case "redirect":
                    self._redirect(part, text, depth)
                    heredoc = getattr(part, "heredoc", None)
                    if heredoc is not None:
                        heredocs.append(_heredoc_body(heredoc.value))
                case _:
                    for child in _children(part):
                        self._visit(child, text, depth)
        segment = Segment(words=tuple(words), assignments=assignments, computed=tuple(computed))
        inner = _inner_script(segment)
        if inner is not None:
            script, literal = inner
            if literal:
                # `sh -c 'a; b'` and `eval "a; b"` run exactly the inner commands
                self.walk_source(script, depth=depth + 1)
                return
            self.opaque = True
        elif _reads_stdin_as_code(segment):
            self.opaque = True
            for body in heredocs:
                self.walk_source(body, depth=depth + 1)
        self.segments.append(segment)

    def _visit_word_parts(self, word: Any, text: str, depth: int) -> None:
        _check_word(word, text)
        for child in _children(word):
            self._visit(child, text, depth)

    def _redirect(self, node: Any, text: str, depth: int) -> None:
        heredoc = getattr(node, "heredoc", None)
        if heredoc is not None:
            start, end = node.pos
            delimiter_quoted = any(ch in text[start:end] for ch in "'\"\\")
            if not delimiter_quoted and _SUBSTITUTION.search(heredoc.value):
                raise _Unreadable("a substitution inside an unquoted here-document")
            return
        target = getattr(node, "output", None)
        if target is None or isinstance(target, int):
            return  # `2>&1`, `>&2`: a descriptor, not a file
        self._visit_word_parts(target, text, depth)
        if node.type in _WRITE_REDIRECTS and target.word not in _HARMLESS_TARGETS:
            self.writes.append(target.word)


def _children(node: Any) -> list[Any]:
    children: list[Any] = []
    for name in ("parts", "list", "redirects"):
        value = getattr(node, name, None)
        if isinstance(value, list):
            children.extend(value)  # pyright: ignore[reportUnknownArgumentType]
    command = getattr(node, "command", None)
    if command is not None and hasattr(command, "kind"):
        children.append(command)
    return children


def _check_word(word: Any, text: str) -> None:
    # bashlex drops every command after the first newline inside `$(...)`, backticks and
    # `<(...)`; such a word cannot be trusted
    start, end = word.pos
    if "\n" in text[start:end] and _expands(word):
        raise _Unreadable("a multi-line command substitution")


def _expands(word: Any) -> bool:
    return any(
        child.kind in ("parameter", "commandsubstitution", "processsubstitution")
        for child in _children(word)
    )


def _heredoc_body(value: str) -> str:
    # bashlex keeps the closing delimiter line in the value
    lines = value.split("\n")
    return "\n".join(lines[:-1]) if len(lines) > 1 else value


def _inner_script(segment: Segment) -> tuple[str, bool] | None:
    """For `sh -c STRING` and `eval ARGS`: the script they run and whether it is literal text."""
    words = segment.command_words
    if not words or segment.dynamic:
        return None
    first = segment.assignments
    name = words[0].rsplit("/", 1)[-1]
    if name == "eval" and len(words) > 1:
        literal = not any(
            _expanded(segment, index) for index in range(first + 1, len(segment.words))
        )
        return " ".join(words[1:]), literal
    if name in SHELLS and len(words) > 2 and _DASH_C.fullmatch(words[1]):
        return words[2], not _expanded(segment, first + 2)
    return None


def _expanded(segment: Segment, index: int) -> bool:
    return index < len(segment.computed) and segment.computed[index]


def _reads_stdin_as_code(segment: Segment) -> bool:
    words = segment.command_words
    if not words:
        return False
    name = words[0].rsplit("/", 1)[-1]
    if name in ("source", "."):
        return True
    # a shell with no script operand (only options) reads its program from stdin
    return name in SHELLS and all(word.startswith("-") for word in words[1:])
