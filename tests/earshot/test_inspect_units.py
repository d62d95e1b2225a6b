"""The pieces of `earshot audit`, `blame`, `sessions replay` and print mode's run summary that
need no process: hostile text made printable, `--since`, the blame replay on built transcripts
(undos in a row, an edit the replay cannot follow, a file created by a command), the
run meter's turn count, and what the audit trail leaves out."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from agent.events import (
    AgentEvent,
    CompactionFinished,
    CompactionStarted,
    ToolCallFinished,
    ToolCallRunning,
    UsageUpdated,
)
from agent.tools import PermissionRequest
from agent.turn import AuditTrail
from earshot.audit import parse_since
from earshot.blame import blame_lines
from earshot.print_meter import RunMeter
from earshot.text_safety import terminal_safe
from earshot.transcripts import TranscriptFile
from earshot.undo_reader import FileAt
from providers.types import Message, TextPart, ToolCallPart, ToolResultPart, Usage
from sessions import (
    Entry,
    ExtensionEntry,
    Header,
    MessageEntry,
    SessionStore,
    UndoSnapshotEntry,
    extensions,
)

CWD = "/work/project"
TARGET = Path(CWD) / "f.txt"


def test_terminal_safe_shows_control_characters_instead_of_obeying_them() -> None:
    hostile = "ok\x1b[2J\rover\u202eevil\x07\tend\nnext"
    assert terminal_safe(hostile) == "ok\\x1b[2J\\x0dover\\u202eevil\\x07\tend\nnext"
    assert terminal_safe(hostile, single_line=True).count("\n") == 0


def test_since_takes_dates_times_and_ages() -> None:
    now = datetime(2025, 6, 10, 12, 0, tzinfo=UTC)
    assert parse_since("2025-06-01", now=now) == "2025-06-01T00:00:00.000Z"
    assert parse_since("2025-06-01T14:30", now=now) == "2025-06-01T14:30:00.000Z"
    assert parse_since("2025-06-01T14:30+02:00", now=now) == "2025-06-01T12:30:00.000Z"
    assert parse_since("7d", now=now) == "2025-06-03T12:00:00.000Z"
    assert parse_since("12h", now=now) == "2025-06-10T00:00:00.000Z"
    with pytest.raises(ValueError, match="--since"):
        parse_since("last week", now=now)


# ------------------------------------------------------------------------------- blame


class FakeSnapshots:
    def __init__(self, files: dict[str, FileAt], undone: set[str]) -> None:
        self.files = files
        self._undone = undone

    def undone(self) -> set[str]:
        return set(self._undone)

    def files_at(self, snapshots: Sequence[str], path: Path) -> dict[str, FileAt]:
        return {sha: self.files[sha] for sha in snapshots if sha in self.files}


class Builder:
    """Transcript entries with increasing timestamps."""

    def __init__(self) -> None:
        self.entries: list[Entry] = []
        self.clock = 0

    def _ts(self) -> str:
        self.clock += 1
        return f"2025-01-01T00:00:{self.clock:02d}.000Z"

    def prompt(self, text: str) -> None:
        message = Message(role="user", parts=[TextPart(text=text)])
        self.entries.append(MessageEntry(message=message, id=f"e{self.clock}", ts=self._ts()))

    def call(self, call_id: str, name: str, result: str = "ok", **arguments: Any) -> None:
        ask = Message(
            role="assistant", parts=[ToolCallPart(id=call_id, name=name, arguments=arguments)]
        )
        self.entries.append(MessageEntry(message=ask, id=f"a{self.clock}", ts=self._ts()))
        answer = ToolResultPart(
            tool_call_id=call_id, name=name, content=[TextPart(text=result)], is_error=False
        )
        message = Message(role="tool", parts=[answer])
        self.entries.append(MessageEntry(message=message, id=f"r{self.clock}", ts=self._ts()))

    def snapshot(self, sha: str, *paths: str) -> None:
        self.entries.append(
            UndoSnapshotEntry(snapshot=sha, batch_id=sha, paths=list(paths), id=sha, ts=self._ts())
        )

    def transcript(self) -> TranscriptFile:
        header = Header(
            session_id="s1", cwd=CWD, created="2025-01-01T00:00:00.000Z", earshot_version="t"
        )
        return TranscriptFile(header=header, path=Path("/dev/null"), entries=self.entries)


def _who(lines: list[tuple[str, Any]]) -> list[tuple[str, str | None]]:
    return [
        (text.rstrip("\n"), None if origin is None else origin.call_id) for text, origin in lines
    ]


def test_blame_after_two_undos_in_a_row_goes_back_two_batches() -> None:
    b = Builder()
    b.prompt("make it")
    b.snapshot("s1", "f.txt")
    b.call("w", "write", path="f.txt", content="a\nb\nc\n")
    b.snapshot("s2", "f.txt")
    b.call("e1", "edit", path="f.txt", old_string="b\n", new_string="B\n")
    b.snapshot("s3", "f.txt")
    b.call("e2", "edit", path="f.txt", old_string="c\n", new_string="C\n")
    files = {
        "s1": FileAt(False, None),
        "s2": FileAt(True, "a\nb\nc\n"),
        "s3": FileAt(True, "a\nB\nc\n"),
    }
    snapshots = {CWD: FakeSnapshots(files, undone={"s2", "s3"})}
    lines = blame_lines(TARGET, [b.transcript()], "a\nb\nc\n", readers=snapshots)
    assert _who(lines) == [("a", "w"), ("b", "w"), ("c", "w")]
    # Without the undo store the same file reads as changed by someone else.
    blind = blame_lines(TARGET, [b.transcript()], "a\nb\nc\n")
    assert _who(blind) == [("a", "w"), ("b", None), ("c", None)]


def test_blame_follows_replace_all_and_crlf_and_gives_up_on_what_it_cannot_apply() -> None:
    b = Builder()
    b.prompt("rename")
    b.call("w", "write", path="f.txt", content="x = 1\r\ny = x\r\n")
    b.call("e", "edit", path="f.txt", old_string="x", new_string="z", replace_all=True)
    lines = blame_lines(TARGET, [b.transcript()], "z = 1\r\ny = z\r\n")
    assert _who(lines) == [("z = 1\r", "e"), ("y = z\r", "e")]
    b.call("lost", "edit", path="f.txt", old_string="nowhere", new_string="q")
    lost = blame_lines(TARGET, [b.transcript()], "z = 1\r\ny = z\r\n")
    assert _who(lost) == [("z = 1\r", None), ("y = z\r", None)]


def test_blame_puts_a_file_a_command_created_down_to_the_command_uncertainly() -> None:
    b = Builder()
    b.prompt("generate")
    b.snapshot("t1", ".")
    b.call("cmd", "bash", command="./gen > f.txt")
    files = {"t1": FileAt(False, None)}
    lines = blame_lines(
        TARGET, [b.transcript()], "generated\n", readers={CWD: FakeSnapshots(files, set())}
    )
    [(text, origin)] = lines
    assert text == "generated\n" and origin is not None
    assert (origin.call_id, origin.tool, origin.certain) == ("cmd", "bash", False)


# --------------------------------------------------------------------------- run meter


def _usage(total: int, cost: float | None = 0.0) -> UsageUpdated:
    return UsageUpdated(
        call=Usage(input_tokens=1),
        total=Usage(input_tokens=total, output_tokens=total),
        context_tokens=0,
        context_window=None,
        cost_usd=cost,
    )


def test_run_meter_counts_the_agents_own_model_calls() -> None:
    meter = RunMeter()
    meter.baseline = _usage(100, cost=1.0)
    events: list[AgentEvent] = [
        _usage(110, cost=1.5),  # a turn
        ToolCallRunning(call_id="task_1"),
        _usage(120, cost=1.75),  # the subagent's call, while its task runs
        ToolCallFinished(
            call_id="task_1",
            name="task",
            status="completed",
            result=ToolResultPart(tool_call_id="task_1", name="task", content=[]),
        ),
        CompactionStarted(compaction_id="c", manual=False),
        _usage(130, cost=2.0),  # the summary call
        _usage(130, cost=2.0),  # the new context size
        CompactionFinished(compaction_id="c", ok=True),
        _usage(140, cost=2.5),  # a turn
    ]
    for event in events:
        meter.observe(event)
    summary = meter.summary(_usage(140, cost=2.5))
    assert summary["turns"] == 2
    assert summary["usage"]["input_tokens"] == 40 and summary["usage"]["output_tokens"] == 40
    assert summary["cost_usd"] == pytest.approx(1.5)
    assert meter.summary(_usage(140, cost=None))["cost_usd"] is None


def test_the_result_line_says_how_much_input_came_from_the_cache() -> None:
    meter = RunMeter()
    meter.baseline = UsageUpdated(
        call=Usage(),
        total=Usage(input_tokens=1_000, cached_input_tokens=500),
        context_tokens=0,
        context_window=None,
        cost_usd=0.1,
    )
    latest = UsageUpdated(
        call=Usage(),
        total=Usage(
            input_tokens=11_000,
            cached_input_tokens=8_500,
            cache_write_tokens=1_000,
            output_tokens=9,
        ),
        context_tokens=0,
        context_window=None,
        cost_usd=0.2,
    )
    summary = meter.summary(latest)
    assert summary["usage"]["cached_input_tokens"] == 8_000
    assert summary["usage"]["cache_write_tokens"] == 1_000
    assert summary["cache_read_share"] == 0.8  # of this run's 10,000 input tokens
    assert RunMeter().summary(None)["cache_read_share"] is None


# -------------------------------------------------------------------------- audit trail


async def test_the_audit_trail_records_decisions_that_matter(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "sessions")
    session = await store.create(tmp_path)
    trail = AuditTrail(session)
    read = PermissionRequest(rule_tool="Read", description="Read a", paths=(tmp_path / "a",))
    common: dict[str, Any] = {"call_id": "c", "tool": "read", "request": read, "mode": "ask"}
    await trail.decision(**common, read_only=True, allowed=True, source="policy")
    await trail.decision(**common, read_only=True, allowed=False, source="user", rule="Read(a)")
    await trail.decision(**common, read_only=False, allowed=True, source="mode")
    await trail.outcome(call_id="c", tool="bash", status="completed", raw_output={"exit_code": 0})
    await trail.outcome(call_id="c", tool="mcp", status="completed", raw_output={"x": "y" * 5000})
    await trail.outcome(call_id="c", tool="bash", status="completed", raw_output=None)
    recorded = [
        (entry.name, entry.data) for entry in session.entries if isinstance(entry, ExtensionEntry)
    ]
    await session.aclose()
    assert [name for name, _ in recorded] == ["permission", "permission", "tool_outcome"]
    denied = recorded[0][1]
    assert isinstance(denied, dict) and denied["allowed"] is False and denied["rule"] == "Read(a)"
    assert denied["subject"] == {
        "rule_tool": "Read",
        "description": "Read a",
        "paths": [str(tmp_path / "a")],
    }
    await AuditTrail(None).decision(**common, read_only=False, allowed=True, source="mode")


# ------------------------------------------------------------------------ audit rows


def _decision(call_id: str, tool: str, **extra: Any) -> ExtensionEntry:
    data: dict[str, Any] = {
        "call_id": call_id,
        "tool": tool,
        "allowed": True,
        "source": "mode",
        "mode": "auto",
        "answer": None,
        "reason": "",
        "rule": None,
        "rule_file": None,
        "unsandboxed": False,
        "follow_up": False,
        **extra,
    }
    return ExtensionEntry(
        name="permission", data=data, id=f"d-{call_id}", ts="2025-01-01T00:01:00.000Z"
    )


def test_audit_rows_cover_mcp_outside_writes_subagents_and_child_sessions() -> None:
    from earshot.audit import audit_rows
    from earshot.replay import build, render_text
    from earshot.transcripts import ParentRef

    b = Builder()
    b.prompt("do things")
    b.call("m1", "mcp__demo__add", result="42", a=40, b=2)
    b.entries.append(_decision("m1", "mcp__demo__add", source="user", rule="mcp__demo"))
    b.call("w1", "write", path="/etc/motd", content="hi\n")
    b.entries.append(_decision("w1", "write", source="prompt", answer="allow_once"))
    b.call("r1", "read", path="notes.txt")  # read-only, nobody decided: not audited
    # A subagent's call: only its decision is in this transcript.
    b.entries.append(
        _decision(
            "sub-1", "bash", allowed=False, source="user", rule="Bash(curl *)",
            subject={"rule_tool": "Bash", "description": "Run `curl x`", "command": "curl x"},
        )
    )  # fmt: skip
    transcript = b.transcript()
    transcript.parent = ParentRef("parent-session", "task_9")
    rows = audit_rows([transcript])
    assert [(row.kind, row.tool, row.what) for row in rows] == [
        ("mcp", "mcp__demo__add", 'mcp__demo__add {"a": 40, "b": 2}'),
        ("write", "write", "/etc/motd"),
        ("command", "bash", "curl x"),
    ]
    mcp, write, sub = rows
    assert mcp.decisions[0]["rule"] == "mcp__demo" and mcp.status == "completed"
    assert write.outside_project and not mcp.outside_project
    assert sub.subagent and sub.status == "denied"
    assert all(row.parent == ParentRef("parent-session", "task_9") for row in rows)
    shown = [row.to_json() for row in rows]
    assert shown[2]["decisions"][0]["by"] == "user rule Bash(curl *)"
    assert shown[0]["parent"] == {"session_id": "parent-session", "call_id": "task_9"}

    import io

    out = io.StringIO()
    render_text(build(transcript), out)
    text = out.getvalue()
    assert "child of session parent-session" in text
    assert "a subagent's call" in text and "curl" in text


async def test_a_child_session_file_is_read_with_its_parent(tmp_path: Path) -> None:
    """A session whose header names a parent session and call (what child sessions will
    write) is read like any other session of its directory, its parent known."""
    import json

    from earshot.transcripts import ParentRef, read_transcripts
    from sessions import cwd_hash, new_id

    root = tmp_path / "sessions"
    cwd = tmp_path / "project"
    cwd.mkdir()
    session_id = new_id()
    folder = root / cwd_hash(str(cwd))
    folder.mkdir(parents=True)
    header = {
        "kind": "header",
        "version": 1,
        "session_id": session_id,
        "cwd": str(cwd),
        "created": "2025-01-01T00:00:00.000Z",
        "earshot_version": "test",
        "parent": {"session_id": "the-parent", "call_id": "task_1"},
    }
    (folder / f"{session_id}.jsonl").write_text(json.dumps(header) + "\n", encoding="utf-8")
    [transcript] = await read_transcripts(cwd, root=root)
    assert transcript.id == session_id
    assert transcript.parent == ParentRef("the-parent", "task_1")


def test_replay_shows_compactions_plans_and_unknown_entries() -> None:
    import io

    from earshot.replay import build, render_text
    from sessions import CompactionEntry, UnknownEntry

    b = Builder()
    b.prompt("long work")
    b.entries.append(
        CompactionEntry(
            summary="we fixed the parser", first_kept_id=None, tokens_before=90_000, id="k"
        )
    )
    b.entries.append(
        ExtensionEntry(
            name="plan",
            data=[{"content": "write tests", "status": "completed"}, {"content": "ship"}],
            id="p",
        )
    )
    b.entries.append(UnknownEntry(raw={"kind": "from_the_future"}, id="u"))
    out = io.StringIO()
    render_text(build(b.transcript()), out)
    text = out.getvalue()
    assert "compacted into this summary" in text and "we fixed the parser" in text
    assert "(90000 tokens)" in text
    assert "[x] write tests" in text and "[ ] ship" in text
    assert "cannot show: from_the_future" in text


def test_replay_marks_cancelled_turns_pty_output_refused_batches_and_steps_in_progress() -> None:
    """Issue 26.15, in text and HTML: a cancelled turn is marked; a PTY's CR LF and a progress
    bar's CR are rendered as the terminal showed them (not `\\x0d`); a refused command's batch
    is not "undone later"; an `in_progress` plan step says so."""
    import io

    from earshot.replay import build, render_text
    from earshot.replay_html import render_html

    b = Builder()
    b.prompt("build it")
    b.call(
        "c1", "bash", result="step 1\r\nprogress 10%\rprogress 100%\r\ndone\x1b[0m", command="make"
    )
    ask = Message(role="assistant", parts=[ToolCallPart(id="c2", name="bash", arguments={})])
    b.entries.append(MessageEntry(message=ask, id="a-c2", ts="2025-01-01T00:00:30.000Z"))
    b.snapshot("refused-batch", ".")
    b.entries.append(_decision("c2", "bash", allowed=False, source="prompt", answer="reject_once"))
    refused = ToolResultPart(
        tool_call_id="c2", name="bash", content=[TextPart(text="refused")], is_error=True
    )
    b.entries.append(MessageEntry(message=Message(role="tool", parts=[refused]), id="r-c2"))
    b.entries.append(
        ExtensionEntry(
            name="plan",
            data=[
                {"content": "configure", "status": "completed"},
                {"content": "compile", "status": "in_progress"},
                {"content": "test", "status": "pending"},
            ],
            id="p",
        )
    )
    b.entries.append(ExtensionEntry(name=extensions.TURN_CANCELLED, data={}, id="x"))
    replay = build(b.transcript(), undone={"refused-batch"})
    out = io.StringIO()
    render_text(replay, out)
    text = out.getvalue()
    page = render_html(replay)
    for shown in (text, page):
        assert "turn 1 was cancelled" in shown
        assert "step 1\n" in shown and "\\x0d" not in shown
        assert "progress 100%" in shown and "progress 10%" not in shown
        assert "\\x1b[0m" in shown  # other controls stay escaped
        assert "undone later" not in shown
        assert "[~] compile (in progress)" in shown and "[x] configure" in shown
        assert "[ ] test" in shown
