"""Split a shell command into the simple commands it runs, for permission rules.

A `Bash(npm run *)` rule must cover every command a string runs, not just the first: `npm run build
&& rm -rf ~` runs two. `parse_command` walks bashlex's syntax tree and returns each simple command
(a *segment*) wherever it sits: after `&&`, `||`, `;`, `|`, `&` or a newline, inside `( )` and
`{ }`, loops, conditionals and function bodies, inside `$(...)`, backticks and `<(...)`/`>(...)`,
and inside the string given to `eval` or `sh -c`/`bash -lc`/`sh -o errexit -c`...

What else a command runs is the program knowledge in `agent.shell.programs`: the command a
wrapper runs (`timeout 5 X` is a segment whose `runs` is `X`), shell code in strings, on stdin or
in aliases and traps, code in other languages (`python -c`), and code not in the command line at
all (`curl ... | sh`). The walker collects it in `ParsedCommand`:

- `opaque` (with `reasons`): the command runs something no allow rule can see; only a bare
  `Bash` rule admits it;
- `guesses`: commands it might run, for deny and ask rules only (`find -exec`, `sudo` with
  options this parser cannot read, an alias's body);
- `foreign`: code in another language, which deny and ask rules scan for their words;
- `hidden`: code that is not in the command line, which every Bash deny and ask rule could match.

`$'...'` and `$"..."` strings are rewritten first (`agent.shell.quote`), so `$'\\x72\\x6d'` is
`rm`. Whatever bashlex still cannot read, or reads differently from bash, is reported as unparsed
(`parsed=False`): substitutions nested inside `${...}`, arithmetic, `[[ ]]`, `case`, `time`,
quoted here-document delimiters and expansions inside an unquoted here-document. An unparsed
command never matches an allow rule; deny rules fall back to `tokens`.

Writes: redirection targets and the files common writers name (`agent.shell.writes`). A target
bash computes at run time (`$X`, `~+`, `~-`, a glob, a brace expansion, any relative path once
the command line changes directory with `cd`, `pushd` or `popd`, `~` once it sets `HOME`) is in
`computed_writes`; the policy counts those as outside the workspace.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import field, replace
from typing import Any, cast

from agent.shell import programs as shell_programs
from agent.shell import writes as shell_writes
from agent.shell.builtins import assignment
from agent.shell.grammar import load_bashlex
from agent.shell.programs import SHELLS
from agent.shell.quote import Desugared, Unclear, desugar, tokens_decoded, unquote
from agent.shell.words import Effects, Words, WrapKind
from providers.records import MutableRecord, Record

__all__ = ["SHELLS", "ParsedCommand", "Segment", "is_dynamic_word", "parse_command", "tokens"]

_WRITE_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&"})
_HARMLESS_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})
_MAX_DEPTH = 8
_SUBSTITUTION = re.compile(r"\$\(|`|<\(|>\(")
_PROMPT_EXPANSION = re.compile(r"@P\s*$")
_SUBSCRIPT = re.compile(r"\[([^\]]*)\]")
_OFFSET = re.compile(r"^[#!]?[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?:([^-=?+].*)$", re.DOTALL)
_NAME_OR_EXPANSION = re.compile(r"[A-Za-z_$`(]")


class Segment(Record, kw_only=False):
    """One simple command, as bash will see its words after quote removal."""

    words: tuple[str, ...]
    """Leading `NAME=value` assignments included."""
    assignments: int = 0
    """How many of `words` are leading assignments."""
    computed: tuple[bool, ...] = ()
    """Per word: whether bash computes its value (an expansion, a glob, a brace expansion)."""
    runs: Segment | None = None
    """For a wrapper (`timeout 5 X`, `sudo X`, `xargs X`): the command it runs."""
    wrap: WrapKind | None = None
    """For a wrapper: how allow rules see it (see `agent.shell.words.WrapKind`)."""
    script: bool = False
    """A shell running a literal script, whose commands are segments of their own."""

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

    def command(self) -> Words:
        """The words without the leading assignments, with their computed flags."""
        flags = self.computed + (False,) * (len(self.words) - len(self.computed))
        return Words(self.command_words, flags[self.assignments :])


class ParsedCommand(Record, kw_only=False):
    source: str
    parsed: bool
    """False: the command could not be read reliably; `segments` is then empty."""
    segments: tuple[Segment, ...] = ()
    writes: tuple[str, ...] = ()
    """Files that redirections and common writers write (`> out.txt`, `cp a out/`), as written."""
    opaque: bool = False
    """Runs code the parser cannot see: no allow rule with a pattern admits it."""
    error: str | None = None
    computed_writes: tuple[str, ...] = ()
    """Write targets computed at run time (`> $X`, `>> l*nk`, `> ~+/f`, `cd .. && cp a b`)."""
    guesses: tuple[Segment, ...] = ()
    """Commands it may run, for deny and ask rules only."""
    foreign: tuple[str, ...] = ()
    """Code in other languages (`python -c`), scanned by deny and ask rules."""
    hidden: tuple[str, ...] = ()
    """Why it runs code that is not in the command line (every Bash deny rule could match)."""
    reasons: tuple[str, ...] = ()
    """Why it is opaque."""


_BRACKET_GLOB = re.compile(r"\[.+\]")


def is_dynamic_word(word: str) -> bool:
    """A word that bash would glob or brace-expand (quotes are gone by now, so a quoted `*` counts
    too: harmless, as it only makes the check stricter). A `[` without a closing `]` (the `[`
    command) is not a pattern."""
    if "*" in word or "?" in word or _BRACKET_GLOB.search(word):
        return True
    return "{" in word and ("," in word or ".." in word)


def parse_command(command: str) -> ParsedCommand:
    """Split `command` into the simple commands it runs; never raises."""
    try:
        walker = _Walker()
        walker.walk_source(command, depth=0, stdin=_Stdin())
        return walker.result(command)
    except _Unreadable as error:
        return ParsedCommand(source=command, parsed=False, error=str(error))
    except Unclear as error:
        return ParsedCommand(source=command, parsed=False, error=str(error))
    except (
        Exception
    ) as error:  # bashlex raises assorted errors (ParsingError, NotImplementedError...)
        return ParsedCommand(source=command, parsed=False, error=f"{type(error).__name__}: {error}")


_TOKEN_SPLIT = re.compile(r"[\s;&|()<>{}`]+|\$\(")


def tokens(command: str) -> tuple[str, ...]:
    """A best-effort split into words for commands that cannot be parsed: `$'...'` decoded,
    quotes and backslashes dropped (bash concatenates `r''m` into `rm`) and every operator
    separates words."""
    unquoted = re.sub(r"['\"\\]", "", tokens_decoded(command))
    return tuple(token for token in _TOKEN_SPLIT.split(unquoted) if token)


class _Unreadable(Exception):
    pass


class _Stdin(Record, kw_only=False):
    """What a command reads on stdin, as far as the command line says."""

    piped: bool = False
    bodies: tuple[tuple[str, bool], ...] = ()
    """Here-documents and here-strings: (text, literal)."""
    files: tuple[str, ...] = ()


class _Source(Record, kw_only=False):
    text: str
    locale_spans: tuple[tuple[int, int], ...] = ()
    literal_heredocs: frozenset[int] = frozenset()

    def heredoc_literal(self, node: Any) -> bool:
        """Whether a here-document's delimiter was quoted (its body is not expanded)."""
        start, end = node.pos
        return start in self.literal_heredocs or any(ch in self.text[start:end] for ch in "'\"\\")


