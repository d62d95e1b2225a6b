"""`earshot sessions replay ID [--html OUT]`: find the session, read it, render it (text by
`earshot.replay`, a page by `earshot.replay_html`)."""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

from earshot.replay import EXIT_OK, EXIT_USAGE, build, render_text
from earshot.replay_html import render_html
from earshot.session_ids import SessionIdProblem, resolve_session_id
from earshot.transcripts import read_transcript
from earshot.undo_reader import SnapshotReader
from sessions import data_dir


async def run_replay(session_id: str, *, html_out: str | None, out: TextIO, err: TextIO) -> int:
    try:
        chosen = resolve_session_id(session_id)
    except SessionIdProblem as problem:
        err.write(f"earshot: {problem}\n")
        return EXIT_USAGE
    transcript = await read_transcript(chosen)
    if transcript is None:
        err.write(f"earshot: session {chosen} cannot be read\n")
        return EXIT_USAGE
    undone = SnapshotReader(transcript.header.cwd, data_dir()).undone()
    replay = build(transcript, undone=undone)
    if html_out is None:
        render_text(replay, out)
        return EXIT_OK
    Path(html_out).write_text(render_html(replay), encoding="utf-8")
    out.write(f"wrote {html_out}\n")
    return EXIT_OK


__all__ = ["run_replay"]
