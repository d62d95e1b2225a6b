"""The session's I/O backed by the editor: permissions and questions (`AcpInteraction`), text files
(`AcpFiles`, `fs/*`) and commands (`AcpProcesses`, `terminal/*`).

Each backend asks the client only for what it advertised and falls back to local I/O otherwise:
files outside the roots, binary files and images are always local (editor fs is text-only).
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import anyio

from acp_server.answers import InvalidAnswer
from acp_server.background_terminals import TerminalCommand
from acp_server.capabilities import ClientCapabilities, ClientLearned
from acp_server.editor_files import read_through_editor, write_through_editor
from acp_server.framing import Message
from acp_server.jsonrpc import ClientError, Connection, ConnectionClosed
from acp_server.permission_prompts import answered_option, permission_request
from acp_server.subagents import SubagentView
from acp_server.updates import UpdateTranslator
from agent.backends import (
    Confinement,
    FileBackend,
    OutputSink,
    PermissionAnswer,
    PermissionOption,
    PermissionPrompt,
    ProcessBackend,
    ProcessResult,
    Question,
    QuestionAnswer,
    TerminalSink,
)
from agent.events import AgentEvent
from agent.files import Expected
from agent.protected_paths import data_dir

if TYPE_CHECKING:
    from acp_server.answers import ClientRequest
    from acp_server.protocol.client import (
        CreateTerminalRequest,
        RequestPermissionResponse,
        TerminalExitStatus,
    )
    from acp_server.protocol.client import PermissionOption as WireOption
    from acp_server.protocol.elicitation import ElicitationPropertySchema
    from acp_server.protocol.prompt import SessionUpdate

_TERMINAL_CLEANUP_SECONDS = 5.0


class SessionChannel:
    """The connection as one session sees it: updates and client requests. A request made
    inside a turn (a permission prompt, a question, a file read) is cancelled with the turn's
    cancel scope, which withdraws it from the client (`$/cancel_request`).

    It also keeps the terminals of finished commands until their call's final update is sent
    (`hold_terminal`): that update still shows the terminal, and a client resolves every
    terminal an update names (Zed fails the whole update on a released one, `from_acp`, and
    drops its `rawOutput` and `locations`)."""

    def __init__(
        self,
        connection: Connection,
        client: ClientCapabilities,
        learned: ClientLearned | None = None,
    ) -> None:
        self.connection = connection
        self.client = client
        self.learned = learned or ClientLearned()
        self.session_id = ""
        self.translator = UpdateTranslator(client=client)
        self.subagents = SubagentView(client, lambda: self.session_id) if client.subagents else None
        """Subagents as child sessions, for a client that takes them (`acp_server.subagents`)."""
        self._shown_in: dict[str, str] = {}
        """Terminal id -> the call whose content showed it."""
        self._held: set[str] = set()
        """Terminals whose command has ended, released after their call's final update."""

    def processes(self, local: ProcessBackend) -> ProcessBackend:
        """The session's process backend: the editor's terminals when it has them, else
        `local` (`AcpProcesses`)."""
        return AcpProcesses(self, local)

    async def update(self, update: SessionUpdate, session_id: str | None = None) -> None:
        """Send `update` on the session (or on `session_id`: one of its subagents')."""
        await self.connection.notify(
            "session/update", {"sessionId": session_id or self.session_id, "update": update}
        )
        if update["sessionUpdate"] in ("tool_call", "tool_call_update"):
            await self._track_terminals(cast("dict[str, object]", update))

    async def emit(self, event: AgentEvent) -> None:
        """Send what `event` becomes (the translator's updates; a subagent's, on its own
        session when the client takes them)."""
        if self.subagents is None:
            for update in self.translator.translate(event):
                await self.update(update)
            return
        for session_id, update in self.subagents.routed(event, self.translator):
            await self.update(update, session_id)

    def hold_terminal(self, terminal_id: str) -> None:
        """Release `terminal_id` once the final update of the call showing it was sent (or at
        the end of the turn, `release_held`)."""
        self._held.add(terminal_id)

    async def _track_terminals(self, update: dict[str, object]) -> None:
        call_id = str(update.get("toolCallId"))
        for item in _items(update.get("content")):
            terminal_id = item.get("terminalId")
            if item.get("type") == "terminal" and isinstance(terminal_id, str):
                self._shown_in[terminal_id] = call_id
        if update.get("status") not in ("completed", "failed"):
            return
        ended = [terminal for terminal, shown in self._shown_in.items() if shown == call_id]
        for terminal_id in ended:
            del self._shown_in[terminal_id]
        await self._release([terminal for terminal in ended if terminal in self._held])

    async def release_held(self) -> None:
        """Release every held terminal (the turn ended: no final update will name them)."""
        await self._release(list(self._held))

    async def release_terminal(self, terminal_id: str) -> None:
        await self._release([terminal_id])

    async def _release(self, terminal_ids: list[str]) -> None:
        for terminal_id in terminal_ids:
            self._held.discard(terminal_id)
            with (
                anyio.CancelScope(shield=True),
                anyio.move_on_after(_TERMINAL_CLEANUP_SECONDS),
                contextlib.suppress(ClientError, ConnectionClosed),
            ):
                await self.request("terminal/release", {"terminalId": terminal_id})

    @property
    def request(self) -> ClientRequest:
        """Ask the client (`sessionId` added); the answer in its method's shape
        (`Connection.request`)."""
        return self.request_as(None)

    def request_as(self, session_id: str | None) -> ClientRequest:
        """`request` for a subagent's session `session_id` (None: the session's own)."""

        async def request(method: str, params: Message) -> Any:
            return await self._send(method, {"sessionId": session_id or self.session_id, **params})

        return cast("ClientRequest", request)

    async def _send(self, method: str, params: Message) -> Any:
        """The request on the wire (a v2 channel converts it and tracks the foreground)."""
        return await self.connection.send_request(method, params)