class _Walker(MutableRecord, kw_only=False):
    segments: list[Segment] = field(default_factory=lambda: [])
    guesses: list[Segment] = field(default_factory=lambda: [])
    writes: list[tuple[str, bool, int]] = field(default_factory=lambda: [])
    """(target, computed, which simple command writes it)."""
    materializers: int = 0
    """Commands that may create links (`ln`, `cp -a`, `mv`, `tar -x`...)."""
    command_count: int = 0
    foreign: list[str] = field(default_factory=lambda: [])
    hidden: list[str] = field(default_factory=lambda: [])
    reasons: list[str] = field(default_factory=lambda: [])
    runs_files: list[str] = field(default_factory=lambda: [])
    changes_cwd: bool = False
    changes_home: bool = False
    guessing: int = 0
    """Above zero while walking code the command only might run."""
    stdin_readers: list[str] = field(default_factory=lambda: [])
    """Shells and interpreters that read code from the stdin the command line was given."""
    exec_redirects: bool = False
    """`exec <file`, `exec <<<'...'`: later commands read another stdin."""

    def result(self, source: str) -> ParsedCommand:
        static: list[str] = []
        computed: list[str] = []
        # a link made by one command can redirect another's write (`ln -s ../x l && echo > l`)
        through_links = self.materializers > 0 and len({owner for *_, owner in self.writes}) > 1
        for target, dynamic, _ in self.writes:
            relative = not target.startswith(("/", "~"))
            if (
                dynamic
                or through_links
                or _tilde_computed(target)
                or (self.changes_cwd and relative)
                or (self.changes_home and target.startswith("~"))
            ):
                computed.append(target)
            else:
                static.append(target)
        if self.exec_redirects and self.stdin_readers:
            self.hidden.append(f"`{self.stdin_readers[0]}` reads code from a stdin `exec` chose")
        written = {posixpath.normpath(path) for path in static}
        for path in self.runs_files:
            if posixpath.normpath(path) in written:
                self.hidden.append(f"runs {path}, which the same command line writes")
        return ParsedCommand(
            source=source,
            parsed=True,
            segments=tuple(self.segments),
            writes=tuple(static),
            opaque=bool(self.reasons or self.hidden),
            computed_writes=tuple(computed),
            guesses=tuple(self.guesses),
            foreign=tuple(self.foreign),
            hidden=tuple(self.hidden),
            reasons=tuple(dict.fromkeys(self.reasons + self.hidden)),
        )

    def walk_source(self, text: str, *, depth: int, stdin: _Stdin) -> None:
        bashlex = load_bashlex()  # loaded on first use: a yacc parser (see agent.shell.grammar)

        if depth > _MAX_DEPTH:
            raise _Unreadable("commands nested too deeply")
        sugar: Desugared = desugar(text)
        if not sugar.text.strip():
            return
        source = _Source(sugar.text, sugar.locale_spans, sugar.literal_heredocs)
        nodes = cast("list[Any]", bashlex.parse(sugar.text))
        for node in nodes:
            self._visit(node, source, depth, stdin)

    def _visit(self, node: Any, src: _Source, depth: int, stdin: _Stdin) -> None:
        kind: str = node.kind
        if kind == "command":
            self._command(node, src, depth, stdin)
            return
        if kind == "pipeline":
            piped = False
            for part in node.parts:
                if part.kind == "pipe":
                    piped = True
                    continue
                self._visit(part, src, depth, replace(stdin, piped=True) if piped else stdin)
            return
        if kind in ("commandsubstitution", "processsubstitution"):
            self._visit(node.command, src, depth, stdin)
            return
        if kind == "parameter":
            self._parameter(str(getattr(node, "value", "")))
            return
        if kind == "redirect":
            self._redirect(node, src, depth, stdin)
            return
        if kind == "function":
            # the body runs wherever the function is called, with whatever stdin the caller has
            stdin = _Stdin(piped=True)
        if kind in ("word", "assignment"):
            _check_word(node, src.text)
        redirects = [
            child for child in getattr(node, "redirects", []) or [] if child.kind == "redirect"
        ]
        stdin = _redirected_stdin(redirects, src, stdin)
        for child in _children(node):
            self._visit(child, src, depth, stdin)

    def _parameter(self, value: str) -> None:
        if _SUBSTITUTION.search(value):
            raise _Unreadable("a substitution inside ${...}")
        if _PROMPT_EXPANSION.search(value):
            self.hidden.append(f"${{{value}}} expands a value as a prompt, running what it holds")
        subscript = _SUBSCRIPT.search(value)
        offset = _OFFSET.match(value)
        arithmetic = (subscript is not None and _NAME_OR_EXPANSION.search(subscript.group(1))) or (
            offset is not None and _NAME_OR_EXPANSION.search(offset.group(1).split(":")[0])
        )
        if arithmetic:
            self.reasons.append(f"${{{value}}} evaluates arithmetic on a variable's value")

    def _command(self, node: Any, src: _Source, depth: int, stdin: _Stdin) -> None:
        self.command_count += 1
        words: list[str] = []
        computed: list[bool] = []
        assignments = 0
        redirects: list[Any] = []
        for part in node.parts:
            match part.kind:
                case "assignment" | "word":
                    if part.kind == "assignment" and len(words) == assignments:
                        assignments += 1
                    words.append(_word_text(part, src))
                    computed.append(_word_computed(part, src))
                    self._visit_word_parts(part, src, depth, stdin)
                case "redirect":
                    self._redirect(part, src, depth, stdin)
                    redirects.append(part)
                case _:
                    for child in _children(part):
                        self._visit(child, src, depth, stdin)
        stdin = _redirected_stdin(redirects, src, stdin)
        if words == ["exec"] and redirects:
            self.exec_redirects = True
        segment = Segment(words=tuple(words), assignments=assignments, computed=tuple(computed))
        segment = self._analyse(segment, depth, stdin)
        (self.guesses if self.guessing else self.segments).append(segment)

    def _analyse(self, segment: Segment, depth: int, stdin: _Stdin) -> Segment:
        """Apply the program knowledge to `segment`; returns it with what it `runs`."""
        effects = Effects()
        for index in range(segment.assignments):
            assignment(segment.words[index], segment.is_computed(index), effects)
        words = segment.command()
        if words.items:
            found = shell_programs.analyse(words)
            _absorb(effects, found)
            if "/" in words.items[0] and not words.expands(0):
                effects.runs_files.append(words.items[0])
            self.writes.extend(
                (path, computed, self.command_count)
                for path, computed in shell_writes.write_targets(words)
                if path not in _HARMLESS_TARGETS
            )
            if shell_writes.materializes_links(words):
                self.materializers += 1
        self.reasons.extend(effects.opaque)
        self.hidden.extend(effects.hidden)
        self.foreign.extend(effects.foreign)
        self.runs_files.extend(effects.runs_files)
        self.changes_cwd = self.changes_cwd or effects.changes_cwd
        self.changes_home = self.changes_home or effects.changes_home
        listed_scripts = False
        for script in effects.scripts:
            listed = script.listed and not self.guessing
            listed_scripts = listed_scripts or listed
            self._nested(script.text, depth, listed=listed)
        if effects.reads_stdin or effects.foreign_stdin:
            self._stdin_code(words, stdin, depth, shell=effects.reads_stdin)
        for start, end in effects.guesses:
            if start < len(words):
                self._guess(segment, start, end, depth, stdin)
        if effects.inner is None:
            return replace(segment, script=listed_scripts)
        start, kind = effects.inner
        flags = words.computed + (False,) * (len(words) - len(words.computed))
        inner = Segment(words=words.items[start:], computed=flags[start:])
        inner = self._analyse(inner, depth + 1, stdin)
        return replace(segment, runs=inner, wrap=kind)

    def _nested(self, text: str, depth: int, *, listed: bool) -> None:
        if not listed:
            self.guessing += 1
        try:
            self.walk_source(text, depth=depth + 1, stdin=_Stdin())
        finally:
            if not listed:
                self.guessing -= 1

    def _guess(self, segment: Segment, start: int, end: int, depth: int, stdin: _Stdin) -> None:
        words = segment.command()
        guess = Segment(words=words.items[start:end], computed=words.computed[start:end])
        if guess.dynamic:
            self.hidden.append(f"`{segment.text}` may run a program computed at run time")
        self.guessing += 1
        try:
            self.guesses.append(self._analyse(guess, depth + 1, stdin))
        finally:
            self.guessing -= 1

    def _stdin_code(self, words: Words, stdin: _Stdin, depth: int, *, shell: bool) -> None:
        name = words.name() if words.items else "?"
        if stdin.bodies:
            self.reasons.append(f"`{name}` runs code from a here-document or here-string")
            for text, literal in stdin.bodies:
                if not literal:
                    self.hidden.append(f"`{name}` runs code expanded at run time from its input")
                elif shell:
                    self._nested(text, depth, listed=False)
                else:
                    self.foreign.append(text)
        elif stdin.piped:
            self.hidden.append(f"`{name}` runs code read from a pipe")
        elif stdin.files:
            self.reasons.append(f"`{name}` runs the code in {stdin.files[0]}")
            self.runs_files.extend(stdin.files)
        else:
            self.stdin_readers.append(name)

    def _visit_word_parts(self, word: Any, src: _Source, depth: int, stdin: _Stdin) -> None:
        _check_word(word, src.text)
        for child in _children(word):
            self._visit(child, src, depth, stdin)

    def _redirect(self, node: Any, src: _Source, depth: int, stdin: _Stdin) -> None:
        target = getattr(node, "output", None)
        if target is not None and not isinstance(target, int) and hasattr(target, "kind"):
            for child in _children(target):
                self._visit(child, src, depth, stdin)
        heredoc = getattr(node, "heredoc", None)
        if heredoc is not None:
            if not src.heredoc_literal(node) and _SUBSTITUTION.search(heredoc.value):
                raise _Unreadable("a substitution inside an unquoted here-document")
            return
        target = getattr(node, "output", None)
        if target is None or isinstance(target, int):
            return  # `2>&1`, `>&2`: a descriptor, not a file
        _check_word(target, src.text)
        path = _word_text(target, src)
        if node.type in _WRITE_REDIRECTS and path not in _HARMLESS_TARGETS:
            self.writes.append((path, _word_computed(target, src), self.command_count))


