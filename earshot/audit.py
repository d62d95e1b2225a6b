"""`earshot audit [--since DATE] [--all] [--json]`: every consequential thing agents did here.

From the transcripts alone (`earshot.transcripts`): commands run (exit code, and whether they ran
in the command sandbox), files written, fetches, MCP calls, subagents, and every permission
decision with who made it (a rule and its settings file, the mode, the policy, the user's answer,
a hook). A read-only call that nobody had to decide about is not listed. Then what the sessions
cost (`earshot.spend`): tokens, how many read from and written to the prompt cache, and USD.

What a command wrote is not known (only that it ran, where, and confined or not): an unconfined
command is flagged, since it could write anywhere the user can.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TextIO

from earshot.text_safety import terminal_safe
from earshot.transcripts import (
    CallRecord,
    ParentRef,
    TranscriptFile,
    as_list,
    as_object,
    inside,
    resolve_in,
)

EXIT_OK = 0
_PRICED = " (at the catalog's prices, cache reads and writes included)\n"
EXIT_USAGE = 2

_WRITE_TOOLS = frozenset({"write", "edit"})
_RELATIVE = re.compile(r"^(\d+)\s*([dhm])$")
_EXIT_LINE = re.compile(r"^Command failed with exit code (-?\d+)\.")


@dataclass(slots=True, kw_only=True)
class AuditRow:
    ts: str
    session_id: str
    cwd: str
    turn: int
    prompt: str
    call_id: str
    entry_id: str
    """The assistant message that made the call (a call id alone may repeat)."""
    tool: str
    kind: str
    """command, write, fetch, mcp, subagent or other."""
    what: str
    status: str
    exit_code: int | None = None
    sandbox: str | None = None
    """confined, outside (the user let it run unconfined), stopped (the sandbox stopped it and
    nobody let it out), none (no sandbox was active), or None (not recorded)."""
    outside_project: bool = False
    decisions: list[dict[str, Any]] = field(default_factory=lambda: [])
    parent: ParentRef | None = None
    subagent: bool = False
    """Known only from its audit entries: a subagent's call."""
    undone: bool = False
    """Its batch was undone later (`earshot undo`, `/undo`): what it wrote was put back."""

    def to_json(self) -> dict[str, Any]:
        return {
            "ts": self.ts,
            "session_id": self.session_id,
            "cwd": self.cwd,
            "parent": None
            if self.parent is None
            else {"session_id": self.parent.session_id, "call_id": self.parent.call_id},
            "turn": self.turn,
            "prompt": self.prompt,
            "call_id": self.call_id,
            "entry_id": self.entry_id,
            "tool": self.tool,
            "kind": self.kind,
            "what": self.what,
            "status": self.status,
            "exit_code": self.exit_code,
            "sandbox": self.sandbox,
            "outside_project": self.outside_project,
            "subagent": self.subagent,
            "undone": self.undone,
            "decisions": [_decision_json(decision) for decision in self.decisions],
        }


def parse_since(text: str, *, now: datetime | None = None) -> str:
    """`--since`: an ISO date or date-time (UTC unless it says otherwise), or `7d`, `12h`,
    `30m` ago; returned as the ISO 8601 UTC prefix transcript timestamps compare with.

    Raises:
        ValueError: none of those.
    """
    now = now or datetime.now(UTC)
    relative = _RELATIVE.match(text.strip())
    if relative:
        amount, unit = int(relative.group(1)), relative.group(2)
        delta = {"d": timedelta(days=amount), "h": timedelta(hours=amount)}.get(
            unit, timedelta(minutes=amount)
        )
        moment = now - delta
    else:
        try:
            moment = datetime.fromisoformat(text.strip())
        except ValueError:
            raise ValueError(
                f"--since {text!r}: give a date (2025-06-01), a date and time "
                "(2025-06-01T14:00), or an age (7d, 12h, 30m)"
            ) from None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def audit_rows(
    transcripts: Sequence[TranscriptFile],
    *,
    since: str | None = None,
    undone: set[str] | None = None,
) -> list[AuditRow]:
    """The rows of every transcript, oldest first; `undone`: the snapshot ids of batches that
    were undone (`earshot.undo_reader`)."""
    rows: list[AuditRow] = []
    for transcript in transcripts:
        roots = [transcript.header.cwd, *transcript.header.additional_directories]
        for call in transcript.calls():
            row = _row(call, transcript, roots)
            if row is not None and (since is None or row.ts >= since):
                row.undone = (
                    row.kind in ("write", "command")
                    and call.status != "denied"  # its snapshot was taken; it changed nothing
                    and call.snapshot in (undone or ())
                )
                rows.append(row)
    rows.sort(key=lambda row: row.ts)
    return rows