# ----------------------------------------------------------------------------- interaction


def _items(value: object) -> list[dict[str, object]]:
    """The objects in a list (an update's `content`)."""
    if not isinstance(value, list):
        return []
    return [_fields(item) for item in cast("list[object]", value)]


def _fields(value: object) -> dict[str, object]:
    """An update's members (one of another shape has none)."""
    return cast("dict[str, object]", value) if isinstance(value, dict) else {}


def _selected(result: RequestPermissionResponse) -> str | None:
    """The chosen option id, or None for a cancelled outcome."""
    outcome = result["outcome"]
    return outcome["optionId"] if outcome["outcome"] == "selected" else None


class AcpInteraction:
    """Permission prompts via `session/request_permission`; questions via `elicitation/create`
    (form mode) when advertised, else as permission choices. The only channel a prompt takes to
    the client; a cancelled turn withdraws it (its cancel scope cancels the request)."""

    def __init__(self, channel: SessionChannel) -> None:
        self.channel = channel

    async def request_permission(self, prompt: PermissionPrompt) -> PermissionAnswer:
        channel = self.channel
        child = (
            None if channel.subagents is None else channel.subagents.child_of_call(prompt.call_id)
        )
        if child is not None:  # a subagent's call, in its own session: the child waits on it
            return await self._ask_for_child(prompt, *child)
        # A subagent's call is shown inside its task call; the prompt needs a card to name.
        for update in channel.translator.promote(prompt.call_id):
            await channel.update(update)
        return await self._ask(prompt, channel.translator, None)

    async def _ask_for_child(
        self, prompt: PermissionPrompt, child_session: str, translator: UpdateTranslator
    ) -> PermissionAnswer:
        view = self.channel.subagents
        assert view is not None
        for session_id, update in view.state(child_session, {"state": "requires_action"}):
            await self.channel.update(update, session_id)
        try:
            return await self._ask(prompt, translator, child_session)
        finally:
            with anyio.CancelScope(shield=True), contextlib.suppress(ConnectionClosed):
                for session_id, update in view.state(child_session, {"state": "running"}):
                    await self.channel.update(update, session_id)

    async def _ask(
        self, prompt: PermissionPrompt, translator: UpdateTranslator, session_id: str | None
    ) -> PermissionAnswer:
        params = permission_request(translator, prompt)
        try:
            request = self.channel.request_as(session_id)
            result = await request("session/request_permission", params)
        except (ConnectionClosed, InvalidAnswer):  # an answer that is none: nobody chose
            return PermissionAnswer(option_id=None)
        except ClientError:
            return PermissionAnswer(option_id=_fallback_reject(prompt.options))
        chosen = _selected(result)
        if chosen is None:
            return PermissionAnswer(option_id=None)
        option = answered_option(prompt.options, chosen)
        if option is None:
            return PermissionAnswer(option_id=_fallback_reject(prompt.options))
        return PermissionAnswer(option_id=option.id)

    async def ask_question(self, question: Question) -> QuestionAnswer:
        """An elicitation form where the client takes one; else, or once an elicitation was
        answered with an error (remembered for the connection: `ClientLearned`), the choices as
        a permission prompt. A free-text question without a form is declined."""
        learned = self.channel.learned
        try:
            if self.channel.client.elicitation_form and not learned.elicitation_fails:
                try:
                    return await self._elicit(question)
                except ClientError:
                    learned.elicitation_fails = True
            return await self._ask_with_permission(question)
        except (ConnectionClosed, ClientError):
            return QuestionAnswer(declined=True)

    async def _elicit(self, question: Question) -> QuestionAnswer:
        answer: ElicitationPropertySchema
        if question.choices and question.multiple:
            answer = {
                "type": "array",
                "title": "Answer",
                "items": {"type": "string", "enum": list(question.choices)},
            }
        elif question.choices:
            answer = {"type": "string", "title": "Answer", "enum": list(question.choices)}
        else:
            answer = {"type": "string", "title": "Answer"}
        properties: dict[str, ElicitationPropertySchema] = {"answer": answer}
        required = ["answer"]
        if question.choices and question.allow_other:
            properties["other"] = {
                "type": "string",
                "title": "Other",
                "description": "Your own answer instead of the choices",
            }
            required = []
        params: Message = {
            "mode": "form",
            "message": question.question,
            "toolCallId": question.call_id,
            "requestedSchema": {"type": "object", "properties": properties, "required": required},
        }
        try:
            result = await self.channel.request("elicitation/create", params)
        except InvalidAnswer:  # an answer, not a refusal of the method: nothing was said
            return QuestionAnswer(declined=True)
        match result:
            case {"action": "accept", "content": dict() as values}:
                pass
            case _:
                return QuestionAnswer(declined=True)
        answers: list[str] = []
        other = values.get("other")
        if isinstance(other, str) and other.strip():
            answers.append(other.strip())
        picked = values.get("answer")
        if isinstance(picked, str) and picked:
            answers.append(picked)
        elif isinstance(picked, list):
            answers.extend(picked)
        if not answers:
            return QuestionAnswer(declined=True)
        return QuestionAnswer(answers=tuple(answers))

    async def _ask_with_permission(self, question: Question) -> QuestionAnswer:
        if not question.choices:
            # Without elicitation there is no free-text input in ACP: decline at once, never hang.
            return QuestionAnswer(declined=True)
        channel = self.channel
        options: list[WireOption] = [
            {"optionId": f"choice-{index}", "name": choice, "kind": "allow_once"}
            for index, choice in enumerate(question.choices)
        ]
        options.append({"optionId": "decline", "name": "Don't answer", "kind": "reject_once"})
        params: Message = {
            "toolCall": {"toolCallId": question.call_id, "title": question.question},
            "options": options,
        }
        chosen = _selected(await channel.request("session/request_permission", params))
        if chosen is None or not chosen.startswith("choice-"):
            return QuestionAnswer(declined=True)
        index = int(chosen.removeprefix("choice-"))
        if not 0 <= index < len(question.choices):
            return QuestionAnswer(declined=True)
        return QuestionAnswer(answers=(question.choices[index],))


