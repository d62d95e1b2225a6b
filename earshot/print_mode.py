"""`earshot -p PROMPT`: one turn, headless, in the current directory.

`--output-format text` writes the answer to stdout and progress (model, tool calls, notices,
errors) to stderr; `json` writes one JSON object per line to stdout: a `session` line, every agent
event as it happens (serialised from its dataclass, `kind` first), and a closing `result` line:
the exit code, session id, stop reason, refused calls and answer text, and what the run cost:
`turns` (the agent's own model calls: each answer or batch of tool calls), `usage` (tokens of
every model call of this run, subagents' and compaction summaries' included: cache reads and
writes among them), `cache_read_share` (the input read from the provider's prompt cache),
`cost_usd` (cache reads and writes at the catalog's cache prices; None when a price is unknown,
never a guessed zero) and `duration_ms` (wall time of the run).

Permission prompts cannot be answered headless: they are rejected, unless `--permission-mode` or
the settings' rules allow the call without asking.

A prompt that is exactly a slash command (`/clear`, `/compact [instructions]`, `/mode plan`,
`/model provider/model`, `/undo`, or `/<skill> [request]`) runs that command on the session, as
an ACP prompt would (`agent.commands.slash`): with `--resume` or `--continue`, `-p /clear` starts
the session over and `-p /compact` summarises it. What the command says is the answer.

Exit codes:
    0    the turn ended normally
    1    the model failed (or stopped short: refusal, max tokens, max turns)
    2    usage or configuration error (bad flag, invalid settings, no credentials, bad --resume,
         a session another process has open, a data dir that cannot be written)
    3    the turn ended, but at least one tool call was refused by the permission gate
    130  cancelled (Ctrl-C / SIGTERM); the transcript is saved and can be resumed
"""

from __future__ import annotations

import base64
import codecs
import dataclasses
import json
import os
import re
import sys
from collections.abc import Mapping, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TextIO, cast

import anyio

from acp_server.interrupt import cancel_on_signals
from agent.backends import DenyingInteraction, Mode
from agent.events import (
    AgentEvent,
    CommandOutput,
    CompactionFinished,
    CompactionStarted,
    Notice,
    PermissionDecided,
    Retrying,
    StopReason,
    TextChunk,
    ToolCallFinished,
    ToolCallReady,
    TurnEnded,
    UsageUpdated,
)
from agent.files import read_exact
from agent.protected_paths import protected_paths
from earshot.print_meter import RunMeter
from earshot.session_tree import fork_for_print
from earshot.text_safety import terminal_safe
from providers.types import ImagePart, TextPart

if TYPE_CHECKING:
    from agent.session import AgentSession
    from agent.tasks import SessionTasks
    from earshot.compose import Composition, ModelPick

OutputFormat = Literal["text", "json"]

EXIT_OK = 0
EXIT_MODEL_ERROR = 1
EXIT_USAGE = 2
EXIT_DENIED = 3
EXIT_CANCELLED = 130
PROCESS_NAME = "earshot -p"
"""How another process that finds a session we have open names us."""

PRINT_REFUSAL = "cannot ask in print mode; not allowed by the mode or a rule"
"""What the model reads for a call that would have needed a prompt (not "rejected by the user":
nobody was asked)."""
MESSAGE_SEPARATOR = "\n\n"
"""Between the texts of two assistant messages of one turn (before and after a tool call)."""

IMAGE_TYPES: Mapping[str, str] = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
}
MAX_IMAGE_BYTES = 20_000_000
MAX_INLINE_CHARS = 200_000
"""An @file longer than this is cut (the model can `read` the rest)."""
_MENTION = re.compile(r"(?:(?<=\s)|^)@(\S+)")


