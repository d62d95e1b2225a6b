"""Transcript text made safe to print: a transcript is hostile content (the model wrote it, tools
copied files and command output into it), and a terminal obeys escape sequences. An `ESC [ 2 J`
in a tool result must show as text, not clear the user's screen, and a carriage return must not
overwrite a line `earshot audit` printed with one the model chose."""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
"""C0 and C1 controls but newline and tab, line/paragraph separators, and the bidirectional
overrides and isolates that make text display in another order than it reads."""


def terminal_safe(text: str, *, single_line: bool = False) -> str:
    """`text` with every control character shown as an escape (`\\x1b`); with `single_line`,
    newlines and tabs too."""
    if single_line:
        text = text.replace("\n", "⏎").replace("\t", " ")
    return _CONTROL.sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    char = match.group(0)
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"
