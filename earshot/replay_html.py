"""A replayed session as one self-contained HTML page a user can share.

Inline CSS, no script, no external asset (nothing loads when the page is opened), and a
Content-Security-Policy that forbids scripts anyway. Every value from the transcript goes through
`html.escape` (quotes included): a transcript is hostile content, and a `<script>` a model or a
tool output wrote must show as text.
"""

from __future__ import annotations

from html import escape

from earshot.replay import (
    Item,
    Replay,
    call_arguments,
    call_decisions,
    call_diffs,
    call_outcome,
    call_output,
    call_title,
    diff_line_class,
    undo_note,
)
from earshot.text_safety import terminal_safe
from earshot.transcripts import CallRecord

LONG_OUTPUT_LINES = 40
"""Outputs longer than this are folded (`<details>`), whole."""

_CSS = """
body{font:14px/1.45 system-ui,sans-serif;max-width:980px;margin:2em auto;padding:0 1em;
 color:#1d1d1f;background:#fff}
h1{font-size:1.3em;margin-bottom:.2em} .meta{color:#666;margin-bottom:1.5em}
.turn{border-top:2px solid #d0d7de;margin-top:1.6em;padding-top:.6em;color:#57606a;font-weight:600}
.user{background:#eef6ff;border-left:4px solid #4a90e2;padding:.5em .8em;white-space:pre-wrap}
.assistant{white-space:pre-wrap;margin:.6em 0}
.reasoning{white-space:pre-wrap;color:#6e7781;font-style:italic;margin:.4em 0}
.note{color:#6e5600;background:#fff8e1;border-radius:4px;padding:.3em .6em;margin:.5em 0;
 white-space:pre-wrap}
.note.rewind,.note.branch,.note.fork{color:#8250df;background:#f6f0ff}
.note.cancelled{color:#cf222e;background:#ffebe9}
.usage{color:#57606a;font-size:.9em;margin:.3em 0}
.call{border:1px solid #d0d7de;border-radius:6px;margin:.6em 0;padding:.4em .7em}
.call .title{font-weight:600} .call .id{color:#8c959f;font-size:.85em}
.call.failed,.call.denied,.call.interrupted{border-color:#cf222e}
.decision{font-size:.9em;color:#0a3069} .decision.refused{color:#cf222e}
.outcome{font-size:.9em;color:#57606a;margin-top:.3em}
pre{background:#f6f8fa;padding:.5em;overflow-x:auto;white-space:pre-wrap;word-break:break-word;
 margin:.3em 0}
.diff .add{background:#dafbe1;display:block} .diff .del{background:#ffebe9;display:block}
.diff .hunk{color:#8250df;display:block} .diff .ctx{display:block}
"""


def render_html(replay: Replay) -> str:
    transcript = replay.transcript
    header = transcript.header
    title = transcript.title or header.session_id
    body: list[str] = [
        f"<h1>{_e(title)}</h1>",
        f'<div class="meta">session {_e(header.session_id)} · {_e(header.cwd)} · created '
        f"{_e(header.created)}"
        + (
            f" · child of session {_e(transcript.parent.session_id)}"
            if transcript.parent is not None
            else ""
        )
        + "</div>",
    ]
    body.extend(_item(item, replay.undone) for item in replay.items)
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'\">"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>earshot · {_e(title)}</title><style>{_CSS}</style></head><body>\n"
        + "\n".join(body)
        + "\n</body></html>\n"
    )


def _e(value: object) -> str:
    # Control characters and bidi overrides shown, not obeyed (Trojan Source), then escaped.
    return escape(terminal_safe(str(value)), quote=True)


def _item(item: Item, undone: set[str]) -> str:
    match item.kind:
        case "user":
            when = item.ts[:19].replace("T", " ")
            return (
                f'<div class="turn">turn {item.turn} <span class="id">{_e(when)}</span></div>'
                f'<div class="user">{_e(item.text.strip())}</div>'
            )
        case "assistant":
            return f'<div class="assistant">{_e(item.text.strip())}</div>'
        case "reasoning":
            return f'<div class="reasoning">{_e(item.text.strip())}</div>'
        case "usage":
            return f'<div class="usage">{_e(item.text)}</div>'
        case "note":
            return f'<div class="note {_e(item.note)}">{_e(item.text)}</div>'
        case "call":
            return _call(item.call, undone) if item.call is not None else ""


def _call(call: CallRecord, undone: set[str]) -> str:
    status = call.status if call.status in ("failed", "denied", "interrupted") else "ok"
    parts = [
        f'<div class="call {_e(status)}"><div class="title">{_e(call_title(call))} '
        f'<span class="id">{_e(call.call_id)}</span></div>'
    ]
    shown = call_arguments(call)
    if shown:
        parts.append(f"<pre>{_e(shown)}</pre>")
    for said in call_decisions(call):
        refused = " refused" if "refused" in said.split(":", 1)[0] else ""
        parts.append(f'<div class="decision{refused}">{_e(said)}</div>')
    for path, diff in call_diffs(call):
        rows = "".join(
            f'<span class="{diff_line_class(line)}">{_e(line) or " "}</span>' for line in diff
        )
        parts.append(f'<div class="outcome">diff {_e(path)}</div><pre class="diff">{rows}</pre>')
    parts.append(f'<div class="outcome">{_e(call_outcome(call))}</div>')
    note = undo_note(call, undone)
    if note and call.name in ("write", "edit", "bash"):
        parts.append(f'<div class="outcome">({_e(note)})</div>')
    output = call_output(call)
    if output.strip():
        lines = output.count("\n") + 1
        if lines > LONG_OUTPUT_LINES:
            parts.append(
                f"<details><summary>output ({lines} lines)</summary><pre>{_e(output)}</pre>"
                "</details>"
            )
        else:
            parts.append(f"<pre>{_e(output)}</pre>")
    parts.append("</div>")
    return "".join(parts)
