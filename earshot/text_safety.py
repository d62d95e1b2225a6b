"""Text made safe to print: everything the command line shows that it did not write itself is
hostile content. The model wrote most of a transcript, tools copied files and command output into
it, a repository wrote its settings keys and its task names, and a terminal obeys what it is sent:
`ESC [ 2 J` clears the screen, `ESC ] 52 ; c ; ...` sets the clipboard, a carriage return lets a
later text overwrite a line earshot printed, and U+202E makes text display in another order than
it reads.

`terminal_safe` is the ONE function that renders such characters visibly (`\\x1b`, `\\u202e`):
C0 and C1 controls but newline and tab, DEL, the line and paragraph separators, and the bidi
overrides, isolates and marks. A carriage return right before a newline (a CRLF file) is kept:
it overwrites nothing.

The CLI does not rely on each command remembering to call it: `install` wraps stdout and stderr
of every command but the ACP server (whose stdout is JSON-RPC for an editor), so whatever is
written there, by earshot or by a log line, goes through `terminal_safe`. Where a value must stay
on one line (a title in a listing, a tool title in print mode's progress), the command calls it
with `single_line` itself, so that a newline cannot forge a row.

JSON output stays JSON: `json.dumps` escapes the C0 controls already, and the wrapper of a JSON
stream writes the rest (DEL, C1, separators, bidi) as `\\uXXXX` escapes, which a JSON string reads
back as the very same characters. The document is unchanged for a parser and inert on a terminal.
"""

from __future__ import annotations

import io
import re
import sys
from typing import TextIO, cast

_CONTROL = re.compile(
    r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e"
    r"\u2066-\u2069]|\r(?!\n)"
)
"""C0 and C1 controls but newline, tab and the CR of a CRLF; DEL; the line and paragraph
separators; and the bidirectional marks, embeddings, overrides and isolates."""
_JSON_UNSAFE = re.compile(r"[\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
"""What `json.dumps(..., ensure_ascii=False)` leaves raw that a terminal would obey."""


def terminal_safe(text: str, *, single_line: bool = False) -> str:
    """`text` with every control character shown as an escape (`\\x1b`, `\\u202e`); with
    `single_line`, newlines (as ⏎) and tabs (as a space) too."""
    if single_line:
        text = text.replace("\r\n", "⏎").replace("\n", "⏎").replace("\t", " ")
    return _CONTROL.sub(_escape, text)


def json_safe(text: str) -> str:
    """JSON text (`json.dumps` output) with the characters a terminal obeys written as `\\uXXXX`
    escapes: the same document to a parser. Such characters only occur inside JSON strings."""
    return _JSON_UNSAFE.sub(lambda match: f"\\u{ord(match.group(0)):04x}", text)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


class SafeStream(io.TextIOBase):
    """A text stream that writes everything through `terminal_safe` (or `json_safe`) to the
    stream it wraps; it answers `isatty` and `fileno` as that stream does."""

    def __init__(self, inner: TextIO, *, json: bool = False) -> None:
        super().__init__()
        self.inner = inner
        self.json = json
        self._carriage = False
        """The last write ended with a CR: whether it is a CRLF's is known at the next one."""

    def write(self, text: str) -> int:
        if self.json:
            self.inner.write(json_safe(text))
            return len(text)
        pending = "\r" + text if self._carriage else text
        self._carriage = pending.endswith("\r")
        if self._carriage:
            pending = pending[:-1]
        self.inner.write(terminal_safe(pending))
        return len(text)

    def flush(self) -> None:
        if self._carriage:  # no newline came after it: shown, not obeyed
            self._carriage = False
            self.inner.write(terminal_safe("\r"))
        self.inner.flush()

    def isatty(self) -> bool:
        return self.inner.isatty()

    def fileno(self) -> int:
        return self.inner.fileno()

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:  # pyright: ignore[reportIncompatibleVariableOverride]
        return self.inner.encoding

    @property
    def errors(self) -> str | None:  # pyright: ignore[reportIncompatibleVariableOverride]
        return self.inner.errors


def install(*, json_stdout: bool = False) -> None:
    """Route the process's stdout and stderr through `SafeStream` (once). `json_stdout`: stdout
    carries JSON (`--output-format json`, `--json`)."""
    if not isinstance(sys.stdout, SafeStream):
        sys.stdout = cast("TextIO", SafeStream(sys.stdout, json=json_stdout))
    if not isinstance(sys.stderr, SafeStream):
        sys.stderr = cast("TextIO", SafeStream(sys.stderr))