def _absorb(effects: Effects, found: Effects) -> None:
    effects.inner = found.inner
    effects.scripts.extend(found.scripts)
    effects.reads_stdin = found.reads_stdin
    effects.foreign_stdin = found.foreign_stdin
    effects.foreign.extend(found.foreign)
    effects.hidden.extend(found.hidden)
    effects.opaque.extend(found.opaque)
    effects.guesses.extend(found.guesses)
    effects.runs_files.extend(found.runs_files)
    effects.changes_cwd = effects.changes_cwd or found.changes_cwd
    effects.changes_home = effects.changes_home or found.changes_home


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


def _word_computed(word: Any, src: _Source) -> bool:
    """Whether bash computes the word: an expansion, an unquoted glob or brace expansion, or a
    `$"..."` string (translated at run time)."""
    if _expands(word):
        return True
    start, end = word.pos
    if any(start < span_end and span_start < end for span_start, span_end in src.locale_spans):
        return True
    return _unquoted_pattern(src.text[start:end])


def _unquoted_pattern(raw: str) -> bool:
    """Whether `raw` (a word as written) has a glob character or a brace expansion outside
    quotes."""
    index = 0
    unquoted: list[str] = []
    while index < len(raw):
        char = raw[index]
        if char == "\\":
            index += 2
            unquoted.append(" ")
            continue
        if char in "'\"":
            close = raw.find(char, index + 1)
            index = len(raw) if close < 0 else close + 1
            unquoted.append(" ")
            continue
        unquoted.append(char)
        index += 1
    plain = "".join(unquoted)
    if "*" in plain or "?" in plain or _BRACKET_GLOB.search(plain):
        return True
    return "{" in plain and "}" in plain and ("," in plain or ".." in plain)