class UsageError(Exception):
    """A bad flag or input; exit 2 with this message."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PrintOptions:
    prompt: str
    cwd: Path
    output_format: OutputFormat = "text"
    permission_mode: Mode | None = None
    model: str | None = None
    resume: str | None = None
    fork: str | None = None  # continue from a copy of this session (ignores resume/continue)
    continue_latest: bool = False
    images: tuple[Path, ...] = ()


# ------------------------------------------------------------------------------- the prompt


def build_prompt(text: str, images: Sequence[Path], cwd: Path) -> list[TextPart | ImagePart]:
    """The user message: the text, `@file` mentions expanded (images attached, other files
    appended as context), then `--image` files.

    Raises:
        UsageError: an `--image` is missing or not an image.
    """
    attached: list[ImagePart] = []
    context: list[str] = []
    seen: set[Path] = set()
    for match in _MENTION.finditer(text):
        path = _mentioned_path(match.group(1), cwd)
        if path is None or path in seen:
            continue
        seen.add(path)
        if path.suffix.lower() in IMAGE_TYPES:
            attached.append(_image(path))
        else:
            context.append(_inline(path, cwd))
    for image in images:
        path = image if image.is_absolute() else cwd / image
        if not path.is_file():
            raise UsageError(f"--image {image}: no such file")
        if path.suffix.lower() not in IMAGE_TYPES:
            raise UsageError(
                f"--image {image}: not an image earshot can send ({', '.join(sorted(IMAGE_TYPES))})"
            )
        attached.append(_image(path))
    full = text + "".join(f"\n\n{block}" for block in context)
    return [TextPart(text=full), *attached]


def _mentioned_path(token: str, cwd: Path) -> Path | None:
    # "see @notes.md." mentions notes.md: trailing punctuation is tried both ways.
    for candidate in (token, token.rstrip(".,;:!?)]}'\"")):
        if not candidate:
            continue
        path = Path(candidate).expanduser()
        path = path if path.is_absolute() else cwd / path
        if path.is_file():
            real = path.resolve()
            if real != Path(os.path.normpath(path)) and protected_paths([cwd]).secret_root(real):
                # A link (perhaps swapped in a moment ago) led to a secret: not what was typed.
                return None
            return real
    return None


def _image(path: Path) -> ImagePart:
    try:
        # Exactly where the mention resolved (no link followed again), a regular file, bounded.
        raw, more, _ = read_exact(os.path.realpath(path), limit=MAX_IMAGE_BYTES)
    except OSError as exc:
        raise UsageError(f"{path}: cannot read the image: {exc.strerror or exc}") from None
    if more:
        raise UsageError(f"{path}: image too large (more than {MAX_IMAGE_BYTES} bytes)")
    data = base64.b64encode(raw).decode("ascii")
    return ImagePart(media_type=IMAGE_TYPES[path.suffix.lower()], data=data)


def _inline(path: Path, cwd: Path) -> str:
    try:
        shown = str(path.relative_to(cwd.resolve()))
    except ValueError:
        shown = str(path)
    try:
        # Bounded: a mention names whatever the user typed (a huge log, a FIFO swapped in).
        data, more, _ = read_exact(path, limit=4 * MAX_INLINE_CHARS)
        content = codecs.getincrementaldecoder("utf-8")().decode(data, final=not more)
    except UnicodeDecodeError:
        return f'<file path="{shown}">\n(binary file, not included)\n</file>'
    except OSError as exc:
        return f'<file path="{shown}">\n(unreadable: {exc.strerror or exc})\n</file>'
    if more and len(content) <= MAX_INLINE_CHARS:
        content += f"\n[cut at {4 * MAX_INLINE_CHARS} bytes]"
    elif len(content) > MAX_INLINE_CHARS:
        content = content[:MAX_INLINE_CHARS] + f"\n[cut at {MAX_INLINE_CHARS} characters]"
    return f'<file path="{shown}">\n{content}\n</file>'


# ----------------------------------------------------------------------------- rendering


def to_json(value: Any) -> Any:
    """A JSON-ready copy of an event (dataclasses become objects with `kind` first)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        data = {
            field.name: to_json(getattr(value, field.name)) for field in dataclasses.fields(value)
        }
        if "kind" in data:
            data = {"kind": data.pop("kind"), **data}
        return data
    if isinstance(value, dict):
        items = cast("dict[Any, Any]", value)
        return {str(key): to_json(item) for key, item in items.items()}
    if isinstance(value, list | tuple):
        return [to_json(item) for item in cast("Sequence[Any]", value)]
    if isinstance(value, Path):
        return str(value)
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return repr(value)