def _fallback_reject(options: Sequence[PermissionOption]) -> str | None:
    return next((option.id for option in options if option.kind == "reject_once"), None)


# ---------------------------------------------------------------------------------- files


def _root_of(path: Path, roots: Sequence[Path]) -> Path | None:
    return next((root for root in roots if path == root or root in path.parents), None)


class AcpFiles:
    """Text files inside the roots through the editor (its unsaved buffers, its review UI);
    everything else locally. Paths are real (what the permission gate decided on); the editor is
    handed exactly that path, and the place is checked around its request
    (`acp_server.editor_files`)."""

    def __init__(self, channel: SessionChannel, roots: Sequence[Path], local: FileBackend) -> None:
        self.channel = channel
        self.roots = tuple(Path(os.path.realpath(root)) for root in roots)
        self.local = local

    def _delegated(self, path: Path, capability: bool) -> Path | None:
        """The root `path` is in, when the editor does this for it."""
        return _root_of(path, self.roots) if capability else None

    async def read_text(self, path: Path, *, expected: Expected = "any") -> str:
        root = self._delegated(path, self.channel.client.read_text_file)
        if root is None:
            return await self.local.read_text(path, expected=expected)

        async def ask() -> str | None:
            try:
                result = await self.channel.request("fs/read_text_file", {"path": str(path)})
            except ClientError:
                return None
            return result["content"]

        return await read_through_editor(root, path, expected, ask)

    async def write_text(self, path: Path, content: str) -> None:
        root = self._delegated(path, self.channel.client.write_text_file)
        if root is None:
            await self.local.write_text(path, content)
            return

        async def send() -> None:
            try:
                await self.channel.request(
                    "fs/write_text_file", {"path": str(path), "content": content}
                )
            except ClientError as exc:
                raise PermissionError(
                    13, f"the editor did not write the file: {exc.message}", str(path)
                ) from exc

        await write_through_editor(root, path, content, send)


