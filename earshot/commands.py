"""`earshot sessions list|show`, `earshot models` and `earshot undo`: small offline commands.

None of them needs a model or a key: they read the session store, the catalog and the undo
store directly.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from providers.types import ImagePart, ReasoningPart, TextPart, ToolCallPart, ToolResultPart

if TYPE_CHECKING:
    from earshot.compose import Composition
    from sessions import Entry, Session, SessionStore

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
SHOW_RESULT_CHARS = 400
"""A tool result is shown up to this many characters in `sessions show`."""


# ---------------------------------------------------------------------------- sessions


def sessions_list(cwd: Path, *, all_directories: bool, out: TextIO) -> int:
    """Sessions of `cwd` (or of every directory), newest first."""
    from sessions import SessionStore

    store = SessionStore()
    cursor: str | None = None
    rows: list[tuple[str, str, str, str]] = []
    while True:
        page = store.list(None if all_directories else cwd, cursor=cursor, limit=200)
        for item in page.items:
            rows.append((item.id, item.updated[:19].replace("T", " "), item.title or "", item.cwd))
        cursor = page.next_cursor
        if cursor is None:
            break
    if not rows:
        where = "" if all_directories else f" in {cwd} (try --all)"
        out.write(f"no sessions{where}\n")
        return EXIT_OK
    for session_id, updated, title, session_cwd in rows:
        line = f"{session_id}  {updated}  {title or '(untitled)'}"
        if all_directories:
            line += f"  [{session_cwd}]"
        out.write(line + "\n")
    return EXIT_OK


async def open_to_read(
    session_id: str, err: TextIO, store: SessionStore | None = None
) -> Session | None:
    """The session `session_id` names (an id or a unique prefix: `earshot.session_ids`) opened
    read-only (never claimed), or None after saying on `err` why not."""
    from earshot.session_ids import SessionIdProblem, resolve_session_id
    from sessions import SessionNotFound, SessionStore, SessionUnreadable

    store = store or SessionStore()
    try:
        session_id = resolve_session_id(session_id, store)
    except SessionIdProblem as problem:
        err.write(f"earshot: {problem}\n")
        return None
    try:
        return await store.open(session_id, claim=False)
    except (SessionNotFound, SessionUnreadable) as exc:
        err.write(f"earshot: no readable session {session_id!r} ({type(exc).__name__})\n")
        return None


async def sessions_show(session_id: str, *, out: TextIO, err: TextIO) -> int:
    """A readable transcript of the session's current branch."""
    session = await open_to_read(session_id, err)
    if session is None:
        return EXIT_USAGE
    try:
        out.write(render_transcript(session))
    finally:
        await session.aclose()
    return EXIT_OK


def render_transcript(session: Session, entries: Sequence[Entry] | None = None) -> str:
    """The session as plain text: user prompts, answers, tool calls and their results (of
    `entries`, default: the current branch's)."""
    header = session.header
    lines = [
        f"session {header.session_id}" + (f" — {session.title}" if session.title else ""),
        f"cwd {header.cwd}, created {header.created[:19].replace('T', ' ')}",
        "",
    ]
    for entry in session.path_entries() if entries is None else entries:
        lines.extend(_entry_lines(entry))
    return "\n".join(lines).rstrip() + "\n"


def _entry_lines(entry: Entry) -> list[str]:
    from sessions import CompactionEntry, MessageEntry, ModeChangeEntry, ModelChangeEntry

    if isinstance(entry, ModelChangeEntry):
        effort = f", effort {entry.reasoning_effort}" if entry.reasoning_effort else ""
        return [f"[model {entry.model}{effort}]", ""]
    if isinstance(entry, ModeChangeEntry):
        return [f"[mode {entry.mode}]", ""]
    if isinstance(entry, CompactionEntry):
        return ["[earlier conversation compacted]", _indent(entry.summary), ""]
    if not isinstance(entry, MessageEntry):
        return []
    message = entry.message
    lines: list[str] = []
    for part in message.parts:
        if isinstance(part, TextPart) and part.text.strip():
            prefix = "> " if message.role == "user" else ""
            lines.extend(prefix + line for line in part.text.strip().splitlines())
        elif isinstance(part, ImagePart):
            lines.append(f"[image {part.media_type}]")
        elif isinstance(part, ReasoningPart) and part.text.strip():
            lines.append("(thinking) " + part.text.strip().splitlines()[0][:200])
        elif isinstance(part, ToolCallPart):
            arguments = json.dumps(part.arguments, ensure_ascii=False)
            lines.append(f"→ {part.name} {_cut(arguments, 300)}")
        elif isinstance(part, ToolResultPart):
            mark = "✗" if part.is_error else "←"
            lines.append(f"{mark} {part.name}")
            lines.append(_indent(_cut(part.text, SHOW_RESULT_CHARS)))
    return [*lines, ""] if lines else []