class Renderer:
    """Writes events to stdout/stderr in the chosen format and remembers what the exit code
    needs (the end reason, refused calls)."""

    def __init__(self, output_format: OutputFormat, stdout: TextIO, stderr: TextIO) -> None:
        self.format = output_format
        self.stdout = stdout
        self.stderr = stderr
        self.denied = 0
        self.end: TurnEnded | None = None
        self.answer: list[str] = []
        self._message_id: str | None = None
        """The assistant message the last answer text belonged to."""
        self.usage: UsageUpdated | None = None
        """The latest usage (session totals), for the closing summary."""
        self.failed = False
        """A slash command failed (a compaction that could not be made)."""
        self.interrupted = False
        """Ctrl-C or SIGTERM cancelled the run."""
        self._line_open = False
        self.run = RunMeter()

    def line(self, data: Mapping[str, Any]) -> None:
        self.stdout.write(json.dumps(data, ensure_ascii=False) + "\n")
        self.stdout.flush()

    def note(self, text: str) -> None:
        if self.format == "text":
            self.stderr.write(f"earshot: {text}\n")
            self.stderr.flush()

    def event(self, event: AgentEvent) -> None:
        match event:
            case PermissionDecided(allowed=False):
                self.denied += 1
            case TurnEnded():
                self.end = event
            case TextChunk(parent_call_id=None):
                if self.answer and event.message_id != self._message_id:
                    self.answer.append(MESSAGE_SEPARATOR)
                    self._separate()
                self._message_id = event.message_id
                self.answer.append(event.text)
            case UsageUpdated():
                self.usage = event
            case CompactionFinished(ok=False):
                self.failed = True
            case CommandOutput():
                self.answer.append(event.text)
            case _:
                pass
        self.run.observe(event)
        if self.format == "json":
            self.line(to_json(event))
        else:
            self._text(event)

    def _separate(self) -> None:
        """A new assistant message in text mode: start it after a blank line."""
        if self.format != "text":
            return
        self.stdout.write("\n\n" if self._line_open else "\n")
        self._line_open = False

    def result(self, code: int, *, session_id: str | None = None, error: str | None = None) -> None:
        """The closing `result` line of `--output-format json` (nothing in text mode)."""
        if self.format != "json":
            return
        end = self.end
        data: dict[str, Any] = {
            "kind": "result",
            "exit_code": code,
            "session_id": session_id,
            "stop_reason": end.reason if end else None,
            "denied": self.denied,
            "text": "".join(self.answer),
            **self.run.summary(self.usage),
        }
        if error is not None:
            data["error"] = error
        self.line(data)

    def _text(self, event: AgentEvent) -> None:
        match event:
            case TextChunk(parent_call_id=None):
                self.stdout.write(event.text)
                self.stdout.flush()
                self._line_open = not event.text.endswith("\n")
            case CommandOutput():
                self.stdout.write(event.text + "\n")
                self.stdout.flush()
            case ToolCallReady(parent_call_id=None):
                # One line per call: a command's own newlines must not forge progress lines.
                self._progress(f"→ {terminal_safe(event.ui.title, single_line=True)}")
            case ToolCallFinished(parent_call_id=None) if event.status not in (
                "completed",
                "denied",
            ):
                detail = event.result.text.strip().splitlines()[:1]
                self._progress(f"  ✗ {event.status}" + (f": {detail[0][:200]}" if detail else ""))
            case PermissionDecided(allowed=False):
                why = "print mode cannot ask" if event.source == "prompt" else event.source
                self._progress(
                    f"  ✗ permission refused ({why}); --permission-mode or an allow rule in "
                    "settings would let it run"
                )
            case Notice():
                self._progress(f"earshot: {event.severity}: {event.message}")
            case Retrying():
                self._progress(
                    f"earshot: retrying in {event.delay:.1f}s (attempt {event.attempt}): "
                    f"{event.error.message}"
                )
            case CompactionStarted():
                self._progress("earshot: compacting the conversation…")
            case CompactionFinished(ok=False):
                self._progress(f"earshot: compaction failed: {event.error}")
            case TurnEnded(reason="error"):
                self._progress(f"earshot: error: {event.message or 'the model call failed'}")
            case TurnEnded(reason="cancelled"):
                self._progress("earshot: cancelled")
            case TurnEnded(reason="max_turns"):
                self._progress("earshot: stopped: too many model calls in one turn")
            case _:
                pass

    def _progress(self, text: str) -> None:
        if self._line_open:
            self.stdout.write("\n")
            self.stdout.flush()
            self._line_open = False
        self.stderr.write(text + "\n")
        self.stderr.flush()

    def finish(self) -> None:
        """After the turn: end the answer's line; in text mode, one usage line on stderr (stdout
        holds the answer only)."""
        if self.format == "text" and self._line_open:
            self.stdout.write("\n")
            self.stdout.flush()
            self._line_open = False
        if self.format == "text" and self.usage is not None:
            from agent.context import usage_summary

            self.note(f"usage: {usage_summary(self.usage)}")