# ------------------------------------------------------------------------------ processes


@dataclass(frozen=True, slots=True)
class Launcher:
    """A script that runs one confined command line (`write_launcher`)."""

    directory: Path
    argv: list[str]
    """What `terminal/create` is given: the script, then the user's command as its one
    argument, which it does not read: it is there for the editor to show."""

    def remove(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)


def write_launcher(confined: Sequence[str], command: str) -> Launcher:
    """A launcher for the sandbox's command line `confined`, which runs `command`.

    Editors label a terminal with how it was started (Zed: `command` and `args` joined; Toad:
    `shlex.join`), and the sandbox's whole command line (`env -u KEY... bwrap ... bash -c
    COMMAND`, some kilobytes) hides the command the user approved at its very end. So the
    terminal starts `<data>/launchers/<random>/sandbox COMMAND`: a `/bin/sh` script holding the
    command line, which removes its own directory, then `exec`s it.

    What runs is the command line written in the script, never the argument: an editor that
    mangles or drops arguments (Toad runs a `command` with a space in it alone) changes only
    what it shows. The directory is earshot's data dir, hidden from every sandboxed command
    (`agent.sandbox.linux`, `ProtectedPaths.hidden`) and protected from the file tools, so no
    command of the model's can rewrite a launcher before the editor runs it; it is created
    0700 with a fresh name, and the script with O_EXCL."""
    base = data_dir(os.environ) / "launchers"
    base.mkdir(mode=0o700, parents=True, exist_ok=True)
    directory = Path(tempfile.mkdtemp(dir=base))
    script = directory / "sandbox"
    remover = shutil.which("rm")
    lines = [
        "#!/bin/sh",
        "# earshot: runs one command in earshot's command sandbox. Its argument is only what",
        "# the editor shows; the command line below is what runs.",
    ]
    if remover is not None:
        lines.append(shlex.join([remover, "-rf", "--", str(directory)]))
    lines.append("exec " + shlex.join(confined))
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    descriptor = os.open(script, flags, 0o700)
    with os.fdopen(descriptor, "w", encoding="utf-8", errors="surrogateescape") as handle:
        handle.write("\n".join(lines) + "\n")
    return Launcher(directory=directory, argv=[str(script), command])