def _cut(text: str, limit: int) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[:limit] + f"… [{len(text) - limit} more]"


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines())


# ------------------------------------------------------------------------------ models


def models(composition: Composition, *, provider: str | None, out: TextIO, err: TextIO) -> int:
    """Providers (with whether they have credentials), or one provider's models."""
    from providers.registry import (
        MissingCredentials,
        UnknownProvider,
        all_providers,
        provider_spec,
        resolve_endpoint,
    )

    catalog = composition.catalog

    def status(provider_id: str) -> tuple[bool, str]:
        try:
            resolve_endpoint(provider_id, composition.user_providers, composition.environ)
        except MissingCredentials as exc:
            hint = ", ".join(exc.variables) if exc.variables else "apiKey in settings"
            return False, f"needs {hint}"
        except UnknownProvider:
            return False, "unknown provider"
        return True, "credentials found"

    if provider is not None:
        spec = provider_spec(provider)
        if spec is None and provider not in composition.settings.providers:
            err.write(f"earshot: unknown provider {provider!r} (see `earshot models`)\n")
            return EXIT_USAGE
        ok, note = status(provider)
        out.write(f"{provider}: {'✓' if ok else '✗'} {note}\n")
        default = composition.provider_default(provider)
        for info in catalog.models(provider):
            if not info.tool_call:
                continue
            flags = [
                flag for flag, on in (("vision", info.vision), ("reasoning", info.reasoning)) if on
            ]
            window = f"{info.context_window // 1000}k" if info.context_window else "?"
            price = ""
            if (
                info.cost is not None
                and info.cost.input is not None
                and info.cost.output is not None
            ):
                price = f"  ${info.cost.input:g}/${info.cost.output:g} per Mtok"
            star = " (default)" if info.id == default else ""
            out.write(
                f"  {provider}/{info.id}{star}  {window} context"
                f"{'  ' + ', '.join(flags) if flags else ''}{price}\n"
            )
        return EXIT_OK

    credentialed = set(composition.credentialed())
    ids = [spec.id for spec in all_providers()]
    ids += [name for name in composition.settings.providers if name not in ids]
    for provider_id in ids:
        spec = provider_spec(provider_id)
        name = spec.name if spec is not None else "(from settings)"
        count = sum(1 for info in catalog.models(provider_id) if info.tool_call)
        ok, note = status(provider_id)
        if spec is not None and spec.local and provider_id not in credentialed:
            ok, note = False, f"local server, no key needed (add providers.{provider_id} to use it)"
        out.write(f"{'✓' if ok else ' '} {provider_id:<14} {name:<28} {count:>4} models  {note}\n")
    pick = composition.default_model()
    out.write(f"\ndefault model: {pick.name} ({pick.reason})\n")
    out.write("list one provider's models with `earshot models --provider ID`\n")
    return EXIT_OK


# -------------------------------------------------------------------------------- undo


async def undo(cwd: Path, *, environ: Mapping[str, str] | None = None, out: TextIO) -> int:
    """Restore the files changed by the last tool batch of the newest session in `cwd` (or say
    that it has no snapshot, as `/undo` does: `agent.history.undo_batches`)."""
    from agent.history import BatchUndo, SessionTranscript
    from agent.undo import UndoStore
    from sessions import SessionStore, data_dir

    environ = os.environ if environ is None else environ
    latest = await SessionStore().latest(cwd)
    if latest is None:
        out.write(f"no session in {cwd} to undo\n")
        return EXIT_FAILED
    try:
        store = UndoStore(cwd.resolve(), data_dir(environ))
        if not store.available:
            out.write(f"undo is unavailable: {store.unavailable_reason}\n")
            return EXIT_FAILED
        result = await BatchUndo(store, SessionTranscript(latest), cwd.resolve()).undo()
    finally:
        await latest.aclose()
    out.write(result.message.rstrip() + "\n")
    return EXIT_OK if result.restored else EXIT_FAILED