def exit_code(reason: StopReason | None, denied: int) -> int:
    """The process exit code for how the turn ended (see the module docstring)."""
    match reason:
        case "end_turn":
            return EXIT_DENIED if denied else EXIT_OK
        case "cancelled":
            return EXIT_CANCELLED
        case "error" | "refusal" | "max_tokens" | "max_turns" | None:
            return EXIT_MODEL_ERROR


# ----------------------------------------------------------------------------------- run


def run_print(
    options: PrintOptions,
    *,
    environ: Mapping[str, str] | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    """Run one headless turn; returns the exit code."""
    out, err = stdout or sys.stdout, stderr or sys.stderr
    try:
        return anyio.run(_main, options, dict(os.environ if environ is None else environ), out, err)
    except KeyboardInterrupt:
        err.write("earshot: cancelled\n")
        return EXIT_CANCELLED


async def _main(options: PrintOptions, environ: dict[str, str], out: TextIO, err: TextIO) -> int:
    from agent.settings import SettingsError
    from agent.tasks import SessionTasks
    from earshot.compose import Composition, NoCredentials

    renderer = Renderer(options.output_format, out, err)
    try:
        composition = Composition.load(options.cwd, environ=environ)
        parts = build_prompt(options.prompt, options.images, options.cwd)
        resume_id = await _resume_id(options, composition, renderer)
        pick = _pick(options, composition, resuming=resume_id is not None)
    except (SettingsError, NoCredentials, UsageError) as exc:
        return usage_failure(renderer, str(exc))
    code = EXIT_MODEL_ERROR
    async with anyio.create_task_group() as signals:  # Ctrl-C, until the session is closed
        try:
            # The session's block, as in the ACP server: its MCP clients, language servers and
            # index refreshes run there, and its end closes the session.
            async with SessionTasks() as tasks:
                try:
                    session = await _open(options, composition, pick, resume_id, tasks, err)
                except UsageError as exc:
                    code = usage_failure(renderer, str(exc))
                else:
                    code = await _run(session, options, parts, pick, renderer, signals)
        finally:
            signals.cancel_scope.cancel()
    return code


def usage_failure(renderer: Renderer, message: str) -> int:
    """A usage or configuration error: said on stderr and, in json format, as the `result` line
    every run ends with."""
    renderer.stderr.write(f"earshot: {message}\n")
    renderer.stderr.flush()
    renderer.result(EXIT_USAGE, error=message)
    return EXIT_USAGE


def resolve_session_id(given: str, flag: str = "--resume") -> str:
    """The session `--resume` (or `--fork`) names: the id, or a unique prefix of one
    (`earshot.session_ids`, as every command resolves them).

    Raises:
        UsageError: no session, or several, match (the message lists them).
    """
    from earshot.session_ids import SessionIdProblem
    from earshot.session_ids import resolve_session_id as resolve

    try:
        return resolve(given)
    except SessionIdProblem as problem:
        raise UsageError(f"{flag}: {problem}") from None


async def _resume_id(
    options: PrintOptions, composition: Composition, renderer: Renderer
) -> str | None:
    if options.resume is not None and options.continue_latest:
        raise UsageError("--resume and --continue cannot be used together")
    if options.fork is not None:  # the CLI refuses it with --resume or --continue
        fork = resolve_session_id(options.fork, "--fork")
        return await fork_for_print(fork, PROCESS_NAME, renderer.note)
    if options.resume is not None:
        return resolve_session_id(options.resume)
    if not options.continue_latest:
        return None
    from sessions import SessionStore

    latest = await SessionStore(process=PROCESS_NAME).latest(composition.cwd)
    if latest is None:
        renderer.note("no earlier session in this directory: starting a new one")
        return None
    await latest.aclose()
    return latest.id


def _pick(options: PrintOptions, composition: Composition, *, resuming: bool) -> ModelPick:
    from earshot.compose import ModelPick

    if resuming and not options.model:
        # The transcript's own model is used when it can still be built.
        return ModelPick(name=composition.default_model().name, reason="the session's")
    pick = composition.pick_model(options.model)
    problem = composition.check_credentials(pick.name)
    if problem is not None:
        raise UsageError(problem)
    return pick


async def _open(
    options: PrintOptions,
    composition: Composition,
    pick: ModelPick,
    resume_id: str | None,
    tasks: SessionTasks,
    err: TextIO,
) -> AgentSession:
    from agent.session import ModelUnavailable
    from earshot.compose import open_session
    from sessions import SessionBusy, SessionNotFound, SessionStore, SessionWriteFailed

    try:
        session = await open_session(
            composition,
            store=SessionStore(process=PROCESS_NAME),
            model_name=pick.name,
            mode=options.permission_mode,
            resume_id=resume_id,
            tasks=tasks,
            interaction=DenyingInteraction(PRINT_REFUSAL),
            errlog=err,
        )
    except SessionNotFound:
        raise UsageError(f"no session {resume_id!r} (see `earshot sessions list --all`)") from None
    except (ModelUnavailable, SessionWriteFailed) as exc:
        raise UsageError(str(exc)) from None
    try:
        # A session another process has open (an editor, another terminal) is not ours to add
        # to: say who has it, before anything is run.
        await session.ensure_writable()
        if resume_id is not None and options.model and options.model != session.model_name:
            await session.set_model(options.model)
        if resume_id is not None and options.permission_mode is not None:
            await session.set_mode(options.permission_mode)
    except (ModelUnavailable, ValueError, SessionBusy, SessionWriteFailed) as exc:
        await session.aclose()
        raise UsageError(str(exc)) from None
    return session


async def _run(
    session: AgentSession,
    options: PrintOptions,
    parts: list[TextPart | ImagePart],
    pick: ModelPick,
    renderer: Renderer,
    signals: anyio.abc.TaskGroup,
) -> int:
    from agent.commands import parse_slash_command
    from agent.session import UnsupportedPrompt

    reason = pick.reason if pick.name == session.model_name else "the session's"
    if renderer.format == "json":
        renderer.line(
            {
                "kind": "session",
                "session_id": session.id,
                "cwd": str(session.cwd),
                "model": session.model_name,
                "model_reason": reason,
                "mode": session.mode,
            }
        )
    renderer.note(f"model {session.model_name} ({reason}), mode {session.mode}")
    renderer.run.baseline = session.usage.so_far()

    def interrupted() -> None:  # Ctrl-C or SIGTERM: the turn ends cleanly
        renderer.interrupted = True
        session.cancel()

    await signals.start(cancel_on_signals, interrupted)
    extras = [extra.name for extra in session.commands.all(session.skill_names)]
    command = (
        None if options.images else parse_slash_command(options.prompt, session.skill_names, extras)
    )
    try:
        events = session.run_turn(parts) if command is None else session.run_command(command)
    except UnsupportedPrompt as exc:
        renderer.stderr.write(f"earshot: {exc}\n")
        renderer.result(EXIT_USAGE, session_id=session.id, error=str(exc))
        return EXIT_USAGE
    async with aclosing(events):
        async for event in events:
            renderer.event(event)
    renderer.finish()
    end = renderer.end
    if command is not None and not command.skill and end is None:
        # A built-in command runs no model turn: it worked, failed or was interrupted.
        code = EXIT_CANCELLED if renderer.interrupted else int(renderer.failed)
        code = EXIT_USAGE if command.unknown else code  # `/bogus`: the answer lists them
    else:
        code = exit_code(end.reason if end else None, renderer.denied)
    renderer.result(code, session_id=session.id)
    renderer.note(f"session {session.id} (continue with --resume {session.id})")
    return code
