"""Bash's ANSI-C (`$'...'`) and locale (`$"..."`) quoting, rewritten into quoting bashlex reads.

bashlex reads `$'\\x72\\x6d'` as the text `$\\x72\\x6d` and `$"rm"` as the variable `$rm`, and
(worse) does not know that `\\'` escapes a quote inside `$'...'`, so it can end a string earlier
than bash does and see commands bash never runs, or miss ones it does. `desugar` rewrites each
`$'...'` into the plain single-quoted string bash computes from it (`$'\\x72m'` becomes `'rm'`)
and each `$"..."` into `"..."`, so bashlex then reads what bash runs. A `$"..."` string is
translated by bash through a message catalogue chosen by environment variables the command
itself may set (`TEXTDOMAINDIR`), so its value is only known at run time: `desugar` reports where
those strings ended up, and the parser counts the words holding them as computed.

The scanner follows bash's quoting (single and double quotes, backslashes, comments, `$(...)`)
only as far as it needs to find where `$'` starts a string; where that is unclear (a command that
also has a here-document, a backtick or a `${...}`) it raises `Unclear` and the command is
reported as unreadable, as before.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_SIMPLE_ESCAPES = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}
_OCTAL = re.compile(r"[0-7]{1,3}")
_HEX = {"x": 2, "u": 4, "U": 8}
_COMMENT_START = frozenset(" \t\n;&|()<>")
_QUOTED_HEREDOC = re.compile(r"<<-?[ \t]*[^\s;&|()<>]*['\"\\]")
_HEREDOC_WORD = re.compile(r"<<(-?)[ \t]*([^\s;&|()<>]+)")
_WORD_BOUNDARY = re.compile(r"[^A-Za-z0-9_./@%+:,=~-]+")


class Unclear(Exception):
    """The scanner cannot tell for sure where a `$'...'` or `$"..."` string starts or ends."""


@dataclass(frozen=True, slots=True)
class Desugared:
    text: str
    locale_spans: tuple[tuple[int, int], ...] = ()
    """Where (in `text`) the `"..."` strings that were `$"..."` are: computed at run time."""
    literal_heredocs: frozenset[int] = frozenset()
    """Where (in `text`) the `<<` of each here-document whose delimiter was quoted is: bashlex
    cannot read a quoted delimiter, so `<<'EOF'` is rewritten `<<EOF` and its body stays
    literal (no expansions)."""


def decode_ansi_c(body: str) -> str:
    """The value of `$'body'` (the text between the quotes), as bash computes it."""
    out: list[str] = []
    index = 0
    while index < len(body):
        char = body[index]
        if char != "\\" or index + 1 >= len(body):
            out.append(char)
            index += 1
            continue
        escape = body[index + 1]
        if escape in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[escape])
            index += 2
        elif escape in "01234567":
            digits = _OCTAL.match(body, index + 1)
            assert digits is not None
            out.append(chr(int(digits.group(), 8) & 0xFF))
            index = digits.end()
        elif escape in _HEX:
            end = index + 2
            while end < index + 2 + _HEX[escape] and end < len(body) and _is_hex(body[end]):
                end += 1
            if end == index + 2:
                out.append("\\" + escape)  # `\x` without digits stays as written
            else:
                out.append(_code_point(int(body[index + 2 : end], 16)))
            index = end
        elif escape == "c" and index + 2 < len(body):
            out.append(chr(ord(body[index + 2]) & 0x1F))
            # bash reads `\c\\` (an escaped backslash) as one control character
            index += 4 if body.startswith("\\\\", index + 2) else 3
        else:
            out.append("\\" + escape)
            index += 2
    value = "".join(out)
    # bash keeps strings as C strings: a NUL ends the value
    return value.split("\0", 1)[0]


def single_quoted(value: str) -> str:
    """`value` as one single-quoted shell word."""
    return "'" + value.replace("'", "'\\''") + "'"


def desugar(text: str) -> Desugared:
    """`text` with every `$'...'` and `$"..."` rewritten (see the module docstring).

    Raises:
        Unclear: such a string sits where the scanner does not follow bash's quoting.
    """
    if "$'" not in text and '$"' not in text and not _QUOTED_HEREDOC.search(text):
        return Desugared(text)
    scanner = _Scanner(text)
    scanner.scan_top(end=None)
    if scanner.pending:
        raise Unclear("a here-document without its body")
    return Desugared("".join(scanner.out), tuple(scanner.spans), frozenset(scanner.heredocs))


def tokens_decoded(text: str) -> str:
    """Best effort for text that cannot be parsed: `$'...'` decoded in place, `$"` made `"`."""

    def replace(match: re.Match[str]) -> str:
        return decode_ansi_c(match.group(1))

    decoded = re.sub(r"\$'((?:[^'\\]|\\.)*)'?", replace, text, flags=re.DOTALL)
    return decoded.replace('$"', '"')


def code_tokens(text: str) -> tuple[str, ...]:
    """Words of code in another language (`python -c`, an awk program, a git alias), split at
    quotes, brackets and operators so that `os.system('rm f')` yields `rm`."""
    return tuple(token for token in _WORD_BOUNDARY.split(tokens_decoded(text)) if token)


def _is_hex(char: str) -> bool:
    return char in "0123456789abcdefABCDEF"


def _code_point(value: int) -> str:
    try:
        return chr(value)
    except (ValueError, OverflowError):
        return "?"


class _Scanner:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.out: list[str] = []
        self.spans: list[tuple[int, int]] = []
        self.width = 0  # characters written to `out` so far
        self.heredocs: list[int] = []
        self.pending: list[tuple[str, bool]] = []
        """Here-documents whose body starts after the next newline: (delimiter, strip tabs)."""

    def emit(self, chunk: str) -> None:
        self.out.append(chunk)
        self.width += len(chunk)

    def scan_top(self, *, end: str | None) -> None:
        """Unquoted shell text, up to the closing `end` (`)` of `$(`) or the end of the text."""
        text = self.text
        depth = 0
        while self.pos < len(text):
            char = text[self.pos]
            if end is not None and char == end and depth == 0:
                return
            if char == "(":
                depth += 1
            elif char == ")":
                depth -= 1
            if char == "\\":
                self.copy(2)
            elif char == "'":
                close = text.find("'", self.pos + 1)
                if close < 0:
                    raise Unclear("an unterminated single-quoted string")
                self.copy(close + 1 - self.pos)
            elif char == '"':
                self.copy(1)
                self.scan_double()
            elif char == "#" and (self.pos == 0 or text[self.pos - 1] in _COMMENT_START):
                newline = text.find("\n", self.pos)
                self.pos = len(text) if newline < 0 else newline  # comments are dropped
            elif text.startswith("$'", self.pos):
                self.ansi_c()
            elif text.startswith('$"', self.pos):
                self.pos += 1  # drop the `$`: bashlex reads `"..."`
                start = self.width
                self.copy(1)
                self.scan_double()
                self.spans.append((start, self.width))
            elif text.startswith("$(", self.pos):
                self.copy(2)
                self.scan_top(end=")")
                self.copy(1)
            elif text.startswith("<<<", self.pos):
                self.copy(3)
            elif text.startswith("<<", self.pos):
                self.heredoc()
            elif char == "\n":
                self.copy(1)
                self.bodies()
            elif char == "`" or text.startswith("${", self.pos):
                self.opaque_region()
            else:
                self.copy(1)
        if end is not None:
            raise Unclear(f"an unterminated {end!r}")

    def heredoc(self) -> None:
        """`<<WORD` or `<<-WORD`: a quoted WORD is written unquoted and remembered as literal;
        the body (after the line ends) is copied as it is."""
        match = _HEREDOC_WORD.match(self.text, self.pos)
        if match is None:
            raise Unclear("a here-document without a delimiter")
        strip, raw = match.group(1), match.group(2)
        if _SUBSTITUTION_START.search(raw):
            raise Unclear("a here-document delimiter with an expansion")
        delimiter = unquote(raw)
        if delimiter != raw:
            self.heredocs.append(self.width)
        self.emit(f"<<{strip}{delimiter}")
        self.pos = match.end()
        self.pending.append((delimiter, bool(strip)))

    def bodies(self) -> None:
        """After a newline: the bodies of the here-documents started on the line ending here."""
        for delimiter, strip in self.pending:
            while True:
                if self.pos >= len(self.text):
                    raise Unclear(f"a here-document that never ends (wanted {delimiter!r})")
                end = self.text.find("\n", self.pos)
                end = len(self.text) if end < 0 else end + 1
                line = self.text[self.pos : end]
                self.copy(len(line))
                content = line.rstrip("\n")
                if (content.lstrip("\t") if strip else content) == delimiter:
                    break
        self.pending = []

    def scan_double(self) -> None:
        """Inside `"..."`, after the opening quote, up to and including the closing one."""
        text = self.text
        while self.pos < len(text):
            char = text[self.pos]
            if char == "\\":
                self.copy(2)
            elif char == '"':
                self.copy(1)
                return
            elif text.startswith("$(", self.pos):
                self.copy(2)
                self.scan_top(end=")")
                self.copy(1)
            elif char == "`" or text.startswith("${", self.pos):
                self.opaque_region()
            elif text.startswith(("$'", '$"'), self.pos):
                raise Unclear("a $'...' or $\"...\" inside a double-quoted string")
            else:
                self.copy(1)
        raise Unclear("an unterminated double-quoted string")

    def opaque_region(self) -> None:
        # backticks and `${...}` have quoting rules of their own; not worth following for the
        # rare command that mixes them with `$'...'`
        raise Unclear("a $'...' or $\"...\" string next to `...` or ${...}")

    def ansi_c(self) -> None:
        text = self.text
        index = self.pos + 2
        while index < len(text):
            if text[index] == "\\":
                index += 2
                continue
            if text[index] == "'":
                break
            index += 1
        else:
            raise Unclear("an unterminated $'...' string")
        self.emit(single_quoted(decode_ansi_c(text[self.pos + 2 : index])))
        self.pos = index + 1

    def copy(self, count: int) -> None:
        chunk = self.text[self.pos : self.pos + count]
        self.emit(chunk)
        self.pos += len(chunk)


def unquote(raw: str) -> str:
    """Bash's quote removal on one word as written (after `desugar`): quotes and backslashes go,
    substitutions (`$(...)`, backticks, `${...}`, `<(...)`) stay as written.

    bashlex's own quote removal is wrong for a word mixing quote styles (`"r"'m'` comes out as
    `r'm'`), so the parser takes each word's raw text and removes quotes here."""
    out: list[str] = []
    index = 0
    while index < len(raw):
        char = raw[index]
        if char == "\\":
            if index + 1 < len(raw) and raw[index + 1] != "\n":
                out.append(raw[index + 1])
            index += 2
        elif char == "'":
            close = raw.find("'", index + 1)
            close = len(raw) if close < 0 else close
            out.append(raw[index + 1 : close])
            index = close + 1
        elif char == '"':
            index = _unquote_double(raw, index + 1, out)
        elif _substitution_at(raw, index):
            end = _substitution_end(raw, index)
            out.append(raw[index:end])
            index = end
        else:
            out.append(char)
            index += 1
    return "".join(out)


