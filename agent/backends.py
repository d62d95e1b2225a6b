"""The I/O a session is given by whoever composes it.

Front ends swap these: the ACP server routes text reads and writes to the editor's buffers
(`fs/*`), commands to the editor's terminal (`terminal/*`), and permission prompts and questions to
the editor's UI; print mode answers prompts from its flags. The agent core never knows which.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol, TypeAlias

from agent.modes import MODES as MODES
from agent.modes import Mode as Mode

# Defined in `agent.modes` (which the settings import without this module); re-exported here.
from providers.records import Record

if TYPE_CHECKING:
    from agent.files import Expected

ToolKind: TypeAlias = Literal[
    "read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"
]


class Location(Record):
    """A file position a tool call touches (ACP `locations`: the editor can follow the agent)."""

    path: str
    """Absolute."""
    line: int | None = None
    """1-based."""


class Diff(Record):
    path: str
    """Absolute."""
    old_text: str | None
    """None for a new file."""
    new_text: str


class ToolUi(Record):
    """How a front end shows a tool call."""

    title: str
    kind: ToolKind = "other"
    locations: tuple[Location, ...] = ()
    diffs: tuple[Diff, ...] = ()


def command_title(command: str, note: str | None = None) -> str:
    """The title of a call that runs `command`: the exact command first (what the user
    approves is what they read), then the model's `note` (its description) as a shell comment,
    on one line of its own when the command spans several, so that a heredoc's terminator
    stays intact. The note is flattened to one line: it cannot pose as more command lines."""
    shown = " ".join((note or "").split())
    if not shown or shown == command:
        return command
    separator = "\n" if "\n" in command else "  "
    return f"{command}{separator}# {shown}"


# ------------------------------------------------------------------------------------- files


class FileBackend(Protocol):
    """Text file access. Paths are REAL (absolute, every symbolic link resolved: what a
    permission decision was about) and are used exactly: a symbolic link found on one now means
    the path changed, and the call is refused (`agent.files.safe_paths.PathChanged`), never
    followed. Binary files and images are always read locally by the tools (editor fs is
    text-only)."""

    async def read_text(self, path: Path, *, expected: Expected = "any") -> str:
        """`expected`: the file decided on (`agent.files.safe_paths.check_expected`).

        Raises: FileNotFoundError, IsADirectoryError, PermissionError, UnicodeDecodeError,
        PathChanged."""
        ...

    async def write_text(self, path: Path, content: str) -> None:
        """Create or replace the file at `path` (creating parent directories), never writing
        through a symbolic link or into a file's other names (a new file is renamed into
        place).

        Raises: PathChanged, IsADirectoryError, NotADirectoryError, PermissionError."""
        ...


# --------------------------------------------------------------------------------- processes


class ProcessResult(Record):
    exit_code: int | None
    """None when killed by a signal or timed out."""
    output: str
    """Combined stdout and stderr, possibly truncated from the start."""
    truncated: bool = False
    timed_out: bool = False
    signal: str | None = None
    terminal_id: str | None = None
    """Set when the command ran in an editor terminal (already released)."""


OutputSink: TypeAlias = Callable[[str], Awaitable[None]]
TerminalSink: TypeAlias = Callable[[str], Awaitable[None]]


class Confinement(Protocol):
    """The operating-system sandbox a command line runs in
    (`agent.sandbox.command_sandbox.Sandbox`)."""

    def launch(
        self, argv: Sequence[str], *, cwd: Path, scrub_env: bool
    ) -> AbstractAsyncContextManager[Sequence[str]]:
        """The command line that runs `argv` confined, valid while the context is open (the
        sandbox may keep state, such as mount points, for the command's lifetime).
        `scrub_env`: the process will inherit an environment earshot did not clean (an editor
        terminal's), so the command line removes the provider keys itself.

        Raises:
            agent.sandbox.command_sandbox.SandboxRefused: the sandbox cannot enforce its policy for
                this command (the command must not run confined as if it could).
        """
        ...


class ProcessBackend(Protocol):
    async def run(
        self,
        command: str,
        *,
        cwd: Path,
        timeout: float,
        output_limit: int,
        env: Mapping[str, str] | None = None,
        on_output: OutputSink | None = None,
        on_terminal: TerminalSink | None = None,
        confine: Confinement | None = None,
    ) -> ProcessResult:
        """Run `command` with bash in its own process group.

        On timeout or cancellation the whole group is killed. `on_output` receives output as it
        arrives (local runs); `on_terminal` receives the editor terminal id as soon as it exists,
        so the tool call can embed the live terminal before the command finishes. With
        `confine`, `bash -c command` runs inside that sandbox (an editor terminal is handed the
        sandbox's command line).
        """
        ...


# ------------------------------------------------------------------------------ interaction

PermissionOptionKind: TypeAlias = Literal[
    "allow_once", "allow_session", "allow_always", "reject_once", "reject_always"
]


class PermissionOption(Record):
    id: str
    label: str
    kind: PermissionOptionKind
    rule: str | None = None
    """For allow_always / reject_always: the readable rule that will be saved, e.g.
    `Bash(npm run test *)`."""
    unsandboxed: bool = False
    """An allow_once that runs the command OUTSIDE the command sandbox (this call only)."""


class PermissionPrompt(Record):
    call_id: str
    tool_name: str
    ui: ToolUi
    """Includes the diff for edits, so the user sees what they approve. For a call that runs a
    command its title starts with that exact command (`command_title`)."""
    raw_input: object
    reason: str
    """Why the gate asks (e.g. "outside the workspace", "ask rule Bash(rm *)")."""
    options: tuple[PermissionOption, ...]
    command: str | None = None
    """The shell command the call would run, exactly: a front end shows it as it is."""


class PermissionAnswer(Record):
    option_id: str | None
    """None means the user cancelled: the whole turn is cancelled, not just this call."""
    reason: str | None = None
    """Why a refusal happened when it was not the user's choice (a front end that cannot ask):
    the model is told this instead of "rejected by the user"."""


class Question(Record):
    call_id: str
    question: str
    choices: tuple[str, ...] = ()
    """Empty: a free-text question."""
    multiple: bool = False
    allow_other: bool = True
    """Whether a free-text answer is accepted besides the choices."""


class QuestionAnswer(Record):
    answers: tuple[str, ...] = field(default_factory=tuple)
    declined: bool = False


class Interaction(Protocol):
    async def request_permission(self, prompt: PermissionPrompt) -> PermissionAnswer: ...

    async def ask_question(self, question: Question) -> QuestionAnswer:
        """Must not hang forever: front ends without a way to ask return `declined`."""
        ...


HEADLESS_REFUSAL = "nobody can be asked here; not allowed by the mode or a rule"


class DenyingInteraction:
    """For headless runs: every prompt is rejected once (saying why: `reason`, which the model
    reads instead of "rejected by the user"), every question declined."""

    def __init__(self, reason: str = HEADLESS_REFUSAL) -> None:
        self.reason = reason

    async def request_permission(self, prompt: PermissionPrompt) -> PermissionAnswer:
        reject = next((o for o in prompt.options if o.kind == "reject_once"), None)
        return PermissionAnswer(option_id=reject.id if reject else None, reason=self.reason)

    async def ask_question(self, question: Question) -> QuestionAnswer:
        return QuestionAnswer(declined=True)