def _row(call: CallRecord, transcript: TranscriptFile, roots: list[str]) -> AuditRow | None:
    kind = _kind(call.name)
    if kind == "other" and not call.decisions:
        return None
    arguments: dict[str, Any] = call.arguments if isinstance(call.arguments, dict) else {}
    row = AuditRow(
        ts=call.ts,
        session_id=transcript.id,
        cwd=transcript.header.cwd,
        turn=call.turn,
        prompt=call.prompt,
        call_id=call.call_id,
        entry_id=call.entry_id,
        tool=call.name,
        kind=kind,
        what=_what(call, kind, arguments),
        status=call.status,
        decisions=call.decisions,
        parent=transcript.parent,
        subagent=not call.in_transcript,
    )
    raw: dict[str, Any] = {}
    if call.outcome is not None and isinstance(call.outcome.get("raw_output"), dict):
        raw = call.outcome["raw_output"]
    if kind == "command":
        row.exit_code = _exit_code(call, raw)
        if raw:
            sandbox = raw.get("sandbox")
            row.sandbox = sandbox if isinstance(sandbox, str) else "none"
    elif kind == "write":
        path = resolve_in(transcript.header.cwd, arguments.get("path"))
        if path is None:
            path = _subject_path(call)
        row.outside_project = path is not None and not inside(path, roots)
    elif kind == "fetch" and isinstance(raw.get("status"), int):
        row.exit_code = raw["status"]
    return row


def _kind(tool: str) -> str:
    if tool == "bash":
        return "command"
    if tool in _WRITE_TOOLS:
        return "write"
    if tool == "fetch":
        return "fetch"
    if tool.startswith("mcp__"):
        return "mcp"
    if tool == "task":
        return "subagent"
    return "other"


def _what(call: CallRecord, kind: str, arguments: dict[str, Any]) -> str:
    subject: dict[str, Any] = {}
    for decision in call.decisions:
        if isinstance(decision.get("subject"), dict):
            subject = decision["subject"]
            break
    match kind:
        case "command":
            return str(arguments.get("command") or subject.get("command") or "")
        case "write":
            return str(arguments.get("path") or ", ".join(subject.get("paths") or []))
        case "fetch":
            return str(arguments.get("url") or subject.get("domain") or "")
        case "subagent":
            return str(arguments.get("description") or arguments.get("prompt") or "")[:200]
        case _:
            if subject.get("description"):
                return str(subject["description"])
            values = [value for value in arguments.values() if isinstance(value, str)]
            shown = " ".join(values) if values else json.dumps(arguments, ensure_ascii=False)
            return f"{call.name} {shown}"[:200] if arguments else call.name


def _subject_path(call: CallRecord) -> Path | None:
    for decision in call.decisions:
        paths = as_list(as_object(decision.get("subject")).get("paths"))
        if paths and isinstance(paths[0], str):
            return Path(paths[0])
    return None


def _exit_code(call: CallRecord, raw: dict[str, Any]) -> int | None:
    code = raw.get("exit_code")
    if isinstance(code, int) and not isinstance(code, bool):
        return code
    if raw or call.result is None:
        return None
    # A transcript from before the audit trail: the result's first line, which earshot wrote.
    if not call.result.is_error:
        return 0
    found = _EXIT_LINE.match(call.result.text)
    return int(found.group(1)) if found else None


# ------------------------------------------------------------------------------ decisions


def decided_by(decision: dict[str, Any]) -> str:
    """Who made a recorded decision, in a few words."""
    source = str(decision.get("source", "?"))
    rule, rule_file = decision.get("rule"), decision.get("rule_file")
    answer, reason = decision.get("answer"), str(decision.get("reason") or "")
    match source:
        case "mode":
            return f"mode {decision.get('mode')}"
        case "policy":
            return f"policy ({reason})" if reason else "policy"
        case "prompt":
            asked = f"asked, answer {answer}" if answer else "asked, cancelled"
            return f"{asked} ({reason})" if reason else asked
        case "hook":
            return f"pre_tool_use hook ({reason})" if reason else "pre_tool_use hook"
        case "error":
            return "the permission check failed"
        case _:
            if rule:
                where = f" in {rule_file}" if rule_file else ""
                return f"{source} rule {rule}{where}"
            return source