def _unquote_double(raw: str, index: int, out: list[str]) -> int:
    """Inside `"..."` from `index` (after the opening quote); returns the index after the
    closing one."""
    while index < len(raw) and raw[index] != '"':
        char = raw[index]
        if char == "\\" and index + 1 < len(raw) and raw[index + 1] in '$`"\\\n':
            if raw[index + 1] != "\n":
                out.append(raw[index + 1])
            index += 2
        elif _substitution_at(raw, index) and not raw.startswith(("<(", ">("), index):
            end = _substitution_end(raw, index)
            out.append(raw[index:end])
            index = end
        else:
            out.append(char)
            index += 1
    return index + 1


_SUBSTITUTION_START = re.compile(r"\$[({\w]|`")


def _substitution_at(raw: str, index: int) -> bool:
    return raw[index] == "`" or raw.startswith(("$(", "${", "<(", ">("), index)


def _substitution_end(raw: str, index: int) -> int:
    """The index just after the substitution starting at `index` (the end of `raw` when it does
    not close)."""
    if raw[index] == "`":
        end = index + 1
        while end < len(raw) and raw[end] != "`":
            end += 2 if raw[end] == "\\" else 1
        return min(end + 1, len(raw))
    opener, closer = ("{", "}") if raw.startswith("${", index) else ("(", ")")
    depth = 0
    end = index + 1
    while end < len(raw):
        char = raw[end]
        if char == "\\":
            end += 2
            continue
        if char == "'" and opener == "(":
            close = raw.find("'", end + 1)
            end = len(raw) if close < 0 else close + 1
            continue
        if char == '"':
            end = _skip_double(raw, end + 1)
            continue
        if char == opener:
            depth += 1
        elif char == closer:
            depth -= 1
            if depth == 0:
                return end + 1
        end += 1
    return len(raw)


def _skip_double(raw: str, index: int) -> int:
    while index < len(raw) and raw[index] != '"':
        if raw[index] == "\\":
            index += 2
            continue
        if _substitution_at(raw, index):
            index = _substitution_end(raw, index)
            continue
        index += 1
    return index + 1