def _tilde_computed(target: str) -> bool:
    """`~+`, `~-` and `~user` name directories known only at run time (`~` and `~/x` are the
    home directory, which the gate resolves)."""
    return target.startswith("~") and target != "~" and not target.startswith("~/")


def _word_text(word: Any, src: _Source) -> str:
    """The word after quote removal, from its raw text (see `agent.shell.quote.unquote`)."""
    start, end = word.pos
    return unquote(src.text[start:end])


def _redirected_stdin(redirects: list[Any], src: _Source, stdin: _Stdin) -> _Stdin:
    """The stdin of a command with `redirects` (the last input redirection wins)."""
    result = stdin
    for node in redirects:
        body = _stdin_body(node, src)
        if body is not None:
            result = _Stdin(bodies=(body,))
        elif node.type in ("<", "<>") and not isinstance(node.output, int):
            result = _Stdin(files=(_word_text(node.output, src),))
    return result


def _stdin_body(node: Any, src: _Source) -> tuple[str, bool] | None:
    """The text a here-document or here-string feeds to stdin, and whether it is literal."""
    heredoc = getattr(node, "heredoc", None)
    if heredoc is not None:
        body = _heredoc_body(heredoc.value)
        literal = src.heredoc_literal(node) or not any(ch in body for ch in "$`\\")
        return body, literal
    if node.type == "<<<":
        target = node.output
        return _word_text(target, src), not _expands(target)
    return None


def _heredoc_body(value: str) -> str:
    # bashlex keeps the closing delimiter line in the value
    lines = value.split("\n")
    return "\n".join(lines[:-1]) if len(lines) > 1 else value