class AcpProcesses:
    """`bash -c` in an editor terminal when the client has one (embedded live in the tool call),
    else local. A confined command is handed to the terminal as a launcher script that runs the
    sandbox's whole command line (`sandbox_launcher`: the editor runs on the same machine), which
    also removes the provider keys from the editor's environment before the sandbox starts."""

    def __init__(self, channel: SessionChannel, local: ProcessBackend) -> None:
        self.channel = channel
        self.local = local

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
        if not self.channel.client.terminal:
            return await self.local.run(
                command,
                cwd=cwd,
                timeout=timeout,
                output_limit=output_limit,
                env=env,
                on_output=on_output,
                on_terminal=on_terminal,
                confine=confine,
            )
        argv = ["bash", "-c", command]
        if confine is None:
            return await self._terminal(argv, cwd, timeout, output_limit, env, on_terminal)
        async with confine.launch(argv, cwd=cwd, scrub_env=True) as confined:
            launcher = write_launcher(confined, command)
            try:
                return await self._terminal(
                    launcher.argv, cwd, timeout, output_limit, env, on_terminal
                )
            finally:
                launcher.remove()  # it has run (or never will): the command has ended

    async def start_background(
        self, argv: Sequence[str], *, cwd: Path, output_limit: int
    ) -> TerminalCommand | None:
        """A command left running in an editor terminal (`agent.local.background`); None without
        the terminal capability (it runs locally then). A confined one (its command line is
        not `bash -c COMMAND`) starts through a launcher that removes itself once run."""
        if not self.channel.client.terminal:
            return None
        if list(argv[:2]) == ["bash", "-c"]:
            return await TerminalCommand.create(
                self.channel, argv, cwd=cwd, output_limit=output_limit
            )
        launcher = write_launcher(argv, argv[-1])
        try:
            return await TerminalCommand.create(
                self.channel, launcher.argv, cwd=cwd, output_limit=output_limit
            )
        except BaseException:
            launcher.remove()  # never run: it would have removed itself
            raise

    async def _terminal(
        self,
        argv: Sequence[str],
        cwd: Path,
        timeout: float,
        output_limit: int,
        env: Mapping[str, str] | None,
        on_terminal: TerminalSink | None,
    ) -> ProcessResult:
        params: CreateTerminalRequest = {
            "sessionId": self.channel.session_id,
            "command": argv[0],
            "args": list(argv[1:]),
            "cwd": str(cwd),
            "outputByteLimit": max(0, output_limit),
        }
        if env:
            params["env"] = [{"name": name, "value": value} for name, value in env.items()]
        try:
            created = await self.channel.request("terminal/create", params)
        except InvalidAnswer as exc:
            raise OSError(f"the editor did not create a terminal: {exc.message}") from exc
        terminal_id = created["terminalId"]
        ended = False
        try:
            result = await self._follow(terminal_id, timeout, on_terminal)
            ended = True
            return result
        finally:
            if ended and on_terminal is not None:
                # Shown in a tool call: released after that call's final update names it.
                self.channel.hold_terminal(terminal_id)
            else:
                await self.channel.release_terminal(terminal_id)

    async def _follow(
        self, terminal_id: str, timeout: float, on_terminal: TerminalSink | None
    ) -> ProcessResult:
        ids: Message = {"terminalId": terminal_id}
        if on_terminal is not None:
            await on_terminal(terminal_id)
        status: TerminalExitStatus | None = None
        try:
            with anyio.move_on_after(timeout) as deadline:
                status = await self.channel.request("terminal/wait_for_exit", ids)
        except anyio.get_cancelled_exc_class():
            with (
                anyio.CancelScope(shield=True),
                anyio.move_on_after(_TERMINAL_CLEANUP_SECONDS),
                contextlib.suppress(ClientError, ConnectionClosed),
            ):
                await self.channel.request("terminal/kill", ids)
            raise
        timed_out = deadline.cancelled_caught
        if timed_out:
            await self.channel.request("terminal/kill", ids)
        output = await self.channel.request("terminal/output", ids)
        exit_status = output.get("exitStatus") or {}
        if not timed_out and status is not None:
            exit_status = status
        return ProcessResult(
            exit_code=None if timed_out else exit_status.get("exitCode"),
            output=output["output"],
            truncated=output["truncated"],
            timed_out=timed_out,
            signal=exit_status.get("signal"),
            terminal_id=terminal_id,
        )