def _decision_json(decision: dict[str, Any]) -> dict[str, Any]:
    return {
        "allowed": decision.get("allowed"),
        "by": decided_by(decision),
        "source": decision.get("source"),
        "rule": decision.get("rule"),
        "rule_file": decision.get("rule_file"),
        "mode": decision.get("mode"),
        "answer": decision.get("answer"),
        "reason": decision.get("reason"),
        "unsandboxed": decision.get("unsandboxed"),
        "follow_up": decision.get("follow_up"),
        "subject": decision.get("subject"),
        "ts": decision.get("ts"),
    }


# ------------------------------------------------------------------------------ rendering


def render_table(rows: Sequence[AuditRow], out: TextIO, *, all_directories: bool) -> None:
    for row in rows:
        out.write(terminal_safe(_line(row, all_directories=all_directories), single_line=True))
        out.write("\n")
        for decision in row.decisions:
            verdict = "allowed" if decision.get("allowed") else "refused"
            extra = " (outside the sandbox)" if decision.get("unsandboxed") else ""
            follow = " follow-up" if decision.get("follow_up") else ""
            said = f"    {verdict}{follow}{extra}: {decided_by(decision)}"
            out.write(terminal_safe(said, single_line=True) + "\n")


def _line(row: AuditRow, *, all_directories: bool) -> str:
    when = row.ts[:19].replace("T", " ")
    who = f"{row.session_id[:13]} t{row.turn}"
    kind = row.tool if row.kind == "write" else row.kind
    if row.subagent:
        who += " (subagent)"
    if row.parent is not None:
        who += f" (child of {row.parent.session_id[:13]})"
    result = row.status
    if row.kind == "command":
        if row.exit_code is not None:
            result = f"exit {row.exit_code}"
        result += {
            "confined": ", sandboxed",
            "outside": ", OUTSIDE the sandbox",
            "stopped": ", stopped by the sandbox",
            "none": ", NOT sandboxed",
        }.get(row.sandbox or "", "")
    elif row.kind == "fetch" and row.exit_code is not None:
        result = f"HTTP {row.exit_code}"
    if row.outside_project:
        result += ", OUTSIDE the project"
    if row.undone:
        result += ", undone later"
    what = row.what if len(row.what) <= 160 else row.what[:159] + "…"
    where = f"  [{row.cwd}]" if all_directories else ""
    return f"{when}  {who}  {kind:<8} {what}  → {result}{where}"


async def run_audit(
    cwd: Path,
    *,
    since: str | None,
    all_directories: bool,
    as_json: bool,
    out: TextIO,
    err: TextIO,
) -> int:
    from earshot.spend import total_spend
    from earshot.transcripts import dedupe, read_transcripts
    from earshot.undo_reader import SnapshotReader
    from sessions import data_dir

    try:
        bound = parse_since(since) if since is not None else None
    except ValueError as exc:
        err.write(f"earshot: {exc}\n")
        return EXIT_USAGE
    everything = await read_transcripts(None if all_directories else cwd, include_forks_once=False)
    spend = total_spend(everything, since=bound)
    transcripts = dedupe(everything)
    undone: set[str] = set()
    for directory in {transcript.header.cwd for transcript in transcripts}:
        undone |= SnapshotReader(directory, data_dir()).undone()
    rows = audit_rows(transcripts, since=bound, undone=undone)
    if as_json:
        json.dump(
            {
                "cwd": None if all_directories else str(cwd),
                "since": bound,
                "sessions": len(transcripts),
                "rows": [row.to_json() for row in rows],
                "spend": spend.to_json(),
            },
            out,
            ensure_ascii=False,
            indent=1,
        )
        out.write("\n")
        return EXIT_OK
    if not rows:
        where = "anywhere" if all_directories else f"in {cwd}"
        out.write(f"nothing to audit {where}" + (f" since {bound}" if bound else "") + "\n")
        if spend.tokens["input_tokens"]:
            out.write(spend.sentence() + _PRICED)
        return EXIT_OK
    render_table(rows, out, all_directories=all_directories)
    commands = [row for row in rows if row.kind == "command"]
    unconfined = [row for row in commands if row.sandbox in ("outside", "none")]
    outside = [row for row in rows if row.outside_project]
    refused = sum(1 for row in rows for d in row.decisions if d.get("allowed") is False)
    out.write(
        f"\n{len(rows)} actions in {len(transcripts)} sessions: {len(commands)} commands "
        f"({len(unconfined)} outside the sandbox), "
        f"{sum(1 for row in rows if row.kind == 'write')} file writes "
        f"({len(outside)} outside the project), "
        f"{sum(1 for row in rows if row.kind == 'fetch')} fetches, "
        f"{sum(1 for row in rows if row.kind == 'mcp')} MCP calls, {refused} refusals\n"
    )
    out.write(spend.sentence() + _PRICED)
    return EXIT_OK
